//! Hearth's AG-UI endpoint driven by code Hearth did not write: the official TypeScript
//! client `@ag-ui/client` 1.0.0 (`tests/agui_client/run.mjs`), which verifies every event.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::agui_server::{AguiServer, new_token};
use hearth_protocol::agui::Event;
use serde_json::Value;

use super::support::{fast_config, settled};

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui_client/run.mjs")
}

struct Endpoint {
    hearth: Hearth,
    server: AguiServer,
    token: String,
    _dir: tempfile::TempDir,
}

async fn endpoint(slow_step: Duration) -> Endpoint {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.sample_slow_step = slow_step;
    let hearth = Hearth::open(config).await.unwrap();
    let token = new_token();
    let server = AguiServer::start(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), token.clone()).await.unwrap();
    Endpoint { hearth, server, token: token.reveal().to_owned(), _dir: dir }
}

/// Runs the official client once and returns its one-line report.
async fn client(endpoint: &Endpoint, token: &str, message: &str, option: &str) -> Value {
    let url = format!("http://{}/", endpoint.server.addr());
    let output = tokio::process::Command::new("node")
        .arg(client_script())
        .args([url.as_str(), token, message, option])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|err| panic!("node could not run ({err}); scripts/test.sh installs Node and tests/agui_client"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the client crashed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|err| panic!("unreadable report {stdout:?}: {err}"))
}

fn types(report: &Value) -> Vec<&str> {
    report["types"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_verifies_text_and_tool_call_runs() {
    let e = endpoint(Duration::ZERO).await;
    let text = client(&e, &e.token, "hello", "").await;
    assert_eq!(text["failure"], Value::Null, "{text}");
    let seen = types(&text);
    assert_eq!((seen.first(), seen.last()), (Some(&"RUN_STARTED"), Some(&"RUN_FINISHED")), "{seen:?}");
    assert!(seen.contains(&"TEXT_MESSAGE_CONTENT"));

    let calendar = client(&e, &e.token, "plan my day", "").await;
    assert_eq!(calendar["failure"], Value::Null, "{calendar}");
    assert_eq!(calendar["toolCalls"], serde_json::json!(["read_calendar"]));
    assert!(types(&calendar).contains(&"TOOL_CALL_RESULT"));

    let task = client(&e, &e.token, "Book a table for two on Friday", "").await;
    assert_eq!(task["failure"], Value::Null, "{task}");
    assert_eq!(task["toolCalls"], serde_json::json!(["delegate_task"]));
    assert_eq!(e.hearth.task_list().await.unwrap().tasks.len(), 1, "the run's effect happened once");
    e.server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_mid_run_cancels_it() {
    // Paced so the run is still going when the client aborts after its sixth event.
    let e = endpoint(Duration::from_millis(200)).await;
    let report = client(&e, &e.token, "count to 50 slowly", "stop-after=6").await;
    assert_eq!(report["stopped"], true, "{report}");
    settled(&e.hearth).await;
    let threads = e.hearth.thread_list().await.unwrap().threads;
    assert_eq!(threads.len(), 1);
    let history = e.hearth.thread_history(&threads[0].id).await.unwrap().events;
    let last = history.last().unwrap();
    assert!(matches!(last, Event::RunFinished(_)), "{last:?}");
    assert!(serde_json::to_string(last).unwrap().contains("cancelled"), "the run ended cancelled: {last:?}");
    let numbers = history.iter().filter(|e| matches!(e, Event::TextMessageContent(_))).count();
    assert!(numbers < 50, "the run stopped early ({numbers} of 50 numbers)");
    e.server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_refused_without_starting_a_run() {
    let e = endpoint(Duration::ZERO).await;
    let report = client(&e, "hearth_not-the-token", "hello", "").await;
    let failure = report["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("401"), "{report}");
    assert!(!failure.contains(&e.token), "the real token never appears");
    assert!(e.hearth.thread_list().await.unwrap().threads.is_empty(), "no run was started");
    e.server.stop();
}
