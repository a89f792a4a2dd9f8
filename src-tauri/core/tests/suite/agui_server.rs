//! Hearth's AG-UI endpoint driven by code Hearth did not write: the official TypeScript
//! client `@ag-ui/client` 1.0.0 (`tests/agui_client/run.mjs`), which verifies every event.
//!
//! Issue 9 pins invariants 15 (every stream, Stop included, is valid for the official
//! verifier) and 16 (a client that drops the stream cancels the run; nothing is dispatched
//! after the drop; the stored terminal event is never a success) of
//! `../shared/notes/controls.md`, counting files, tasks, journal rows and model requests.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::agui_server::{AguiLimits, AguiServer};
use hearth_core::secret::BearerToken;
use std::sync::Arc;

use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_protocol::agui::Event;
use hearth_testkit::model_server::{HttpError, ModelServer, Reply, Script, ScriptedCall};
use serde_json::Value;

use super::setup::agui_client_script;
use super::support::{fast_config, settled};

/// The client script, its packages installed on first use (`setup::agui_client_script`).
async fn client_script() -> PathBuf {
    tokio::task::spawn_blocking(agui_client_script).await.unwrap_or_else(|err| std::panic::resume_unwind(err.into_panic()))
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
    serve(Duration::ZERO, Some(scripted_provider(server))).await
}

/// The real OpenAI Chat client pointed at the scripted server, without retries.
fn scripted_provider(server: &ModelServer) -> Arc<OpenAiChat> {
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-endpoint-key".into())).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    Arc::new(OpenAiChat::new(&config).unwrap())
}

async fn serve(slow_step: Duration, model: Option<Arc<OpenAiChat>>) -> Endpoint {
    serve_within(slow_step, model, AguiLimits::default()).await
}

/// The sample agent's endpoint with explicit limits.
async fn limited_endpoint(limits: AguiLimits) -> Endpoint {
    serve_within(Duration::ZERO, None, limits).await
}

async fn serve_within(slow_step: Duration, model: Option<Arc<OpenAiChat>>, limits: AguiLimits) -> Endpoint {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.sample_slow_step = slow_step;
    let mut hearth = Hearth::open(config).await.unwrap();
    if let Some(provider) = model {
        hearth = hearth.with_model(provider, "scripted-model");
    }
    let token = BearerToken::generate();
    let server = AguiServer::start_with_limits(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), token.clone(), limits).await.unwrap();
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
    // An endpoint client's words are not the owner's: the task waits on the owner's card.
    assert_eq!(e.hearth.task_list().await.unwrap().tasks.len(), 0, "nothing ran before the owner decided");
    let cards = e.hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 1, "{cards:?}");
    assert_eq!(cards[0].origin, hearth_protocol::approvals::ProposalOrigin::AguiEndpoint);
    let params = hearth_protocol::approvals::ApprovalDecideParams {
        proposal_id: cards[0].id.clone(),
        hash: cards[0].hash.clone(),
        decision: hearth_protocol::approvals::Decision::Approve,
    };
    e.hearth.approval_decide(&params).await.unwrap();
    assert_eq!(e.hearth.task_list().await.unwrap().tasks.len(), 1, "the run's effect happened once, on approval");
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
                ScriptedCall::new(
                    "call-2",
                    "read_calendar",
                    &["{\"timeMin\":\"2026-12-01T00:00:00Z\",\"timeMax\":\"2026-12-08T00:00:00Z\"}"],
                ),
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
        Script::new().turn(Reply::new().tool_call("call-color", "pick_color", &["{}"])).turn(Reply::new().text(&["You picked blue."])),
    )
    .await
    .unwrap();
    let e = model_endpoint(&server).await;
    let report = client(&e, &e.token, "pick a colour for the card", "client-tool=pick_color").await;
    assert_eq!(report["failure"], Value::Null, "{report}");
    assert_eq!(report["toolCalls"], serde_json::json!(["pick_color"]));
    assert!(!types(&report).contains(&"TOOL_CALL_RESULT"), "Hearth leaves the client's call to the client: {report}");
    let offered: Vec<String> =
        server.requests()[0].body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect();
    assert!(offered.contains(&"pick_color".to_owned()) && offered.contains(&"search_mail".to_owned()), "{offered:?}");
    // The client answered it and ran again: the model got the client's result.
    let continued: Vec<&str> = report["continued"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(continued.last(), Some(&"RUN_FINISHED"), "{report}");
    let tool_message = server.requests()[1].body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").cloned().unwrap();
    assert_eq!((tool_message["tool_call_id"].as_str(), tool_message["content"].as_str()), (Some("call-color"), Some("blue")));
    e.server.stop();
}

/// How long any one wait may take before the test calls it a hang (generous: a loaded 2-core
/// machine, node starting up). Never a synchronisation: every wait ends on an event.
const HANG: Duration = Duration::from_secs(120);

/// Awaits `future`, failing with `what` if it hangs.
async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(HANG, future).await.unwrap_or_else(|_| panic!("hung for {HANG:?} waiting until {what}"))
}

/// Yields until `done()` holds (in-memory conditions only), failing with `what` if it hangs.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    within(what, async {
        while !done() {
            tokio::task::yield_now().await;
        }
    })
    .await;
}

/// Opens the SSE stream with a bare HTTP/1.1 POST on a TCP connection the test owns, so it
/// can drop exactly that connection.
async fn open_stream(endpoint: &Endpoint, input: &Value) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let addr = endpoint.server.addr();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = input.to_string();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n\r\n",
        endpoint.token,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    stream
}

/// Reads the response into `seen` until it contains `needle` (each SSE event is one chunk,
/// so an event's JSON is never split by chunk framing).
async fn read_until(stream: &mut tokio::net::TcpStream, seen: &mut Vec<u8>, needle: &str) {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    while !seen.windows(needle.len()).any(|w| w == needle.as_bytes()) {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream ended before {needle}: {}", String::from_utf8_lossy(seen));
        seen.extend_from_slice(&buf[..n]);
    }
}

/// Invariant 16 on the endpoint, with an effect in flight when the client goes away.
///
/// The model asks for `import_pdf`, then `delegate_task` and a second `import_pdf` in the same
/// turn, and has a further `import_pdf` turn scripted after it. The journal's effect hook holds
/// the first import after its file was written and before the journal records it; the test
/// drops the TCP connection there and releases the effect only once the run has ended (the
/// drop reached it), so the late result arrives after the run's end, deterministically.
/// Counted: files (rows and PDFs on disk), tasks, journal intents and rows, model requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue9_a_dropped_endpoint_stream_freezes_effects_and_ends_cancelled() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use hearth_core::store::journal::{OpKey, OpStatus};
    use tokio::sync::Notify;

    const IMPORT: &str = r#"{"attachmentId":"att-permission-form"}"#;
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().text(&["Importing the form."]).parallel_tool_calls(vec![
                ScriptedCall::new("call-import", "import_pdf", &[IMPORT]),
                ScriptedCall::new("call-delegate", "delegate_task", &[r#"{"title":"Return the signed permission slip"}"#]),
                ScriptedCall::new("call-import-again", "import_pdf", &[IMPORT]),
            ]))
            .turn(Reply::new().tool_call("call-import-later", "import_pdf", &[IMPORT]))
            .turn(Reply::new().text(&["Done."])),
    )
    .await
    .unwrap();
    let provider = scripted_provider(&server);
    let e = serve(Duration::ZERO, Some(provider.clone())).await;
    // Who holds the provider while no run is going; the run's agent task holds one more.
    let idle_holders = Arc::strong_count(&provider);

    // Counting oracles inside the journal: intents written, effects that ran.
    let journal = e.hearth.tasks().journal().clone();
    let intents = Arc::new(AtomicUsize::new(0));
    let counted = intents.clone();
    journal.set_intent_hook(Some(Arc::new(move |_tool: &str| {
        counted.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    })));
    let (effects, in_flight, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (counted, reached, released) = (effects.clone(), in_flight.clone(), release.clone());
    journal.set_effect_hook(Some(Arc::new(move |_tool: &str| {
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        let (reached, released) = (reached.clone(), released.clone());
        Box::pin(async move {
            // Only the first effect is held; any later one (a defect) is counted and let go,
            // so the test fails on the count instead of hanging.
            if first {
                reached.notify_one();
                released.notified().await;
            }
        })
    })));

    let (thread_id, run_id) = ("issue9-drop-thread", "issue9-drop-run");
    let input = serde_json::json!({
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{ "id": "user-1", "role": "user", "content": "Import the permission form from school." }],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    });
    let mut stream = open_stream(&e, &input).await;
    let mut seen = Vec::new();
    within("the tool call started on the stream", read_until(&mut stream, &mut seen, r#""toolCallName":"import_pdf""#)).await;
    assert!(seen.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
    within("the import was in flight", in_flight.notified()).await;
    assert_eq!(e.hearth.file_list().await.unwrap().len(), 1, "the effect in flight has written its file");

    // The client goes away while the effect is in flight.
    drop(stream);
    // The run ends on its own: the drop dropped the receiver, which cancelled the run.
    until("the dropped stream ended the run", || e.hearth.active_runs() == 0).await;
    let scope = format!("thread:{thread_id}");
    let op = |call: &str| format!("{run_id}:{call}");
    let import = op("call-import");
    let key = OpKey { scope: &scope, op_id: &import };
    let row = e.hearth.store().get_operation(key).await.unwrap().expect("the import's journal row exists");
    assert_eq!(row.status, OpStatus::OutcomeUnknown, "the run ended with the import in flight: uncertain, not lost: {row:?}");

    // Now the effect finishes, after its run has ended.
    release.notify_one();
    until("the run's agent task ended (it let go of the provider)", || Arc::strong_count(&provider) == idle_holders).await;

    // Effects are frozen at the one in flight.
    assert_eq!(effects.load(Ordering::SeqCst), 1, "exactly one effect ran");
    assert_eq!(intents.load(Ordering::SeqCst), 1, "no intent was written after the drop");
    let files = e.hearth.file_list().await.unwrap();
    assert_eq!(files.len(), 1, "only the import in flight made a file: {files:?}");
    let on_disk = std::fs::read_dir(e.hearth.config().files_dir())
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().path().extension().is_some_and(|x| x == "pdf"))
        .count();
    assert_eq!(on_disk, 1, "one PDF on disk");
    assert_eq!(e.hearth.store().count_tasks().await.unwrap(), 0, "delegate_task, after the drop, created nothing");
    for later in ["call-import-again", "call-import-later", "call-delegate"] {
        let op_id = op(later);
        assert!(
            e.hearth.store().get_operation(OpKey { scope: &scope, op_id: &op_id }).await.unwrap().is_none(),
            "{later} was never dispatched"
        );
    }
    assert_eq!(server.requests().len(), 1, "the model was not asked again after the drop");
    assert_eq!(server.turns_left(), 2);

    // The import is never lost: uncertain, with the late success and its file beside it.
    let row = e.hearth.store().get_operation(key).await.unwrap().unwrap();
    assert!(matches!(row.status, OpStatus::OutcomeUnknown | OpStatus::Succeeded), "{row:?}");
    let late: Value = serde_json::from_str(row.late_receipt.as_deref().expect("the late result is recorded")).unwrap();
    assert_eq!(late["status"], "succeeded", "{late}");
    assert_eq!(late["value"]["id"].as_str(), Some(files[0].id.as_str()), "the late result names the file it made: {late}");

    // The stored terminal event is a cancellation, never a success.
    let history = e.hearth.store().thread_events(thread_id).await.unwrap();
    let last = history.last().expect("the run's events are stored");
    match last {
        Event::RunFinished(finished) => assert!(finished.is_cancelled(), "the run ended cancelled: {last:?}"),
        Event::RunError(_) => {}
        other => panic!("the stored run ends with {other:?}, not RUN_FINISHED (cancelled) or RUN_ERROR"),
    }
    let successes = history.iter().filter(|event| matches!(event, Event::RunFinished(f) if f.is_success())).count();
    assert_eq!(successes, 0, "no success was stored for the run: {history:?}");
    assert!(!history.iter().any(|event| matches!(event, Event::ToolCallResult(_))), "no result of a call after the drop was stored");
    journal.set_effect_hook(None);
    journal.set_intent_hook(None);
    e.server.stop();
}

/// Runs the official client in `await-stop` mode: when it reports the first streamed number,
/// Hearth is asked to stop that run (as the window's Stop does); the client reads on to the
/// end of the stream. Returns the run id and the client's final report.
async fn client_stopped_after_first_text(endpoint: &Endpoint, message: &str) -> (String, Value) {
    use std::process::Stdio;
    use tokio::io::AsyncBufReadExt;

    let url = format!("http://{}/", endpoint.server.addr());
    let script = client_script().await;
    let mut child = tokio::process::Command::new("node")
        .arg(script)
        .args([url.as_str(), endpoint.token.as_str(), message, "await-stop"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("node could not run ({err}): install Node.js with npm, then `(cd tests/agui_client && npm ci)`"));
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = within("the client saw the first number", lines.next_line()).await.unwrap();
    let first = first.unwrap_or_else(|| panic!("the client said nothing; its exit: {:?}", child.try_wait()));
    let ready: Value = serde_json::from_str(&first).unwrap_or_else(|err| panic!("unreadable line {first:?}: {err}"));
    let Some(run_id) = ready["awaitingStop"].as_str().map(str::to_owned) else {
        panic!("the client ended before any text arrived: {ready}");
    };
    assert!(endpoint.hearth.stop_run(&run_id), "the run was still going when Stop arrived ({run_id})");
    let last = within("the client read the stopped stream to its end", lines.next_line()).await.unwrap();
    let output = within("the client exited", child.wait_with_output()).await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = last.unwrap_or_else(|| panic!("the client printed no report: {stderr}"));
    assert!(output.status.success(), "the client crashed: {last}\n{stderr}");
    let report = serde_json::from_str(&last).unwrap_or_else(|err| panic!("unreadable report {last:?}: {err}"));
    (run_id, report)
}

/// Invariant 15 on the Stop path: a run stopped in Hearth while the official client listens
/// streams to its end, every event through the client's verifier, and ends RUN_FINISHED with
/// the cancelled outcome (runs.rs closes what is open first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue9_the_official_client_verifies_a_stopped_run_to_its_end() {
    // 2 s per number: once the first arrives, 98 s of counting remain, far beyond any Stop.
    let e = endpoint(Duration::from_secs(2)).await;
    let (run_id, report) = client_stopped_after_first_text(&e, "count to 50 slowly").await;
    assert_eq!(report["failure"], Value::Null, "zero verification errors on the stopped stream: {report}");
    assert_eq!(report["askedToStop"], true, "{report}");
    let seen = types(&report);
    assert_eq!(seen.first(), Some(&"RUN_STARTED"), "{seen:?}");
    assert_eq!(seen.last(), Some(&"RUN_FINISHED"), "the stream ran to its terminal event: {seen:?}");
    assert_eq!(seen[seen.len() - 2], "TEXT_MESSAGE_END", "the open message was closed before the end: {seen:?}");
    assert_eq!(report["terminal"]["outcome"]["type"], "cancelled", "{report}");
    assert_eq!(report["terminal"]["runId"], run_id.as_str(), "{report}");
    assert_eq!(report["runOutcome"], "cancelled", "the official client read the run as cancelled: {report}");
    let numbers = seen.iter().filter(|t| **t == "TEXT_MESSAGE_CONTENT").count();
    assert!((1..50).contains(&numbers), "the run stopped early ({numbers} of 50 numbers)");

    // What the client saw is what Hearth stored.
    within("the stopped run was recorded as ended", settled(&e.hearth)).await;
    let thread_id = report["terminal"]["threadId"].as_str().unwrap();
    let history = e.hearth.thread_history(thread_id).await.unwrap().events;
    let last = history.last().unwrap();
    assert!(matches!(last, Event::RunFinished(f) if f.is_cancelled()), "the stored run ended cancelled: {last:?}");
    assert_eq!(history.len(), seen.len(), "the client saw every stored event");
    e.server.stop();
}

/// A `RunAgentInput` for a new thread `thread`, asking `message`.
fn run_input(thread: &str, message: &str) -> Value {
    serde_json::json!({
        "threadId": thread,
        "runId": format!("{thread}-run"),
        "messages": [{ "id": "user-1", "role": "user", "content": message }],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    })
}

/// Sends one raw HTTP/1.1 request (`headers` each end in CRLF) with `body` on a fresh
/// connection, asking the endpoint to close it, and returns everything it answered.
async fn raw_request(addr: SocketAddr, headers: &str, body: &str) -> String {
    try_raw_request(addr, headers, body).await.unwrap()
}

/// [`raw_request`], with the I/O error if the endpoint closed the connection on it (as it
/// does to one over the connection cap, possibly before the request is written).
async fn try_raw_request(addr: SocketAddr, headers: &str, body: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let head = format!(
        "POST / HTTP/1.1\r\n{headers}Content-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let mut answer = Vec::new();
    within("the endpoint answered and closed", stream.read_to_end(&mut answer)).await?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// Nothing ran: no run in flight, no thread row.
async fn assert_no_run(e: &Endpoint) {
    assert_eq!(e.hearth.active_runs(), 0, "no run is in flight");
    assert!(e.hearth.thread_list().await.unwrap().threads.is_empty(), "no thread was created");
}

/// Issue 10 point 9: a request naming another host (a DNS-rebinding page, or the right address
/// with another port) is refused before its token is looked at, and starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_a_wrong_host_is_refused_before_the_token_and_starts_no_run() {
    let e = endpoint(Duration::ZERO).await;
    let addr = e.server.addr();
    let body = run_input("issue10-host", "hello").to_string();
    let auth = format!("Authorization: Bearer {}\r\n", e.token);
    let other_port = addr.port().wrapping_add(1);
    for host in [
        "Host: rebound.example.com\r\n".to_owned(),
        format!("Host: rebound.example.com:{}\r\n", addr.port()),
        format!("Host: 127.0.0.1:{other_port}\r\n"),
        format!("Host: localhost:{other_port}\r\n"),
        "Host: 127.0.0.1\r\n".to_owned(),
        format!("Host: 127.0.0.1:{}\r\nHost: rebound.example.com\r\n", addr.port()),
        String::new(),
    ] {
        let answer = raw_request(addr, &format!("{host}{auth}"), &body).await;
        assert!(answer.starts_with("HTTP/1.1 421"), "{host:?} was refused: {answer}");
        assert!(answer.contains("Host: 127.0.0.1:"), "the refusal says which Host is answered: {answer}");
        assert!(!answer.contains(&e.token), "the token never appears");
        // A wrong token behind a wrong Host gets the Host refusal: the token was not looked at.
        let answer = raw_request(addr, &format!("{host}Authorization: Bearer hearth_wrong\r\n"), &body).await;
        assert!(answer.starts_with("HTTP/1.1 421"), "{host:?} without the token: {answer}");
    }
    assert_no_run(&e).await;
    // The endpoint's own names still pass the Host check (and reach the token check).
    for host in [format!("127.0.0.1:{}", addr.port()), format!("LOCALHOST:{}", addr.port())] {
        let answer = raw_request(addr, &format!("Host: {host}\r\nAuthorization: Bearer hearth_wrong\r\n"), &body).await;
        assert!(answer.starts_with("HTTP/1.1 401"), "Host: {host} reaches the token check: {answer}");
    }
    assert_no_run(&e).await;
    e.server.stop();
}

/// Issue 10 point 9: any request carrying an `Origin` (what a browser adds for a page's
/// fetch) is refused before its token is looked at, and starts nothing, even with the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_an_origin_header_is_refused_and_starts_no_run() {
    let e = endpoint(Duration::ZERO).await;
    let addr = e.server.addr();
    let body = run_input("issue10-origin", "hello").to_string();
    let host = format!("Host: 127.0.0.1:{}\r\n", addr.port());
    for origin in ["http://rebound.example.com", "null", &format!("http://127.0.0.1:{}", addr.port())] {
        for token in [e.token.as_str(), "hearth_wrong"] {
            let answer = raw_request(addr, &format!("{host}Origin: {origin}\r\nAuthorization: Bearer {token}\r\n"), &body).await;
            assert!(answer.starts_with("HTTP/1.1 403"), "Origin: {origin} was refused: {answer}");
            assert!(answer.contains("Origin"), "the refusal says why: {answer}");
            assert!(!answer.contains(&e.token), "the token never appears");
        }
    }
    assert_no_run(&e).await;
    e.server.stop();
}

/// Issue 10 point 9, issue 31: unauthenticated connections hold at most 8 slots, and past
/// that each new connection closes the oldest of them (counted: which connection the server
/// closed); only connections that presented the token can fill all 16, and then one more is
/// answered 503 and closed; once one closes, a new connection is served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_connections_over_the_cap_are_refused() {
    use tokio::io::AsyncReadExt;
    let limits = AguiLimits::default();
    assert_eq!((limits.max_connections, limits.max_unauthenticated), (16, 8));
    // A header timeout longer than any wait here: every close below is the cap's doing.
    let e = limited_endpoint(AguiLimits { header_read_timeout: HANG * 4, ..limits }).await;
    let addr = e.server.addr();
    // The endpoint accepts in order, so each connection has its slot before the next is accepted.
    let mut silent = Vec::new();
    for _ in 0..limits.max_unauthenticated {
        silent.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..3 {
        silent.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        let mut oldest = silent.remove(0);
        let mut answer = Vec::new();
        within("the oldest unauthenticated connection was closed", oldest.read_to_end(&mut answer)).await.unwrap();
        assert!(answer.is_empty(), "closed without an answer: {}", String::from_utf8_lossy(&answer));
    }
    // The owner's client's connections: each sends the token (a bad body: 400, no run) and
    // stays open. The first eight each close one of the silent connections left.
    let mut held = Vec::new();
    for _ in 0..limits.max_connections {
        held.push(authenticated_connection(&e).await);
    }
    for mut closed in silent {
        let mut answer = Vec::new();
        within("a silent connection made room for the owner's", closed.read_to_end(&mut answer)).await.unwrap();
        assert!(answer.is_empty());
    }
    // Every slot is the owner's: one more connection is refused.
    for _ in 0..3 {
        let mut extra = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut answer = Vec::new();
        within("the extra connection was answered and closed", extra.read_to_end(&mut answer)).await.unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("too many open connections"), "{answer}");
    }
    assert_no_run(&e).await;

    // One closes; the endpoint serves again (once it has seen the close).
    drop(held.pop());
    let host = format!("Host: 127.0.0.1:{}\r\nAuthorization: Bearer hearth_wrong\r\n", addr.port());
    within("a connection was served after one closed", async {
        loop {
            // Until the endpoint has seen the close, a new connection is refused (503, or
            // closed under the request before it was written).
            if let Ok(answer) = try_raw_request(addr, &host, "{}").await {
                if answer.starts_with("HTTP/1.1 401") {
                    break;
                }
                assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{answer}");
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    drop(held);
    assert_no_run(&e).await;
    e.server.stop();
}

/// A connection that sent one request with the endpoint's token (a body that is no
/// `RunAgentInput`, so 400 and no run) and was kept open, its answer read.
async fn authenticated_connection(endpoint: &Endpoint) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let addr = endpoint.server.addr();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}",
        endpoint.token
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    // The JSON error body ends the answer.
    within("the owner's request was answered", read_until(&mut stream, &mut seen, "\"}")).await;
    assert!(seen.starts_with(b"HTTP/1.1 400"), "{}", String::from_utf8_lossy(&seen));
    stream
}

/// The 24-byte HTTP/2 connection preface and an empty SETTINGS frame: what a client speaking
/// HTTP/2 with prior knowledge sends first.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Issue 31: 16 silent connections and 16 HTTP/2 (prior knowledge) connections, with the
/// default limits, do not keep the official client out: its run streams to the end with 0
/// verification errors. Every one of the 32 connections is then closed by the endpoint
/// (counted: reads that end), having started nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue31_silent_and_http2_connections_do_not_lock_out_the_official_client() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let e = endpoint(Duration::ZERO).await;
    let addr = e.server.addr();
    let mut hostile = Vec::new();
    for _ in 0..16 {
        hostile.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..16 {
        let mut h2 = tokio::net::TcpStream::connect(addr).await.unwrap();
        h2.write_all(H2_PREFACE).await.unwrap();
        hostile.push(h2);
    }
    let report = client(&e, &e.token, "hello", "").await;
    assert_eq!(report["failure"], Value::Null, "zero verification errors: {report}");
    let seen = types(&report);
    assert_eq!((seen.first(), seen.last()), (Some(&"RUN_STARTED"), Some(&"RUN_FINISHED")), "{seen:?}");
    assert!(seen.contains(&"TEXT_MESSAGE_CONTENT"), "{seen:?}");
    assert_eq!(e.hearth.thread_list().await.unwrap().threads.len(), 1, "the client's run, and nothing else, ran");

    // Each is closed by the endpoint: made room for a newer connection, refused as HTTP/2, or
    // timed out (at most the default 10 s), never answered with anything but a close.
    let mut closed = 0;
    for mut connection in hostile {
        let mut answer = Vec::new();
        // (A reset, if the endpoint closed with bytes unread, is a close too.)
        if within("the endpoint closed a hostile connection", connection.read_to_end(&mut answer)).await.is_ok() {
            assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 "), "{answer:?}");
        }
        closed += 1;
    }
    assert_eq!(closed, 32);
    settled(&e.hearth).await;
    assert_eq!(e.hearth.thread_list().await.unwrap().threads.len(), 1);
    e.server.stop();
}

/// Issue 31: the header timeout (200 ms here, 10 s by default) closes a connection that
/// sends nothing at all, one that sent the HTTP/2 preface (at once: HTTP/2 is not served),
/// and one that sent a request and then sat idle; each read ends with the endpoint's close
/// (EOF), not with a clock of the test's own. Few connections, far from the cap: no close
/// here is the cap's doing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue31_silent_http2_and_idle_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let e = limited_endpoint(AguiLimits { header_read_timeout: Duration::from_millis(200), ..AguiLimits::default() }).await;
    let addr = e.server.addr();
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut h2 = tokio::net::TcpStream::connect(addr).await.unwrap();
    h2.write_all(H2_PREFACE).await.unwrap();
    // Connected and answered, then idle between requests.
    let mut idle = authenticated_connection(&e).await;

    let mut answer = Vec::new();
    within("the endpoint closed the silent connection", silent.read_to_end(&mut answer)).await.unwrap();
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    let mut answer = Vec::new();
    within("the endpoint closed the HTTP/2 connection", h2.read_to_end(&mut answer)).await.unwrap();
    // Nothing in HTTP/2 (its first frame would be SETTINGS); at most an HTTP/1.1 refusal.
    assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 "), "{answer:?}");
    let mut answer = Vec::new();
    within("the endpoint closed the idle connection", idle.read_to_end(&mut answer)).await.unwrap();
    assert!(answer.is_empty(), "nothing more after the first answer: {}", String::from_utf8_lossy(&answer));
    assert_no_run(&e).await;

    // Limits that would let unauthenticated connections take every slot are refused.
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    for max_unauthenticated in [0, 16, 17] {
        let limits = AguiLimits { max_unauthenticated, ..AguiLimits::default() };
        let started = AguiServer::start_with_limits(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), BearerToken::generate(), limits);
        assert!(started.await.is_err(), "{limits:?}");
    }
    e.server.stop();
}

/// Issue 31: turned on again when something else holds its port, the endpoint moves to a
/// free port with a new token, stored in the vault and shown in Settings; the old token is
/// refused there (401, nothing written) and the new one admitted. Back on a port it keeps,
/// the endpoint keeps its token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue31_a_moved_endpoint_gets_a_new_token() {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let on = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let (url, old) = (on.url.unwrap(), on.token.unwrap());
    let first: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    hearth.settings_endpoint_set(false).await.unwrap();
    // Another process takes the port (turning the endpoint off released it at once).
    let squatter = tokio::net::TcpListener::bind(first).await.unwrap();

    let moved = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let (url, new) = (moved.url.unwrap(), moved.token.unwrap());
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    assert_ne!(addr.port(), first.port(), "the endpoint moved");
    assert!(new.starts_with("hearth_") && new != old, "a new token");
    assert_eq!(hearth.settings_get().await.unwrap().endpoint.token.as_deref(), Some(new.as_str()), "Settings shows the new one");

    let send = |token: String, thread: &'static str| {
        let headers = format!("Host: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\n", addr.port());
        async move { raw_request(addr, &headers, &run_input(thread, "hello").to_string()).await }
    };
    let before = chat_rows(&hearth).await;
    let answer = send(old.clone(), "issue31-old-token").await;
    assert!(answer.starts_with("HTTP/1.1 401"), "the old token is refused on the new port: {answer}");
    assert!(!answer.contains(&old) && !answer.contains(&new), "no token in the refusal");
    assert_eq!(chat_rows(&hearth).await, before, "the refused request wrote nothing");
    let answer = send(new.clone(), "issue31-new-token").await;
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("RUN_FINISHED"), "the new token is admitted: {answer}");
    settled(&hearth).await;

    // Off and on again, on the port it moved to: same port, same token.
    hearth.settings_endpoint_set(false).await.unwrap();
    let again = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    assert_eq!(again.url.as_deref(), Some(url.as_str()));
    assert_eq!(again.token.as_deref(), Some(new.as_str()));
    drop(squatter);
    hearth.shutdown().await;
}

/// Issue 10 point 9: runs over the cap (4 streaming at once) are answered 429 and start
/// nothing; when one ends, a new run is admitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_runs_over_the_cap_get_429() {
    const CAP: usize = 4;
    // 2 s per number: every admitted run is still streaming while the test goes on.
    let e = endpoint(Duration::from_secs(2)).await;
    let addr = e.server.addr();
    let mut streams = Vec::new();
    for n in 0..CAP {
        let mut stream = open_stream(&e, &run_input(&format!("issue10-run-{n}"), "count to 50 slowly")).await;
        let mut seen = Vec::new();
        within("the run started", read_until(&mut stream, &mut seen, "RUN_STARTED")).await;
        streams.push(stream);
    }
    assert_eq!(e.hearth.active_runs(), CAP);
    let auth = format!("Host: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n", addr.port(), e.token);
    let answer = raw_request(addr, &auth, &run_input("issue10-run-extra", "count to 50 slowly").to_string()).await;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("already streaming 4 runs"), "{answer}");
    assert_eq!(e.hearth.active_runs(), CAP, "the extra run did not start");
    assert_eq!(e.hearth.thread_list().await.unwrap().threads.len(), CAP, "no thread row for the refused run");

    // One client goes away; its run ends and a new one is admitted.
    drop(streams.pop());
    until("the dropped run ended", || e.hearth.active_runs() == CAP - 1).await;
    let mut stream = open_stream(&e, &run_input("issue10-run-after", "count to 50 slowly")).await;
    let mut seen = Vec::new();
    within("the next run started", read_until(&mut stream, &mut seen, "RUN_STARTED")).await;
    assert!(seen.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
    drop(stream);
    drop(streams);
    until("every run ended", || e.hearth.active_runs() == 0).await;
    e.server.stop();
}

/// Issue 10 point 9: a connection that never finishes its headers is closed by the endpoint
/// (here after 200 ms instead of the default 10 s); it started nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_a_connection_that_never_finishes_its_headers_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    assert_eq!(AguiLimits::default().header_read_timeout, Duration::from_secs(10));
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let limits = AguiLimits { header_read_timeout: Duration::from_millis(200), ..AguiLimits::default() };
    let token = BearerToken::generate();
    let server = AguiServer::start_with_limits(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), token.clone(), limits).await.unwrap();
    let addr = server.addr();
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bea", addr.port()).as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // Ends on the endpoint's close (an error if it reset), not on a clock of the test's own.
    let _ = within("the endpoint closed the slow connection", slow.read_to_end(&mut answer)).await;
    assert!(!String::from_utf8_lossy(&answer).contains("200 OK"), "{}", String::from_utf8_lossy(&answer));
    assert_eq!(hearth.active_runs(), 0);
    assert!(hearth.thread_list().await.unwrap().threads.is_empty(), "no thread was created");
    // Limits that would admit nothing are refused.
    let none = AguiLimits { max_runs: 0, ..AguiLimits::default() };
    assert!(AguiServer::start_with_limits(hearth.clone(), SocketAddr::from(([127, 0, 0, 1], 0)), token, none).await.is_err());
    server.stop();
}

/// Rows in each of Hearth's chat tables (threads, chat runs, the event log), read on a
/// connection of the test's own.
async fn chat_rows(hearth: &Hearth) -> [i64; 3] {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(hearth.config().database_path()).read_only(true);
    let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect_with(options).await.unwrap();
    let mut counts = [0; 3];
    for (count, table) in counts.iter_mut().zip(["threads", "chat_runs", "thread_events"]) {
        *count = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(&pool).await.unwrap();
    }
    pool.close().await;
    counts
}

/// A `RunAgentInput` continuing `thread` with a new run `run`.
fn continue_input(thread: &str, run: &str, message: &str) -> Value {
    serde_json::json!({
        "threadId": thread,
        "runId": run,
        "messages": [{ "id": format!("{run}-user"), "role": "user", "content": message }],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    })
}

/// Issue 10 point 9: "Regenerate token" in Settings makes a new token, stores it, and the
/// running endpoint (the real one, on loopback) refuses the old token from the next request
/// on; the new one is admitted. Counted: chat runs and threads written for each request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_a_regenerated_token_replaces_the_old_one_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let on = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let (url, old) = (on.url.unwrap(), on.token.unwrap());
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    let host = format!("Host: 127.0.0.1:{}\r\n", addr.port());
    let send = |token: String, thread: &'static str| {
        let headers = format!("{host}Authorization: Bearer {token}\r\n");
        async move { raw_request(addr, &headers, &run_input(thread, "hello").to_string()).await }
    };
    let answer = send(old.clone(), "issue10-before").await;
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("RUN_FINISHED"), "the first token works: {answer}");
    settled(&hearth).await;
    let before = chat_rows(&hearth).await;

    let view = hearth.settings_endpoint_regenerate().await.unwrap().endpoint;
    let new = view.token.unwrap();
    assert!(new.starts_with("hearth_") && new != old, "a new token");
    assert_eq!(view.url.as_deref(), Some(url.as_str()), "the endpoint kept its address");

    let answer = send(old.clone(), "issue10-old-token").await;
    assert!(answer.starts_with("HTTP/1.1 401"), "the old token is refused at once: {answer}");
    assert!(!answer.contains(&old) && !answer.contains(&new), "no token in the refusal");
    assert_eq!(chat_rows(&hearth).await, before, "the refused request wrote nothing");
    assert_eq!(hearth.active_runs(), 0);

    let answer = send(new.clone(), "issue10-new-token").await;
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("RUN_FINISHED"), "the new token is admitted: {answer}");
    settled(&hearth).await;
    let after = chat_rows(&hearth).await;
    assert_eq!((after[0], after[1]), (before[0] + 1, before[1] + 1), "one thread and one run for the admitted request");

    // The vault holds the new token: the endpoint turned off and on again uses it.
    hearth.settings_endpoint_set(false).await.unwrap();
    let again = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    assert_eq!(again.token.as_deref(), Some(new.as_str()));
    hearth.shutdown().await;
}

/// Issue 10 point 9: an endpoint client may not append to a thread it did not start. A
/// `RunAgentInput` naming the owner's thread is answered 403 and writes nothing (threads,
/// chat runs and event rows counted); the endpoint's own threads — new ids, and threads whose
/// first run came from the endpoint, even after the owner added to them — are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue10_an_endpoint_client_may_not_append_to_the_owners_thread() {
    use super::support::{collect, start};
    let e = endpoint(Duration::ZERO).await;
    let addr = e.server.addr();
    let auth = format!("Host: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n", addr.port(), e.token);

    // The owner's conversation, started in the window.
    let (owners, _, events) = start(&e.hearth, None, "hello").await;
    collect(events).await;
    settled(&e.hearth).await;
    let before = chat_rows(&e.hearth).await;
    assert_eq!((before[0], before[1]), (1, 1));

    for run in ["issue10-intrude-1", "issue10-intrude-2"] {
        let answer = raw_request(addr, &auth, &continue_input(&owners, run, "add this to your chat").to_string()).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(answer.contains("was not started through Hearth's AG-UI endpoint") && answer.contains("new threadId"), "{answer}");
        assert_eq!(chat_rows(&e.hearth).await, before, "nothing was written for {run}");
        assert_eq!(e.hearth.active_runs(), 0, "no run started");
    }
    let history = e.hearth.thread_history(&owners).await.unwrap().events;
    assert_eq!(history.len() as i64, before[2], "the owner's thread is as it was");

    // A new thread id is the endpoint's own, and it may continue it.
    let served = |input: Value| {
        let auth = auth.clone();
        async move {
            let answer = raw_request(addr, &auth, &input.to_string()).await;
            assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("RUN_FINISHED"), "{answer}");
        }
    };
    served(continue_input("issue10-own", "issue10-own-1", "hello")).await;
    settled(&e.hearth).await;
    served(continue_input("issue10-own", "issue10-own-2", "hello again")).await;
    settled(&e.hearth).await;
    // The owner may add to the endpoint's thread; it stays the endpoint's (its first run was).
    let (_, _, events) = start(&e.hearth, Some("issue10-own"), "and from me").await;
    collect(events).await;
    settled(&e.hearth).await;
    served(continue_input("issue10-own", "issue10-own-3", "and once more")).await;
    settled(&e.hearth).await;
    let after = chat_rows(&e.hearth).await;
    assert_eq!((after[0], after[1]), (before[0] + 1, before[1] + 4), "one new thread, four runs: {after:?}");
    e.server.stop();
}

/// Review fix: a request whose headers carried the old token and whose body was still
/// arriving when Regenerate returned does not start a run (the token is checked again once
/// the body is in). Whether the endpoint had read the headers before Regenerate or not, the
/// answer must be 401 and nothing written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_arrives_after_regenerate_does_not_run_under_the_old_token() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let on = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let (url, old) = (on.url.unwrap(), on.token.unwrap());
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    let body = run_input("slow-body", "hello").to_string();
    let mut stream = post_head(addr, &old, body.len()).await;
    let (first, rest) = body.split_at(body.len() - 1);
    stream.write_all(first.as_bytes()).await.unwrap();
    let before = chat_rows(&hearth).await;
    hearth.settings_endpoint_regenerate().await.unwrap();
    stream.write_all(rest.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    within("the endpoint answered and closed", stream.read_to_end(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert_eq!(chat_rows(&hearth).await, before, "nothing written");
    assert_eq!(hearth.active_runs(), 0);
    hearth.shutdown().await;
}

/// Review fix: Regenerate also ends the endpoint runs already streaming (all admitted under the
/// old token), so a leaked token's live run ends with it; the owner's own runs go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_ends_the_endpoint_runs_admitted_under_the_old_token() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    // 10 s per number: left alone, the run would stream far longer than the hang limit.
    config.sample_slow_step = Duration::from_secs(10);
    let hearth = Hearth::open(config).await.unwrap();
    let on = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let (url, old) = (on.url.unwrap(), on.token.unwrap());
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    let body = run_input("leaked-token-run", "count to 50 slowly").to_string();
    let mut stream = post_head(addr, &old, body.len()).await;
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    within("the run started", read_until(&mut stream, &mut seen, "RUN_STARTED")).await;
    assert_eq!(hearth.active_runs(), 1);

    hearth.settings_endpoint_regenerate().await.unwrap();
    until("the old token's run ended", || hearth.active_runs() == 0).await;
    // Its stream ends with the run cancelled, not finished.
    within("the stream said the run was cancelled", read_until(&mut stream, &mut seen, r#""outcome":{"type":"cancelled"}"#)).await;
    hearth.shutdown().await;
}

/// A connection to the endpoint with a POST's head written (bearer `token`, a body of `len`
/// bytes to follow, closed after the answer): the caller writes the body as it needs to.
async fn post_head(addr: SocketAddr, token: &str, len: usize) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {len}\r\n\r\n",
        addr.port(),
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}
