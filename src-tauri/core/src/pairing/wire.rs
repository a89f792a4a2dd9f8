//! The JSON messages inside the secure channel, and the ids they carry.
//!
//! Companion → host: `{"type":"hello","protocol":1}` once, then
//! `{"type":"request","id":7,"command":"chat_send","params":{…}}`.
//! Host → companion: `{"type":"response","id":7,"result":…}` or
//! `{"type":"response","id":7,"error":{"code":"forbidden","message":"…"}}`;
//! `{"type":"event","stream":"run-3","event":{…}}` and `{"type":"streamEnd","stream":"run-3"}`;
//! and, last before the host closes, `{"type":"closing","reason":"revoked","message":"…"}`
//! (with `"limit":4194304` when the reason is `messageTooLarge`).
//!
//! Unions are tagged by `type` and fields are camelCase, as Hearth's own IPC types are. These
//! types stay in the core rather than the protocol crate: both ends of this wire are the core
//! (the host, and the core running in companion mode); the UI never speaks it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the application messages, sent in `hello`.
/// 2: a stream is named by the request that opens it ([`StreamId::opened_by`]).
pub(crate) const APP_PROTOCOL: u32 = 2;

/// A request's id, chosen by the companion, unique per connection; the host echoes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A stream's id, chosen by the host's handler (a run id, or a fixed name such as
/// `approvals` for notices).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StreamId(String);

impl StreamId {
    /// A stream id from any text (the handler's choice).
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id of the stream a request opens (a chat's events, a watch): named by the request,
    /// which the companion numbers, so it can listen for the stream before it asks — a
    /// stream's first events may arrive before the answer that opened it.
    pub fn opened_by(request: RequestId) -> Self {
        Self(format!("r{request}"))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a request was refused or failed with: the window's own error (`IpcError`), so the
/// companion shows exactly what the window at home would.
pub use hearth_protocol::{ErrorCode, IpcError as RemoteError};

/// Why the host closed a connection (sent in `closing`, and what the companion reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CloseReason {
    /// The owner revoked this device.
    Revoked,
    /// The companion sent a message over the host's bound.
    MessageTooLarge,
    /// The companion broke the protocol.
    ProtocolError,
    /// The host is shutting down.
    HostShutdown,
    /// The connection ended without the host saying why (a companion-side reason only).
    ConnectionLost,
}

impl CloseReason {
    /// The owner-facing sentence for a close the host did not explain itself.
    pub(crate) fn default_message(self) -> &'static str {
        match self {
            Self::Revoked => "this device was revoked in Settings → Devices on your Hearth; pair it again to use it",
            Self::MessageTooLarge => "a message was larger than your Hearth accepts; send less at once",
            Self::ProtocolError => "this app sent something your Hearth could not read; update both apps",
            Self::HostShutdown => "your Hearth is shutting down; connect again when it is back",
            Self::ConnectionLost => "the connection was lost; connect again",
        }
    }
}

/// What the companion sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum ClientMessage {
    /// The first message of a session: proves to the host that the session is live (a replayed
    /// handshake cannot produce it), and names the application protocol.
    Hello {
        /// [`APP_PROTOCOL`].
        protocol: u32,
    },
    /// A command for the host's handler.
    Request {
        /// Echoed in the response.
        id: RequestId,
        /// The command's name (the core's command names, e.g. `approval_decide`).
        command: String,
        /// Its parameters.
        params: Value,
    },
}

/// What the host sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum ServerMessage {
    /// The answer to a request.
    Response(Response),
    /// One event of a stream.
    Event {
        /// Which stream.
        stream: StreamId,
        /// The event (for a chat, an AG-UI event).
        event: Value,
    },
    /// A stream has no more events.
    StreamEnd {
        /// Which stream.
        stream: StreamId,
    },
    /// The host is about to close the connection.
    Closing {
        /// Why.
        reason: CloseReason,
        /// Why, for the owner.
        message: String,
        /// With [`CloseReason::MessageTooLarge`]: the host's bound, so the companion knows which
        /// of its waiting requests were refused unread (those over it) and which are uncertain.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<usize>,
    },
}

/// The answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawResponse", into = "RawResponse")]
pub(crate) struct Response {
    /// The request's id.
    pub(crate) id: RequestId,
    /// `result` or `error`.
    pub(crate) outcome: Outcome,
}

/// A response's outcome: exactly one of `result` and `error` on the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The handler's value.
    Result(Value),
    /// The handler's error.
    Error(RemoteError),
}

/// A response as it is spelled, checked into a [`Response`] (serde's flattened enums would
/// accept both fields at once).
#[derive(Serialize, Deserialize)]
struct RawResponse {
    id: RequestId,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<RemoteError>,
}

/// A field that is present, even as `null`, is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl TryFrom<RawResponse> for Response {
    type Error = String;

    fn try_from(raw: RawResponse) -> Result<Self, String> {
        let outcome = match (raw.result, raw.error) {
            (Some(value), None) => Outcome::Result(value),
            (None, Some(error)) => Outcome::Error(error),
            (Some(_), Some(_)) => return Err(format!("response {} has both a result and an error", raw.id)),
            (None, None) => return Err(format!("response {} has neither a result nor an error", raw.id)),
        };
        Ok(Self { id: raw.id, outcome })
    }
}

impl From<Response> for RawResponse {
    fn from(response: Response) -> Self {
        match response.outcome {
            // A null result is still a result: `"result": null` is written.
            Outcome::Result(value) => Self { id: response.id, result: Some(value), error: None },
            Outcome::Error(error) => Self { id: response.id, result: None, error: Some(error) },
        }
    }
}

/// The payload of pairing message 3 (encrypted under keys that need the secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PairRequest {
    /// What the companion calls itself ("Pixel 8"), shown in Settings → Devices.
    pub(crate) name: String,
}

/// The host's first transport message after pairing: proves to the companion that the host knew
/// the secret too (key confirmation), and gives the id it registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PairConfirm {
    /// The id the host registered this device under (as text: the wire sits below the keys).
    pub(crate) device_id: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_json_on_the_wire_is_pinned() {
        let cases: Vec<(Value, Value)> = vec![
            (serde_json::to_value(ClientMessage::Hello { protocol: 1 }).unwrap(), json!({"type": "hello", "protocol": 1})),
            (
                serde_json::to_value(ClientMessage::Request { id: RequestId(7), command: "ping".into(), params: json!({"a": 1}) }).unwrap(),
                json!({"type": "request", "id": 7, "command": "ping", "params": {"a": 1}}),
            ),
            (
                serde_json::to_value(ServerMessage::Response(Response { id: RequestId(7), outcome: Outcome::Result(json!(null)) }))
                    .unwrap(),
                json!({"type": "response", "id": 7, "result": null}),
            ),
            (
                serde_json::to_value(ServerMessage::Response(Response {
                    id: RequestId(8),
                    outcome: Outcome::Error(RemoteError::new(ErrorCode::Forbidden, "no")),
                }))
                .unwrap(),
                json!({"type": "response", "id": 8, "error": {"code": "forbidden", "message": "no"}}),
            ),
            (
                serde_json::to_value(ServerMessage::Event { stream: StreamId::new("run-3"), event: json!({"t": 1}) }).unwrap(),
                json!({"type": "event", "stream": "run-3", "event": {"t": 1}}),
            ),
            (
                serde_json::to_value(ServerMessage::StreamEnd { stream: StreamId::new("run-3") }).unwrap(),
                json!({"type": "streamEnd", "stream": "run-3"}),
            ),
            (
                serde_json::to_value(ServerMessage::Closing { reason: CloseReason::Revoked, message: "m".into(), limit: None }).unwrap(),
                json!({"type": "closing", "reason": "revoked", "message": "m"}),
            ),
            (
                serde_json::to_value(ServerMessage::Closing { reason: CloseReason::MessageTooLarge, message: "m".into(), limit: Some(4) })
                    .unwrap(),
                json!({"type": "closing", "reason": "messageTooLarge", "message": "m", "limit": 4}),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn responses_read_back_including_a_null_result() {
        for message in [
            ServerMessage::Response(Response { id: RequestId(1), outcome: Outcome::Result(Value::Null) }),
            ServerMessage::Response(Response { id: RequestId(2), outcome: Outcome::Result(json!({"x": [1, 2]})) }),
            ServerMessage::Response(Response { id: RequestId(3), outcome: Outcome::Error(RemoteError::new(ErrorCode::Internal, "bug")) }),
        ] {
            let text = serde_json::to_string(&message).unwrap();
            assert_eq!(serde_json::from_str::<ServerMessage>(&text).unwrap(), message);
        }
    }

    #[test]
    fn a_response_with_both_or_neither_outcome_is_refused() {
        for text in [r#"{"type":"response","id":1}"#, r#"{"type":"response","id":1,"result":1,"error":{"code":"internal","message":"x"}}"#]
        {
            assert!(serde_json::from_str::<ServerMessage>(text).is_err(), "{text}");
        }
    }
}
