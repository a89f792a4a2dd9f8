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
}
