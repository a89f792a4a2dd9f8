//! What one harness run said and called, rebuilt from its events the way an AG-UI client
//! does: the tool calls Hearth must answer, and the messages a continuation carries.

use std::collections::{HashMap, HashSet};

use hearth_protocol::agui::{AssistantMessage, Event, Message, TextMessageRole, ToolMessage};
use serde_json::Value;

use crate::tools::ToolCall;

/// One assistant message, or a tool result the harness produced itself, in stream order.
#[derive(Debug)]
enum Entry {
    Assistant { id: String, text: String, calls: Vec<String> },
    Tool(ToolMessage),
}

#[derive(Debug)]
struct Call {
    name: String,
    arguments: String,
    /// The arguments are complete (`TOOL_CALL_END`, or a chunked call).
    complete: bool,
}

/// The messages and calls of one harness run.
#[derive(Debug, Default)]
pub(super) struct Transcript {
    entries: Vec<Entry>,
    calls: HashMap<String, Call>,
    /// Call ids in the order they started.
    order: Vec<String>,
    /// Calls the harness answered itself (`TOOL_CALL_RESULT`).
    answered: HashSet<String>,
    /// The open `TEXT_MESSAGE_CHUNK` / `TOOL_CALL_CHUNK` streams.
    text_chunk: Option<String>,
    tool_chunk: Option<String>,
    /// The agent state: what the run was given, then its snapshots and deltas.
    state: Value,
}

impl Transcript {
    /// A transcript for a run given `state`.
    pub(super) fn new(state: Value) -> Self {
        Self { state, ..Self::default() }
    }

    /// Records one (verified) event.
    pub(super) fn observe(&mut self, event: &Event) {
        match event {
            Event::TextMessageStart(e) if e.role == TextMessageRole::Assistant => {
                self.assistant(&e.message_id);
            }
            Event::TextMessageContent(e) => self.append_text(&e.message_id, &e.delta),
            Event::TextMessageChunk(e) => {
                if let Some(id) = &e.message_id
                    && self.text_chunk.as_ref() != Some(id)
                {
                    self.text_chunk = Some(id.clone());
                    if e.role.is_none_or(|role| role == TextMessageRole::Assistant) {
                        self.assistant(id);
                    }
                }
                if let (Some(id), Some(delta)) = (self.text_chunk.clone(), &e.delta) {
                    self.append_text(&id, delta);
                }
            }
            Event::ToolCallStart(e) => {
                self.start_call(&e.tool_call_id, &e.tool_call_name, e.parent_message_id.as_deref(), false);
            }
            Event::ToolCallArgs(e) => {
                if let Some(call) = self.calls.get_mut(&e.tool_call_id) {
                    call.arguments.push_str(&e.delta);
                }
            }
            Event::ToolCallEnd(e) => {
                if let Some(call) = self.calls.get_mut(&e.tool_call_id) {
                    call.complete = true;
                }
            }
            Event::ToolCallChunk(e) => {
                if let (Some(id), Some(name)) = (&e.tool_call_id, &e.tool_call_name)
                    && self.tool_chunk.as_ref() != Some(id)
                {
                    self.tool_chunk = Some(id.clone());
                    self.start_call(id, name, e.parent_message_id.as_deref(), true);
                }
                if let (Some(id), Some(delta)) = (&self.tool_chunk, &e.delta)
                    && let Some(call) = self.calls.get_mut(id)
                {
                    call.arguments.push_str(delta);
                }
            }
            Event::ToolCallResult(e) => {
                self.answered.insert(e.tool_call_id.clone());
                self.entries.push(Entry::Tool(ToolMessage {
                    id: e.message_id.clone(),
                    content: e.content.clone(),
                    tool_call_id: e.tool_call_id.clone(),
                    ..Default::default()
                }));
            }
            Event::StateSnapshot(e) => self.state = e.snapshot.clone(),
            Event::StateDelta(e) => {
                // As the AG-UI client does: a patch that does not apply is skipped, not fatal.
                if let Err(reason) = super::state::apply(&mut self.state, &e.delta) {
                    tracing::warn!(reason, "a harness STATE_DELTA did not apply; the state is unchanged");
                }
            }
            _ => {}
        }
    }

    /// The calls Hearth must run: to a declared tool, complete, and not answered by the
    /// harness, in the order they started.
    pub(super) fn hearth_calls(&self, declared: &HashSet<String>) -> Vec<ToolCall> {
        self.order
            .iter()
            .filter(|id| !self.answered.contains(*id))
            .filter_map(|id| {
                let call = self.calls.get(id)?;
                (call.complete && declared.contains(&call.name)).then(|| ToolCall {
                    id: id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                })
            })
            .collect()
    }

    /// The state after the run's snapshots and deltas, which the continuation sends back.
    pub(super) fn state(&self) -> &Value {
        &self.state
    }

    /// The run's messages for the continuation: assistant messages with their text and the
    /// calls that will have an answer (Hearth's, or ones the harness answered), and the
    /// harness's own tool results. Calls nobody here answers are left out, so the history
    /// the harness gets back never has a call without its result.
    pub(super) fn messages(&self, declared: &HashSet<String>) -> Vec<Message> {
        let answerable = |id: &String| {
            self.answered.contains(id) || self.calls.get(id).is_some_and(|call| call.complete && declared.contains(&call.name))
        };
        let mut out = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            match entry {
                Entry::Assistant { id, text, calls } => {
                    let tool_calls: Vec<_> = calls
                        .iter()
                        .filter(|call_id| answerable(call_id))
                        .filter_map(|call_id| {
                            let call = self.calls.get(call_id)?;
                            Some(hearth_protocol::agui::ToolCall::function(call_id.clone(), call.name.clone(), call.arguments.clone()))
                        })
                        .collect();
                    if text.is_empty() && tool_calls.is_empty() {
                        continue;
                    }
                    out.push(Message::Assistant(AssistantMessage {
                        id: id.clone(),
                        content: (!text.is_empty()).then(|| text.clone()),
                        tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
                        ..Default::default()
                    }));
                }
                Entry::Tool(message) => out.push(Message::Tool(message.clone())),
            }
        }
        out
    }

    /// The index of the assistant message with this id, created at the end if it is new.
    fn assistant(&mut self, id: &str) -> usize {
        let existing = self.entries.iter().position(|entry| matches!(entry, Entry::Assistant { id: known, .. } if known == id));
        existing.unwrap_or_else(|| {
            self.entries.push(Entry::Assistant { id: id.to_owned(), text: String::new(), calls: Vec::new() });
            self.entries.len() - 1
        })
    }

    fn append_text(&mut self, message_id: &str, delta: &str) {
        for entry in &mut self.entries {
            if let Entry::Assistant { id, text, .. } = entry
                && id == message_id
            {
                text.push_str(delta);
                return;
            }
        }
    }

    fn start_call(&mut self, id: &str, name: &str, parent: Option<&str>, complete: bool) {
        // As the AG-UI client does: the call joins its parent message, or becomes one.
        let index = self.assistant(parent.unwrap_or(id));
        if let Some(Entry::Assistant { calls, .. }) = self.entries.get_mut(index) {
            calls.push(id.to_owned());
        }
        self.calls.insert(id.to_owned(), Call { name: name.to_owned(), arguments: String::new(), complete });
        self.order.push(id.to_owned());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use hearth_protocol::agui::{
        TextMessageContentEvent, TextMessageStartEvent, ToolCallArgsEvent, ToolCallEndEvent, ToolCallResultEvent, ToolCallStartEvent,
    };

    fn start(id: &str, name: &str, parent: Option<&str>) -> Event {
        Event::ToolCallStart(ToolCallStartEvent {
            tool_call_id: id.into(),
            tool_call_name: name.into(),
            parent_message_id: parent.map(str::to_owned),
            ..Default::default()
        })
    }

    fn args(id: &str, delta: &str) -> Event {
        Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: id.into(), delta: delta.into(), ..Default::default() })
    }

    fn end(id: &str) -> Event {
        Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: id.into(), ..Default::default() })
    }

    #[test]
    fn declared_complete_unanswered_calls_run_in_order_and_others_are_left_alone() {
        let declared: HashSet<String> = ["search_mail".to_owned(), "prepare_email".to_owned()].into();
        let mut t = Transcript::default();
        for event in [
            Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() }),
            Event::TextMessageContent(TextMessageContentEvent { message_id: "m1".into(), delta: "Looking".into(), ..Default::default() }),
            start("a", "search_mail", Some("m1")),
            args("a", "{\"query\":"),
            args("a", "\"x\"}"),
            end("a"),
            start("b", "show_map", Some("m1")),
            end("b"),
            start("c", "prepare_email", Some("m1")),
            end("c"),
            start("d", "search_mail", None),
            end("d"),
            Event::ToolCallResult(ToolCallResultEvent {
                message_id: "r".into(),
                tool_call_id: "d".into(),
                content: "done".into(),
                ..Default::default()
            }),
            start("e", "search_mail", Some("m1")),
        ] {
            t.observe(&event);
        }
        let calls = t.hearth_calls(&declared);
        let ids: Vec<_> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(calls[0].arguments, "{\"query\":\"x\"}");

        let messages = t.messages(&declared);
        assert_eq!(messages.len(), 3, "{messages:?}");
        let Message::Assistant(first) = &messages[0] else { panic!("{messages:?}") };
        assert_eq!(first.id, "m1");
        assert_eq!(first.content.as_deref(), Some("Looking"));
        let ids: Vec<_> = first.tool_calls.as_ref().unwrap().iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "c"], "show_map (nobody answers) and the unfinished call are left out");
        let Message::Assistant(second) = &messages[1] else { panic!("{messages:?}") };
        assert_eq!(second.id, "d");
        assert!(matches!(&messages[2], Message::Tool(m) if m.tool_call_id == "d"));
    }

    #[test]
    fn chunked_calls_and_text_are_assembled_like_the_client_expands_them() {
        use hearth_protocol::agui::{TextMessageChunkEvent, ToolCallChunkEvent};
        let declared: HashSet<String> = ["search_mail".to_owned()].into();
        let mut t = Transcript::new(Value::Null);
        let chunk = |id: Option<&str>, name: Option<&str>, delta: &str| {
            Event::ToolCallChunk(ToolCallChunkEvent {
                tool_call_id: id.map(str::to_owned),
                tool_call_name: name.map(str::to_owned),
                parent_message_id: Some("m1".into()),
                delta: Some(delta.into()),
                ..Default::default()
            })
        };
        for event in [
            Event::TextMessageChunk(TextMessageChunkEvent {
                message_id: Some("m1".into()),
                delta: Some("On it".into()),
                ..Default::default()
            }),
            chunk(Some("a"), Some("search_mail"), "{\"query\""),
            chunk(None, None, ":\"x\"}"),
            chunk(Some("b"), Some("search_mail"), "{}"),
        ] {
            t.observe(&event);
        }
        let calls = t.hearth_calls(&declared);
        let got: Vec<_> = calls.iter().map(|c| (c.id.as_str(), c.arguments.as_str())).collect();
        assert_eq!(got, [("a", "{\"query\":\"x\"}"), ("b", "{}")]);
        let messages = t.messages(&declared);
        let [Message::Assistant(m)] = &messages[..] else { panic!("{messages:?}") };
        assert_eq!(m.content.as_deref(), Some("On it"));
        assert_eq!(m.tool_calls.as_ref().map(Vec::len), Some(2));
    }
}
