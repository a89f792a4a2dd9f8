//! A conversation rebuilt from a thread's stored event log, so a model sees earlier turns:
//! what the owner said (each run's input), what the assistant answered, the tools it called
//! and their results.

use hearth_protocol::agui::{AssistantMessage, Event, FunctionCall, Message, TextMessageRole, ToolCall, ToolMessage};

/// The messages of the runs in `events`, oldest first.
pub fn conversation_from_events(events: &[Event]) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    // The assistant message being built for the current step: text, then tool calls.
    let mut open: Option<AssistantMessage> = None;
    let close = |open: &mut Option<AssistantMessage>, messages: &mut Vec<Message>| {
        if let Some(done) = open.take() {
            messages.push(Message::Assistant(done));
        }
    };
    for event in events {
        match event {
            Event::RunStarted(started) => {
                close(&mut open, &mut messages);
                if let Some(input) = &started.input {
                    messages.extend(input.messages.iter().filter(|m| matches!(m, Message::User(_))).cloned());
                }
            }
            Event::TextMessageStart(start) if start.role == TextMessageRole::Assistant => {
                let message = open.get_or_insert_with(|| AssistantMessage { id: start.message_id.clone(), ..Default::default() });
                message.content.get_or_insert_with(String::new);
            }
            Event::TextMessageContent(content) => {
                if let Some(text) = open.as_mut().and_then(|m| m.content.as_mut()) {
                    text.push_str(&content.delta);
                }
            }
            Event::ToolCallStart(start) => {
                let message = open.get_or_insert_with(|| AssistantMessage { id: start.tool_call_id.clone(), ..Default::default() });
                message.tool_calls.get_or_insert_with(Vec::new).push(ToolCall {
                    id: start.tool_call_id.clone(),
                    function: FunctionCall { name: start.tool_call_name.clone(), arguments: String::new() },
                    ..Default::default()
                });
            }
            Event::ToolCallArgs(args) => {
                if let Some(call) =
                    open.as_mut().and_then(|m| m.tool_calls.as_mut()).and_then(|c| c.iter_mut().find(|c| c.id == args.tool_call_id))
                {
                    call.function.arguments.push_str(&args.delta);
                }
            }
            Event::ToolCallResult(result) => {
                close(&mut open, &mut messages);
                messages.push(Message::Tool(ToolMessage {
                    id: result.message_id.clone(),
                    content: result.content.clone(),
                    tool_call_id: result.tool_call_id.clone(),
                    ..Default::default()
                }));
            }
            Event::RunFinished(_) | Event::RunError(_) => close(&mut open, &mut messages),
            _ => {}
        }
    }
    close(&mut open, &mut messages);
    messages
}
