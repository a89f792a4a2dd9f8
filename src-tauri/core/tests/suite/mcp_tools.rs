//! Plug-in tools on Hearth's terms (issue 35; invariant 19 of the control notes): an MCP
//! server's tools through the one tool path, against the real test server on the official SDK
//! (`hearth-mcp-test-server`). Oracles count what the server did — lines in its own ledger
//! file (each `record` call, each cancellation it received) and what it wrote to its standard
//! error (each call it began) — and the cards, journal rows and model requests Hearth made.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_core::store::journal::{OpKey, OpStatus};
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{MCP_UNTRUSTED_NOTE, RunOutcome, StepId, ToolCall, dispatch, run_serially};
use hearth_protocol::approvals::{
    ApprovalDecideParams, Decision, HeldCallDraft, HeldTool, ProposalDraft, ProposalOrigin, ProposalStatus, ProposalView,
};
use hearth_protocol::ids::TaskId;
use hearth_protocol::mcp::{
    McpConnection, McpServerName, McpServerSaveParams, McpToolPolicy, McpToolPolicyParams, McpToolRef, McpTransportInput, McpTransportView,
};
use hearth_protocol::provenance::SourceKind;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use hearth_testkit::model_server::{ModelServer, Reply, Script, Turn, obey_marker};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mcp::{Ledger, http_server, server_binary};
use super::support::{collect, engine_idle, fast_config, guarded, new_task, settled, start};

const SERVER: &str = "notes";

/// A Hearth on a temporary folder, with the scripted model when `script` is given, and the test
/// server added as "notes" (over stdio, its ledger in `ledger`).
struct Plugged {
    hearth: Hearth,
    ledger: Ledger,
    model: Option<ModelServer>,
    _dir: tempfile::TempDir,
}

impl Plugged {
    async fn open(script: Option<Script>, extra_env: &[(&str, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = fast_config(dir.path());
        // Silent servers (hang, garble, a 20 MB line the transport drops) end within this.
        config.mcp.call_timeout = Duration::from_secs(3);
        let mut hearth = Hearth::open(config).await.unwrap();
        let mut model = None;
        if let Some(script) = script {
            let server = ModelServer::start(script).await.unwrap();
            let provider = ProviderConfig::new("Scripted", server.base_url(), Some("sk-mcp".into())).with_retry(RetryPolicy {
                max_retries: 0,
                base_delay: Duration::ZERO,
                max_delay: Duration::ZERO,
            });
            hearth = hearth.with_model(Arc::new(OpenAiChat::new(&provider).unwrap()), "scripted-model");
            model = Some(server);
        }
        let ledger = Ledger::new();
        let mut env = BTreeMap::from([
            ("HEARTH_MCP_LEDGER".to_owned(), ledger.path.display().to_string()),
            ("HEARTH_MCP_CALLS".to_owned(), ledger.path.with_file_name("calls").display().to_string()),
        ]);
        env.extend(extra_env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
        let transport = McpTransportInput::Stdio { command: server_binary().display().to_string(), args: vec!["stdio".into()], env };
        let view = guarded(hearth.mcp_server_save(&McpServerSaveParams { name: SERVER.into(), transport })).await.unwrap();
        assert!(
            matches!(&view.connection, McpConnection::Connected { protocol_version, .. } if protocol_version == "2025-11-25"),
            "{:?}",
            view.connection
        );
        assert!(
            !view.tools.is_empty() && view.tools.iter().all(|t| t.policy == McpToolPolicy::Off),
            "every tool starts off: {:?}",
            view.tools
        );
        Self { hearth, ledger, model, _dir: dir }
    }

    async fn set(&self, tool: &str, policy: McpToolPolicy) {
        self.hearth
            .mcp_tool_policy(&McpToolPolicyParams { server: SERVER.into(), tool: tool.into(), policy, fingerprint: None })
            .await
            .unwrap();
    }

    /// How many times the server said `step` (its call log, written before each call answers).
    async fn server_saw(&self, step: &str) -> usize {
        let calls = std::fs::read_to_string(self.ledger.path.with_file_name("calls")).unwrap_or_default();
        calls.lines().filter(|line| *line == step).count()
    }

    /// Calls a tool as a chat model would, in a chat run of its own (no outside content yet).
    async fn chat_call(&self, thread: &str, run: &str, call: &str, tool: &str, args: &Value) -> hearth_core::tools::ToolOutput {
        let ctx = self.hearth.toolbox().for_chat(thread, run, ProposalOrigin::OwnerChat, CancellationToken::new());
        guarded(dispatch(&ctx, &wire(tool), &args.to_string(), StepId::Call(call.into()))).await
    }

    fn model(&self) -> &ModelServer {
        self.model.as_ref().unwrap()
    }
}

fn wire(tool: &str) -> String {
    McpToolRef { server: McpServerName::parse(SERVER).unwrap(), tool: tool.into() }.wire_name().unwrap()
}

fn held(card: &ProposalView) -> &HeldCallDraft {
    match &card.draft {
        ProposalDraft::HeldCall(call) => call,
        other => panic!("expected a held call, got {other:?}"),
    }
}

async fn decide(hearth: &Hearth, card: &ProposalView) -> ProposalView {
    let params = ApprovalDecideParams { proposal_id: card.id.clone(), hash: card.hash.clone(), decision: Decision::Approve };
    guarded(hearth.approval_decide(&params)).await.unwrap()
}

/// The names of the tools the model was offered in its `n`-th request.
fn offered(model: &ModelServer, n: usize) -> Vec<String> {
    let requests = model.requests();
    let tools = requests[n].body["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_nobody_allowed_is_never_offered_nor_called() {
    // Invariant 19: the model asks for a read-only tool and a writing one that nobody allowed.
    let script = Script::new()
        .turn(Reply::new().tool_call("c1", &wire("lookup"), &[r#"{"key":"rain"}"#]))
        .turn(Reply::new().tool_call("c2", &wire("record"), &[r#"{"line":"milk"}"#]))
        .turn(Reply::new().text(&["Done."]));
    let p = Plugged::open(Some(script), &[]).await;
    let (_, _, events) = start(&p.hearth, None, "Look up rain, then note milk").await;
    collect(events).await;
    settled(&p.hearth).await;

    assert!(offered(p.model(), 0).iter().all(|name| !name.starts_with("mcp__")), "offered: {:?}", offered(p.model(), 0));
    assert_eq!((p.server_saw("lookup").await, p.server_saw("recorded").await), (0, 0), "the server was never called");
    assert!(p.ledger.lines().is_empty(), "no effect at the server");
    assert!(p.hearth.approval_list().await.unwrap().is_empty(), "and no card: a tool that is off is not asked about");
    let told = &p.model().requests()[1].raw_body;
    assert!(told.contains("has not allowed"), "the model is told why: {told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_read_only_tool_runs_as_a_read_and_its_result_is_outside_content() {
    let script = Script::new()
        .turn(Reply::new().tool_call("c1", &wire("lookup"), &[r#"{"key":"rain"}"#]))
        .turn(Reply::new().text(&["It says rain."]));
    let p = Plugged::open(Some(script), &[]).await;
    p.set("lookup", McpToolPolicy::Allowed).await;
    let (_, _, events) = start(&p.hearth, None, "Look up rain").await;
    collect(events).await;
    settled(&p.hearth).await;

    let names = offered(p.model(), 0);
    assert!(names.contains(&wire("lookup")) && !names.contains(&wire("record")), "only the allowed tool is offered: {names:?}");
    assert_eq!(p.server_saw("lookup").await, 1, "called once, without a card");
    assert!(p.hearth.approval_list().await.unwrap().is_empty());
    let result = &p.model().requests()[1].raw_body;
    assert!(result.contains("the value of rain") && result.contains(MCP_UNTRUSTED_NOTE), "wrapped as data: {result}");

    // Arguments that do not fit the server's schema are refused before anything is sent.
    let bad = p.chat_call("t-schema", "r1", "c1", "lookup", &json!({ "key": 7 })).await;
    assert!(bad.is_error && bad.content.contains("schema"), "{}", bad.content);
    assert_eq!(p.server_saw("lookup").await, 1, "nothing was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writing_tool_waits_for_the_owner_runs_once_and_a_changed_call_under_its_key_is_a_conflict() {
    let p = Plugged::open(None, &[]).await;
    // Allowed, but the server does not mark it read-only: an effect, so every call has a card.
    p.set("record", McpToolPolicy::Allowed).await;
    let asked = p.chat_call("t-write", "r1", "c1", "record", &json!({ "line": "milk" })).await;
    assert!(matches!(asked.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", asked.content);
    assert!(p.ledger.lines().is_empty(), "0 effects before the owner decides");

    let cards = p.hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 1);
    let call = held(&cards[0]);
    let tool = McpToolRef { server: McpServerName::parse(SERVER).unwrap(), tool: "record".into() };
    assert_eq!((&call.tool, &call.arguments), (&HeldTool::Mcp(tool), &json!({ "line": "milk" })), "the card shows the exact call");
    assert!(call.reason.contains("may change things"), "{}", call.reason);

    let approved = decide(&p.hearth, &cards[0]).await;
    assert_eq!(approved.status, ProposalStatus::Succeeded, "{:?}", approved.error);
    assert_eq!(p.ledger.lines(), ["record milk"], "approved: exactly 1 effect");
    let again = decide(&p.hearth, &cards[0]).await;
    assert_eq!(again.status, ProposalStatus::Succeeded);
    assert_eq!(p.ledger.lines(), ["record milk"], "approved twice: still 1");

    // The same operation asked again (a re-dispatched turn): its receipt, nothing performed.
    let retried = p.chat_call("t-write", "r1", "c1", "record", &json!({ "line": "milk" })).await;
    assert!(!retried.is_error && retried.outcome.is_none() && retried.content.contains("kept"), "{}", retried.content);
    assert_eq!(p.ledger.lines(), ["record milk"], "retried: still 1");
    // A changed argument under the same key is a conflict, and performs nothing.
    let changed = p.chat_call("t-write", "r1", "c1", "record", &json!({ "line": "eggs" })).await;
    assert!(changed.is_error && changed.content.contains("different content"), "a conflict: {}", changed.content);
    assert_eq!(p.ledger.lines(), ["record milk"]);
    assert_eq!(p.hearth.approval_list().await.unwrap().len(), 1, "no second card either");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_a_slow_call_tells_the_server_and_leaves_it_for_the_owners_review() {
    let p = Plugged::open(None, &[]).await;
    // Read-only, but the owner asked to review every call: it runs only from its card.
    p.set("slow", McpToolPolicy::Ask).await;
    let engine = p.hearth.tasks().clone();
    let tool_hearth = p.hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.toolbox().for_task(ctx);
        async move {
            let calls = [ToolCall { id: "call-1".into(), name: wire("slow"), arguments: "{}".into() }];
            match run_serially(&tools, &calls, 0).await.into_iter().find_map(|(_, o)| o.outcome) {
                Some(RunOutcome::WaitingApproval(id)) => TaskOutcome::WaitingApproval(id),
                other => TaskOutcome::Failed(format!("the slow call did not wait for approval: {other:?}")),
            }
        }
    });
    let task = engine.create(new_task("slow-mcp", &json!({}))).await.unwrap();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(&engine, &mut changes).await;
    let waiting = p.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(waiting.status, TaskStatus::WaitingApproval, "{:?}", waiting.error);
    let card = p.hearth.store().get_proposal(waiting.action_id.as_deref().unwrap()).await.unwrap().unwrap().view();

    // Approve; while the call runs at the server, the owner stops the task.
    let deciding = tokio::spawn({
        let hearth = p.hearth.clone();
        let card = card.clone();
        async move { decide(&hearth, &card).await }
    });
    let server = McpServerName::parse(SERVER).unwrap();
    let started = guarded(p.hearth.toolbox().mcp().wait_for_log(&server, |line| line == "slow started")).await;
    assert_eq!(started.as_deref(), Some("slow started"));
    let running = p.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    let cancel = TaskControlParams {
        task_id: TaskId::trusted(running.id.as_str()),
        expected_status: running.status,
        expected_attempts: running.attempts,
        control: TaskControl::Cancel,
    };
    p.hearth.task_control(&cancel).await.unwrap();
    let decided = guarded(deciding).await.unwrap();

    // The server received the cancellation (its ledger counts it) …
    guarded(p.hearth.toolbox().mcp().wait_for_log(&server, |line| line == "slow cancelled")).await;
    assert_eq!(p.ledger.lines(), ["cancelled"], "notifications/cancelled reached the server once");
    // … and Hearth does not pretend to know what happened: the journal row and the card are in doubt.
    assert_eq!(decided.status, ProposalStatus::OutcomeUnknown, "{:?}", decided.error);
    let call = held(&card);
    let row = p.hearth.store().get_operation(OpKey { scope: &call.op_scope, op_id: &call.op_id }).await.unwrap().unwrap();
    assert_eq!(row.status, OpStatus::OutcomeUnknown, "{row:?}");
    // A Retry of the card waits for the owner's review: nothing is called again.
    let retry = p
        .hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: card.id.clone(), hash: card.hash.clone(), decision: Decision::Approve })
        .await
        .unwrap();
    assert_eq!(retry.status, ProposalStatus::OutcomeUnknown);
    assert_eq!(p.server_saw("slow started").await, 1, "the call was made once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_crashes_floods_or_garbles_gives_a_clear_error_and_nothing_else_runs() {
    let p = Plugged::open(None, &[]).await;
    for tool in ["lookup", "hang", "crash", "huge", "garble"] {
        p.set(tool, McpToolPolicy::Allowed).await;
    }
    for (n, (tool, says)) in
        [("hang", "did not answer"), ("crash", "stopped"), ("huge", "did not answer"), ("garble", "did not answer")].into_iter().enumerate()
    {
        let out = p.chat_call("t-bad", &format!("r{n}"), "c1", tool, &json!({})).await;
        assert!(out.is_error && out.content.contains(says), "{tool}: {}", out.content);
        assert!(out.outcome.is_none(), "{tool}: a failed read ends nothing else");
        // The app stays responsive: the next read works (a crashed server is started again).
        let ok = p.chat_call("t-bad", &format!("r{n}"), "c2", "lookup", &json!({ "key": tool })).await;
        assert!(!ok.is_error && ok.content.contains(&format!("the value of {tool}")), "after {tool}: {}", ok.content);
    }
    assert!(p.ledger.lines().is_empty(), "nothing else was dispatched");
    assert!(p.hearth.approval_list().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instruction_in_a_tools_result_leads_to_no_unreviewed_effect() {
    for (asked, args) in [(wire("record"), json!({ "line": "pwned" })), ("remember_fact".to_owned(), json!({ "text": "pwned" }))] {
        // The injected result asks the obedient model for another effect.
        let script = Script::new().turn(Reply::new().tool_call("c1", &wire("inject"), &["{}"])).turn(Turn::Obey).turn(Turn::Obey);
        let p = Plugged::open(Some(script), &[("HEARTH_MCP_INJECT", obey_marker(&asked, &args))]).await;
        p.set("inject", McpToolPolicy::Allowed).await;
        p.set("record", McpToolPolicy::Allowed).await;
        let (_, _, events) = start(&p.hearth, None, "Search the notes").await;
        collect(events).await;
        settled(&p.hearth).await;

        assert_eq!(p.server_saw("inject").await, 1);
        assert!(p.ledger.lines().is_empty(), "{asked}: no effect at the server");
        assert!(p.hearth.store().memories().await.unwrap().is_empty(), "{asked}: nothing remembered");
        let cards = p.hearth.approval_list().await.unwrap();
        assert_eq!(cards.len(), 1, "{asked}: exactly one card: {cards:?}");
        let call = held(&cards[0]);
        assert_eq!(call.arguments, args, "{asked}");
        assert!(
            call.sources.iter().any(|s| s.kind == SourceKind::McpTool),
            "{asked}: the card names the tool's result: {:?}",
            call.sources
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_call_after_any_outside_content_waits_for_the_owner() {
    let p = Plugged::open(None, &[]).await;
    p.set("lookup", McpToolPolicy::Allowed).await;
    // An endpoint client's run is outside content from its first word: the arguments could carry
    // it to the server, so the call waits.
    let ctx = p.hearth.toolbox().for_chat("t-ep", "r1", ProposalOrigin::AguiEndpoint, CancellationToken::new());
    let out = guarded(dispatch(&ctx, &wire("lookup"), r#"{"key":"secret"}"#, StepId::Call("c1".into()))).await;
    assert!(matches!(out.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", out.content);
    assert_eq!(p.server_saw("lookup").await, 0);
    // The owner's own chat: the first read runs; after its result (outside content, which could
    // steer the next arguments to carry the owner's words away), the next one waits too.
    let ctx = p.hearth.toolbox().for_chat("t-own", "r1", ProposalOrigin::OwnerChat, CancellationToken::new());
    let first = guarded(dispatch(&ctx, &wire("lookup"), r#"{"key":"k"}"#, StepId::Call("c1".into()))).await;
    assert!(first.outcome.is_none() && !first.is_error, "{}", first.content);
    let second = guarded(dispatch(&ctx, &wire("lookup"), r#"{"key":"the owner's words"}"#, StepId::Call("c2".into()))).await;
    assert!(matches!(second.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", second.content);
    assert_eq!(p.server_saw("lookup").await, 1, "only the first was sent");
    let cards = p.hearth.approval_list().await.unwrap();
    let sources: Vec<_> = cards.iter().flat_map(|c| held(c).sources.clone()).collect();
    assert!(sources.iter().any(|s| s.kind == SourceKind::McpTool && s.detail == "notes · lookup"), "{sources:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_turned_off_or_its_server_removed_after_its_card_is_not_called_when_approved() {
    let p = Plugged::open(None, &[]).await;
    p.set("record", McpToolPolicy::Allowed).await;
    p.chat_call("t-off", "r1", "c1", "record", &json!({ "line": "a" })).await;
    p.chat_call("t-off", "r1", "c2", "record", &json!({ "line": "b" })).await;
    let cards = p.hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 2);
    p.set("record", McpToolPolicy::Off).await;
    for card in &cards {
        let decided = decide(&p.hearth, card).await;
        assert_eq!(decided.status, ProposalStatus::Failed, "{:?}", decided.error);
    }
    assert!(p.ledger.lines().is_empty() && p.server_saw("recorded").await == 0, "0 effects");
    // Changing how the server is reached is another server: what was allowed is forgotten.
    p.set("record", McpToolPolicy::Allowed).await;
    let transport = McpTransportInput::Stdio {
        command: server_binary().display().to_string(),
        args: vec!["stdio".into(), "again".into()],
        env: BTreeMap::new(),
    };
    let view = guarded(p.hearth.mcp_server_save(&McpServerSaveParams { name: SERVER.into(), transport })).await.unwrap();
    assert!(!view.tools.is_empty() && view.tools.iter().all(|t| t.policy == McpToolPolicy::Off), "{:?}", view.tools);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_keep_secrets_in_the_vault_refuse_bad_input_and_forget_a_removed_server() {
    let p = Plugged::open(None, &[("API_KEY", "sk-very-secret".to_owned())]).await;
    let rows = p.hearth.store().mcp_servers().await.unwrap();
    match &rows[0].transport {
        McpTransportView::Stdio { env_names, .. } => assert!(env_names.contains(&"API_KEY".to_owned())),
        other => panic!("{other:?}"),
    }
    // Sealed: the value is nowhere in the database's files (the main file or its log).
    for entry in std::fs::read_dir(p._dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(!bytes.windows(14).any(|w| w == b"sk-very-secret"), "{} holds the secret in clear", path.display());
        }
    }

    for (name, transport) in [
        ("a__b", McpTransportInput::Stdio { command: "x".into(), args: vec![], env: BTreeMap::new() }),
        ("far", McpTransportInput::Http { url: "http://192.0.2.1/mcp".into(), bearer: None }),
        ("blank", McpTransportInput::Stdio { command: " ".into(), args: vec![], env: BTreeMap::new() }),
    ] {
        let err = p.hearth.mcp_server_save(&McpServerSaveParams { name: name.into(), transport }).await.unwrap_err();
        assert_eq!(err.to_ipc().code, hearth_protocol::ErrorCode::InvalidInput, "{name}: {err}");
    }
    assert_eq!(p.hearth.mcp_servers().await.unwrap().len(), 1, "nothing bad was kept");

    p.set("record", McpToolPolicy::Allowed).await;
    let remaining = p.hearth.mcp_server_remove(SERVER).await.unwrap();
    assert!(remaining.is_empty());
    assert!(
        p.hearth.store().mcp_tool_policies(&McpServerName::parse(SERVER).unwrap()).await.unwrap().is_empty(),
        "its policies went with it"
    );
    let out = p.chat_call("t-gone", "r1", "c1", "record", &json!({ "line": "x" })).await;
    assert!(out.is_error && out.content.contains("has not allowed"), "{}", out.content);
    assert!(p.ledger.lines().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_added_and_its_read_runs() {
    let (_server, url) = http_server().await;
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let transport = McpTransportInput::Http { url, bearer: Some("a-token".into()) };
    let view = guarded(hearth.mcp_server_save(&McpServerSaveParams { name: "web".into(), transport })).await.unwrap();
    assert!(matches!(view.connection, McpConnection::Connected { .. }), "{:?}", view.connection);
    assert!(matches!(view.transport, McpTransportView::Http { has_bearer: true, .. }));
    hearth
        .mcp_tool_policy(&McpToolPolicyParams {
            server: "web".into(),
            tool: "lookup".into(),
            policy: McpToolPolicy::Allowed,
            fingerprint: None,
        })
        .await
        .unwrap();
    let ctx = hearth.toolbox().for_chat("t-web", "r1", ProposalOrigin::OwnerChat, CancellationToken::new());
    let out = guarded(dispatch(&ctx, "mcp__web__lookup", r#"{"key":"snow"}"#, StepId::Call("c1".into()))).await;
    assert!(!out.is_error && out.content.contains("the value of snow"), "{}", out.content);
    hearth.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standing_order_lets_a_task_call_its_one_plug_in_tool_within_its_count_and_nothing_else() {
    use hearth_protocol::mandates::{MandateGrant, MandateGrantParams, MandateHolder, MandateWindow};
    let p = Plugged::open(None, &[]).await;
    p.set("record", McpToolPolicy::Allowed).await;
    p.set("lookup", McpToolPolicy::Ask).await;
    let engine = p.hearth.tasks().clone();
    let tool_hearth = p.hearth.clone();
    let outputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = outputs.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.toolbox().for_task(ctx);
        let seen = seen.clone();
        async move {
            // Two records (the order allows one a day), then a lookup the order does not name.
            let calls = [
                ToolCall { id: "a".into(), name: wire("record"), arguments: r#"{"line":"first"}"#.into() },
                ToolCall { id: "b".into(), name: wire("record"), arguments: r#"{"line":"second"}"#.into() },
            ];
            for (step, call) in calls.iter().enumerate() {
                let out = dispatch(&tools, &call.name, &call.arguments, StepId::Step(step as u64)).await;
                let waits = matches!(out.outcome, Some(RunOutcome::WaitingApproval(_)));
                seen.lock().unwrap().push((call.arguments.clone(), waits, out.content));
                if waits {
                    break;
                }
            }
            TaskOutcome::Succeeded("done".into())
        }
    });
    let task = engine.create(new_task("ordered-mcp", &json!({}))).await.unwrap();
    let record = McpToolRef { server: McpServerName::parse(SERVER).unwrap(), tool: "record".into() };
    let params = MandateGrantParams {
        holder: MandateHolder::Task { task_id: TaskId::trusted(task.id.as_str()) },
        grant: MandateGrant::PluginTool { tool: record },
        limit: 1,
        window: MandateWindow::Day,
        lasts_ms: 60 * 60 * 1000,
    };
    let mandate = p.hearth.mandate_grant(&params).await.unwrap();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(&engine, &mut changes).await;

    let outputs = outputs.lock().unwrap().clone();
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(!outputs[0].1 && outputs[0].2.contains(&mandate.id), "the first ran under the order and names it: {:?}", outputs[0]);
    assert!(outputs[1].1, "the second is over the order's count: a card ({:?})", outputs[1]);
    assert_eq!(p.ledger.lines(), ["record first"], "exactly the one call the order covered");
    let cards = p.hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 1);
    assert_eq!(held(&cards[0]).arguments, json!({ "line": "second" }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_comes_back_changed_finds_the_owners_choices_off_on_every_path() {
    let variant = tempfile::NamedTempFile::new().unwrap();
    let p = Plugged::open(None, &[("HEARTH_MCP_VARIANT_FILE", variant.path().display().to_string())]).await;
    for tool in ["lookup", "record", "crash"] {
        p.set(tool, McpToolPolicy::Allowed).await;
    }
    let asked = p.chat_call("t-v", "r1", "c1", "record", &json!({ "line": "before" })).await;
    assert!(matches!(asked.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", asked.content);
    let card = p.hearth.approval_list().await.unwrap().remove(0);

    // The server updates itself and restarts (here: it crashes, and comes back as version 2).
    std::fs::write(variant.path(), "2").unwrap();
    let crashed = p.chat_call("t-v", "r2", "c1", "crash", &json!({})).await;
    assert!(crashed.is_error, "{}", crashed.content);

    // The read it would have run: refused, not sent to the new process.
    let read = p.chat_call("t-v", "r3", "c1", "lookup", &json!({ "key": "k" })).await;
    assert!(read.is_error && read.content.contains("changed what it says"), "{}", read.content);
    // The writing tool, which now claims to only read: not run as a read either.
    let write = p.chat_call("t-v", "r3", "c2", "record", &json!({ "line": "now" })).await;
    assert!(write.is_error && write.content.contains("changed what it says"), "{}", write.content);
    // The card approved before the change: the journal's own check finds it changed.
    let decided = decide(&p.hearth, &card).await;
    assert_eq!(decided.status, ProposalStatus::Failed, "{:?}", decided.error);
    assert_eq!((p.server_saw("lookup").await, p.server_saw("recorded").await), (0, 0));
    assert!(p.ledger.lines().is_empty(), "0 effects");
    let view = p.hearth.mcp_servers().await.unwrap().remove(0);
    for name in ["lookup", "record"] {
        let tool = view.tools.iter().find(|t| t.name == name).unwrap();
        assert!(tool.changed && tool.policy == McpToolPolicy::Off, "{tool:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_before_the_server_is_reached_sends_nothing() {
    let p = Plugged::open(None, &[]).await;
    p.set("lookup", McpToolPolicy::Allowed).await;
    let stopped = CancellationToken::new();
    stopped.cancel();
    let ctx = p.hearth.toolbox().for_chat("t-stop", "r1", ProposalOrigin::OwnerChat, stopped);
    let out = guarded(dispatch(&ctx, &wire("lookup"), r#"{"key":"k"}"#, StepId::Call("c1".into()))).await;
    assert!(out.is_error && out.content.contains("stopped before the server was reached"), "{}", out.content);
    assert_eq!(p.server_saw("lookup").await, 0, "nothing was sent");
}
