//! The queue of messages a host connection's writer sends, shared by the connection's reader,
//! its handlers and its streams.
//!
//! Messages are serialized (and checked against the size bound) by whoever sends them, on their
//! own task, so a producer learns at once that its message is too large, and the writer only
//! encrypts and writes.

use tokio::sync::mpsc;

use crate::pairing::error::{PairingError, Result};
use crate::pairing::wire::ServerMessage;

/// A serialized message on its way out.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The JSON.
    pub(crate) bytes: Vec<u8>,
    /// A `closing` message: the writer sends it, then ends the connection.
    pub(crate) last: bool,
}

/// The sending side of a connection's queue.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    tx: mpsc::Sender<Outgoing>,
    max_message: usize,
}

impl Outbox {
    /// A queue holding up to `capacity` messages; producers wait when it is full.
    pub(crate) fn new(capacity: usize, max_message: usize) -> (Self, mpsc::Receiver<Outgoing>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self { tx, max_message }, rx)
    }

    /// Serializes a message and checks it against the bound.
    pub(crate) fn encode(&self, message: &ServerMessage) -> Result<Outgoing> {
        let bytes = serde_json::to_vec(message).map_err(|e| PairingError::protocol(format!("a message did not serialize: {e}")))?;
        if bytes.len() > self.max_message {
            return Err(PairingError::MessageTooLarge { len: bytes.len(), max: self.max_message });
        }
        Ok(Outgoing { bytes, last: matches!(message, ServerMessage::Closing { .. }) })
    }

    /// Queues a message, waiting for room. [`PairingError::NotConnected`] once the connection
    /// has ended.
    pub(crate) async fn send(&self, message: &ServerMessage) -> Result<()> {
        let outgoing = self.encode(message)?;
        self.tx.send(outgoing).await.map_err(|_| PairingError::NotConnected)
    }

    /// Queues a message only if there is room now (for notices that must not block the host).
    pub(crate) fn try_send(&self, message: &ServerMessage) -> Result<bool> {
        let outgoing = self.encode(message)?;
        match self.tx.try_send(outgoing) {
            Ok(()) => Ok(true),
            Err(mpsc::error::TrySendError::Full(_)) => Ok(false),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(PairingError::NotConnected),
        }
    }
}
