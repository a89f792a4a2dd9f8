//! The AG-UI 1.0 event model: one struct per event type and the [`Event`] union.
//!
//! Source of truth: the AG-UI 1.0 JSON Schema (`https://ag-ui.com/spec/1.0/schema.json`)
//! as shipped in `@ag-ui/core` 1.0.0. AG-UI 1.0 defines **31** event types; this module
//! also accepts the **5** legacy `THINKING_*` events that 0.x producers still emit
//! (1.0 removed them; the official client rewrites them to `REASONING_*`), so
//! [`EventType::ALL`] has 36 entries, [`EventType::V1`] the 31 normative ones.
//!
//! Conventions, so the JSON matches the schema byte for byte:
//! * fields are camelCase on the wire and snake_case in Rust;
//! * optional fields are `Option` and are omitted when `None` (the schema forbids
//!   `null` for an absent optional, so we never write one; on input a `null` reads
//!   as absent, which is what the official client tolerates for older producers);
//! * every event carries the BaseEvent fields `timestamp`, `raw_event`, `metadata`;
//!   events that can belong to a subagent also carry `subagent_run_id`.
//!
//! Build events with struct-update syntax (`..Default::default()`), so adding an
//! optional field in a later minor version does not break callers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::MessageContent;
use super::input::{Message, RunAgentInput};
use super::outcome::{RunFinishedOutcome, SubagentFinishedOutcome, TokenUsage};
use super::patch::JsonPatchOp;

pub use super::Metadata;

/// Generates [`Event`], [`EventType`] and the per-type plumbing from one list, so the
/// union, the discriminator and the fast decoder cannot drift apart.
macro_rules! events {
    ($( $(#[doc = $doc:literal])* $variant:ident($ty:ident) = $wire:literal; )*) => {
        /// Any AG-UI event, discriminated by its `type` property.
        ///
        /// Serialises as the inner struct's fields plus `"type": "<SCREAMING_SNAKE>"`
        /// first. For decoding JSON prefer [`Event::from_json_slice`], which is several
        /// times faster than the generic internally-tagged `Deserialize` impl.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum Event {
            $( $(#[doc = $doc])* $variant($ty), )*
        }

        /// The discriminator of an [`Event`] (the wire `type` string).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum EventType {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl EventType {
            /// Every event type this crate understands: the 31 of AG-UI 1.0 followed by
            /// the 5 legacy `THINKING_*` types accepted on input.
            pub const ALL: [EventType; 36] = [ $( EventType::$variant, )* ];

            /// The wire spelling, e.g. `"TEXT_MESSAGE_START"`.
            pub const fn as_str(self) -> &'static str {
                match self { $( EventType::$variant => $wire, )* }
            }

            /// Parses the wire spelling; `None` for anything AG-UI 1.0 does not define.
            pub fn from_wire(s: &str) -> Option<EventType> {
                match s { $( $wire => Some(EventType::$variant), )* _ => None }
            }
        }

        impl Event {
            /// The discriminator of this event.
            pub fn event_type(&self) -> EventType {
                match self { $( Event::$variant(_) => EventType::$variant, )* }
            }

            /// When the event was created (Unix ms), if its producer said.
            pub fn timestamp(&self) -> Option<i64> {
                match self { $( Event::$variant(e) => e.timestamp, )* }
            }

            /// The timestamp slot, so a relay can stamp events that arrive without one.
            pub fn timestamp_mut(&mut self) -> &mut Option<i64> {
                match self { $( Event::$variant(e) => &mut e.timestamp, )* }
            }

            /// Deserialises `bytes` as the struct for `ty`, ignoring the `type` key.
            pub(crate) fn parse_as(ty: EventType, bytes: &[u8]) -> Result<Event, serde_json::Error> {
                match ty {
                    $( EventType::$variant => serde_json::from_slice::<$ty>(bytes).map(Event::$variant), )*
                }
            }
        }

        $(
            impl From<$ty> for Event {
                fn from(e: $ty) -> Self { Event::$variant(e) }
            }
        )*
    };
}

events! {
    /// Opens a streamed text message (`TEXT_MESSAGE_START`).
    TextMessageStart(TextMessageStartEvent) = "TEXT_MESSAGE_START";
    /// Appends a fragment to a streamed text message (`TEXT_MESSAGE_CONTENT`).
    TextMessageContent(TextMessageContentEvent) = "TEXT_MESSAGE_CONTENT";
    /// Closes a streamed text message (`TEXT_MESSAGE_END`).
    TextMessageEnd(TextMessageEndEvent) = "TEXT_MESSAGE_END";
    /// Shorthand for start/content/end when the producer cannot know boundaries (`TEXT_MESSAGE_CHUNK`).
    TextMessageChunk(TextMessageChunkEvent) = "TEXT_MESSAGE_CHUNK";
    /// Opens a tool call (`TOOL_CALL_START`).
    ToolCallStart(ToolCallStartEvent) = "TOOL_CALL_START";
    /// Appends a fragment of a tool call's JSON arguments (`TOOL_CALL_ARGS`).
    ToolCallArgs(ToolCallArgsEvent) = "TOOL_CALL_ARGS";
    /// Closes a tool call: its arguments are complete (`TOOL_CALL_END`).
    ToolCallEnd(ToolCallEndEvent) = "TOOL_CALL_END";
    /// Shorthand for a tool call's start/args/end (`TOOL_CALL_CHUNK`).
    ToolCallChunk(ToolCallChunkEvent) = "TOOL_CALL_CHUNK";
    /// What a tool returned; mints a tool message (`TOOL_CALL_RESULT`).
    ToolCallResult(ToolCallResultEvent) = "TOOL_CALL_RESULT";
    /// Replaces the agent state wholesale (`STATE_SNAPSHOT`).
    StateSnapshot(StateSnapshotEvent) = "STATE_SNAPSHOT";
    /// Changes the agent state with an RFC 6902 patch (`STATE_DELTA`).
    StateDelta(StateDeltaEvent) = "STATE_DELTA";
    /// The complete, ordered set of messages the producer owns (`MESSAGES_SNAPSHOT`).
    MessagesSnapshot(MessagesSnapshotEvent) = "MESSAGES_SNAPSHOT";
    /// Structured progress that is not conversation content (`ACTIVITY_SNAPSHOT`).
    ActivitySnapshot(ActivitySnapshotEvent) = "ACTIVITY_SNAPSHOT";
    /// Patches an activity message's content (`ACTIVITY_DELTA`).
    ActivityDelta(ActivityDeltaEvent) = "ACTIVITY_DELTA";
    /// A provider-native event passed through untranslated (`RAW`).
    Raw(RawEvent) = "RAW";
    /// An application-defined event (`CUSTOM`).
    Custom(CustomEvent) = "CUSTOM";
    /// Opens a run (`RUN_STARTED`).
    RunStarted(RunStartedEvent) = "RUN_STARTED";
    /// Closes a run that did not fail: success, interrupt or cancelled (`RUN_FINISHED`).
    RunFinished(RunFinishedEvent) = "RUN_FINISHED";
    /// Ends a run that failed (`RUN_ERROR`).
    RunError(RunErrorEvent) = "RUN_ERROR";
    /// Opens a named step (`STEP_STARTED`).
    StepStarted(StepStartedEvent) = "STEP_STARTED";
    /// Closes a named step (`STEP_FINISHED`).
    StepFinished(StepFinishedEvent) = "STEP_FINISHED";
    /// Opens a span of reasoning (`REASONING_START`).
    ReasoningStart(ReasoningStartEvent) = "REASONING_START";
    /// Opens a streamed reasoning message (`REASONING_MESSAGE_START`).
    ReasoningMessageStart(ReasoningMessageStartEvent) = "REASONING_MESSAGE_START";
    /// Appends a fragment to a reasoning message (`REASONING_MESSAGE_CONTENT`).
    ReasoningMessageContent(ReasoningMessageContentEvent) = "REASONING_MESSAGE_CONTENT";
    /// Closes a reasoning message (`REASONING_MESSAGE_END`).
    ReasoningMessageEnd(ReasoningMessageEndEvent) = "REASONING_MESSAGE_END";
    /// Shorthand for a reasoning message's start/content/end (`REASONING_MESSAGE_CHUNK`).
    ReasoningMessageChunk(ReasoningMessageChunkEvent) = "REASONING_MESSAGE_CHUNK";
    /// Closes a span of reasoning (`REASONING_END`).
    ReasoningEnd(ReasoningEndEvent) = "REASONING_END";
    /// A provider's opaque encrypted reasoning artefact (`REASONING_ENCRYPTED_VALUE`).
    ReasoningEncryptedValue(ReasoningEncryptedValueEvent) = "REASONING_ENCRYPTED_VALUE";
    /// A subagent invocation began (`SUBAGENT_STARTED`).
    SubagentStarted(SubagentStartedEvent) = "SUBAGENT_STARTED";
    /// A subagent invocation's segment of this run ended (`SUBAGENT_FINISHED`).
    SubagentFinished(SubagentFinishedEvent) = "SUBAGENT_FINISHED";
    /// A subagent invocation failed; the run may continue (`SUBAGENT_ERROR`).
    SubagentError(SubagentErrorEvent) = "SUBAGENT_ERROR";
    /// Legacy 0.x, removed in 1.0: use `REASONING_START` (`THINKING_START`).
    ThinkingStart(ThinkingStartEvent) = "THINKING_START";
    /// Legacy 0.x, removed in 1.0: use `REASONING_END` (`THINKING_END`).
    ThinkingEnd(ThinkingEndEvent) = "THINKING_END";
    /// Legacy 0.x, removed in 1.0: use `REASONING_MESSAGE_START` (`THINKING_TEXT_MESSAGE_START`).
    ThinkingTextMessageStart(ThinkingTextMessageStartEvent) = "THINKING_TEXT_MESSAGE_START";
    /// Legacy 0.x, removed in 1.0: use `REASONING_MESSAGE_CONTENT` (`THINKING_TEXT_MESSAGE_CONTENT`).
    ThinkingTextMessageContent(ThinkingTextMessageContentEvent) = "THINKING_TEXT_MESSAGE_CONTENT";
    /// Legacy 0.x, removed in 1.0: use `REASONING_MESSAGE_END` (`THINKING_TEXT_MESSAGE_END`).
    ThinkingTextMessageEnd(ThinkingTextMessageEndEvent) = "THINKING_TEXT_MESSAGE_END";
}

impl EventType {
    /// The 31 event types AG-UI 1.0 defines (no legacy `THINKING_*`).
    pub const V1: [EventType; 31] = {
        let mut out = [EventType::TextMessageStart; 31];
        let mut i = 0;
        while i < 31 {
            out[i] = EventType::ALL[i];
            i += 1;
        }
        out
    };

    /// The 5 legacy `THINKING_*` types: accepted on input, never emitted by Hearth.
    pub const LEGACY: [EventType; 5] = [
        EventType::ThinkingStart,
        EventType::ThinkingEnd,
        EventType::ThinkingTextMessageStart,
        EventType::ThinkingTextMessageContent,
        EventType::ThinkingTextMessageEnd,
    ];

    /// Whether this is one of the legacy `THINKING_*` types that 1.0 removed.
    pub const fn is_legacy(self) -> bool {
        matches!(
            self,
            EventType::ThinkingStart
                | EventType::ThinkingEnd
                | EventType::ThinkingTextMessageStart
                | EventType::ThinkingTextMessageContent
                | EventType::ThinkingTextMessageEnd
        )
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Event {
    /// The subagent this event is attributed to (or, for `SUBAGENT_*`, identifies).
    /// `None` means the parent agent, or an event type that is run-scoped.
    pub fn subagent_run_id(&self) -> Option<&str> {
        match self {
            Event::TextMessageStart(e) => e.subagent_run_id.as_deref(),
            Event::TextMessageContent(e) => e.subagent_run_id.as_deref(),
            Event::TextMessageEnd(e) => e.subagent_run_id.as_deref(),
            Event::TextMessageChunk(e) => e.subagent_run_id.as_deref(),
            Event::ToolCallStart(e) => e.subagent_run_id.as_deref(),
            Event::ToolCallArgs(e) => e.subagent_run_id.as_deref(),
            Event::ToolCallEnd(e) => e.subagent_run_id.as_deref(),
            Event::ToolCallChunk(e) => e.subagent_run_id.as_deref(),
            Event::ToolCallResult(e) => e.subagent_run_id.as_deref(),
            Event::StateSnapshot(e) => e.subagent_run_id.as_deref(),
            Event::StateDelta(e) => e.subagent_run_id.as_deref(),
            Event::ActivitySnapshot(e) => e.subagent_run_id.as_deref(),
            Event::ActivityDelta(e) => e.subagent_run_id.as_deref(),
            Event::Raw(e) => e.subagent_run_id.as_deref(),
            Event::Custom(e) => e.subagent_run_id.as_deref(),
            Event::StepStarted(e) => e.subagent_run_id.as_deref(),
            Event::StepFinished(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningStart(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningMessageStart(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningMessageContent(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningMessageEnd(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningMessageChunk(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningEnd(e) => e.subagent_run_id.as_deref(),
            Event::ReasoningEncryptedValue(e) => e.subagent_run_id.as_deref(),
            Event::SubagentStarted(e) => Some(&e.subagent_run_id),
            Event::SubagentFinished(e) => Some(&e.subagent_run_id),
            Event::SubagentError(e) => Some(&e.subagent_run_id),
            Event::MessagesSnapshot(_)
            | Event::RunStarted(_)
            | Event::RunFinished(_)
            | Event::RunError(_)
            | Event::ThinkingStart(_)
            | Event::ThinkingEnd(_)
            | Event::ThinkingTextMessageStart(_)
            | Event::ThinkingTextMessageContent(_)
            | Event::ThinkingTextMessageEnd(_) => None,
        }
    }
}

// ---------------------------------------------------------------------------------
// Small enums
// ---------------------------------------------------------------------------------

/// The roles a streamed text message may take (`tool` is carried by `TOOL_CALL_RESULT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextMessageRole {
    /// Instructions from the application developer.
    Developer,
    /// Instructions from the system.
    System,
    /// The agent; what an absent role means, normatively.
    #[default]
    Assistant,
    /// The person using the application.
    User,
}

/// The only role `TOOL_CALL_RESULT` may state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRole {
    /// `"tool"`.
    #[default]
    Tool,
}

/// The only role `REASONING_MESSAGE_START` may state (required on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningRole {
    /// `"reasoning"`.
    #[default]
    Reasoning,
}

/// Whether a `REASONING_ENCRYPTED_VALUE` belongs to a message or to a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ReasoningEncryptedValueSubtype {
    /// `"tool-call"`: `entity_id` names a tool call.
    #[serde(rename = "tool-call")]
    ToolCall,
    /// `"message"`: `entity_id` names a text or reasoning message.
    #[default]
    #[serde(rename = "message")]
    Message,
}

// ---------------------------------------------------------------------------------
// Text messages
// ---------------------------------------------------------------------------------

/// `TEXT_MESSAGE_START`: opens a streamed text message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageStartEvent {
    /// Identifies the message; content and end events refer to it.
    pub message_id: String,
    /// Author role. Absent on the wire means assistant; always written explicitly.
    #[serde(default)]
    pub role: TextMessageRole,
    /// Optional display name of the author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created (ms since epoch by convention).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept. Never `Some(Null)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TEXT_MESSAGE_CONTENT`: appends a fragment to a streamed text message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageContentEvent {
    /// The open message this fragment belongs to.
    pub message_id: String,
    /// The text fragment.
    pub delta: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TEXT_MESSAGE_END`: closes a streamed text message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageEndEvent {
    /// The message being closed.
    pub message_id: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TEXT_MESSAGE_CHUNK`: stands in for start/content/end. Every field is optional
/// because a continuation chunk omits what has not changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageChunkEvent {
    /// The message; required on the first chunk of a message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Author role (absent = assistant on the opening chunk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<TextMessageRole>,
    /// The text fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Optional display name of the author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Tool calls
// ---------------------------------------------------------------------------------

/// `TOOL_CALL_START`: opens a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallStartEvent {
    /// Identifies the call; args, end and result refer to it.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_call_name: String,
    /// The assistant message that carries this call, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TOOL_CALL_ARGS`: appends a fragment of the call's JSON arguments.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallArgsEvent {
    /// The open call.
    pub tool_call_id: String,
    /// A fragment of the JSON-encoded arguments (fragments concatenate).
    pub delta: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TOOL_CALL_END`: the call's arguments are complete.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEndEvent {
    /// The call being closed.
    pub tool_call_id: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TOOL_CALL_CHUNK`: stands in for a tool call's start/args/end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallChunkEvent {
    /// The call; required on the first chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's name; required on the first chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_name: Option<String>,
    /// The assistant message that carries this call, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<String>,
    /// A fragment of the JSON-encoded arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `TOOL_CALL_RESULT`: what a tool returned. Mints a new tool message, hence its own
/// `message_id`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResultEvent {
    /// The id of the tool message this result creates.
    pub message_id: String,
    /// The call this answers.
    pub tool_call_id: String,
    /// The result: a string, or (new in 1.0) an array of content parts.
    pub content: MessageContent,
    /// Always `tool` when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<ToolRole>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// State, messages, activity
// ---------------------------------------------------------------------------------

/// `STATE_SNAPSHOT`: replaces the agent state wholesale.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshotEvent {
    /// The new state: any JSON value (required; `null` is a value here).
    pub snapshot: Value,
    /// The subagent that produced the update (provenance only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `STATE_DELTA`: changes the agent state incrementally.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateDeltaEvent {
    /// An RFC 6902 JSON Patch, applied in order.
    pub delta: Vec<JsonPatchOp>,
    /// The subagent that produced the update (provenance only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `MESSAGES_SNAPSHOT`: the complete set of messages the producer owns, in order.
/// Conversation-wide, so it carries no subagent attribution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagesSnapshotEvent {
    /// The messages.
    pub messages: Vec<Message>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `ACTIVITY_SNAPSHOT`: structured progress that is not conversation content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivitySnapshotEvent {
    /// The activity message this snapshot creates or overwrites.
    pub message_id: String,
    /// Application-defined kind, e.g. `"PLAN"`.
    pub activity_type: String,
    /// The activity's payload (a JSON object).
    pub content: Metadata,
    /// Whether to overwrite existing content. Absent means `true` (normative); see
    /// [`ActivitySnapshotEvent::replaces`]. Kept as `Option` so absent round-trips.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl ActivitySnapshotEvent {
    /// The effective `replace` flag: absent means `true`.
    pub fn replaces(&self) -> bool {
        self.replace.unwrap_or(true)
    }
}

/// `ACTIVITY_DELTA`: patches an activity message's content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityDeltaEvent {
    /// The activity message to patch.
    pub message_id: String,
    /// Application-defined kind.
    pub activity_type: String,
    /// An RFC 6902 JSON Patch against the activity content.
    pub patch: Vec<JsonPatchOp>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Raw and custom
// ---------------------------------------------------------------------------------

/// `RAW`: a provider-native event passed through untranslated.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEvent {
    /// The provider event (required; any JSON value).
    pub event: Value,
    /// Where it came from, e.g. `"ollama"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `CUSTOM`: the protocol's extension point for an application's own events.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEvent {
    /// Application-defined name.
    pub name: String,
    /// Application-defined payload (required; any JSON value).
    pub value: Value,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Run lifecycle
// ---------------------------------------------------------------------------------

/// `RUN_STARTED`: opens a run. Run-scoped, so no subagent attribution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStartedEvent {
    /// The conversation thread.
    pub thread_id: String,
    /// This run.
    pub run_id: String,
    /// The protocol version the producer speaks, e.g. `"1.0"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The run this one continues or was spawned by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Echo of the request that started the run (boxed: it is large and rare).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Box<RunAgentInput>>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `RUN_FINISHED`: closes a run that did not fail. *Why* it ended is `outcome`:
/// success (also what an absent outcome means), interrupt, or cancelled — the last is
/// how a run stopped by its owner (Hearth's Stop button) is expressed in 1.0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFinishedEvent {
    /// The conversation thread.
    pub thread_id: String,
    /// The run that ended.
    pub run_id: String,
    /// What the run produced, if anything (any non-null JSON value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why the run ended; `None` means success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunFinishedOutcome>,
    /// Token usage per (provider, model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<TokenUsage>>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl RunFinishedEvent {
    /// A run that completed normally: `outcome: {"type":"success"}` plus an optional
    /// result. `Some(Value::Null)` is treated as no result (the schema forbids `null`).
    pub fn success(thread_id: impl Into<String>, run_id: impl Into<String>, result: Option<Value>) -> Self {
        RunFinishedEvent {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            result: result.filter(|v| !v.is_null()),
            outcome: Some(RunFinishedOutcome::success()),
            ..Default::default()
        }
    }

    /// A run its owner stopped before it completed: `outcome: {"type":"cancelled"}`,
    /// the 1.0 spelling (neither a success nor a failure, nothing to resume).
    pub fn cancelled(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunFinishedEvent {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            outcome: Some(RunFinishedOutcome::Cancelled),
            ..Default::default()
        }
    }

    /// Whether the run was stopped by its owner (outcome `cancelled`).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.outcome, Some(RunFinishedOutcome::Cancelled))
    }

    /// Whether the run paused on interrupts (outcome `interrupt`).
    pub fn is_interrupted(&self) -> bool {
        matches!(self.outcome, Some(RunFinishedOutcome::Interrupt { .. }))
    }

    /// Whether the run completed normally (outcome `success` or absent).
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, None | Some(RunFinishedOutcome::Success { .. }))
    }
}

/// `RUN_ERROR`: ends a run that failed. Nothing but a new `RUN_STARTED` may follow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunErrorEvent {
    /// Human-readable description of the failure.
    pub message: String,
    /// Machine-readable error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Partial token usage for model calls that completed before the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<TokenUsage>>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `STEP_STARTED`: opens a named step within a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepStartedEvent {
    /// The step's name; `STEP_FINISHED` pairs by it (per owner).
    pub step_name: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `STEP_FINISHED`: closes a named step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepFinishedEvent {
    /// The step's name.
    pub step_name: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Reasoning
// ---------------------------------------------------------------------------------

/// `REASONING_START`: opens a span of reasoning, which may hold several messages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningStartEvent {
    /// Identifies the span (it namespaces nothing; messages carry their own ids).
    pub message_id: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_MESSAGE_START`: opens a streamed reasoning message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageStartEvent {
    /// Identifies the reasoning message.
    pub message_id: String,
    /// Always `reasoning` (required on the wire).
    pub role: ReasoningRole,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_MESSAGE_CONTENT`: appends a fragment to a reasoning message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageContentEvent {
    /// The open reasoning message.
    pub message_id: String,
    /// The text fragment.
    pub delta: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_MESSAGE_END`: closes a reasoning message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageEndEvent {
    /// The reasoning message being closed.
    pub message_id: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_MESSAGE_CHUNK`: stands in for a reasoning message's start/content/end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageChunkEvent {
    /// The reasoning message; required on the first chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The text fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_END`: closes a span of reasoning.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEndEvent {
    /// The span being closed.
    pub message_id: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `REASONING_ENCRYPTED_VALUE`: an opaque encrypted reasoning artefact the consumer
/// stores and returns on a later turn without being able to read it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEncryptedValueEvent {
    /// Whether `entity_id` names a message or a tool call.
    pub subtype: ReasoningEncryptedValueSubtype,
    /// The message or tool call the value belongs to.
    pub entity_id: String,
    /// The opaque value.
    pub encrypted_value: String,
    /// The subagent invocation this belongs to; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Subagents
// ---------------------------------------------------------------------------------

/// `SUBAGENT_STARTED`: a subagent invocation began; later events it produces carry its
/// `subagent_run_id`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStartedEvent {
    /// Opaque handle of this invocation (required here: it *identifies* the subagent).
    pub subagent_run_id: String,
    /// The subagent's name.
    pub name: String,
    /// What the subagent does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The enclosing subagent invocation, when nested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_subagent_run_id: Option<String>,
    /// The tool call that delegated to this subagent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
    /// The message that delegated to this subagent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `SUBAGENT_FINISHED`: the subagent's segment of this run ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentFinishedEvent {
    /// The invocation that ended.
    pub subagent_run_id: String,
    /// What it produced (any non-null JSON value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why it ended; `None` means success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SubagentFinishedOutcome>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `SUBAGENT_ERROR`: a subagent invocation failed; unlike `RUN_ERROR` the run goes on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentErrorEvent {
    /// The invocation that failed.
    pub subagent_run_id: String,
    /// Human-readable description of the failure.
    pub message: String,
    /// Machine-readable error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------
// Legacy THINKING_* (0.x; accepted on input)
// ---------------------------------------------------------------------------------

/// Legacy `THINKING_START` (0.x). Maps to `REASONING_START`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingStartEvent {
    /// Optional title of the thinking step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Legacy `THINKING_END` (0.x). Maps to `REASONING_END`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingEndEvent {
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Legacy `THINKING_TEXT_MESSAGE_START` (0.x). Maps to `REASONING_MESSAGE_START`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingTextMessageStartEvent {
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Legacy `THINKING_TEXT_MESSAGE_CONTENT` (0.x). Maps to `REASONING_MESSAGE_CONTENT`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingTextMessageContentEvent {
    /// The text fragment.
    pub delta: String,
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Legacy `THINKING_TEXT_MESSAGE_END` (0.x). Maps to `REASONING_MESSAGE_END`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingTextMessageEndEvent {
    /// When the event was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The provider event this was translated from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn counts_match_the_1_0_schema() {
        assert_eq!(EventType::V1.len(), 31);
        assert_eq!(EventType::LEGACY.len(), 5);
        assert!(EventType::V1.iter().all(|t| !t.is_legacy()));
        assert!(EventType::LEGACY.iter().all(|t| t.is_legacy()));
        let mut all: Vec<_> = EventType::ALL.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 36);
    }

    #[test]
    fn wire_names_agree_with_serde() {
        for ty in EventType::ALL {
            let via_serde = serde_json::to_string(&ty).unwrap();
            assert_eq!(via_serde, format!("\"{}\"", ty.as_str()));
            assert_eq!(EventType::from_wire(ty.as_str()), Some(ty));
        }
        assert_eq!(EventType::from_wire("NOPE"), None);
    }

    #[test]
    fn text_message_start_writes_role_and_defaults_it_on_input() {
        let e = Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() });
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(s, r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#);
        let back = Event::from_json_str(r#"{"type":"TEXT_MESSAGE_START","messageId":"m1"}"#).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn run_finished_cancelled_is_an_outcome() {
        let e = RunFinishedEvent::cancelled("t", "r");
        assert!(e.is_cancelled());
        assert!(!e.is_success());
        let s = serde_json::to_string(&Event::RunFinished(e)).unwrap();
        assert_eq!(s, r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}"#);
        let ok = RunFinishedEvent::success("t", "r", Some(json!({"n":1})));
        assert!(ok.is_success() && !ok.is_cancelled());
        let legacy: RunFinishedEvent = serde_json::from_str(r#"{"threadId":"t","runId":"r","outcome":null}"#).unwrap();
        assert!(legacy.is_success());
        assert_eq!(RunFinishedEvent::success("t", "r", Some(Value::Null)).result, None);
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        let fast = r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"a\":"}"#;
        let slow = r#"{ "delta":"{\"a\":", "toolCallId":"c", "type" : "TOOL_CALL_ARGS" }"#;
        assert_eq!(Event::from_json_str(fast).unwrap(), Event::from_json_str(slow).unwrap());
        let generic: Event = serde_json::from_str(slow).unwrap();
        assert_eq!(generic, Event::from_json_str(fast).unwrap());
    }

    #[test]
    fn unknown_or_missing_type_is_an_error() {
        let e = Event::from_json_str(r#"{"type":"NOPE"}"#).unwrap_err();
        assert!(e.to_string().contains("NOPE"), "{e}");
        assert!(Event::from_json_str(r#"{"messageId":"m"}"#).is_err());
        assert!(Event::from_json_str(r#"{"type":"TEXT_MESSAGE_END"}"#).is_err());
    }

    #[test]
    fn unknown_fields_are_ignored_as_the_schema_is_open() {
        let e = Event::from_json_str(r#"{"type":"TEXT_MESSAGE_END","messageId":"m","x":[1,{"y":2}]}"#).unwrap();
        assert_eq!(e.event_type(), EventType::TextMessageEnd);
    }

    #[test]
    fn legacy_thinking_decodes() {
        let e = Event::from_json_str(r#"{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hm"}"#).unwrap();
        assert_eq!(e, Event::ThinkingTextMessageContent(ThinkingTextMessageContentEvent { delta: "hm".into(), ..Default::default() }));
        assert!(e.event_type().is_legacy());
    }

    #[test]
    fn subagent_attribution_is_exposed() {
        let e = Event::StepStarted(StepStartedEvent { step_name: "s".into(), subagent_run_id: Some("sa".into()), ..Default::default() });
        assert_eq!(e.subagent_run_id(), Some("sa"));
        assert_eq!(Event::RunFinished(RunFinishedEvent::default()).subagent_run_id(), None);
    }
}
