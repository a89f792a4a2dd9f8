#![allow(clippy::unwrap_used)]

use hearth_protocol::agui::{
    Event, RunAgentInput, RunErrorEvent, RunFinishedEvent, RunStartedEvent, TextMessageChunkEvent,
    TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent, ToolCallArgsEvent, ToolCallEndEvent,
    ToolCallResultEvent, ToolCallStartEvent, UserMessage,
};
use pretty_assertions::assert_eq;

use super::*;

fn started(run: &str, text: &str) -> Event {
    Event::RunStarted(RunStartedEvent {
        thread_id: "t".into(),
        run_id: run.into(),
        input: Some(Box::new(RunAgentInput {
            thread_id: "t".into(),
            run_id: run.into(),
            messages: vec![Message::User(UserMessage { id: format!("u-{run}"), content: text.into(), ..Default::default() })],
            ..Default::default()
        })),
        ..Default::default()
    })
}

fn text(id: &str, parts: &[&str]) -> Vec<Event> {
    let mut events = vec![Event::TextMessageStart(TextMessageStartEvent { message_id: id.into(), ..Default::default() })];
    for part in parts {
        events.push(Event::TextMessageContent(TextMessageContentEvent {
            message_id: id.into(),
            delta: (*part).into(),
            ..Default::default()
        }));
    }
    events.push(Event::TextMessageEnd(TextMessageEndEvent { message_id: id.into(), ..Default::default() }));
    events
}

fn tool(id: &str, name: &str, args: &str, result: Option<&str>) -> Vec<Event> {
    let mut events = vec![
        Event::ToolCallStart(ToolCallStartEvent {
            tool_call_id: id.into(),
            tool_call_name: name.into(),
            ..Default::default()
        }),
        Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: id.into(), delta: args.into(), ..Default::default() }),
        Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: id.into(), ..Default::default() }),
    ];
    if let Some(result) = result {
        events.push(Event::ToolCallResult(ToolCallResultEvent {
            message_id: format!("r-{id}"),
            tool_call_id: id.into(),
            content: result.into(),
            ..Default::default()
        }));
    }
    events
}

fn finished(run: &str) -> Event {
    Event::RunFinished(RunFinishedEvent::success("t", run, None))
}

#[test]
fn a_run_renders_user_text_tool_and_reply_in_order() {
    let mut events = vec![started("r1", "book a table")];
    events.extend(tool("c1", "delegate_task", r#"{"title":"book a table"}"#, Some(r#"{"taskId":"x"}"#)));
    events.extend(text("m1", &["Saved ", "as a task."]));
    events.push(finished("r1"));
    let state = ChatState::replay(&events);
    assert_eq!(
        state.items,
        vec![
            ChatItem::User { id: "u-r1".into(), text: "book a table".into() },
            ChatItem::Tool(ToolCallView {
                id: "c1".into(),
                name: "delegate_task".into(),
                args: r#"{"title":"book a table"}"#.into(),
                status: ToolStatus::Complete,
                result: Some(r#"{"taskId":"x"}"#.into()),
            }),
            ChatItem::Assistant { id: "m1".into(), text: "Saved as a task.".into(), streaming: false },
        ]
    );
    assert!(!state.is_running());
}

#[test]
fn deltas_show_while_streaming() {
    let mut state = ChatState::default();
    let events = text("m1", &["one ", "two"]);
    state.apply(&started("r1", "hi"));
    state.apply(&events[0]);
    state.apply(&events[1]);
    assert!(state.is_running());
    assert_eq!(state.items[1], ChatItem::Assistant { id: "m1".into(), text: "one ".into(), streaming: true });
}

#[test]
fn stop_leaves_a_cancelled_notice_and_no_running_tool() {
    let mut events = vec![started("r1", "count")];
    events.extend(tool("c1", "run_computer_command", "{}", None));
    events.push(Event::RunFinished(RunFinishedEvent::cancelled("t", "r1")));
    let state = ChatState::replay(&events);
    assert!(matches!(&state.items[1], ChatItem::Tool(call) if call.status == ToolStatus::Error));
    assert!(matches!(&state.items[2], ChatItem::Notice { kind: NoticeKind::Cancelled, .. }));
    assert!(!state.is_running());
}

#[test]
fn errors_show_their_message() {
    let events = [started("r1", "x"), Event::RunError(RunErrorEvent { message: "model unreachable".into(), ..Default::default() })];
    let state = ChatState::replay(&events);
    assert_eq!(
        state.items[1],
        ChatItem::Notice { id: "r1".into(), kind: NoticeKind::Error, text: "model unreachable".into() }
    );
}

#[test]
fn chunks_append_to_one_message() {
    let chunk = |delta: &str| {
        Event::TextMessageChunk(TextMessageChunkEvent {
            message_id: Some("m1".into()),
            delta: Some(delta.into()),
            ..Default::default()
        })
    };
    let state = ChatState::replay(&[started("r1", "x"), chunk("a"), chunk("b"), finished("r1")]);
    assert_eq!(state.items[1], ChatItem::Assistant { id: "m1".into(), text: "ab".into(), streaming: false });
}

#[test]
fn error_results_and_unknown_tools_are_kept() {
    let mut events = vec![started("r1", "x")];
    events.extend(tool("c1", "weather_lookup", "{}", Some(r#"{"error":"no city"}"#)));
    let state = ChatState::replay(&events);
    let ChatItem::Tool(call) = &state.items[1] else { panic!("no tool row") };
    assert_eq!((call.name.as_str(), call.status), ("weather_lookup", ToolStatus::Error));
}

#[test]
fn keys_are_unique_across_kinds() {
    let mut events = vec![started("r1", "x")];
    events.extend(text("same", &["a"]));
    events.extend(tool("same", "delegate_task", "{}", Some("{}")));
    events.push(finished("r1"));
    let state = ChatState::replay(&events);
    let keys: std::collections::BTreeSet<_> = state.items.iter().map(ChatItem::key).collect();
    assert_eq!(keys.len(), state.items.len());
}
