#![allow(clippy::unwrap_used)]

use hearth_protocol::agui::{
    Event, ReasoningEncryptedValueEvent, ReasoningEndEvent, ReasoningMessageChunkEvent, ReasoningMessageContentEvent,
    ReasoningMessageEndEvent, ReasoningMessageStartEvent, ReasoningStartEvent, RunAgentInput, RunErrorEvent, RunFinishedEvent,
    RunStartedEvent, TextMessageChunkEvent, TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent, ThinkingEndEvent,
    ThinkingStartEvent, ThinkingTextMessageContentEvent, ThinkingTextMessageEndEvent, ThinkingTextMessageStartEvent, ToolCallArgsEvent,
    ToolCallEndEvent, ToolCallResultEvent, ToolCallStartEvent, UserMessage,
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
        Event::ToolCallStart(ToolCallStartEvent { tool_call_id: id.into(), tool_call_name: name.into(), ..Default::default() }),
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

/// A reasoning span holding one message, as the model loop emits it (span and message
/// share the id).
fn reasoning(id: &str, parts: &[&str]) -> Vec<Event> {
    let mut events = vec![
        Event::ReasoningStart(ReasoningStartEvent { message_id: id.into(), ..Default::default() }),
        Event::ReasoningMessageStart(ReasoningMessageStartEvent { message_id: id.into(), ..Default::default() }),
    ];
    for part in parts {
        events.push(Event::ReasoningMessageContent(ReasoningMessageContentEvent {
            message_id: id.into(),
            delta: (*part).into(),
            ..Default::default()
        }));
    }
    events.push(Event::ReasoningMessageEnd(ReasoningMessageEndEvent { message_id: id.into(), ..Default::default() }));
    events.push(Event::ReasoningEnd(ReasoningEndEvent { message_id: id.into(), ..Default::default() }));
    events
}

fn thinking_row(id: &str, text: &str, streaming: bool) -> ChatItem {
    ChatItem::Reasoning { id: id.into(), text: text.into(), streaming }
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
                live: String::new(),
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
    assert_eq!(state.items[1], ChatItem::Notice { id: "r1".into(), kind: NoticeKind::Error, text: "model unreachable".into() });
}

#[test]
fn chunks_append_to_one_message() {
    let chunk = |delta: &str| {
        Event::TextMessageChunk(TextMessageChunkEvent { message_id: Some("m1".into()), delta: Some(delta.into()), ..Default::default() })
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
    events.extend(reasoning("same", &["b"]));
    events.push(finished("r1"));
    let state = ChatState::replay(&events);
    let keys: std::collections::BTreeSet<_> = state.items.iter().map(ChatItem::key).collect();
    assert_eq!(keys.len(), state.items.len());
}

#[test]
fn reasoning_is_kept_as_a_thinking_row_before_the_answer() {
    let mut events = vec![started("r1", "what's on today?")];
    events.extend(reasoning("th1", &["The owner wants ", "today's events."]));
    events.extend(text("m1", &["Nothing today."]));
    events.push(finished("r1"));
    let state = ChatState::replay(&events);
    assert_eq!(
        state.items,
        vec![
            ChatItem::User { id: "u-r1".into(), text: "what's on today?".into() },
            thinking_row("th1", "The owner wants today's events.", false),
            ChatItem::Assistant { id: "m1".into(), text: "Nothing today.".into(), streaming: false },
        ]
    );
}

#[test]
fn reasoning_streams_until_its_message_ends() {
    let events = reasoning("th1", &["one ", "two"]);
    let mut state = ChatState::default();
    state.apply(&started("r1", "x"));
    for event in &events[..3] {
        state.apply(event);
    }
    assert_eq!(state.items[1..], [thinking_row("th1", "one ", true)]);
    for event in &events[3..] {
        state.apply(event);
    }
    assert_eq!(state.items[1..], [thinking_row("th1", "one two", false)]);
}

#[test]
fn each_reasoning_message_keeps_its_own_text() {
    let content = |id: &str, delta: &str| {
        Event::ReasoningMessageContent(ReasoningMessageContentEvent { message_id: id.into(), delta: delta.into(), ..Default::default() })
    };
    let start = |id: &str| Event::ReasoningMessageStart(ReasoningMessageStartEvent { message_id: id.into(), ..Default::default() });
    let end = |id: &str| Event::ReasoningMessageEnd(ReasoningMessageEndEvent { message_id: id.into(), ..Default::default() });
    let events = [
        started("r1", "x"),
        Event::ReasoningStart(ReasoningStartEvent { message_id: "span".into(), ..Default::default() }),
        start("a"),
        content("a", "first "),
        start("b"),
        content("b", "second"),
        content("a", "thought"),
        end("a"),
        end("b"),
        Event::ReasoningEncryptedValue(ReasoningEncryptedValueEvent {
            entity_id: "a".into(),
            encrypted_value: "opaque".into(),
            ..Default::default()
        }),
        Event::ReasoningEnd(ReasoningEndEvent { message_id: "span".into(), ..Default::default() }),
    ];
    let state = ChatState::replay(&events);
    assert_eq!(state.items[1..], [thinking_row("a", "first thought", false), thinking_row("b", "second", false)]);
}

#[test]
fn reasoning_chunks_and_legacy_thinking_accumulate() {
    let chunk = |id: Option<&str>, delta: &str| {
        Event::ReasoningMessageChunk(ReasoningMessageChunkEvent {
            message_id: id.map(str::to_owned),
            delta: Some(delta.into()),
            ..Default::default()
        })
    };
    let legacy_content =
        |delta: &str| Event::ThinkingTextMessageContent(ThinkingTextMessageContentEvent { delta: delta.into(), ..Default::default() });
    let events = [
        started("r1", "x"),
        chunk(Some("c1"), "chunked "),
        chunk(None, "on"),
        Event::ReasoningMessageEnd(ReasoningMessageEndEvent { message_id: "c1".into(), ..Default::default() }),
        Event::ThinkingStart(ThinkingStartEvent::default()),
        Event::ThinkingTextMessageStart(ThinkingTextMessageStartEvent::default()),
        legacy_content("old "),
        legacy_content("style"),
        Event::ThinkingTextMessageEnd(ThinkingTextMessageEndEvent::default()),
        Event::ThinkingEnd(ThinkingEndEvent::default()),
        finished("r1"),
    ];
    let state = ChatState::replay(&events);
    assert_eq!(state.items[1..], [thinking_row("c1", "chunked on", false), thinking_row("thinking-2", "old style", false)]);
}

#[test]
fn stop_ends_reasoning_that_was_still_streaming() {
    let mut events = vec![started("r1", "x")];
    events.extend(reasoning("th1", &["half a thou"]).into_iter().take(3));
    events.push(Event::RunFinished(RunFinishedEvent::cancelled("t", "r1")));
    let state = ChatState::replay(&events);
    assert_eq!(state.items[1], thinking_row("th1", "half a thou", false));
    assert!(matches!(&state.items[2], ChatItem::Notice { kind: NoticeKind::Cancelled, .. }));
}

#[test]
fn a_running_commands_output_reaches_its_card_and_stops_at_its_result() {
    use hearth_protocol::agui::{CustomEvent, ToolCallResultEvent, ToolCallStartEvent};
    use hearth_protocol::computer::{COMMAND_OUTPUT_EVENT, CommandOutputEvent, OutputStream};
    let output = |id: &str, text: &str| {
        Event::Custom(CustomEvent {
            name: COMMAND_OUTPUT_EVENT.into(),
            value: serde_json::to_value(CommandOutputEvent { tool_call_id: id.into(), stream: OutputStream::Stdout, text: text.into() })
                .unwrap(),
            ..Default::default()
        })
    };
    let mut chat = ChatState::default();
    chat.apply(&Event::ToolCallStart(ToolCallStartEvent {
        tool_call_id: "t1".into(),
        tool_call_name: "run_computer_command".into(),
        ..Default::default()
    }));
    chat.apply(&output("t1", "one "));
    chat.apply(&output("nobody", "lost"));
    chat.apply(&output("t1", "two"));
    chat.apply(&Event::ToolCallResult(ToolCallResultEvent {
        tool_call_id: "t1".into(),
        content: "{}".to_owned().into(),
        ..Default::default()
    }));
    chat.apply(&output("t1", " late"));
    let ChatItem::Tool(call) = &chat.items[0] else { panic!() };
    assert_eq!(call.live, "one two");
}

#[test]
fn has_key_agrees_with_key_for_every_kind_of_row() {
    let mut events = vec![started("r1", "hello")];
    events.extend(reasoning("th1", &["hm"]));
    events.extend(text("m1", &["hi"]));
    events.extend(tool("c1", "read_file", "{}", Some("{}")));
    events.push(Event::RunError(RunErrorEvent { message: "boom".into(), ..Default::default() }));
    let state = ChatState::replay(&events);
    assert_eq!(state.items.len(), 5, "{:?}", state.items);
    for (n, item) in state.items.iter().enumerate() {
        let key = item.key();
        assert!(item.has_key(&key), "{key}");
        // Found from any hint: where it is, before it, after it.
        for hint in [n, 0, state.items.len()] {
            assert_eq!(state.row_near(&key, hint), Some((n, item)), "{key} from {hint}");
        }
        // Every other row's key names another row.
        for (m, other) in state.items.iter().enumerate() {
            assert_eq!(other.has_key(&key), m == n, "{key} against {:?}", other.key());
        }
    }
    // A key of another kind with the same id is another row.
    assert!(!state.items[2].has_key("u-m1"));
    assert_eq!(state.row_near("a-nope", 2), None);
}

#[test]
fn a_run_that_never_ended_is_settled_by_the_next_runs_end() {
    // r1 crashed mid-answer and mid-call (no RUN_FINISHED in its log); r2 ran and finished.
    let mut events = vec![started("r1", "one")];
    events.extend(text("m1", &["half"]).into_iter().take(2));
    events.extend(tool("c1", "read_file", "{}", None));
    events.push(started("r2", "two"));
    events.extend(text("m2", &["whole"]));
    events.push(finished("r2"));
    let state = ChatState::replay(&events);
    assert!(matches!(&state.items[1], ChatItem::Assistant { streaming: false, .. }), "{:?}", state.items[1]);
    let ChatItem::Tool(call) = &state.items[2] else { panic!("{:?}", state.items[2]) };
    assert_eq!(call.status, ToolStatus::Error);
    // Rows settled at one run's end are not swept again, and the next run's rows stream until it ends.
    let mut state = state;
    state.apply(&started("r3", "three"));
    state.apply(&Event::TextMessageStart(TextMessageStartEvent { message_id: "m3".into(), ..Default::default() }));
    assert!(matches!(state.items.last(), Some(ChatItem::Assistant { streaming: true, .. })));
    state.apply(&finished("r3"));
    assert!(matches!(state.items.last(), Some(ChatItem::Assistant { streaming: false, .. })));
}

#[test]
fn a_long_thread_opens_on_its_newest_page() {
    let mut events = Vec::new();
    for n in 0..300 {
        events.push(started(&format!("r{n}"), &format!("question {n}")));
        events.extend(text(&format!("m{n}"), &["answer"]));
        events.push(finished(&format!("r{n}")));
    }
    let state = ChatState::replay(&events);
    assert_eq!(state.items.len(), 600);
    assert_eq!(state.first_page_start(), 600 - PAGE);
    assert!(
        state.items[state.first_page_start()..]
            .iter()
            .all(|i| matches!(i, ChatItem::User { .. } | ChatItem::Assistant { streaming: false, .. }))
    );
    assert_eq!(state.items.last().map(ChatItem::key).as_deref(), Some("a-m299"));
    assert_eq!(ChatState::replay(&events[..6]).first_page_start(), 0, "a short thread shows every row");
}

#[test]
fn a_page_that_begins_inside_a_run_shows_that_run_once_the_page_before_is_loaded() {
    let mut events = vec![started("r1", "first")];
    events.extend(text("m1", &["one ", "two"]));
    events.push(finished("r1"));
    events.push(started("r2", "second"));
    events.extend(text("m2", &["three"]));
    events.push(finished("r2"));
    // The newest page begins inside r1's answer.
    let page = &events[3..];
    let shown = ChatState::replay_pages(page, true);
    let keys: Vec<String> = shown.items.iter().map(ChatItem::key).collect();
    assert_eq!(keys, ["u-u-r2", "a-m2"], "the cut run is left out until its start is loaded");
    // The first page of a thread is whole.
    let whole = ChatState::replay_pages(&events, false);
    assert_eq!(whole, ChatState::replay(&events));
    assert!(matches!(&whole.items[1], ChatItem::Assistant { text, .. } if text == "one two"));
    // A page inside one long run (no run starts on it) shows what it has.
    let inside = ChatState::replay_pages(&events[1..3], true);
    assert!(matches!(&inside.items[..], [ChatItem::Assistant { text, .. }] if text == "one "), "{:?}", inside.items);
}
