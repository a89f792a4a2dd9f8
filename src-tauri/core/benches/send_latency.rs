//! What the owner feels when pressing Send in a long conversation: from `start_run` to the
//! first assistant token, with the scripted model server (real OpenAI Chat streaming over
//! loopback, so the model itself costs next to nothing and the figure is Hearth's own
//! overhead), on threads holding 0, 10,000 and 100,000 events; the first Send to the
//! 100,000-event thread with nothing of it kept (after a start, or once 16 other threads have
//! pushed it out: Hearth keeps 16 threads' conversations); and opening a 100,000-event thread's
//! history (the store read and decode behind the chat's history call: its newest page).
//!
//! History is written as real AG-UI runs (RUN_STARTED with the user's message, a streamed
//! reply of 10 deltas, RUN_FINISHED) straight into the thread's log, 12 events per turn.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hearth_core::Hearth;
use hearth_protocol::agui::Event;
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::{HISTORY_PAGE_EVENTS, RunStartParams};
use hearth_testkit::model_server::{Reply, Script};

#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;

const SIZES: [usize; 3] = [0, 10_000, 100_000];
const SENDS: usize = 10;
/// Hearth keeps this many threads' conversations; a kept conversation in each of this many
/// others pushes a thread's out.
const KEPT_THREADS: usize = 16;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    let mut script = Script::new();
    for _ in 0..SIZES.len() * (SENDS + 2) + 3 * (2 * KEPT_THREADS + 1) {
        script = script.turn(Reply::new().text(&["Sure", ", noted."]));
    }
    let (_server, _dir, hearth) = scripted::hearth_with_model(script).await;

    for size in SIZES {
        // A thread with one real turn, then `size` events of earlier conversation.
        let (thread_id, run_id) = send(&hearth, None, "Let's start.").await.0;
        let written = Instant::now();
        for turn in 0..size / 12 {
            for event in synthetic_turn(&thread_id, turn) {
                hearth.store().append_event(&thread_id, &run_id, &event).await.unwrap();
            }
        }
        if size > 0 {
            println!("wrote {size} events in {:.1} s", written.elapsed().as_secs_f64());
        }
        // One untimed send warms the caches the timed ones will find warm too.
        send(&hearth, Some(thread_id.clone()), "And one more thing.").await;
        let mut first_token = Vec::with_capacity(SENDS);
        for n in 0..SENDS {
            first_token.push(send(&hearth, Some(thread_id.clone()), &format!("Question {n}?")).await.1);
        }
        first_token.sort();
        let median = first_token[SENDS / 2].as_secs_f64() * 1e3;
        println!(
            "Send → first assistant token, thread of {size} events, {SENDS} sends: median {median:.2} ms, max {:.2} ms",
            first_token[SENDS - 1].as_secs_f64() * 1e3
        );
        figure::figure(
            &format!("Send → first assistant token, {size}-event thread (scripted model on loopback), median"),
            &format!("{median:.2} ms"),
            "none (Hearth's own overhead)",
            "no target (reported)",
        );
        if size == 100_000 {
            let mut cold = Vec::new();
            for _ in 0..3 {
                // A thread's conversation is kept from its second Send on (a new thread has
                // nothing to keep): two Sends each to 16 other threads push this one out.
                for other in 0..KEPT_THREADS {
                    let ((other_thread, _), _) = send(&hearth, None, &format!("Elsewhere {other}.")).await;
                    send(&hearth, Some(other_thread), "And again.").await;
                }
                cold.push(send(&hearth, Some(thread_id.clone()), "Back to the long one.").await.1);
            }
            cold.sort();
            let cold_ms = cold[1].as_secs_f64() * 1e3;
            println!("first Send to the {size}-event thread with nothing of it kept, 3 times: median {cold_ms:.1} ms");
            figure::figure(
                "Send → first token, 100,000-event thread, nothing of it kept (after a start), median of 3",
                &format!("{cold_ms:.1} ms"),
                "none (Hearth's own overhead)",
                "no target (reported)",
            );
            let mut opens = Vec::new();
            for _ in 0..5 {
                let started = Instant::now();
                let history = hearth.thread_history_page(&ThreadId::trusted(thread_id.as_str()), None).await.unwrap();
                opens.push(started.elapsed());
                assert!(history.earlier.is_some() && history.events.len() >= HISTORY_PAGE_EVENTS as usize);
                assert!(matches!(history.events.first(), Some(hearth_protocol::agui::Event::RunStarted(_))), "a page begins at a run");
            }
            opens.sort();
            let median = opens[2].as_secs_f64() * 1e3;
            println!("thread_history (the newest page) of a {size}-event thread, 5 opens: median {median:.1} ms");
            figure::figure(
                "open a 100,000-event thread: the history call (read + decode of the newest page), median",
                &format!("{median:.1} ms"),
                "none",
                "≤ 1 s to shown in the chat (with the webview's render)",
            );
        }
    }
    println!("load average after: {}", scripted::load_average());
}

/// Sends `text` and waits for the run to end: ((thread, run), Send → first text delta).
async fn send(hearth: &Hearth, thread_id: Option<String>, text: &str) -> ((String, String), Duration) {
    let pressed = Instant::now();
    let (started, mut events) =
        hearth.start_run(RunStartParams { thread_id: thread_id.map(ThreadId::trusted), text: text.into() }).await.unwrap();
    let mut first = None;
    while let Some(event) = events.recv().await {
        if first.is_none() && matches!(event, Event::TextMessageContent(_)) {
            first = Some(pressed.elapsed());
        }
    }
    while hearth.active_runs() > 0 {
        tokio::task::yield_now().await;
    }
    ((started.thread_id.into_string(), started.run_id.into_string()), first.expect("the model answered"))
}

/// One earlier turn as the log holds it: 12 events.
fn synthetic_turn(thread_id: &str, turn: usize) -> Vec<Event> {
    hearth_testkit::history::turn(thread_id, turn).into_iter().map(|e| serde_json::from_value(e).unwrap()).collect()
}
