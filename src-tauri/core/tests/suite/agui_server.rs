//! Hearth's AG-UI endpoint driven by code Hearth did not write: the official TypeScript
//! client `@ag-ui/client` 1.0.0 (`tests/agui_client/run.mjs`), which verifies every event.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::agui_server::{AguiServer, new_token};
use std::sync::Arc;

use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_protocol::agui::Event;
use hearth_testkit::model_server::{HttpError, ModelServer, Reply, Script, ScriptedCall};
use serde_json::Value;

use super::setup::agui_client_script;
use super::support::{fast_config, settled};

/// The client script, its packages installed on first use (`setup::agui_client_script`).
async fn client_script() -> PathBuf {
    tokio::task::spawn_blocking(agui_client_script)
        .await
        .unwrap_or_else(|err| std::panic::resume_unwind(err.into_panic()))
}

struct Endpoint {
    hearth: Hearth,
    server: AguiServer,
    token: String,
    _dir: tempfile::TempDir,
}

async fn endpoint(slow_step: Duration) -> Endpoint {
    serve(slow_step, None).await
}

/// Hearth answering with a model from the scripted server (through the real OpenAI Chat client).
async fn model_endpoint(server: &ModelServer) -> Endpoint {
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-endpoint-key".into()))
        .with_retry(RetryPolicy { max_retries: 0, base_delay: Duration::ZERO, max_delay: Duration::ZERO });
    serve(Duration::ZERO, Some(Arc::new(OpenAiChat::new(&config).unwrap()))).await
}

async fn serve(slow_step: Duration, model: Option<Arc<OpenAiChat>>) -> Endpoint {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.sample_slow_step = slow_step;
    let mut hearth = Hearth::open(config).await.unwrap();
    if let Some(provider) = model {
        hearth = hearth.with_model(provider, "scripted-model");
    }
    let token = new_token();
    let server = AguiServer::start(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), token.clone()).await.unwrap();
    Endpoint { hearth, server, token: token.reveal().to_owned(), _dir: dir }
}

/// Runs the official client once and returns its one-line report.
async fn client(endpoint: &Endpoint, token: &str, message: &str, option: &str) -> Value {
    let url = format!("http://{}/", endpoint.server.addr());
    let script = client_script().await;
    let output = tokio::process::Command::new("node")
        .arg(script)
        .args([url.as_str(), token, message, option])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|err| panic!("node could not run ({err}): install Node.js with npm, then `(cd tests/agui_client && npm ci)`"));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_verifies_reasoning_parallel_tool_calls_and_a_provider_error() {
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().reasoning(&["The owner asks", " about mail."]).text(&["Let me look."]).parallel_tool_calls(vec![
                ScriptedCall::new("call-1", "search_mail", &["{\"query\":\"permission\"}"]),
                ScriptedCall::new("call-2", "read_calendar", &[
                    "{\"timeMin\":\"2026-12-01T00:00:00Z\",\"timeMax\":\"2026-12-08T00:00:00Z\"}",
                ]),
            ]))
            .turn(Reply::new().text(&["The school wrote; your week is busy."]))
            .turn(HttpError::server_error()),
    )
    .await
    .unwrap();
    let e = model_endpoint(&server).await;

    let report = client(&e, &e.token, "anything from school?", "").await;
    assert_eq!(report["failure"], Value::Null, "zero verification errors: {report}");
    let seen = types(&report);
    for expected in ["REASONING_START", "REASONING_MESSAGE_CONTENT", "REASONING_END", "TEXT_MESSAGE_CONTENT", "TOOL_CALL_RESULT"] {
        assert!(seen.contains(&expected), "{expected} in {seen:?}");
    }
    assert_eq!(report["toolCalls"], serde_json::json!(["search_mail", "read_calendar"]));
    assert_eq!(seen.last(), Some(&"RUN_FINISHED"));

    let failed = client(&e, &e.token, "and now?", "").await;
    assert_eq!(failed["failure"], Value::Null, "a provider error is a valid RUN_ERROR, not a broken stream: {failed}");
    assert_eq!(types(&failed).last(), Some(&"RUN_ERROR"));
    assert!(failed["errorEvent"].as_str().unwrap().contains("500"), "{failed}");
    e.server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_client_declares_comes_back_to_it_as_a_pending_call() {
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().tool_call("call-color", "pick_color", &["{}"]))
            .turn(Reply::new().text(&["You picked blue."])),
    )
    .await
    .unwrap();
    let e = model_endpoint(&server).await;
    let report = client(&e, &e.token, "pick a colour for the card", "client-tool=pick_color").await;
    assert_eq!(report["failure"], Value::Null, "{report}");
    assert_eq!(report["toolCalls"], serde_json::json!(["pick_color"]));
    assert!(!types(&report).contains(&"TOOL_CALL_RESULT"), "Hearth leaves the client's call to the client: {report}");
    let offered: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"pick_color".to_owned()) && offered.contains(&"search_mail".to_owned()), "{offered:?}");
    // The client answered it and ran again: the model got the client's result.
    let continued: Vec<&str> = report["continued"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(continued.last(), Some(&"RUN_FINISHED"), "{report}");
    let tool_message = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!((tool_message["tool_call_id"].as_str(), tool_message["content"].as_str()), (Some("call-color"), Some("blue")));
    e.server.stop();
}
