//! AG-UI 1.0 — the Agent-User Interaction Protocol — as plain serde types.
//!
//! * [`events`]: the 31 event types of AG-UI 1.0 (plus the 5 legacy `THINKING_*` types
//!   accepted on input) and the [`Event`] union;
//! * [`input`]: [`RunAgentInput`] and the conversation types it carries;
//! * [`content`], [`patch`], [`outcome`]: message bodies, JSON Patch, run outcomes;
//! * [`sse`]: `data: <json>\n\n` framing, encoder and incremental decoder;
//! * [`verify`]: the ordering rules of the official client's verifier.
//!
//! Wire shapes follow the AG-UI 1.0 JSON Schema shipped with `@ag-ui/core` 1.0.0.

pub mod content;
mod decode;
pub mod events;
pub mod input;
pub mod outcome;
pub mod patch;
pub mod sse;
pub mod verify;

pub use content::{ContentPart, MediaPart, MessageContent, PartSource, TextPart};
pub use events::*;
pub use input::{
    ActivityMessage, AssistantMessage, Context, DeveloperMessage, FunctionCall, Message, ReasoningMessage, ResumeEntry, ResumeStatus, Role,
    RunAgentInput, SystemMessage, Tool, ToolCall, ToolCallType, ToolMessage, UserMessage,
};
pub use outcome::{Interrupt, RunFinishedOutcome, SubagentFinishedOutcome, TokenUsage};
pub use patch::JsonPatchOp;
pub use sse::{SseDecoder, SseError, encode, encode_into};
pub use verify::{Entity, Verifier, VerifyError, verify_all};

/// Extra information attached to an event, message, tool call, tool, interrupt or
/// resume entry. Open by key; the key `"ag-ui"` is reserved for the protocol.
pub type Metadata = serde_json::Map<String, serde_json::Value>;
