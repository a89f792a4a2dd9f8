//! A companion's session with its host (`Noise_IK`, initiator): requests and pushed events.
//!
//! A reader task routes each response to the request waiting for it and each pushed event to
//! [`Connection::next_push`]; a writer task sends requests. When the connection ends, every
//! request still waiting fails with [`PairingError::AnswerLost`] (the host may or may not have
//! acted on it: uncertain stays uncertain), later requests fail with the reason the host gave,
//! and the last push is [`Push::Closed`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::pairing::channel::{SecureReceiver, SecureSender, secure_channel};
use crate::pairing::companion::{CompanionConfig, HostPairing};
use crate::pairing::error::{PairingError, Result};
use crate::pairing::frame::{MAX_FRAME, Mode, read_frame, write_frame};
use crate::pairing::keys::StaticKeypair;
use crate::pairing::noise::session_initiator;
use crate::pairing::wire::{APP_PROTOCOL, ClientMessage, CloseReason, Outcome, RequestId, Response, ServerMessage, StreamId};

type Reader = BufReader<OwnedReadHalf>;

/// Something the host sent without being asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Push {
    /// One event of a stream.
    Event {
        /// Which stream.
        stream: StreamId,
        /// The event.
        event: Value,
    },
    /// A stream has ended.
    StreamEnd {
        /// Which stream.
        stream: StreamId,
    },
    /// The connection has ended; nothing follows.
    Closed {
        /// Why.
        reason: CloseReason,
        /// Why, for the owner.
        message: String,
    },
}

/// An open session. Dropping it closes the connection.
pub struct Connection {
    client: CompanionClient,
    pushes: mpsc::Receiver<Push>,
    _close_on_drop: DropGuard,
}

/// Sends requests on a connection; cheap to clone, usable from any task.
#[derive(Clone)]
pub struct CompanionClient {
    shared: Arc<Shared>,
}

struct Shared {
    outbox: mpsc::Sender<Vec<u8>>,
    pending: Mutex<Pending>,
    next_id: AtomicU64,
    max_message: usize,
}

#[derive(Default)]
struct Pending {
    /// Each waiting request's sender, with the request's size in bytes.
    waiting: HashMap<RequestId, (oneshot::Sender<Result<Value>>, usize)>,
    closed: Option<(CloseReason, String)>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        // Each write is one insert, remove or assignment: a poisoned map is consistent.
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The IK handshake and hello, under the deadline; then the session's tasks.
pub(crate) async fn connect(keypair: &StaticKeypair, config: CompanionConfig, pairing: &HostPairing) -> Result<Connection> {
    let deadline = config.limits.handshake_timeout;
    let (sender, receiver) = tokio::time::timeout(deadline, handshake(keypair, config, pairing))
        .await
        .map_err(|_| PairingError::HandshakeTimeout { after: deadline })??;

    let cancel = CancellationToken::new();
    let (outbox, queue) = mpsc::channel::<Vec<u8>>(64);
    let (push_tx, pushes) = mpsc::channel(config.push_capacity.max(1));
    let shared = Arc::new(Shared {
        outbox,
        pending: Mutex::new(Pending::default()),
        next_id: AtomicU64::new(1),
        max_message: config.limits.max_message_len,
    });
    tokio::spawn(write_loop(sender, queue, cancel.clone()));
    tokio::spawn(read_loop(receiver, Arc::clone(&shared), push_tx, cancel.clone()));
    Ok(Connection { client: CompanionClient { shared }, pushes, _close_on_drop: cancel.drop_guard() })
}

async fn handshake(
    keypair: &StaticKeypair,
    config: CompanionConfig,
    pairing: &HostPairing,
) -> Result<(SecureSender<OwnedWriteHalf>, SecureReceiver<Reader>)> {
    let stream = TcpStream::connect(pairing.host).await.map_err(|source| PairingError::Connect { addr: pairing.host, source })?;
    stream.set_nodelay(true)?;
    crate::pairing::keepalive(&stream);
    let (read, mut writer) = stream.into_split();
    let mut reader = BufReader::with_capacity(MAX_FRAME + 2, read);
    let mut frame = vec![0u8; MAX_FRAME];
    let mut payload = vec![0u8; MAX_FRAME];

    let mut state = session_initiator(keypair, &pairing.host_key)?;
    writer.write_all(&Mode::Session.preamble()).await?;
    let len = state.write_message(&[], &mut frame)?;
    write_frame(&mut writer, &frame[..len]).await?;
    // The host closes cleanly, without answering, a key it does not accept (having read
    // message 1 whole, so it is never a reset: a reset is reported as the network failure it is).
    let len = read_frame(&mut reader, &mut frame).await?.ok_or(PairingError::DeviceRefused)?;
    state.read_message(&frame[..len], &mut payload)?;

    let transport = state.into_stateless_transport_mode()?;
    let (mut sender, receiver) = secure_channel(transport, reader, writer, config.limits.max_message_len);
    let hello = serde_json::to_vec(&ClientMessage::Hello { protocol: APP_PROTOCOL })
        .map_err(|e| PairingError::protocol(format!("hello did not serialize: {e}")))?;
    sender.send(&hello).await?;
    Ok((sender, receiver))
}

async fn write_loop(mut sender: SecureSender<OwnedWriteHalf>, mut queue: mpsc::Receiver<Vec<u8>>, cancel: CancellationToken) {
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            next = queue.recv() => next,
        };
        let Some(bytes) = next else { break };
        let written = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            written = sender.send(&bytes) => written,
        };
        if let Err(error) = written {
            tracing::debug!(%error, "companion write failed");
            cancel.cancel();
            break;
        }
    }
    let _ = sender.shutdown().await;
}

async fn read_loop(mut receiver: SecureReceiver<Reader>, shared: Arc<Shared>, pushes: mpsc::Sender<Push>, cancel: CancellationToken) {
    let mut said: Option<(CloseReason, String)> = None;
    let mut limit: Option<usize> = None;
    let ended = loop {
        let received = tokio::select! {
            biased;
            () = cancel.cancelled() => break (CloseReason::ConnectionLost, "this device closed the connection".to_owned()),
            received = receiver.recv() => received,
        };
        let bytes = match received {
            Ok(Some(bytes)) => bytes,
            Ok(None) | Err(PairingError::Io(_)) => {
                break said.take().unwrap_or_else(|| lost(CloseReason::ConnectionLost));
            }
            Err(error) => break (CloseReason::ConnectionLost, error.to_string()),
        };
        let message = match serde_json::from_slice::<ServerMessage>(&bytes) {
            Ok(message) => message,
            Err(error) => {
                break (CloseReason::ConnectionLost, format!("your Hearth sent a message this app cannot read ({error}); update the app"));
            }
        };
        match message {
            ServerMessage::Response(Response { id, outcome }) => {
                let waiter = shared.lock().waiting.remove(&id);
                let answer = match outcome {
                    Outcome::Result(value) => Ok(value),
                    Outcome::Error(error) => Err(PairingError::Remote(error)),
                };
                match waiter {
                    Some((waiter, _)) => {
                        let _ = waiter.send(answer);
                    }
                    None => tracing::debug!(%id, "an answer to a request nobody waits for"),
                }
            }
            ServerMessage::Event { stream, event } => {
                // Waits while the app is behind; a dropped receiver discards.
                let _ = pushes.send(Push::Event { stream, event }).await;
            }
            ServerMessage::StreamEnd { stream } => {
                let _ = pushes.send(Push::StreamEnd { stream }).await;
            }
            ServerMessage::Closing { reason, message, limit: host_limit } => {
                said = Some((reason, message));
                limit = host_limit;
            }
        }
    };
    cancel.cancel();
    let (reason, message) = ended;
    let waiting = {
        let mut pending = shared.lock();
        pending.closed = Some((reason, message.clone()));
        std::mem::take(&mut pending.waiting)
    };
    for (id, (waiter, len)) in waiting {
        let error = match limit {
            // Over the host's bound: refused before it was read, so certainly not carried out.
            Some(max) if len > max => PairingError::MessageTooLarge { len, max },
            _ => PairingError::AnswerLost { id, reason, detail: message.clone() },
        };
        let _ = waiter.send(Err(error));
    }
    let _ = pushes.send(Push::Closed { reason, message }).await;
}

fn lost(reason: CloseReason) -> (CloseReason, String) {
    (reason, reason.default_message().to_owned())
}

impl CompanionClient {
    /// Sends a request and waits for its answer. A host error is [`PairingError::Remote`];
    /// a request over the bound is refused here, before anything is sent.
    pub async fn request(&self, command: &str, params: Value) -> Result<Value> {
        self.request_as(self.reserve(), command, params).await
    }

    /// The id the next request will carry, taken now: a request that opens a stream
    /// ([`StreamId::opened_by`]) is listened for before it is sent.
    pub fn reserve(&self) -> RequestId {
        RequestId(self.shared.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request under an id from [`Self::reserve`] (each used once) and waits for its answer.
    pub async fn request_as(&self, id: RequestId, command: &str, params: Value) -> Result<Value> {
        let bytes = serde_json::to_vec(&ClientMessage::Request { id, command: command.to_owned(), params })
            .map_err(|e| PairingError::protocol(format!("the request did not serialize: {e}")))?;
        if bytes.len() > self.shared.max_message {
            return Err(PairingError::MessageTooLarge { len: bytes.len(), max: self.shared.max_message });
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.shared.lock();
            if let Some((reason, message)) = &pending.closed {
                return Err(PairingError::Closed { reason: *reason, message: message.clone() });
            }
            pending.waiting.insert(id, (tx, bytes.len()));
        }
        if self.shared.outbox.send(bytes).await.is_err() {
            self.shared.lock().waiting.remove(&id);
            return Err(self.closed_error());
        }
        // Queued: an answer that never comes (the reader gone) is lost, never "not sent".
        rx.await.unwrap_or_else(|_| {
            let (reason, detail) = match &self.shared.lock().closed {
                Some((reason, message)) => (*reason, message.clone()),
                None => (CloseReason::ConnectionLost, CloseReason::ConnectionLost.default_message().to_owned()),
            };
            Err(PairingError::AnswerLost { id, reason, detail })
        })
    }

    /// Whether the connection has ended (a request now would fail unsent).
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed.is_some()
    }

    fn closed_error(&self) -> PairingError {
        match &self.shared.lock().closed {
            Some((reason, message)) => PairingError::Closed { reason: *reason, message: message.clone() },
            None => PairingError::NotConnected,
        }
    }
}

impl Connection {
    /// A handle to send requests from other tasks.
    pub fn client(&self) -> CompanionClient {
        self.client.clone()
    }

    /// Sends a request and waits for its answer (see [`CompanionClient::request`]).
    pub async fn request(&self, command: &str, params: Value) -> Result<Value> {
        self.client.request(command, params).await
    }

    /// The next pushed event; `None` after [`Push::Closed`].
    pub async fn next_push(&mut self) -> Option<Push> {
        self.pushes.recv().await
    }
}
