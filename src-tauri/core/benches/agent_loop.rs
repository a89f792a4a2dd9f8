//! The agent loop's own overhead per tool call, against the scripted model server (real
//! OpenAI Chat streaming over loopback): the time from the model's TOOL_CALL_END reaching
//! Hearth's event stream to the TOOL_CALL_RESULT of `agent_status` (a one-query tool), so it
//! includes that tool's own SQLite read — an upper bound of "TOOL_CALL_END → tool started".
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use hearth_protocol::agui::Event;
use hearth_protocol::ipc::RunStartParams;
use hearth_testkit::model_server::{Reply, Script};

#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;
const RUNS: usize = 200;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    let mut script = Script::new();
    for n in 0..RUNS {
        script = script.turn(Reply::new().tool_call(&format!("call-{n}"), "agent_status", &["{}"])).turn(Reply::new().text(&["ok"]));
    }
    let (_server, _dir, hearth) = scripted::hearth_with_model(script).await;
    let mut overheads = Vec::with_capacity(RUNS);
    let mut thread_id = None;
    for _ in 0..RUNS {
        let (started, mut events) =
            hearth.start_run(RunStartParams { thread_id: thread_id.clone(), text: "status?".into() }).await.unwrap();
        thread_id = Some(started.thread_id);
        let mut call_end = None;
        while let Some(event) = events.recv().await {
            match event {
                Event::ToolCallEnd(_) => call_end = Some(Instant::now()),
                Event::ToolCallResult(_) => overheads.push(call_end.expect("END before RESULT").elapsed()),
                _ => {}
            }
        }
        while hearth.active_runs() > 0 {
            tokio::task::yield_now().await;
        }
    }
    overheads.sort();
    let at = |q: f64| overheads[((overheads.len() as f64 * q) as usize).min(overheads.len() - 1)];
    println!(
        "agent loop, TOOL_CALL_END → TOOL_CALL_RESULT of agent_status (includes its SQLite read), {RUNS} runs: \
         median {:?}, p95 {:?}, max {:?}",
        at(0.5),
        at(0.95),
        overheads[overheads.len() - 1]
    );
    figure::figure(
        "agent loop: TOOL_CALL_END → TOOL_CALL_RESULT (a one-query tool), median",
        &format!("{:.3} ms (p95 {:.3})", at(0.5).as_secs_f64() * 1e3, at(0.95).as_secs_f64() * 1e3),
        "none (no peer publishes it)",
        "no target (reported)",
    );
    policy_overhead(at(0.5));
}

/// The trust policy's share of one call, beside the loop's whole overhead measured above: what
/// dispatch adds per call — recording what the call read (its result's text kept for address
/// checks) and deciding the next call (an address checked against everything read). For a run
/// that read a mail and two 30,000-character pages (the common case), and one at the 4 MiB cap of
/// kept text (the worst case of an address check).
fn policy_overhead(loop_median: std::time::Duration) {
    use hearth_core::trust::{Chooser, Provenance, decide};
    use hearth_protocol::ToolName;
    use hearth_protocol::provenance::{OutsideSource, SourceKind};

    const CALLS: usize = 2_000;
    let page = "Lorem ipsum dolor sit amet, https://example.org/a consectetur adipiscing elit. ".repeat(380);
    let next = serde_json::json!({ "url": "https://example.org/not-read?d=x" });
    for (label, pages) in [("a mail and two pages read", 2usize), ("4 MiB of text read (the cap)", 140)] {
        let provenance = Provenance::new();
        provenance.owner_said("what is new? see https://example.org/a");
        provenance.record(OutsideSource::new(SourceKind::Mail, "thread-1"), &"Dear owner, ".repeat(200));
        for n in 0..pages {
            provenance.record(OutsideSource::new(SourceKind::WebPage, &format!("https://example.org/{n}")), &page);
        }
        let mut per_call = Vec::with_capacity(CALLS);
        for n in 0..CALLS {
            let started = Instant::now();
            provenance.record(OutsideSource::new(SourceKind::WebPage, "https://example.org/1"), &page[..2_000 + n % 7]);
            let verdict = decide(ToolName::ReadWeb, &next, Chooser::ChatModel, &provenance);
            per_call.push(started.elapsed());
            std::hint::black_box(verdict);
        }
        per_call.sort();
        let median = per_call[CALLS / 2];
        println!(
            "trust policy per call ({label}), {CALLS} calls: median {median:?}, p95 {:?}, max {:?}",
            per_call[CALLS * 95 / 100],
            per_call[CALLS - 1]
        );
        figure::figure(
            &format!("trust policy per call: record + decide, {label}, median"),
            &format!("{:.1} µs", median.as_secs_f64() * 1e6),
            &format!("the loop's whole per-call overhead in the same run: {:.1} µs", loop_median.as_secs_f64() * 1e6),
            "under 20 µs",
        );
    }
}
