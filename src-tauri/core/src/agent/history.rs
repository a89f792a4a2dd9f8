//! A conversation rebuilt from a thread's stored event log, so a model sees earlier turns:
//! what the owner said (each run's input), what the assistant answered, the tools it called
//! and their results.

use hearth_protocol::agui::{AssistantMessage, Event, FunctionCall, Message, TextMessageRole, ToolCall, ToolMessage};

/// The messages of the runs in `events`, oldest first.
pub fn conversation_from_events(events: &[Event]) -> Vec<Message> {
    let mut fold = HistoryFold::default();
    for event in events {
        fold.apply(event);
    }
    fold.conversation()
}

/// A conversation being rebuilt one event at a time, in the log's order. Hearth keeps one per
/// recently used thread (`hearth::conversations`), so a Send in a long thread decodes only
/// the events its log gained since the last Send rather than the whole log again.
#[derive(Debug, Clone, Default)]
pub struct HistoryFold {
    messages: Vec<Message>,
    /// The assistant message being built for the current step: text, then tool calls.
    open: Option<AssistantMessage>,
}

impl HistoryFold {
    fn close(&mut self) {
        if let Some(done) = self.open.take() {
            self.messages.push(Message::Assistant(done));
        }
    }

    /// Takes the next event of the log.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted(started) => {
                self.close();
                if let Some(input) = &started.input {
                    self.messages.extend(input.messages.iter().filter(|m| matches!(m, Message::User(_))).cloned());
                }
            }
            Event::TextMessageStart(start) if start.role == TextMessageRole::Assistant => {
                let message = self.open.get_or_insert_with(|| AssistantMessage { id: start.message_id.clone(), ..Default::default() });
                message.content.get_or_insert_with(String::new);
            }
            Event::TextMessageContent(content) => {
                if let Some(text) = self.open.as_mut().and_then(|m| m.content.as_mut()) {
                    text.push_str(&content.delta);
                }
            }
            Event::ToolCallStart(start) => {
                let message = self.open.get_or_insert_with(|| AssistantMessage { id: start.tool_call_id.clone(), ..Default::default() });
                message.tool_calls.get_or_insert_with(Vec::new).push(ToolCall {
                    id: start.tool_call_id.clone(),
                    function: FunctionCall { name: start.tool_call_name.clone(), arguments: String::new() },
                    ..Default::default()
                });
            }
            Event::ToolCallArgs(args) => {
                if let Some(call) =
                    self.open.as_mut().and_then(|m| m.tool_calls.as_mut()).and_then(|c| c.iter_mut().find(|c| c.id == args.tool_call_id))
                {
                    call.function.arguments.push_str(&args.delta);
                }
            }
            Event::ToolCallResult(result) => {
                self.close();
                self.messages.push(Message::Tool(ToolMessage {
                    id: result.message_id.clone(),
                    content: result.content.clone(),
                    tool_call_id: result.tool_call_id.clone(),
                    ..Default::default()
                }));
            }
            Event::RunFinished(_) | Event::RunError(_) => self.close(),
            _ => {}
        }
    }

    /// The messages so far, as a model is sent them (a step still open included, calls that
    /// never got a result left out).
    pub fn conversation(&self) -> Vec<Message> {
        let mut messages = self.messages.clone();
        if let Some(open) = &self.open {
            messages.push(Message::Assistant(open.clone()));
        }
        without_unanswered_calls(messages)
    }
}

/// Drops tool calls that never got a result (Stop mid-call, an error, a client tool left
/// pending): providers reject a call id with no answer, which would break the whole thread.
fn without_unanswered_calls(messages: Vec<Message>) -> Vec<Message> {
    let answered: std::collections::HashSet<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    messages
        .into_iter()
        .filter_map(|m| match m {
            Message::Assistant(mut a) => {
                if let Some(calls) = a.tool_calls.as_mut() {
                    calls.retain(|c| answered.contains(&c.id));
                    if calls.is_empty() {
                        a.tool_calls = None;
                    }
                }
                let empty = a.tool_calls.is_none() && a.content.as_deref().is_none_or(str::is_empty);
                (!empty).then_some(Message::Assistant(a))
            }
            other => Some(other),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use hearth_protocol::agui::{
        RunAgentInput, RunFinishedEvent, RunStartedEvent, TextMessageContentEvent, TextMessageStartEvent, ToolCallArgsEvent,
        ToolCallStartEvent, UserMessage,
    };

    use super::*;

    fn started(text: &str) -> Event {
        let input = RunAgentInput {
            messages: vec![Message::User(UserMessage { id: text.into(), content: text.to_owned().into(), ..Default::default() })],
            ..Default::default()
        };
        Event::RunStarted(RunStartedEvent { input: Some(Box::new(input)), ..Default::default() })
    }

    /// What `hearth::conversations` relies on: a fold kept after any prefix of the log and
    /// then given the rest equals the fold of the whole log — a cut inside a streamed reply,
    /// inside a tool call's arguments, after a Stop or an error included.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_fold_cut_anywhere_and_continued_equals_the_whole_logs() {
        use hearth_protocol::agui::{RunErrorEvent, TextMessageEndEvent, ToolCallEndEvent, ToolCallResultEvent};
        let text = |id: &str, delta: &str| {
            Event::TextMessageContent(TextMessageContentEvent { message_id: id.into(), delta: delta.into(), ..Default::default() })
        };
        let events = [
            started("first"),
            Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() }),
            text("m1", "Look"),
            text("m1", "ing"),
            Event::TextMessageEnd(TextMessageEndEvent { message_id: "m1".into(), ..Default::default() }),
            Event::ToolCallStart(ToolCallStartEvent {
                tool_call_id: "c1".into(),
                tool_call_name: "search_mail".into(),
                ..Default::default()
            }),
            Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: "c1".into(), delta: "{\"q\":".into(), ..Default::default() }),
            Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: "c1".into(), delta: "\"x\"}".into(), ..Default::default() }),
            Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: "c1".into(), ..Default::default() }),
            Event::ToolCallResult(ToolCallResultEvent {
                message_id: "r1".into(),
                tool_call_id: "c1".into(),
                content: "[]".into(),
                ..Default::default()
            }),
            Event::TextMessageStart(TextMessageStartEvent { message_id: "m2".into(), ..Default::default() }),
            text("m2", "Nothing."),
            Event::RunFinished(RunFinishedEvent::cancelled("t", "r")),
            started("second"),
            Event::ToolCallStart(ToolCallStartEvent {
                tool_call_id: "c2".into(),
                tool_call_name: "agent_status".into(),
                ..Default::default()
            }),
            Event::RunError(RunErrorEvent { message: "stopped".into(), ..Default::default() }),
            started("third"),
            Event::TextMessageStart(TextMessageStartEvent { message_id: "m3".into(), ..Default::default() }),
            text("m3", "Half"),
        ];
        let whole = serde_json::to_value(conversation_from_events(&events)).unwrap();
        let roles: Vec<&str> = whole.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        // The call the error cut off is left out; the reply still streaming is in.
        assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user", "user", "assistant"], "{whole:#}");
        for cut in 0..=events.len() {
            let mut fold = HistoryFold::default();
            for event in &events[..cut] {
                fold.apply(event);
            }
            let _seen_then = fold.conversation();
            for event in &events[cut..] {
                fold.apply(event);
            }
            assert_eq!(serde_json::to_value(fold.conversation()).unwrap(), whole, "cut after {cut} events");
        }
    }

    #[test]
    fn a_call_that_never_got_a_result_is_left_out() {
        let events = [
            started("first"),
            Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() }),
            Event::TextMessageContent(TextMessageContentEvent { message_id: "m1".into(), delta: "Looking".into(), ..Default::default() }),
            Event::ToolCallStart(ToolCallStartEvent {
                tool_call_id: "c1".into(),
                tool_call_name: "search_mail".into(),
                ..Default::default()
            }),
            Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: "c1".into(), delta: "{".into(), ..Default::default() }),
            // Stopped here: no result.
            Event::RunFinished(RunFinishedEvent::cancelled("t", "r")),
            started("second"),
        ];
        let messages = conversation_from_events(&events);
        assert_eq!(messages.len(), 3, "{messages:?}");
        let Message::Assistant(assistant) = &messages[1] else { panic!("{messages:?}") };
        assert_eq!(assistant.content.as_deref(), Some("Looking"));
        assert!(assistant.tool_calls.is_none(), "the unanswered call is gone");
    }
}
