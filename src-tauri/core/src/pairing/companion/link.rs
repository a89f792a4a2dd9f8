//! A companion app's one standing link to its host: connected on first use and again after the
//! connection ends, with each pushed event routed to the stream that asked for it.
//!
//! The app (its window's requests, several at once) shares one [`Connection`]. A request that
//! opens a stream takes its request id first and listens on [`StreamId::opened_by`] that id
//! before it is sent, so the stream's first events, which the host may push before its answer,
//! are never dropped. A request the connection never sent (it had closed) is tried once more on
//! a new connection; one that was sent and lost its answer is not — whether the host did it is
//! unknown, and the caller says so ([`PairingError::AnswerLost`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::pairing::companion::{Companion, CompanionClient, Connection, HostPairing, Push};
use crate::pairing::error::{PairingError, Result};
use crate::pairing::wire::StreamId;

/// Events held for one stream's reader before the link waits for it.
const STREAM_CAPACITY: usize = 64;

/// The companion's link to the host it paired with.
pub struct HostLink {
    companion: Companion,
    pairing: HostPairing,
    live: tokio::sync::Mutex<Option<Live>>,
    /// Cancelled for good when the link is forgotten, replaced or Hearth closes: no request
    /// connects again with these keys.
    closed: CancellationToken,
    /// The window's load count ([`WindowEpoch`]): a connection made for an earlier page is not
    /// reused, so the streams that page had at home end with it.
    window: WindowEpoch,
}

/// Counts the window's page loads; bumped synchronously when a page starts to load, before any
/// of its requests.
pub type WindowEpoch = Arc<AtomicU64>;

/// The open connection: its request handle, where its streams go, and its end.
struct Live {
    client: CompanionClient,
    routes: Arc<Routes>,
    /// Dropping the `Live` ends its connection (held only for that).
    _ends_on_drop: tokio_util::sync::DropGuard,
    /// The window's page it was made for.
    window: u64,
}

impl Live {
    /// Whether it can still carry a request: neither ended here nor closed by the host (whose
    /// close the router may not have read yet).
    fn is_open(&self) -> bool {
        !self.client.is_closed()
    }
}

/// Each open stream's reader.
#[derive(Default)]
struct Routes(Mutex<HashMap<StreamId, mpsc::Sender<Value>>>);

impl Routes {
    fn lock(&self) -> MutexGuard<'_, HashMap<StreamId, mpsc::Sender<Value>>> {
        // Each write is one insert, remove or clear: a poisoned map is consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl HostLink {
    /// A link to the host of `pairing`, as `companion` (the keypair it paired with), for the
    /// window whose loads `window` counts. Nothing connects until the first request.
    pub fn new(companion: Companion, pairing: HostPairing, window: WindowEpoch) -> Self {
        Self { companion, pairing, live: tokio::sync::Mutex::new(None), closed: CancellationToken::new(), window }
    }

    /// The pairing this link uses.
    pub fn pairing(&self) -> &HostPairing {
        &self.pairing
    }

    /// Whether a connection is open now (it opens on the next request otherwise). Never waits:
    /// while a connection is being made, it is not open yet.
    pub fn is_connected(&self) -> bool {
        self.live.try_lock().is_ok_and(|live| live.as_ref().is_some_and(Live::is_open))
    }

    /// Sends a request and waits for its answer, connecting first when needed.
    pub async fn request(&self, command: &str, params: Value) -> Result<Value> {
        let (client, _) = self.connected().await?;
        match client.request(command, params.clone()).await {
            // Never sent: the connection had ended before it was queued (a queued request that
            // loses its answer is `AnswerLost`, never tried again). Once more, anew.
            Err(PairingError::Closed { .. } | PairingError::NotConnected) => self.connected().await?.0.request(command, params).await,
            answered => answered,
        }
    }

    /// Sends a request that opens a stream; its answer, and the stream's events until the host
    /// ends it or the connection ends. Dropping the receiver stops delivery here (the host's
    /// stream goes on until the connection ends; a chat run is stopped by its own request).
    pub async fn open_stream(&self, command: &str, params: Value) -> Result<(Value, mpsc::Receiver<Value>)> {
        match self.try_open_stream(command, params.clone()).await {
            // Never sent, as in `request`: once more, anew.
            Err(PairingError::Closed { .. } | PairingError::NotConnected) => self.try_open_stream(command, params).await,
            opened => opened,
        }
    }

    async fn try_open_stream(&self, command: &str, params: Value) -> Result<(Value, mpsc::Receiver<Value>)> {
        let (client, routes) = self.connected().await?;
        let request = client.reserve();
        let stream = StreamId::opened_by(request);
        let (sender, events) = mpsc::channel(STREAM_CAPACITY);
        routes.lock().insert(stream.clone(), sender);
        match client.request_as(request, command, params).await {
            Ok(answer) => Ok((answer, events)),
            Err(error) => {
                routes.lock().remove(&stream);
                Err(error)
            }
        }
    }

    /// Ends the link for good (forgotten, replaced, or Hearth closing): its connection ends and
    /// nothing connects with these keys again.
    pub async fn close(&self) {
        self.closed.cancel();
        drop(self.live.lock().await.take());
    }

    /// The open connection, or a new one when there is none or it has ended.
    async fn connected(&self) -> Result<(CompanionClient, Arc<Routes>)> {
        let mut live = self.live.lock().await;
        if self.closed.is_cancelled() {
            return Err(PairingError::NotConnected);
        }
        let window = self.window.load(Ordering::SeqCst);
        if let Some(open) = live.as_ref()
            && open.is_open()
            && open.window == window
        {
            return Ok((open.client.clone(), Arc::clone(&open.routes)));
        }
        // A dead one, or one an earlier page made: it ends here, with its streams at home.
        drop(live.take());
        // The connect is made under the lock, so requests arriving meanwhile share it rather
        // than each opening its own; a close meanwhile (Forget) wins over it.
        let connection = tokio::select! {
            biased;
            () = self.closed.cancelled() => return Err(PairingError::NotConnected),
            connected = self.companion.connect(&self.pairing) => connected?,
        };
        let client = connection.client();
        let routes = Arc::new(Routes::default());
        let ended = CancellationToken::new();
        tokio::spawn(route_pushes(connection, Arc::clone(&routes), ended.clone()));
        *live = Some(Live { client: client.clone(), routes: Arc::clone(&routes), _ends_on_drop: ended.drop_guard(), window });
        Ok((client, routes))
    }
}

/// Hands each pushed event to its stream's reader until the connection ends; then every
/// stream ends (its reader sees the channel close) and the connection is dropped.
async fn route_pushes(mut connection: Connection, routes: Arc<Routes>, ended: CancellationToken) {
    // Events for streams nobody here reads (ended here, or never asked for), counted and
    // reported once at the end rather than logged each.
    let mut dropped = 0_u64;
    loop {
        let push = tokio::select! {
            biased;
            () = ended.cancelled() => break,
            push = connection.next_push() => push,
        };
        match push {
            Some(Push::Event { stream, event }) => {
                let reader = routes.lock().get(&stream).cloned();
                match reader {
                    // Never waits for one reader: a reader that has gone, or has fallen
                    // [`STREAM_CAPACITY`] events behind, loses its stream, and the others (and
                    // the answers to requests, read by the same connection) go on.
                    Some(reader) => match reader.try_send(event) {
                        Ok(()) => {}
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            tracing::warn!(%stream, "a stream's reader fell behind; its stream ends here");
                            routes.lock().remove(&stream);
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => {
                            routes.lock().remove(&stream);
                        }
                    },
                    None => dropped += 1,
                }
            }
            Some(Push::StreamEnd { stream }) => {
                routes.lock().remove(&stream);
            }
            Some(Push::Closed { reason, .. }) => {
                tracing::info!(?reason, "the connection to the home Hearth ended");
                break;
            }
            None => break,
        }
    }
    ended.cancel();
    routes.lock().clear();
    if dropped > 0 {
        tracing::debug!(dropped, "events for streams nobody here read");
    }
}
