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
}

/// The open connection: its request handle, where its streams go, and its end.
struct Live {
    client: CompanionClient,
    routes: Arc<Routes>,
    /// Cancelled when the connection has ended (or to end it).
    ended: CancellationToken,
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
    /// A link to the host of `pairing`, as `companion` (the keypair it paired with). Nothing
    /// connects until the first request.
    pub fn new(companion: Companion, pairing: HostPairing) -> Self {
        Self { companion, pairing, live: tokio::sync::Mutex::new(None) }
    }

    /// The pairing this link uses.
    pub fn pairing(&self) -> &HostPairing {
        &self.pairing
    }

    /// Whether a connection is open now (it opens on the next request otherwise).
    pub async fn is_connected(&self) -> bool {
        self.live.lock().await.as_ref().is_some_and(|live| !live.ended.is_cancelled())
    }

    /// Sends a request and waits for its answer, connecting first when needed.
    pub async fn request(&self, command: &str, params: Value) -> Result<Value> {
        let client = self.client().await?;
        match client.request(command, params.clone()).await {
            // Never sent: the connection had ended before it was written. Once more, anew.
            Err(PairingError::Closed { .. } | PairingError::NotConnected) => self.client().await?.request(command, params).await,
            answered => answered,
        }
    }

    /// Sends a request that opens a stream; its answer, and the stream's events until the host
    /// ends it or the connection ends. Dropping the receiver stops delivery here (the host's
    /// stream goes on until the connection ends; a chat run is stopped by its own request).
    pub async fn open_stream(&self, command: &str, params: Value) -> Result<(Value, mpsc::Receiver<Value>)> {
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

    /// Ends the connection (the owner forgot the pairing); a later request connects again.
    pub async fn close(&self) {
        if let Some(live) = self.live.lock().await.take() {
            live.ended.cancel();
        }
    }

    async fn client(&self) -> Result<CompanionClient> {
        Ok(self.connected().await?.0)
    }

    /// The open connection, or a new one when there is none or it has ended.
    async fn connected(&self) -> Result<(CompanionClient, Arc<Routes>)> {
        let mut live = self.live.lock().await;
        if let Some(open) = live.as_ref()
            && !open.ended.is_cancelled()
        {
            return Ok((open.client.clone(), Arc::clone(&open.routes)));
        }
        let connection = self.companion.connect(&self.pairing).await?;
        let client = connection.client();
        let routes = Arc::new(Routes::default());
        let ended = CancellationToken::new();
        tokio::spawn(route_pushes(connection, Arc::clone(&routes), ended.clone()));
        *live = Some(Live { client: client.clone(), routes: Arc::clone(&routes), ended });
        Ok((client, routes))
    }
}

/// Hands each pushed event to its stream's reader until the connection ends; then every
/// stream ends (its reader sees the channel close) and the connection is dropped.
async fn route_pushes(mut connection: Connection, routes: Arc<Routes>, ended: CancellationToken) {
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
                    // Waits while the reader is behind: the connection's own bound holds the rest.
                    Some(reader) => {
                        if reader.send(event).await.is_err() {
                            routes.lock().remove(&stream);
                        }
                    }
                    None => tracing::debug!(%stream, "an event for a stream nobody here reads"),
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
}
