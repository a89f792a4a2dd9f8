//! Harness mode against an AG-UI agent Hearth did not write: `tests/agui_server/server.py`,
//! built on the official `ag-ui-protocol` Python package (installed by `scripts/test.sh`
//! into the venv `HEARTH_PYTHON` points at). Each test starts its own server process and
//! asserts on the Hearth stream and on what the server recorded or Hearth stored.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hearth_core::agent::Agent;
use hearth_core::agent::harness::{BearerToken, HarnessAgent, HarnessConfig, MAX_CONTINUATIONS};
use hearth_core::tools::ToolContext;
use hearth_protocol::agui::{Event, Message, RunAgentInput, Tool, UserMessage, verify_all};
use hearth_protocol::approvals::ProposalStatus;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use super::setup::agui_python;
use super::support::{TestHearth, open, text_of};

const TOKEN: &str = "hearth-test-token-5f1c9a";

/// The scripted agent, killed when dropped.
struct AgentServer {
    _child: Child,
    _stdout: Lines<BufReader<ChildStdout>>,
    base: String,
    host: String,
}

impl AgentServer {
    async fn start() -> Self {
        let python = agui_python();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui_server/server.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .arg("0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        // A bound on a hung interpreter, not a wait for readiness: READY is read as it comes.
        let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
            .await
            .expect("the AG-UI test agent did not print READY within 60 s")
            .unwrap()
            .expect("the AG-UI test agent exited before it was ready (see its stderr above)");
        let port: u16 = line.strip_prefix("READY ").unwrap_or_else(|| panic!("unexpected first line {line:?}")).parse().unwrap();
        Self { _child: child, _stdout: stdout, base: format!("http://127.0.0.1:{port}"), host: format!("127.0.0.1:{port}") }
    }

    fn endpoint(&self) -> String {
        format!("{}/agent", self.base)
    }

    /// Every request the agent received, in order.
    async fn requests(&self) -> Vec<Value> {
        let body = reqwest::get(format!("{}/requests", self.base)).await.unwrap().text().await.unwrap();
        serde_json::from_str(&body).unwrap()
    }

    /// The runs whose client went away mid-stream (waits up to 20 s for the first).
    async fn disconnects(&self) -> Vec<String> {
        let body = reqwest::get(format!("{}/disconnects?wait=20", self.base)).await.unwrap().text().await.unwrap();
        serde_json::from_str(&body).unwrap()
    }
}

/// The tools Hearth declares here, with their JSON Schemas.
fn declared_tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "search_mail".into(),
            description: "Search the owner's mail.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "query": { "type": "string", "maxLength": 500 } },
                "required": ["query"],
                "additionalProperties": false
            }),
            metadata: None,
        },
        Tool {
            name: "prepare_email".into(),
            description: "Prepare an email for the owner to review. Nothing is sent.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "to": { "type": "array", "items": { "type": "string" } },
                    "subject": { "type": "string" },
                    "body": { "type": "string" }
                },
                "required": ["to", "subject", "body"]
            }),
            metadata: None,
        },
    ]
}

fn config(server: &AgentServer) -> HarnessConfig {
    HarnessConfig { bearer_token: Some(BearerToken::new(TOKEN)), ..HarnessConfig::new(server.endpoint(), declared_tools()) }
}

fn agent_with(t: &TestHearth, config: HarnessConfig) -> HarnessAgent {
    let hearth = t.hearth.clone();
    let tool_context = Arc::new(move |thread_id: &str, run_id: &str, cancel: CancellationToken| -> ToolContext {
        hearth.toolbox().for_chat(thread_id, run_id, hearth_protocol::approvals::ProposalOrigin::ExternalAgent, cancel)
    });
    HarnessAgent::new(config, tool_context).unwrap()
}

fn input(text: &str) -> RunAgentInput {
    RunAgentInput {
        thread_id: "thread-h".into(),
        run_id: "run-h".into(),
        messages: vec![Message::User(UserMessage { id: "u1".into(), content: text.into(), ..Default::default() })],
        state: json!({ "owner": "sam" }),
        ..Default::default()
    }
}

async fn run(agent: &HarnessAgent, text: &str) -> Vec<Event> {
    let events: Vec<Event> = agent.run(input(text), CancellationToken::new()).collect().await;
    // What the run driver checks: one well-formed run.
    verify_all(&events).unwrap_or_else(|err| panic!("the Hearth stream is not valid AG-UI ({err}): {events:#?}"));
    let runs = events.iter().filter(|e| matches!(e, Event::RunStarted(_))).count();
    assert_eq!(runs, 1, "exactly one Hearth run per owner message: {events:#?}");
    events
}

fn run_error(events: &[Event]) -> String {
    match events.last() {
        Some(Event::RunError(e)) => e.message.clone(),
        other => panic!("the run should end with RUN_ERROR, ended with {other:?}"),
    }
}

fn tool_results(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some((r.tool_call_id.clone(), r.content.to_text())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_reasoning_are_forwarded_inside_one_verified_hearth_run() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "hello").await;
    let Some(Event::RunStarted(started)) = events.first() else { panic!("{events:#?}") };
    assert_eq!((started.thread_id.as_str(), started.run_id.as_str()), ("thread-h", "run-h"));
    assert!(matches!(events.last(), Some(Event::RunFinished(f)) if f.run_id == "run-h" && f.is_success()));
    assert_eq!(text_of(&events), "Hello from the harness.");

    let events = run(&agent, "think first").await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            Event::ReasoningMessageContent(c) => Some(c.delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "The owner wants a short answer.");
    assert!(events.iter().any(|e| matches!(e, Event::ReasoningStart(_))));
    assert!(events.iter().any(|e| matches!(e, Event::ReasoningEnd(_))));
    assert_eq!(text_of(&events), "Short answer.");

    // What Hearth sent, as the official pydantic model read it.
    let requests = server.requests().await;
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request["valid"], true, "{}", request["error"]);
        assert_eq!(request["authorization"], format!("Bearer {TOKEN}"));
        let body = &request["body"];
        assert_eq!(body["protocolVersion"], "1.0");
        assert_eq!(body["threadId"], "thread-h");
        assert_eq!(body["runId"], "run-h");
        assert_eq!(body["state"], json!({ "owner": "sam" }));
        assert_eq!(body["tools"], serde_json::to_value(declared_tools()).unwrap(), "Hearth's tools with their schemas");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_mail_runs_in_hearth_and_its_result_goes_back_in_the_continuation() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "please search my mail").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0].0, "call-1");
    assert!(results[0].1.contains("msg-school-1"), "the local mail search ran: {}", results[0].1);
    assert!(text_of(&events).starts_with("Let me look.I found: "), "{}", text_of(&events));
    assert!(matches!(events.last(), Some(Event::RunFinished(f)) if f.is_success()));

    let requests = server.requests().await;
    assert_eq!(requests.len(), 2, "the first run and one continuation");
    let (first, second) = (&requests[0]["body"], &requests[1]["body"]);
    assert_eq!(requests[1]["valid"], true, "{}", requests[1]["error"]);
    assert_ne!(second["runId"], first["runId"], "a continuation is a new harness run");
    assert_eq!(second["parentRunId"], first["runId"]);
    assert_eq!(second["tools"], first["tools"]);
    assert_eq!(second["state"], json!({ "owner": "sam", "searches": 1 }), "the harness's STATE_DELTA was applied");
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<_> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(messages[1]["id"], "m1");
    assert_eq!(messages[1]["content"], "Let me look.");
    assert_eq!(messages[1]["toolCalls"][0]["id"], "call-1");
    assert_eq!(messages[1]["toolCalls"][0]["function"]["name"], "search_mail");
    assert_eq!(
        serde_json::from_str::<Value>(messages[1]["toolCalls"][0]["function"]["arguments"].as_str().unwrap()).unwrap(),
        json!({ "query": "permission form" })
    );
    assert_eq!(messages[2]["toolCallId"], "call-1");
    assert_eq!(messages[2]["content"], results[0].1, "the continuation carries exactly what Hearth's tool returned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_email_from_a_harness_only_proposes_and_nothing_approves_it() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "email the school").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{events:#?}");
    let result: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(result["status"], "awaiting_review", "{result}");
    // A proposal awaiting review ends the run, as in Hearth's own chat: the owner acts next.
    assert!(!text_of(&events).contains("waiting for your review"), "the agent was asked to go on: {}", text_of(&events));
    assert!(matches!(events.last(), Some(Event::RunFinished(f)) if f.is_success()));

    let proposals = t.hearth.approval_list().await.unwrap();
    assert_eq!(proposals.len(), 1, "exactly one proposal");
    assert_eq!(proposals[0].id.as_str(), result["proposalId"]);
    assert_eq!(proposals[0].status, ProposalStatus::AwaitingReview, "still waiting for the owner after the run ended");
    assert_eq!(t.hearth.store().sent_messages().await.unwrap().len(), 0, "nothing was sent");
    assert_eq!(server.requests().await.len(), 1, "the result was not sent back for another round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_tool_hearth_did_not_declare_is_shown_but_not_run() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "frontend map").await;
    assert!(events.iter().any(|e| matches!(e, Event::ToolCallStart(s) if s.tool_call_name == "show_map")));
    assert!(tool_results(&events).is_empty(), "Hearth answers only its own tools");
    assert!(matches!(events.last(), Some(Event::RunFinished(f)) if f.is_success()));
    assert_eq!(server.requests().await.len(), 1, "no continuation for a call Hearth does not own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harness_that_keeps_calling_tools_is_stopped_after_six_continuations() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "loop forever").await;
    assert_eq!(tool_results(&events).len(), MAX_CONTINUATIONS, "one round of results per continuation");
    let message = run_error(&events);
    assert!(message.contains(&server.host) && message.contains("after 6 rounds"), "{message}");
    assert_eq!(server.requests().await.len(), MAX_CONTINUATIONS + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_stream_ends_the_run_with_an_error_that_says_what_the_harness_did() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));

    let events = run(&agent, "invalid please").await;
    assert_eq!(
        run_error(&events),
        format!(
            "The agent at {} sent TOOL_CALL_ARGS for a tool call it never started (`never-started`); the run was stopped.",
            server.host
        )
    );
    assert!(!events.iter().any(|e| matches!(e, Event::ToolCallArgs(_))), "the invalid event is not forwarded");

    let events = run(&agent, "garbage please").await;
    let message = run_error(&events);
    assert!(message.starts_with(&format!("The agent at {} sent something that is not an AG-UI 1.0 event", server.host)), "{message}");

    let events = run(&agent, "early end").await;
    assert_eq!(
        run_error(&events),
        format!(
            "The agent at {} closed the stream without finishing its run (no RUN_FINISHED or RUN_ERROR); the run was stopped.",
            server.host
        )
    );
    assert!(events.iter().any(|e| matches!(e, Event::TextMessageStart(_))), "what came before is kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_are_plain_errors_that_never_show_the_token() {
    let t = open().await;
    let server = AgentServer::start().await;
    let with_token = config(&server);
    assert!(!format!("{with_token:?}").contains(TOKEN));
    let agent = agent_with(&t, with_token);
    assert!(!format!("{agent:?}").contains(TOKEN));

    let events = run(&agent, "deny me").await;
    let message = run_error(&events);
    assert!(message.contains("HTTP 401") && message.contains(&server.host), "{message}");
    assert!(!serde_json::to_string(&events).unwrap().contains(TOKEN), "the token is in no event");
    let requests = server.requests().await;
    assert_eq!(requests[0]["authorization"], format!("Bearer {TOKEN}"), "the token was presented (and echoed back)");

    let message = run_error(&run(&agent, "crash now").await);
    assert!(message.contains("HTTP 500") && message.contains(&server.host), "{message}");
    let message = run_error(&run(&agent, "plain json").await);
    assert!(message.contains("\"application/json\", not an AG-UI event stream"), "{message}");

    let missing = agent_with(&t, HarnessConfig { endpoint: format!("{}/nowhere", server.base), ..config(&server) });
    let message = run_error(&run(&missing, "hello").await);
    assert!(message.contains("HTTP 404") && message.contains("/nowhere"), "{message}");

    // A port nobody listens on: bind one, then let it go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = agent_with(&t, HarnessConfig { endpoint: format!("http://127.0.0.1:{port}/agent"), ..config(&server) });
    let message = run_error(&run(&refused, "hello").await);
    assert!(message.starts_with(&format!("Hearth could not connect to the agent at 127.0.0.1:{port}")), "{message}");
    assert!(!message.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_mid_stream_ends_the_stream_and_closes_the_connection() {
    let t = open().await;
    let server = AgentServer::start().await;
    let agent = agent_with(&t, config(&server));
    let cancel = CancellationToken::new();
    let mut events = agent.run(input("slow count"), cancel.clone());

    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        let content = matches!(event, Event::TextMessageContent(_));
        seen.push(event);
        if content {
            break;
        }
    }
    assert!(matches!(seen.last(), Some(Event::TextMessageContent(_))), "the harness was streaming: {seen:#?}");
    cancel.cancel();
    // The stream ends (what was already queued may still arrive; nothing new is produced).
    let rest: Vec<Event> = events.collect().await;
    assert!(
        !rest.iter().any(|e| matches!(e, Event::RunFinished(_) | Event::RunError(_))),
        "the driver, not the agent, closes a stopped run: {rest:#?}"
    );
    assert_eq!(server.disconnects().await, ["run-h"], "the harness saw the client go away");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_just_before_the_tools_run_starts_no_tool_and_no_continuation() {
    let t = open().await;
    let server = AgentServer::start().await;
    let hearth = t.hearth.clone();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    // The owner presses Stop at the moment Hearth builds the tools' context.
    let tool_context = Arc::new(move |thread_id: &str, run_id: &str, cancel: CancellationToken| -> ToolContext {
        stop.cancel();
        hearth.toolbox().for_chat(thread_id, run_id, hearth_protocol::approvals::ProposalOrigin::ExternalAgent, cancel)
    });
    let agent = HarnessAgent::new(config(&server), tool_context).unwrap();

    let events: Vec<Event> = agent.run(input("email the school"), cancel).collect().await;
    assert!(events.iter().any(|e| matches!(e, Event::ToolCallEnd(_))), "the harness asked for prepare_email");
    assert!(tool_results(&events).is_empty(), "{events:#?}");
    assert!(t.hearth.approval_list().await.unwrap().is_empty(), "prepare_email did not run");
    assert_eq!(server.requests().await.len(), 1, "no continuation after Stop");
}

// Issue 10: the external agent's client never follows a redirect, talks plain http:// only to
// this computer, gives up on a silent agent and bounds what one run may send. These use a
// raw loopback server (no Python): what it answers is exactly the bytes a test gives it.

mod issue10 {
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use hearth_core::agent::harness::{BearerToken, HarnessAgent, HarnessConfig};
    use hearth_core::providers::MAX_TOOL_CALLS_PER_TURN;
    use hearth_core::tools::ToolContext;
    use hearth_protocol::agui::{
        Event, RunFinishedEvent, RunStartedEvent, TextMessageContentEvent, TextMessageStartEvent, ToolCallArgsEvent, ToolCallEndEvent,
        ToolCallStartEvent,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio_util::sync::CancellationToken;

    use super::{TOKEN, TestHearth, declared_tools, open, run, run_error};

    /// Answers every request with `answer`, then closes (or, with `hold`, keeps the
    /// connection open and silent). Counts connections.
    struct RawServer {
        addr: SocketAddr,
        accepted: Arc<AtomicUsize>,
        accept: tokio::task::JoinHandle<()>,
    }

    impl Drop for RawServer {
        fn drop(&mut self) {
            self.accept.abort();
        }
    }

    impl RawServer {
        async fn start(answer: Vec<u8>, hold: bool) -> Self {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let accepted = Arc::new(AtomicUsize::new(0));
            let count = accepted.clone();
            let answer = Arc::new(answer);
            let accept = tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    count.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(serve(stream, answer.clone(), hold));
                }
            });
            Self { addr, accepted, accept }
        }

        fn endpoint(&self) -> String {
            format!("http://{}/agent", self.addr)
        }

        fn connections(&self) -> usize {
            self.accepted.load(Ordering::SeqCst)
        }
    }

    /// Reads the request head and its `Content-Length` body, writes the answer.
    async fn serve(mut stream: TcpStream, answer: Arc<Vec<u8>>, hold: bool) {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            let Ok(n) = stream.read(&mut buf).await else { return };
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buf[..n]);
            if let Some(pos) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                break pos + 4;
            }
        };
        let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
        let length: usize =
            head.lines().find_map(|line| line.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
        while request.len() < head_end + length {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        // The client may hang up part-way (that is what some tests expect).
        let _ = stream.write_all(&answer).await;
        let _ = stream.flush().await;
        if hold {
            let mut rest = [0u8; 64];
            // Silent until the client goes away.
            while let Ok(n) = stream.read(&mut rest).await {
                if n == 0 {
                    break;
                }
            }
        }
    }

    fn sse(events: &[Event]) -> Vec<u8> {
        let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
        for event in events {
            out.extend_from_slice(format!("data: {}\n\n", serde_json::to_string(event).unwrap()).as_bytes());
        }
        out
    }

    fn started() -> Event {
        Event::RunStarted(RunStartedEvent { thread_id: "thread-h".into(), run_id: "run-h".into(), ..Default::default() })
    }

    /// An agent whose tool contexts are counted: a context is built only to run tools.
    async fn agent(config: HarnessConfig) -> (HarnessAgent, Arc<AtomicUsize>, TestHearth) {
        let t = open().await;
        let hearth = t.hearth.clone();
        let built = Arc::new(AtomicUsize::new(0));
        let count = built.clone();
        let tool_context = Arc::new(move |thread_id: &str, run_id: &str, cancel: CancellationToken| -> ToolContext {
            count.fetch_add(1, Ordering::SeqCst);
            hearth.toolbox().for_chat(thread_id, run_id, hearth_protocol::approvals::ProposalOrigin::ExternalAgent, cancel)
        });
        (HarnessAgent::new(config, tool_context).unwrap(), built, t)
    }

    fn config(endpoint: String) -> HarnessConfig {
        HarnessConfig { bearer_token: Some(BearerToken::new(TOKEN)), ..HarnessConfig::new(endpoint, declared_tools()) }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn issue10_a_harness_redirect_is_not_followed_and_the_token_goes_nowhere() {
        for status in ["307 Temporary Redirect", "308 Permanent Redirect", "302 Found"] {
            let elsewhere = RawServer::start(sse(&[started()]), false).await;
            let target = elsewhere.endpoint();
            let answer = format!("HTTP/1.1 {status}\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let server = RawServer::start(answer.into_bytes(), false).await;
            let (agent, tools, _t) = agent(config(server.endpoint())).await;
            let message = run_error(&run(&agent, "hello").await);
            let code = &status[..3];
            assert_eq!(
                message,
                format!(
                    "The agent at {} answered with a redirect to {target} (HTTP {code}); Hearth does not follow redirects, \
                     because they would resend your token. Set the harness endpoint to {target} if you trust it.",
                    server.addr
                )
            );
            assert_eq!(server.connections(), 1, "{status}");
            assert_eq!(elsewhere.connections(), 0, "{status}: the redirect target was never contacted");
            assert_eq!(tools.load(Ordering::SeqCst), 0);
        }
    }

    #[tokio::test]
    async fn issue10_a_plain_http_harness_on_another_computer_is_refused_when_configured() {
        let factory = Arc::new(|_: &str, _: &str, _: CancellationToken| -> ToolContext { unreachable!("nothing runs") });
        for endpoint in ["http://agent.example.com/agent", "http://192.168.1.7:8000/agent"] {
            let err = HarnessAgent::new(config(endpoint.to_owned()), factory.clone()).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "The harness endpoint {endpoint} uses plain http:// to another computer, which would send your token \
                     and conversations unencrypted. Use https://, or http:// only for an agent on this computer \
                     (localhost, 127.0.0.1 or ::1)."
                )
            );
        }
        for endpoint in ["https://agent.example.com/agent", "http://localhost:8000/agent", "http://[::1]:8000/agent"] {
            assert!(HarnessAgent::new(config(endpoint.to_owned()), factory.clone()).is_ok(), "{endpoint}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn issue10_a_harness_that_goes_silent_mid_reply_ends_the_run_at_its_read_timeout() {
        let server = RawServer::start(sse(&[started()]), true).await;
        let (agent, _, _t) = agent(HarnessConfig { read_timeout: Duration::from_millis(300), ..config(server.endpoint()) }).await;
        let events = run(&agent, "hello").await;
        let message = run_error(&events);
        assert_eq!(
            message,
            format!(
                "The agent at {} sent nothing for 0.3 s in the middle of its reply; the run was stopped. \
                 Check that it is still running, then try again.",
                server.addr
            )
        );
        assert_eq!(server.connections(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn issue10_a_harness_reply_past_its_bound_ends_the_run() {
        let mut events = vec![started(), Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() })];
        let sent = 256;
        let delta = "y".repeat(1024);
        for _ in 0..sent {
            events.push(Event::TextMessageContent(TextMessageContentEvent {
                message_id: "m1".into(),
                delta: delta.clone(),
                ..Default::default()
            }));
        }
        let server = RawServer::start(sse(&events), false).await;
        let (agent, _, _t) = agent(HarnessConfig { max_reply_bytes: 64 * 1024, ..config(server.endpoint()) }).await;
        let got = run(&agent, "hello").await;
        let message = run_error(&got);
        assert_eq!(
            message,
            format!(
                "The agent at {} sent more than 64 KiB in one run; the run was stopped so its reply cannot fill memory. \
                 Ask again with a narrower request.",
                server.addr
            )
        );
        let forwarded = got.iter().filter(|e| matches!(e, Event::TextMessageContent(_))).count();
        assert!(forwarded < 64, "at most 64 KiB of 1 KiB deltas were read, {forwarded} of {sent} forwarded");
    }

    /// Issue 31, finding 10: a call whose outcome is in doubt ends the external agent's run,
    /// as in Hearth's own chat loop: its result is shown, the agent gets no continuation, and
    /// nothing more is dispatched. Counted in the agent's connections and the journal's rows.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn issue31_a_call_in_doubt_ends_the_external_agents_run() {
        use hearth_core::store::journal::OpStatus;
        use hearth_core::tools::{StepId, dispatch};
        use hearth_protocol::agui::Tool;

        const ARGS: &str = r#"{"name":"notes.md","content":"hi"}"#;
        let events = [
            started(),
            Event::ToolCallStart(ToolCallStartEvent {
                tool_call_id: "call-1".into(),
                tool_call_name: "save_artifact".into(),
                ..Default::default()
            }),
            Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: "call-1".into(), delta: ARGS.into(), ..Default::default() }),
            Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: "call-1".into(), ..Default::default() }),
            Event::RunFinished(RunFinishedEvent { thread_id: "thread-h".into(), run_id: "run-h".into(), ..Default::default() }),
        ];
        // Every request gets the same answer: an agent that would call again after any result.
        let server = RawServer::start(sse(&events), false).await;
        let mut tools = declared_tools();
        tools.push(Tool {
            name: "save_artifact".into(),
            description: "Save a text artifact.".into(),
            parameters: serde_json::json!({ "type": "object", "properties": { "name": { "type": "string" }, "content": { "type": "string" } } }),
            metadata: None,
        });
        let (agent, _, t) = agent(HarnessConfig { tools, ..config(server.endpoint()) }).await;

        // Another dispatch of the very operation the agent's call names (same thread, run and
        // call) holds it, between its intent and its effect: the agent's call is in doubt.
        let journal = t.hearth.tasks().journal().clone();
        let release = Arc::new(tokio::sync::Notify::new());
        let (held, first) = (release.clone(), Arc::new(std::sync::atomic::AtomicBool::new(true)));
        journal.set_intent_hook(Some(Arc::new(move |_tool: &str| {
            // Only the first dispatch is held; any later one goes on (and would be counted).
            let (held, hold) = (held.clone(), first.swap(false, Ordering::SeqCst));
            Box::pin(async move {
                if hold {
                    held.notified().await;
                }
            })
        })));
        let other = t.hearth.toolbox().for_chat(
            "thread-h",
            "run-h",
            hearth_protocol::approvals::ProposalOrigin::ExternalAgent,
            CancellationToken::new(),
        );
        let holder = tokio::spawn(async move { dispatch(&other, "save_artifact", ARGS, StepId::Call("run-h:call-1".into())).await });
        let scope = "thread:thread-h";
        let key = hearth_core::store::journal::OpKey { scope, op_id: "run-h:run-h:call-1" };
        while t.hearth.store().get_operation(key).await.unwrap().is_none() {
            tokio::task::yield_now().await;
        }

        let got = run(&agent, "save it").await;
        let results: Vec<_> = got.iter().filter(|e| matches!(e, Event::ToolCallResult(_))).collect();
        assert_eq!(results.len(), 1, "{got:#?}");
        assert!(matches!(got.last(), Some(Event::RunFinished(f)) if f.is_success()), "{got:#?}");
        assert_eq!(server.connections(), 1, "the agent got no continuation after a call in doubt");
        let rows = |status| t.hearth.store().count_operations(scope, status);
        assert_eq!(rows(OpStatus::Dispatching).await.unwrap(), 1, "only the held dispatch");
        for status in [OpStatus::Succeeded, OpStatus::Failed, OpStatus::OutcomeUnknown] {
            assert_eq!(rows(status).await.unwrap(), 0, "nothing more was dispatched ({status:?})");
        }

        journal.set_intent_hook(None);
        release.notify_one();
        holder.await.unwrap();
        assert_eq!(server.connections(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn issue10_a_harness_asking_for_more_tool_calls_than_the_limit_runs_none() {
        let calls = MAX_TOOL_CALLS_PER_TURN + 1;
        let mut events = vec![started()];
        for i in 0..calls {
            let id = format!("call-{i}");
            events.push(Event::ToolCallStart(ToolCallStartEvent {
                tool_call_id: id.clone(),
                tool_call_name: "search_mail".into(),
                ..Default::default()
            }));
            events.push(Event::ToolCallArgs(ToolCallArgsEvent {
                tool_call_id: id.clone(),
                delta: "{\"query\":\"x\"}".into(),
                ..Default::default()
            }));
            events.push(Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: id, ..Default::default() }));
        }
        events.push(Event::RunFinished(RunFinishedEvent { thread_id: "thread-h".into(), run_id: "run-h".into(), ..Default::default() }));
        let server = RawServer::start(sse(&events), false).await;
        let (agent, tools, _t) = agent(config(server.endpoint())).await;
        let got = run(&agent, "hello").await;
        let message = run_error(&got);
        assert_eq!(
            message,
            format!(
                "The agent at {} asked for {calls} calls of Hearth's tools in one round, more than the \
                 {MAX_TOOL_CALLS_PER_TURN} Hearth runs at once; none were run. Ask again with a narrower request.",
                server.addr
            )
        );
        assert_eq!(tools.load(Ordering::SeqCst), 0, "no tool context was built: nothing ran");
        assert!(!got.iter().any(|e| matches!(e, Event::ToolCallResult(_))));
        assert_eq!(server.connections(), 1, "no continuation");
    }
}
