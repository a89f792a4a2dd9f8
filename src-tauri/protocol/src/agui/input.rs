//! What a client sends to run an agent ([`RunAgentInput`]) and the conversation types it
//! carries: [`Message`] (tagged by `role`), [`ToolCall`], [`Tool`], [`Context`] and
//! [`ResumeEntry`]. Shapes follow the AG-UI 1.0 schema; `RUN_STARTED.input` echoes it
//! and `MESSAGES_SNAPSHOT` carries messages.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Metadata;
use super::content::MessageContent;

/// A request to run an agent. Only `thread_id`, `run_id` and `messages` are required
/// by 1.0; `tools` and `context` default to empty (absent and `[]` mean the same).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The conversation thread.
    pub thread_id: String,
    /// The run this request starts.
    pub run_id: String,
    /// The run this one continues or was spawned by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Agent state, any JSON value. `Null` means "no state": it is omitted on output,
    /// and an input `null` reads as absent (the schema's coerce rule).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub state: Value,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the client offers for this run.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Ambient information for this run.
    #[serde(default)]
    pub context: Vec<Context>,
    /// Application-defined properties passed through to the agent. `Null` = absent.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub forwarded_props: Value,
    /// The protocol version the client speaks, e.g. `"1.0"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Answers to the interrupts a previous run finished with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Vec<ResumeEntry>>,
}

/// Every role a materialised message may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the application developer.
    Developer,
    /// Instructions from the system.
    System,
    /// The agent.
    Assistant,
    /// The person using the application.
    User,
    /// What a tool returned.
    Tool,
    /// Structured progress (not conversation content).
    Activity,
    /// A span of the agent's reasoning.
    Reasoning,
}

/// Any message in a conversation, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// `role: "developer"`.
    Developer(DeveloperMessage),
    /// `role: "system"`.
    System(SystemMessage),
    /// `role: "assistant"`.
    Assistant(AssistantMessage),
    /// `role: "user"`.
    User(UserMessage),
    /// `role: "tool"`.
    Tool(ToolMessage),
    /// `role: "activity"`.
    Activity(ActivityMessage),
    /// `role: "reasoning"`.
    Reasoning(ReasoningMessage),
}

impl Message {
    /// The message id.
    pub fn id(&self) -> &str {
        match self {
            Message::Developer(m) => &m.id,
            Message::System(m) => &m.id,
            Message::Assistant(m) => &m.id,
            Message::User(m) => &m.id,
            Message::Tool(m) => &m.id,
            Message::Activity(m) => &m.id,
            Message::Reasoning(m) => &m.id,
        }
    }

    /// The role discriminator.
    pub fn role(&self) -> Role {
        match self {
            Message::Developer(_) => Role::Developer,
            Message::System(_) => Role::System,
            Message::Assistant(_) => Role::Assistant,
            Message::User(_) => Role::User,
            Message::Tool(_) => Role::Tool,
            Message::Activity(_) => Role::Activity,
            Message::Reasoning(_) => Role::Reasoning,
        }
    }

    /// The subagent that owns the message; `None` = the parent agent.
    pub fn subagent_run_id(&self) -> Option<&str> {
        match self {
            Message::Developer(m) => m.subagent_run_id.as_deref(),
            Message::System(m) => m.subagent_run_id.as_deref(),
            Message::Assistant(m) => m.subagent_run_id.as_deref(),
            Message::User(m) => m.subagent_run_id.as_deref(),
            Message::Tool(m) => m.subagent_run_id.as_deref(),
            Message::Activity(m) => m.subagent_run_id.as_deref(),
            Message::Reasoning(m) => m.subagent_run_id.as_deref(),
        }
    }
}

/// Instructions from the application developer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeveloperMessage {
    /// Message id.
    pub id: String,
    /// The instructions.
    pub content: String,
    /// Optional author name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Provider's opaque encrypted payload, returned verbatim on later turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Instructions from the system.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Message id.
    pub id: String,
    /// The instructions.
    pub content: String,
    /// Optional author name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Provider's opaque encrypted payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A message from the agent. Content is optional: a turn may be only tool calls.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Message id.
    pub id: String,
    /// The text, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The calls this turn made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Optional author name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Provider's opaque encrypted payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A message from the person using the application: text or content parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Message id.
    pub id: String,
    /// A string, or an array of content parts (text, image, audio, video, document).
    pub content: MessageContent,
    /// Optional author name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Provider's opaque encrypted payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// What a tool returned, as a conversation message. Carries no name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMessage {
    /// Message id.
    pub id: String,
    /// The result: a string or content parts.
    pub content: MessageContent,
    /// The call this answers.
    pub tool_call_id: String,
    /// Set when the tool failed; describes the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Provider's opaque encrypted payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Structured progress materialised as a message so it keeps its place in order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityMessage {
    /// Message id.
    pub id: String,
    /// Application-defined kind.
    pub activity_type: String,
    /// The activity payload (a JSON object).
    pub content: Metadata,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A span of the agent's reasoning, materialised as a message. Carries no name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessage {
    /// Message id.
    pub id: String,
    /// The reasoning text.
    pub content: String,
    /// Provider's opaque encrypted reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// The owning subagent; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The only tool call kind 1.0 has: `"function"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallType {
    /// `"function"`.
    #[default]
    Function,
}

/// A call an assistant message made. Inherits its message's subagent attribution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id; the tool message answering it carries this as `tool_call_id`.
    pub id: String,
    /// Always `function`.
    pub r#type: ToolCallType,
    /// Name and JSON-encoded arguments.
    pub function: FunctionCall,
    /// Provider's opaque encrypted payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl ToolCall {
    /// A function call with the given id, tool name and JSON-encoded arguments.
    pub fn function(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCall { id: id.into(), function: FunctionCall { name: name.into(), arguments: arguments.into() }, ..Default::default() }
    }
}

/// The name and arguments of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as a JSON-encoded string (not a JSON object), as streamed.
    pub arguments: String,
}

/// A tool the agent may call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments. Optional in 1.0: `Null` = absent (omitted).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub parameters: Value,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A named piece of ambient information given to the agent for the run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Context {
    /// What the value is.
    pub description: String,
    /// The value, as text.
    pub value: String,
}

/// How an interrupt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered; `payload` carries the answer.
    #[default]
    Resolved,
    /// Declined by the user.
    Cancelled,
}

/// An answer to one interrupt, sent on the run that continues from it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered.
    pub interrupt_id: String,
    /// Resolved or cancelled.
    pub status: ResumeStatus,
    /// The answer (any non-null JSON value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Envelope data (signatures, routing keys), as opposed to the answer.
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
    fn minimal_input_defaults_tools_and_context() {
        let i: RunAgentInput = serde_json::from_str(r#"{"threadId":"t","runId":"r","messages":[],"state":null}"#).unwrap();
        assert_eq!(i.tools, vec![]);
        assert_eq!(i.state, Value::Null);
        assert_eq!(serde_json::to_string(&i).unwrap(), r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[]}"#);
        assert!(serde_json::from_str::<RunAgentInput>(r#"{"threadId":"t","runId":"r"}"#).is_err());
    }

    #[test]
    fn messages_are_tagged_by_role() {
        let msgs = vec![
            Message::User(UserMessage { id: "u".into(), content: "hi".into(), ..Default::default() }),
            Message::Assistant(AssistantMessage {
                id: "a".into(),
                tool_calls: Some(vec![ToolCall::function("c", "clock", "{}")]),
                ..Default::default()
            }),
            Message::Tool(ToolMessage { id: "t".into(), content: "12:00".into(), tool_call_id: "c".into(), ..Default::default() }),
        ];
        let v = serde_json::to_value(&msgs).unwrap();
        assert_eq!(
            v,
            json!([
                {"role":"user","id":"u","content":"hi"},
                {"role":"assistant","id":"a","toolCalls":[{"id":"c","type":"function","function":{"name":"clock","arguments":"{}"}}]},
                {"role":"tool","id":"t","content":"12:00","toolCallId":"c"}
            ])
        );
        let back: Vec<Message> = serde_json::from_value(v).unwrap();
        assert_eq!(back, msgs);
        assert_eq!(back[2].role(), Role::Tool);
        assert_eq!(back[1].id(), "a");
    }

    #[test]
    fn user_content_may_be_parts() {
        let m: Message = serde_json::from_value(json!({
            "role":"user","id":"u",
            "content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}}]
        }))
        .unwrap();
        let Message::User(u) = m else { panic!("not a user message") };
        assert_eq!(u.content.to_text(), "look");
    }

    #[test]
    fn tool_parameters_are_optional() {
        let t: Tool = serde_json::from_str(r#"{"name":"n","description":"d"}"#).unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"name":"n","description":"d"}"#);
    }
}
