//! Issue 9: the four controls bound to the exact effect through the one typed effect path.
//! Every oracle counts real effects — Sent rows, files, proposals, tasks, model requests.
//!
//! Invariants (../shared/notes/controls.md): 1 (one effect per key across runs), 4 (uncertain
//! is never retried without acknowledgement), 6 (a stale run's writes change nothing), 8
//! (approval binds the reviewed draft and the task's current action), 12 (pre-dispatch
//! guard), 13 (Stop beats late success).

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::documents::DocumentInput;
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_core::store::journal::OpStatus;
use hearth_core::store::tasks::{NewTask, TaskRow};
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{RunOutcome, StepId, dispatch};
use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalStatus, ProposalView};
use hearth_protocol::ids::TaskId;
use hearth_protocol::pdf::FieldValue;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::support::{TestHearth, engine_idle, fast_config};

const EMAIL: &str = r#"{"to":["sam@example.com"],"subject":"Saturday","body":"See you on Saturday at ten."}"#;

async fn hearth_with(script: Script, configure: impl FnOnce(&mut hearth_core::Config)) -> (TestHearth, ModelServer) {
    let server = ModelServer::start(script).await.unwrap();
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-effect-path".into())).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    let provider = Arc::new(OpenAiChat::new(&config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    configure(&mut config);
    let hearth = Hearth::open(config).await.unwrap().with_model(provider, "scripted-model");
    (TestHearth { hearth, dir }, server)
}

async fn run_once(hearth: &Hearth) {
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
}

async fn task(hearth: &Hearth, id: &str) -> TaskRow {
    hearth.store().get_task(id).await.unwrap().unwrap()
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

async fn proposals(hearth: &Hearth) -> Vec<ProposalView> {
    hearth.approval_list().await.unwrap()
}

fn decide(proposal: &ProposalView, decision: Decision) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision }
}

fn control(task: &TaskRow, control: TaskControl) -> TaskControlParams {
    TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: task.status,
        expected_attempts: task.attempts,
        control,
    }
}

async fn agent_task(hearth: &Hearth, key: &str) -> TaskRow {
    let input = json!({ "title": "Tell Sam", "instructions": "Email Sam about Saturday." });
    hearth
        .tasks()
        .create(NewTask { idempotency_key: key, kind: TaskKind::Agent, title: "Tell Sam", input: &input, thread_id: None })
        .await
        .unwrap()
}

/// The `tool` messages the model received in request `n`.
fn tool_results(server: &ModelServer, n: usize) -> Vec<Value> {
    let body = &server.requests()[n].body;
    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").cloned().collect()
}

/// Defect 1: a model task prepares an email, the owner approves, the worker runs the task
/// again — it continues its conversation with the receipt as the prepare call's result.
/// Exactly one Sent row, no second proposal, the task ends with the receipt.
#[tokio::test]
async fn issue9_a_model_task_continues_after_approval_and_sends_once() {
    let script = Script::new().turn(Reply::new().tool_call("call-a", "prepare_email", &[EMAIL])).turn(Reply::new().tool_call(
        "call-b",
        "finish_task",
        &[r#"{"result":"Emailed Sam."}"#],
    ));
    let (t, server) = hearth_with(script, |_| {}).await;
    let hearth = &t.hearth;
    let created = agent_task(hearth, "approve").await;
    run_once(hearth).await;
    let waiting = task(hearth, &created.id).await;
    assert_eq!(waiting.status, TaskStatus::WaitingApproval, "{:?}", waiting.error);
    let listed = proposals(hearth).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].origin, hearth_protocol::approvals::ProposalOrigin::Task);

    let approved = hearth.approval_decide(&decide(&listed[0], Decision::Approve)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Succeeded, "{:?}", approved.error);
    assert_eq!(task(hearth, &created.id).await.status, TaskStatus::Queued, "the decision released the task");
    run_once(hearth).await;

    let done = task(hearth, &created.id).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(done.result.as_deref(), Some("Emailed Sam."));
    assert_eq!(sent(hearth).await, 1, "one Sent row");
    assert_eq!(proposals(hearth).await.len(), 1, "no second proposal");
    assert_eq!(server.requests().len(), 2, "the second run asked the model once");
    // The second run continued the same conversation: the prepare call got the receipt.
    let results = tool_results(&server, 1);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_call_id"], "call-a");
    let content: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["status"], "succeeded");
    assert!(content["receipt"].as_str().unwrap().contains("Saved to local sent mail"), "{content}");
    let first_brief = &server.requests()[1].body["messages"][1]["content"];
    assert!(first_brief.as_str().unwrap().contains("Email Sam about Saturday."), "the brief is kept: {first_brief}");
}

/// The same with Deny: nothing is sent, the model is told it was denied, no second proposal.
#[tokio::test]
async fn issue9_a_model_task_is_told_of_a_denial_and_sends_nothing() {
    let script = Script::new().turn(Reply::new().tool_call("call-a", "prepare_email", &[EMAIL])).turn(Reply::new().tool_call(
        "call-b",
        "finish_task",
        &[r#"{"result":"Sam was not emailed."}"#],
    ));
    let (t, server) = hearth_with(script, |_| {}).await;
    let hearth = &t.hearth;
    let created = agent_task(hearth, "deny").await;
    run_once(hearth).await;
    let listed = proposals(hearth).await;
    hearth.approval_decide(&decide(&listed[0], Decision::Deny)).await.unwrap();
    run_once(hearth).await;
    let done = task(hearth, &created.id).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(sent(hearth).await, 0);
    assert_eq!(proposals(hearth).await.len(), 1);
    let content: Value = serde_json::from_str(tool_results(&server, 1)[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["status"], "denied");
    assert!(content["note"].as_str().unwrap().contains("did not approve"), "{content}");
}

/// The same with expiry: the sweep releases the task, the model is told it expired.
#[tokio::test]
async fn issue9_a_model_task_is_told_of_an_expiry_and_sends_nothing() {
    let script = Script::new().turn(Reply::new().tool_call("call-a", "prepare_email", &[EMAIL])).turn(Reply::new().tool_call(
        "call-b",
        "finish_task",
        &[r#"{"result":"It expired."}"#],
    ));
    let (t, server) = hearth_with(script, |c| c.approval_ttl = Duration::from_millis(1)).await;
    let hearth = &t.hearth;
    let created = agent_task(hearth, "expire").await;
    run_once(hearth).await;
    let proposal = hearth.store().get_proposal(task(hearth, &created.id).await.action_id.as_deref().unwrap()).await.unwrap().unwrap();
    // Wait for the clock to pass the expiry (no sleep: the condition is the clock itself).
    while hearth_core::store::now_ms() <= proposal.expires_at {
        tokio::task::yield_now().await;
    }
    hearth.approvals().expire_due().await.unwrap();
    assert_eq!(task(hearth, &created.id).await.status, TaskStatus::Queued);
    run_once(hearth).await;
    assert_eq!(task(hearth, &created.id).await.status, TaskStatus::Succeeded);
    assert_eq!(sent(hearth).await, 0);
    assert_eq!(proposals(hearth).await.len(), 1);
    let content: Value = serde_json::from_str(tool_results(&server, 1)[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["status"], "expired");
}

/// Defect 5: a proposal is approvable only while it is its task's current action. A run
/// prepares P1 and then P2; P1 is stale — approving it sends nothing — and P2 sends once.
#[tokio::test]
async fn issue9_a_stale_proposal_of_a_task_sends_nothing() {
    let t = super::support::open().await;
    let hearth = t.hearth.clone();
    let engine = hearth.tasks().clone();
    let tools_of = hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tools_of.toolbox().for_task(ctx);
        async move {
            let first = json!({ "to": ["sam@example.com"], "subject": "One", "body": "First draft." }).to_string();
            let second = json!({ "to": ["sam@example.com"], "subject": "Two", "body": "Second draft." }).to_string();
            dispatch(&tools, "prepare_email", &first, StepId::Named("p1".into())).await;
            let out = dispatch(&tools, "prepare_email", &second, StepId::Named("p2".into())).await;
            match out.outcome {
                Some(RunOutcome::WaitingApproval(id)) => TaskOutcome::WaitingApproval(id),
                other => TaskOutcome::Failed(format!("{other:?}: {}", out.content)),
            }
        }
    });
    let input = json!({});
    let created = engine.create(super::support::new_task("stale", &input)).await.unwrap();
    run_once(&hearth).await;
    let listed = proposals(&hearth).await;
    assert_eq!(listed.len(), 2);
    let current = task(&hearth, &created.id).await.action_id.unwrap();
    let (p1, p2): (Vec<_>, Vec<_>) = listed.into_iter().partition(|p| p.id != current);
    // Preparing P2 withdrew P1 in the same transaction; and the claim would refuse it anyway.
    assert!(
        !hearth.store().claim_proposal(&p1[0].id, hearth_core::store::now_ms(), &p1[0].connection, "test", None).await.unwrap(),
        "only the task's current action can be claimed"
    );
    let stale = hearth.approval_decide(&decide(&p1[0], Decision::Approve)).await.unwrap();
    assert_eq!(stale.status, ProposalStatus::Denied);
    assert!(stale.error.as_deref().unwrap().contains("newer proposal"), "{:?}", stale.error);
    assert_eq!(sent(&hearth).await, 0, "the stale proposal sent nothing");
    let done = hearth.approval_decide(&decide(&p2[0], Decision::Approve)).await.unwrap();
    assert_eq!(done.status, ProposalStatus::Succeeded);
    assert_eq!(sent(&hearth).await, 1);
}

/// Defect 5, the race as the owner meets it: P1 prepared, Pause, Resume prepares P2;
/// approving P1 sends nothing, approving P2 sends once.
#[tokio::test]
async fn issue9_pause_withdraws_a_proposal_and_resume_prepares_a_fresh_one() {
    let t = super::support::open().await;
    let hearth = t.hearth.clone();
    let engine = hearth.tasks().clone();
    let tools_of = hearth.clone();
    let prepared = Arc::new(Notify::new());
    let signal = prepared.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tools_of.toolbox().for_task(ctx.clone());
        let signal = signal.clone();
        async move {
            let step = format!("reply:{}", ctx.task().attempts);
            let out = dispatch(&tools, "prepare_email", EMAIL, StepId::Named(step)).await;
            let Some(RunOutcome::WaitingApproval(id)) = out.outcome else { return TaskOutcome::Failed(out.content) };
            if ctx.task().attempts == 1 {
                // The first run is paused before it can end.
                signal.notify_one();
                ctx.cancel_token().cancelled().await;
                return TaskOutcome::Stopped;
            }
            TaskOutcome::WaitingApproval(id)
        }
    });
    let input = json!({});
    let created = engine.create(super::support::new_task("pause-race", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    prepared.notified().await;
    let p1 = proposals(&hearth).await.remove(0);
    let running = task(&hearth, &created.id).await;
    hearth.task_control(&control(&running, TaskControl::Pause)).await.unwrap();
    engine_idle(&engine, &mut changes).await;
    let paused = task(&hearth, &created.id).await;
    assert_eq!(paused.status, TaskStatus::Paused);
    hearth.task_control(&control(&paused, TaskControl::Resume)).await.unwrap();
    run_once(&hearth).await;
    assert_eq!(task(&hearth, &created.id).await.status, TaskStatus::WaitingApproval);
    let all = proposals(&hearth).await;
    assert_eq!(all.len(), 2);
    let p2 = all.iter().find(|p| p.id != p1.id).unwrap().clone();

    let stale = hearth.approval_decide(&decide(&p1, Decision::Approve)).await.unwrap();
    assert_eq!(stale.status, ProposalStatus::Denied, "Pause withdrew it");
    assert_eq!(sent(&hearth).await, 0);
    hearth.approval_decide(&decide(&p2, Decision::Approve)).await.unwrap();
    assert_eq!(sent(&hearth).await, 1);
}

/// Defects 2 and 3 on the document task: paused before its import starts, the import is
/// withdrawn and Resume performs it; paused while a real fill_pdf runs (the file is written),
/// the task is flagged, Resume and a plain Retry are refused, and after the owner
/// acknowledges, the fill step returns the copy it made — exactly 2 files and 1 proposal.
#[tokio::test]
async fn issue9_a_document_task_paused_in_import_and_in_fill_makes_two_files_and_one_proposal() {
    let t = super::support::open().await;
    let hearth = t.hearth.clone();
    let values = [
        ("participant_name", FieldValue::Text("Léa Martin".into())),
        ("guardian_name", FieldValue::Text("Samuel Martin".into())),
        ("emergency_phone", FieldValue::Text("+33 6 12 34 56 78".into())),
        ("permission_granted", FieldValue::Checked(true)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let input = serde_json::to_value(DocumentInput { message_id: "msg-school-1".into(), values: Some(values) }).unwrap();
    let created = hearth
        .tasks()
        .create(NewTask { idempotency_key: "doc-pause", kind: TaskKind::Document, title: "Slip", input: &input, thread_id: None })
        .await
        .unwrap();
    let journal = hearth.tasks().journal().clone();
    let pause = |hearth: Hearth, id: String| async move {
        let running = hearth.store().get_task(&id).await.unwrap().unwrap();
        hearth.task_control(&control(&running, TaskControl::Pause)).await.unwrap();
    };

    // 1. Pause lands after the import's intent is written, before it starts.
    let (h, id) = (hearth.clone(), created.id.clone());
    journal.set_intent_hook(Some(Arc::new(move |tool: &str| {
        let (h, id, tool) = (h.clone(), id.clone(), tool.to_owned());
        Box::pin(async move {
            if tool == "import_pdf" {
                pause(h, id).await;
            }
        })
    })));
    run_once(&hearth).await;
    journal.set_intent_hook(None);
    let paused = task(&hearth, &created.id).await;
    assert_eq!(paused.status, TaskStatus::Paused);
    assert!(!paused.outcome_uncertain, "nothing had started");
    assert_eq!(hearth.file_list().await.unwrap().len(), 0, "the import never ran");

    // 2. Resume; Pause lands while the fill runs, after its file is written.
    let (h, id) = (hearth.clone(), created.id.clone());
    journal.set_effect_hook(Some(Arc::new(move |tool: &str| {
        let (h, id, tool) = (h.clone(), id.clone(), tool.to_owned());
        Box::pin(async move {
            if tool == "fill_pdf" {
                pause(h, id).await;
            }
        })
    })));
    hearth.task_control(&control(&paused, TaskControl::Resume)).await.unwrap();
    run_once(&hearth).await;
    journal.set_effect_hook(None);
    let flagged = task(&hearth, &created.id).await;
    assert_eq!(flagged.status, TaskStatus::Paused);
    assert!(flagged.outcome_uncertain, "the fill was stopped mid-flight: the task is flagged for review");
    assert_eq!(hearth.file_list().await.unwrap().len(), 2, "the original and the copy the stopped fill wrote");
    let scope = format!("task:{}", created.id);
    assert_eq!(hearth.store().count_operations(&scope, OpStatus::OutcomeUnknown).await.unwrap(), 1);

    // Resume and a plain Retry are refused until the owner acknowledges.
    let err = hearth.task_control(&control(&flagged, TaskControl::Resume)).await.unwrap_err();
    assert!(err.to_string().contains("Retry after review"), "{err}");
    let err = hearth.task_control(&control(&flagged, TaskControl::Retry { acknowledge_uncertain: false })).await.unwrap_err();
    assert!(err.to_string().contains("Retry after review"), "{err}");
    assert_eq!(task(&hearth, &created.id).await, flagged, "refused controls change nothing");

    hearth.task_control(&control(&flagged, TaskControl::Retry { acknowledge_uncertain: true })).await.unwrap();
    run_once(&hearth).await;
    let reviewing = task(&hearth, &created.id).await;
    assert_eq!(reviewing.status, TaskStatus::WaitingApproval, "{:?}", reviewing.error);
    assert_eq!(hearth.file_list().await.unwrap().len(), 2, "no second file for the same fill step");
    assert_eq!(proposals(&hearth).await.len(), 1);
    let ProposalView { draft: hearth_protocol::approvals::ProposalDraft::EmailSend(email), .. } = proposals(&hearth).await.remove(0) else {
        panic!("not an email")
    };
    let files = hearth.file_list().await.unwrap();
    let filled = files.iter().find(|f| f.parent_id.is_some()).unwrap();
    assert_eq!(email.attachments[0].file_id, filled.id, "the reply carries the copy the stopped fill made");
}

/// Defect 6 (and issue 31 finding 9): the run's time limit firing mid-effect stops the run as
/// Stop does: its row becomes `outcome_unknown`, the task is flagged for review, and what the
/// effect reported after the limit is kept before the run's end is recorded.
#[tokio::test]
async fn issue9_the_run_limit_firing_mid_effect_flags_the_task() {
    let script = Script::new().turn(Reply::new().tool_call("call-a", "save_artifact", &[r#"{"name":"notes.md","content":"hi"}"#]));
    let (t, _server) = hearth_with(script, |c| c.task_run_limit = Duration::from_secs(3600)).await;
    let hearth = t.hearth.clone();
    // The limit fires exactly while the effect is in flight (a deadline the test controls).
    let in_flight = Arc::new(Notify::new());
    let fired = Arc::new(Notify::new());
    let (reached, reported) = (in_flight.clone(), fired.clone());
    hearth.tasks().journal().set_effect_hook(Some(Arc::new(move |_tool: &str| {
        let (reached, reported) = (reached.clone(), reported.clone());
        Box::pin(async move {
            reached.notify_one();
            // The effect reports only once the limit has fired.
            reported.notified().await;
        })
    })));
    let (limit, fired_at) = (in_flight.clone(), fired.clone());
    let provider = {
        let config = ProviderConfig::new("Scripted", _server.base_url(), Some("sk-effect-path".into()));
        Arc::new(OpenAiChat::new(&config).unwrap())
    };
    let handler = hearth_core::agent::ModelTaskHandler::new(provider, "scripted-model", hearth.toolbox().clone()).with_deadline(Arc::new(
        move || {
            let (limit, fired_at) = (limit.clone(), fired_at.clone());
            Box::pin(async move {
                limit.notified().await;
                fired_at.notify_one();
            })
        },
    ));
    hearth.tasks().register(TaskKind::Agent, handler);
    let created = agent_task(&hearth, "limit").await;
    run_once(&hearth).await;
    let after = task(&hearth, &created.id).await;
    // A run that leaves an effect in doubt ends interrupted, where only "Retry after review"
    // goes on — not waiting for an answer that would run past the doubt.
    assert_eq!(after.status, TaskStatus::Interrupted, "{:?}", after.error);
    assert!(after.error.as_deref().unwrap().contains("Retry after review"), "{:?}", after.error);
    assert!(after.outcome_uncertain, "the dropped effect flags the task for review");
    let scope = format!("task:{}", created.id);
    assert_eq!(hearth.store().count_operations(&scope, OpStatus::OutcomeUnknown).await.unwrap(), 1);
    assert_eq!(hearth.store().count_operations(&scope, OpStatus::Dispatching).await.unwrap(), 0);
    // The effect reported (through the journal, as after Stop) before the run's end was recorded.
    assert!(hearth.store().stopping_owners(&scope).await.unwrap().is_empty());
    let row = hearth.store().get_operation(hearth_core::store::journal::OpKey { scope: &scope, op_id: "step-0" }).await.unwrap().unwrap();
    let late: Value = serde_json::from_str(row.late_receipt.as_deref().expect("the late report is kept")).unwrap();
    assert_eq!(late["status"], "succeeded", "{late}");
}

/// Defect 12: delegate_task with an existing key and a changed job is a conflict the model
/// can act on; the same job returns the same task. Counted in task rows.
#[tokio::test]
async fn issue9_delegate_task_with_a_changed_job_under_one_key_conflicts() {
    let t = super::support::open().await;
    let hearth = &t.hearth;
    let ctx = hearth.toolbox().for_chat("thread-1", "run-1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    let step = || StepId::Call("c1".into());
    let first = dispatch(&ctx, "delegate_task", r#"{"title":"Find a plumber"}"#, step()).await;
    assert!(!first.is_error, "{}", first.content);
    let again = dispatch(&ctx, "delegate_task", r#"{"title":"Find a plumber"}"#, step()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&again.content).unwrap()["taskId"],
        serde_json::from_str::<Value>(&first.content).unwrap()["taskId"]
    );
    let changed = dispatch(&ctx, "delegate_task", r#"{"title":"Find an electrician"}"#, step()).await;
    assert!(changed.is_error);
    assert!(changed.content.contains("different task was already delegated"), "{}", changed.content);
    assert_eq!(hearth.store().count_tasks().await.unwrap(), 1);
}

/// Review finding 1: while a stopped effect of a live process has not reported, the owner's
/// "Retry after review" waits; once it reports, Retry replays its late success instead of
/// performing it again. Counted in effect rows.
#[tokio::test]
async fn issue9_retry_after_review_waits_for_a_stopped_effect_and_never_runs_it_twice() {
    let t = super::support::open().await;
    let hearth = t.hearth.clone();
    let effects = super::effects::Effects::open(&t.dir.path().join("effects.db")).await;
    let engine = hearth.tasks().clone();
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (started_in, release_in, effects_in) = (started.clone(), release.clone(), effects.clone());
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let (started, release, effects) = (started_in.clone(), release_in.clone(), effects_in.clone());
        async move {
            let receipt = ctx
                .test_effect("send", "test_send", &json!({ "to": "sam@example.com" }), |_token| async move {
                    effects.record("send", "x").await;
                    started.notify_one();
                    // It does not honour Stop until the test lets it finish.
                    release.notified().await;
                    Ok(json!({ "sent": true }))
                })
                .await;
            match receipt {
                Ok(r) => TaskOutcome::Succeeded(r.value.to_string()),
                Err(_) => TaskOutcome::Stopped,
            }
        }
    });
    let input = json!({});
    let created = engine.create(super::support::new_task("stopping", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    started.notified().await;
    let running = task(&hearth, &created.id).await;
    hearth.task_control(&control(&running, TaskControl::Pause)).await.unwrap();
    // The journal marks the row uncertain at once, naming this (live) process.
    let scope = format!("task:{}", created.id);
    while hearth.store().count_operations(&scope, OpStatus::OutcomeUnknown).await.unwrap() == 0 {
        tokio::task::yield_now().await;
    }
    let paused = task(&hearth, &created.id).await;
    assert!(paused.outcome_uncertain);
    let err = hearth.task_control(&control(&paused, TaskControl::Retry { acknowledge_uncertain: true })).await.unwrap_err();
    assert!(err.to_string().contains("still being stopped"), "{err}");
    assert_eq!(task(&hearth, &created.id).await, paused, "the refused Retry changed nothing");

    release.notify_one();
    engine_idle(&engine, &mut changes).await;
    while !hearth.store().stopping_owners(&scope).await.unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    let paused = task(&hearth, &created.id).await;
    hearth.task_control(&control(&paused, TaskControl::Retry { acknowledge_uncertain: true })).await.unwrap();
    run_once(&hearth).await;
    let done = task(&hearth, &created.id).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(done.result.as_deref(), Some(r#"{"sent":true}"#), "the late success is the receipt");
    assert_eq!(effects.count().await, 1, "the effect ran once");
}

/// Review finding 3: a model turn is written down before its calls run, so a run stopped
/// after one call settled and before the results were checkpointed is continued by
/// dispatching exactly that turn again — the settled call replays, the model is not asked
/// anew. Counted in artifact files and model requests.
#[tokio::test]
async fn issue9_a_model_turn_stopped_between_its_calls_is_finished_not_asked_again() {
    let script = Script::new()
        .turn(Reply::new().parallel_tool_calls(vec![
            hearth_testkit::model_server::ScriptedCall::new("c1", "save_artifact", &[r#"{"name":"one.md","content":"1"}"#]),
            hearth_testkit::model_server::ScriptedCall::new("c2", "save_artifact", &[r#"{"name":"two.md","content":"2"}"#]),
        ]))
        .turn(Reply::new().tool_call("c3", "finish_task", &[r#"{"result":"Saved both."}"#]));
    let (t, server) = hearth_with(script, |_| {}).await;
    let hearth = t.hearth.clone();
    let created = agent_task(&hearth, "turn").await;
    // Pause lands when the second call's intent is written: the first has settled.
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (h, id, seen_in) = (hearth.clone(), created.id.clone(), seen.clone());
    hearth.tasks().journal().set_intent_hook(Some(Arc::new(move |_tool: &str| {
        let (h, id, seen) = (h.clone(), id.clone(), seen_in.clone());
        Box::pin(async move {
            if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
                let running = h.store().get_task(&id).await.unwrap().unwrap();
                h.task_control(&control(&running, TaskControl::Pause)).await.unwrap();
            }
        })
    })));
    run_once(&hearth).await;
    hearth.tasks().journal().set_intent_hook(None);
    let paused = task(&hearth, &created.id).await;
    assert_eq!(paused.status, TaskStatus::Paused);
    assert!(!paused.outcome_uncertain, "the second call never started");
    let artifacts = || std::fs::read_dir(t.dir.path().join("artifacts")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(artifacts(), 1);

    hearth.task_control(&control(&paused, TaskControl::Resume)).await.unwrap();
    run_once(&hearth).await;
    let done = task(&hearth, &created.id).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(artifacts(), 2, "the first call replayed, the second ran once");
    assert_eq!(server.requests().len(), 2, "the stopped turn was dispatched again, not asked for again");
}

/// Second review, finding 1: an effect whose outcome is in doubt stops the run at that call —
/// the calls after it do nothing, so a model cannot redo the effect under a new step.
#[tokio::test]
async fn issue9_a_call_in_doubt_stops_the_batch() {
    let t = super::support::open().await;
    let hearth = &t.hearth;
    let ctx =
        hearth.toolbox().for_chat("thread-doubt", "run-doubt", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    // The first call's operation is already in doubt (a crash while it ran).
    let scope = "thread:thread-doubt";
    let key = hearth_core::store::journal::OpKey { scope, op_id: "run-doubt:c1" };
    let action = json!({ "attachmentId": "att-permission-form" });
    let hash = hearth_core::journal::action_hash("import_pdf", &action);
    assert!(
        hearth
            .store()
            .insert_operation(key, "import_pdf", &hearth_core::journal::canonical_json(&action), &hash, "run-doubt", None)
            .await
            .unwrap()
    );
    assert!(hearth.store().settle_operation(key, "run-doubt", OpStatus::OutcomeUnknown, None).await.unwrap());
    let calls = [
        hearth_core::tools::ToolCall { id: "c1".into(), name: "import_pdf".into(), arguments: action.to_string() },
        hearth_core::tools::ToolCall { id: "c2".into(), name: "delegate_task".into(), arguments: r#"{"title":"Then this"}"#.into() },
    ];
    let outputs = hearth_core::tools::run_serially(&ctx, &calls, 0).await;
    assert!(matches!(outputs[0].1.outcome, Some(RunOutcome::InDoubt(_))), "{:?}", outputs[0].1);
    assert!(outputs[1].1.content.contains("paused"), "{:?}", outputs[1].1);
    assert_eq!(hearth.store().count_tasks().await.unwrap(), 0, "nothing ran after the doubt");
    assert_eq!(hearth.file_list().await.unwrap().len(), 0);
}

/// Issue 31, finding 11: a store error while recording an effect that ran is a doubt, never a
/// plain error the model could take for "nothing happened" and redo. The file the import made
/// is the oracle; the batch's second call never runs.
#[tokio::test]
async fn a_settle_that_fails_after_the_effect_is_a_doubt_and_the_batch_stops() {
    use hearth_core::store::journal::OpKey;
    use hearth_core::tools::{ToolCall, run_serially};
    use hearth_protocol::approvals::ProposalOrigin;
    use tokio_util::sync::CancellationToken;

    let t = super::support::open().await;
    let ctx = t.hearth.toolbox().for_chat("t-settle", "r-settle", ProposalOrigin::OwnerChat, CancellationToken::new());
    t.hearth.tasks().journal().fail_next_settle();
    let import = |id: &str| ToolCall {
        id: id.into(),
        name: "import_pdf".into(),
        arguments: json!({ "attachmentId": "att-permission-form" }).to_string(),
    };
    let outputs = run_serially(&ctx, &[import("c1"), import("c2")], 0).await;
    assert!(matches!(outputs[0].1.outcome, Some(RunOutcome::InDoubt(_))), "{}", outputs[0].1.content);
    assert!(outputs[0].1.content.contains("inDoubt"), "{}", outputs[0].1.content);
    assert_eq!(outputs[1].1.content, json!({ "error": hearth_core::tools::PAUSED_RESULT }).to_string(), "the batch stopped");
    // The effect happened once: one file; its row is not settled as anything certain.
    assert_eq!(t.hearth.files().list().await.unwrap().len(), 1);
    let row = t.hearth.store().get_operation(OpKey { scope: "thread:t-settle", op_id: "r-settle:c1" }).await.unwrap().unwrap();
    assert!(matches!(row.status, OpStatus::Dispatching | OpStatus::OutcomeUnknown), "{:?}", row.status);
    assert!(t.hearth.store().get_operation(OpKey { scope: "thread:t-settle", op_id: "r-settle:c2" }).await.unwrap().is_none());
}
