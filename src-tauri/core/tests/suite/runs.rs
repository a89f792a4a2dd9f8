//! Runs through the sample agent: well-formed streams, persisted logs, tasks, Stop.

use std::time::Duration;

use hearth_core::Hearth;
use hearth_protocol::agui::Event;
use hearth_protocol::agui::verify::verify_all;
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::{DelegateTaskResult, RunStartParams};
use hearth_protocol::tasks::TaskStatus;
use hearth_protocol::{ErrorCode, ToolName};
use pretty_assertions::assert_eq;

use super::support::{collect, fast_config, open, settled, start, text_of};

#[tokio::test]
async fn every_route_streams_well_formed_agui_and_is_stored_as_seen() {
    let t = open().await;
    for text in ["hello", "plan my day", "count to 50 slowly", "Find me a plumber for Tuesday morning"] {
        let (thread_id, run_id, events) = start(&t.hearth, None, text).await;
        let events = collect(events).await;
        verify_all(&events).unwrap_or_else(|err| panic!("{text}: {err}\n{events:#?}"));
        let Some(Event::RunStarted(started)) = events.first() else { panic!("{text}: no RUN_STARTED first") };
        assert_eq!((started.thread_id.as_str(), started.run_id.as_str()), (thread_id.as_str(), run_id.as_str()));
        assert!(matches!(events.last(), Some(Event::RunFinished(f)) if !f.is_cancelled()), "{text}");
        assert!(events.iter().all(|e| e.timestamp().is_some()), "{text}: every event is stamped");
        let stored = t.hearth.thread_history(&thread_id).await.unwrap().events;
        assert_eq!(stored, events, "{text}: the log holds exactly what was streamed");
    }
}

#[tokio::test]
async fn the_slow_route_counts_to_fifty_when_left_alone() {
    let t = open().await;
    let (_, _, events) = start(&t.hearth, None, "count to 50 slowly").await;
    let text = text_of(&collect(events).await);
    assert!(text.starts_with("1, 2, 3, ") && text.ends_with("49, 50."), "{text}");
}

#[tokio::test]
async fn calendar_route_reads_the_seeded_week() {
    let t = open().await;
    let (_, _, events) = start(&t.hearth, None, "What's on my calendar this week?").await;
    let events = collect(events).await;
    let name = events.iter().find_map(|e| match e {
        Event::ToolCallStart(s) => Some(s.tool_call_name.clone()),
        _ => None,
    });
    assert_eq!(name.as_deref(), Some(ToolName::ReadCalendar.as_str()));
    let result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallResult(r) => Some(serde_json::from_str::<serde_json::Value>(&r.content.to_text()).unwrap()),
            _ => None,
        })
        .unwrap();
    let count = result["events"].as_array().unwrap().len();
    assert!(count >= 5, "the seeded week has {count} events");
    assert!(text_of(&events).starts_with(&format!("You have {count} events this week:")));
}

#[tokio::test]
async fn a_job_stores_exactly_one_task_and_reports_it() {
    let t = open().await;
    assert_eq!(t.hearth.store().count_tasks().await.unwrap(), 0);
    let (_, _, events) = start(&t.hearth, None, "Renew the car insurance before the 12th").await;
    let events = collect(events).await;
    assert_eq!(t.hearth.store().count_tasks().await.unwrap(), 1);
    let result: DelegateTaskResult = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallResult(r) => Some(serde_json::from_str(&r.content.to_text()).unwrap()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.title, "Renew the car insurance before the 12th");
    assert_eq!(result.status, TaskStatus::Queued);
    assert_eq!(result.task_id.len(), 64);
}

#[tokio::test]
async fn stop_ends_the_run_cancelled_and_nothing_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    // The agent waits an hour between numbers: only Stop can end this run.
    config.sample_slow_step = Duration::from_secs(3600);
    let hearth = Hearth::open(config).await.unwrap();
    let (_, run_id, mut events) = start(&hearth, None, "count to 50 slowly").await;
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(Event::TextMessageStart(_))) {
        seen.push(events.recv().await.unwrap());
    }
    assert!(hearth.stop_run(&run_id));
    seen.extend(collect(events).await);
    verify_all(&seen).unwrap();
    let tail: Vec<&str> = seen[2..].iter().map(|e| e.event_type().as_str()).collect();
    assert_eq!(tail, ["TEXT_MESSAGE_END", "RUN_FINISHED"]);
    assert!(matches!(seen.last(), Some(Event::RunFinished(f)) if f.is_cancelled()));
    assert_eq!(text_of(&seen), "", "no number was counted after Stop");
    settled(&hearth).await;
    assert!(!hearth.stop_run(&run_id), "a second Stop finds nothing running");
    let stored = hearth.store().thread_events(&seen_thread(&seen)).await.unwrap();
    assert_eq!(stored, seen);
}

#[tokio::test]
async fn a_window_that_goes_away_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    // The agent would sit silent for an hour: only the closed receiver can end this run.
    config.sample_slow_step = Duration::from_secs(3600);
    let hearth = Hearth::open(config).await.unwrap();
    let (thread_id, run_id, mut events) = start(&hearth, None, "count to 50 slowly").await;
    while !matches!(events.recv().await, Some(Event::TextMessageStart(_))) {}
    drop(events);
    settled(&hearth).await;
    assert!(!hearth.stop_run(&run_id), "the run already ended");
    let stored = hearth.store().thread_events(&thread_id).await.unwrap();
    assert!(matches!(stored.last(), Some(Event::RunFinished(f)) if f.is_cancelled()));
    assert_eq!(text_of(&stored), "", "nothing was counted after the window went away");
    verify_all(&stored).unwrap();
}

#[tokio::test]
async fn history_continues_in_the_same_thread() {
    let t = open().await;
    let (thread_id, _, events) = start(&t.hearth, None, "hello").await;
    collect(events).await;
    let (same, _, events) = start(&t.hearth, Some(&thread_id), "plan my day").await;
    collect(events).await;
    assert_eq!(same, thread_id);
    let threads = t.hearth.thread_list().await.unwrap().threads;
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].title, "hello");
    let history = t.hearth.thread_history(&thread_id).await.unwrap().events;
    let runs = history.iter().filter(|e| matches!(e, Event::RunStarted(_))).count();
    assert_eq!(runs, 2);
    verify_all(&history).unwrap();
}

#[tokio::test]
async fn bad_input_is_refused_with_a_typed_error_and_changes_nothing() {
    let t = open().await;
    let refuse = |params: RunStartParams| {
        let hearth = t.hearth.clone();
        async move { hearth.start_run(params).await.map(|_| ()).unwrap_err().to_ipc() }
    };
    let empty = refuse(RunStartParams { thread_id: None, text: " ".into() }).await;
    assert_eq!(empty.code, ErrorCode::InvalidInput);
    let unknown = refuse(RunStartParams { thread_id: Some(ThreadId::parse("nope").unwrap()), text: "hi".into() }).await;
    assert_eq!(unknown.code, ErrorCode::NotFound);
    // A hostile thread id never becomes a request: it is refused while the window's JSON is parsed.
    let hostile = serde_json::json!({ "threadId": "'; DROP TABLE threads; --", "text": "hi" });
    let hostile = serde_json::from_value::<RunStartParams>(hostile).unwrap_err();
    assert!(hostile.to_string().contains("not a valid thread id"), "{hostile}");
    assert!(t.hearth.thread_list().await.unwrap().threads.is_empty());
    let history = t.hearth.thread_history("missing").await.unwrap_err().to_ipc();
    assert_eq!(history.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn the_chat_reads_a_long_thread_a_page_at_a_time_each_page_beginning_where_a_run_began() {
    use hearth_protocol::ipc::HISTORY_PAGE_EVENTS;
    let t = open().await;
    let (thread_id, run_id, events) = start(&t.hearth, None, "hello").await;
    collect(events).await;
    // Runs as the log holds them: a start, one event per token of the answer, an end.
    let run = |n: usize, tokens: usize| -> Vec<Event> {
        let (run, message) = (format!("long-run-{n}"), format!("long-msg-{n}"));
        let mut events = vec![
            serde_json::json!({ "type": "RUN_STARTED", "threadId": thread_id, "runId": run }),
            serde_json::json!({ "type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant" }),
        ];
        events.extend(
            (0..tokens).map(|k| serde_json::json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": format!("{k} ") })),
        );
        events.push(serde_json::json!({ "type": "TEXT_MESSAGE_END", "messageId": message }));
        events.push(serde_json::json!({ "type": "RUN_FINISHED", "threadId": thread_id, "runId": run }));
        events.into_iter().map(|e| serde_json::from_value(e).unwrap()).collect()
    };
    // Three runs of 900 tokens, one longer than a page (2,500), then a short one.
    let runs = [900, 900, 900, 2_500, 10];
    for (n, tokens) in runs.into_iter().enumerate() {
        for event in run(n, tokens) {
            t.hearth.store().append_event(&thread_id, &run_id, &event).await.unwrap();
        }
    }
    let whole = t.hearth.thread_history(&thread_id).await.unwrap().events;
    let hello = whole.len() - runs.iter().map(|tokens| tokens + 4).sum::<usize>();

    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let page = t.hearth.thread_history_page(&ThreadId::trusted(thread_id.as_str()), before).await.unwrap();
        assert!(!page.starts_inside_run);
        assert!(matches!(page.events.first(), Some(Event::RunStarted(_))), "a page begins where a run began");
        before = page.earlier;
        pages.push(page.events);
        if before.is_none() {
            break;
        }
    }
    // The newest page reaches back past its 2,000 events to the long run's start; the next
    // holds its 2,000 and the rest of the run they end in; the first is the hello run.
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2_504 + 14, 3 * 904, hello]);
    assert!(sizes[1] > HISTORY_PAGE_EVENTS as usize);
    let joined: Vec<Event> = pages.into_iter().rev().flatten().collect();
    assert_eq!(joined, whole, "the pages join into the log, nothing missing or repeated");

    // A run longer than a page may reach back is cut there, and the page says so.
    let cut = t.hearth.store().thread_events_page(&thread_id, None, 100, 50).await.unwrap();
    assert_eq!(cut.events.len(), 150);
    assert!(cut.more && cut.starts_inside_run);
    assert_eq!(cut.events.last().map(|(_, e)| e), whole.last());

    // A cursor before the first event reads nothing; a thread that is not there is an error.
    let none = t.hearth.thread_history_page(&ThreadId::trusted(thread_id.as_str()), Some(1)).await.unwrap();
    assert!(none.events.is_empty() && none.earlier.is_none());
    let missing = t.hearth.thread_history_page(&ThreadId::parse("missing").unwrap(), None).await.unwrap_err().to_ipc();
    assert_eq!(missing.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn one_thread_streams_one_run_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.sample_slow_step = Duration::from_secs(3600);
    let hearth = Hearth::open(config).await.unwrap();
    let (thread_id, run_id, events) = start(&hearth, None, "count to 50 slowly").await;
    let second = hearth
        .start_run(RunStartParams { thread_id: Some(ThreadId::trusted(thread_id.as_str())), text: "hello".into() })
        .await
        .map(|_| ())
        .unwrap_err()
        .to_ipc();
    assert_eq!(second.code, ErrorCode::Conflict);
    hearth.stop_run(&run_id);
    collect(events).await;
    let started = hearth.thread_history(&thread_id).await.unwrap().events;
    assert_eq!(started.iter().filter(|e| matches!(e, Event::RunStarted(_))).count(), 1);
}

fn seen_thread(events: &[Event]) -> String {
    match events.first() {
        Some(Event::RunStarted(s)) => s.thread_id.clone(),
        _ => panic!("no RUN_STARTED"),
    }
}
