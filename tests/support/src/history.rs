//! Earlier conversation for the tests and benches that need a long thread: turns as a thread's
//! log holds them, to be written into it directly. AG-UI events as JSON: the caller decodes
//! them into the protocol's types (this crate does not depend on the protocol crate).

/// The owner's question of earlier turn `turn`, as the chat shows it.
pub fn question(turn: usize) -> String {
    format!("Earlier question number {turn}, about the garden.")
}

/// One earlier turn of 12 events: the run's start carrying [`question`], the answer in eight
/// tokens, the end.
pub fn turn(thread_id: &str, turn: usize) -> Vec<serde_json::Value> {
    let (run, message) = (format!("history-run-{turn}"), format!("history-msg-{turn}"));
    let mut events = vec![
        serde_json::json!({ "type": "RUN_STARTED", "threadId": thread_id, "runId": run, "input": {
            "threadId": thread_id, "runId": run, "state": {}, "tools": [], "context": [], "forwardedProps": {},
            "messages": [{ "id": format!("user-{turn}"), "role": "user", "content": question(turn) }] } }),
        serde_json::json!({ "type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant" }),
    ];
    events.extend((0..8).map(|piece| serde_json::json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": format!("part {piece} of the answer, ") })));
    events.push(serde_json::json!({ "type": "TEXT_MESSAGE_END", "messageId": message }));
    events.push(serde_json::json!({ "type": "RUN_FINISHED", "threadId": thread_id, "runId": run }));
    events
}
