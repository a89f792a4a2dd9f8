//! Ten chat runs at once, each with a tool call, against the scripted model server (real
//! OpenAI Chat streaming over loopback), round after round: how many runs failed, the time a
//! round takes, and the peak resident size of the process (the core runs in the app's
//! process, so this is the app's backend without its window).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use hearth_protocol::agui::Event;
use hearth_protocol::ipc::RunStartParams;
use hearth_testkit::model_server::{Reply, Script};

#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;

const CONCURRENT: usize = 10;
const ROUNDS: usize = 20;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    // Each run asks twice: the first answer calls a tool, the second is text. Runs take turns
    // from one script in arrival order, so a run may get either first; every turn is served
    // once, so the round makes CONCURRENT tool calls and CONCURRENT replies in all.
    let mut script = Script::new();
    for n in 0..(ROUNDS + 1) * CONCURRENT {
        script = script
            .turn(Reply::new().text(&["Checking."]).tool_call(&format!("call-{n}"), "agent_status", &["{}"]))
            .turn(Reply::new().text(&["All ", "quiet ", "here."]));
    }
    let (_server, _dir, hearth) = scripted::hearth_with_model(script).await;
    let hearth = Arc::new(hearth);
    let rss_start = status_kib("VmRSS:");

    let (mut failed, mut finished, mut tool_results) = (0, 0, 0);
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let runs: Vec<_> = (0..CONCURRENT)
            .map(|n| {
                let hearth = Arc::clone(&hearth);
                tokio::spawn(async move {
                    let (_, mut events) = hearth.start_run(RunStartParams { thread_id: None, text: format!("status {n}?") }).await.unwrap();
                    let (mut ok, mut tools) = (false, 0);
                    while let Some(event) = events.recv().await {
                        match event {
                            Event::ToolCallResult(_) => tools += 1,
                            Event::RunFinished(_) => ok = true,
                            _ => {}
                        }
                    }
                    (ok, tools)
                })
            })
            .collect();
        for run in runs {
            let (ok, tools) = run.await.unwrap();
            if ok {
                finished += 1
            } else {
                failed += 1
            }
            tool_results += tools;
        }
        rounds.push(started.elapsed());
        while hearth.active_runs() > 0 {
            tokio::task::yield_now().await;
        }
    }
    rounds.sort();
    let peak = status_kib("VmHWM:");
    println!(
        "{ROUNDS} rounds of {CONCURRENT} concurrent runs: {finished} finished, {failed} failed, {tool_results} tool results; \
         a round: median {:.1} ms, max {:.1} ms; RSS {:.1} MB at start, peak {:.1} MB",
        rounds[ROUNDS / 2].as_secs_f64() * 1e3,
        rounds[ROUNDS - 1].as_secs_f64() * 1e3,
        rss_start as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    figure::figure(
        "10 concurrent chat runs with tool calls (scripted model), 20 rounds",
        &format!("{failed} failed of {}, peak RSS {:.1} MB (core, no window)", finished + failed, peak as f64 / 1024.0),
        "none",
        "0 failed; app peak RSS ≤ 300 MB",
    );
    println!("load average after: {}", scripted::load_average());
}

/// A `/proc/self/status` figure in KiB (VmRSS, VmHWM).
fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()))
        .unwrap_or(0)
}
