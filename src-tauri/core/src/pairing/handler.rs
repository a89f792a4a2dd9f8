//! What the host does with a device's requests: a trait the core implements.
//!
//! The wire layer authenticates the device and checks that it is still active; everything
//! about *what* the device may do (its scope: read, chat, decide approvals, control tasks) is
//! the handler's to decide, from the [`DeviceId`] it is given with every request. A request
//! outside the scope is answered with [`ErrorCode::Forbidden`](crate::pairing::ErrorCode::Forbidden).

use serde_json::Value;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::pairing::BoxFuture;
use crate::pairing::error::PairingError;
use crate::pairing::keys::DeviceId;
use crate::pairing::outbox::Outbox;
use crate::pairing::wire::{RemoteError, RequestId, ServerMessage, StreamId};

/// Answers a paired device's requests.
///
/// Each request runs on its own task, so a long one (a chat turn) does not hold up the next.
/// The handler must honour [`RequestContext::cancellation`]: it fires when the device is
/// revoked, the connection drops or the host shuts down, and the answer then goes nowhere.
/// Work that must survive the companion leaving (an effect already dispatched) is the core's
/// journal's to settle, never a reason to ignore the token.
pub trait RequestHandler: Send + Sync + 'static {
    /// Answers one request.
    fn handle(&self, ctx: RequestContext, command: String, params: Value) -> BoxFuture<'_, Result<Value, RemoteError>>;
}

/// Who is asking, and the ways to answer beyond the response.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) device: DeviceId,
    pub(crate) request: RequestId,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbox: Outbox,
}

impl RequestContext {
    /// The authenticated device (the id of its key), active when the request was read.
    pub fn device(&self) -> &DeviceId {
        &self.device
    }

    /// The request's id on this connection.
    pub fn request_id(&self) -> RequestId {
        self.request
    }

    /// Fires when the connection ends for any reason (revocation, the companion leaving, the
    /// host shutting down).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// A stream of events to this connection (a chat's tokens). Events may reach the companion
    /// before the response that names the stream, so the companion keys streams by id.
    pub fn open_stream(&self, stream: StreamId) -> StreamSink {
        StreamSink { stream, outbox: self.outbox.clone(), cancel: self.cancel.clone() }
    }
}

/// The host's end of one stream on one connection.
#[derive(Debug, Clone)]
pub struct StreamSink {
    stream: StreamId,
    outbox: Outbox,
    cancel: CancellationToken,
}

/// Why an event could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamClosed {
    /// The connection has ended (revoked, dropped, or the host is shutting down): stop the work
    /// that feeds this stream.
    #[error("the companion's connection has ended; stop producing this stream")]
    ConnectionClosed,
    /// The event is over the message bound; split it.
    #[error("the event is {len} bytes, more than the {max} a message may carry; split it")]
    EventTooLarge {
        /// Its size in bytes of JSON.
        len: usize,
        /// The bound.
        max: usize,
    },
}

impl StreamSink {
    /// The stream's id.
    pub fn id(&self) -> &StreamId {
        &self.stream
    }

    /// Sends one event, waiting while the connection's queue is full (back-pressure on the
    /// producer), and failing at once when the connection ends.
    pub async fn send(&self, event: Value) -> Result<(), StreamClosed> {
        self.deliver(ServerMessage::Event { stream: self.stream.clone(), event }).await
    }

    /// Tells the companion the stream has ended.
    pub async fn end(self) -> Result<(), StreamClosed> {
        self.deliver(ServerMessage::StreamEnd { stream: self.stream.clone() }).await
    }

    /// Resolves when the connection ends: select on it to stop producing at once.
    pub fn closed(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    async fn deliver(&self, message: ServerMessage) -> Result<(), StreamClosed> {
        if self.cancel.is_cancelled() {
            return Err(StreamClosed::ConnectionClosed);
        }
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(StreamClosed::ConnectionClosed),
            sent = self.outbox.send(&message) => sent.map_err(|e| match e {
                PairingError::MessageTooLarge { len, max } => StreamClosed::EventTooLarge { len, max },
                _ => StreamClosed::ConnectionClosed,
            }),
        }
    }
}
