//! Issue 36, point 5: failures the owner can follow. A failed run carries a short id with its
//! message; the id opens the run's timeline (its start, the provider's tries with their status and
//! retry number, tool calls with their class, receipts, the failure); "Copy details" is a report
//! with no key, no token and no mail body. The model provider is the scripted loopback server
//! speaking OpenAI Chat Completions; its request log is the count of tries that really happened.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::failures::failure_id_of;
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_protocol::EffectClass;
use hearth_protocol::agui::Event;
use hearth_protocol::failures::{FailureKind, FailureTimeline, FailureTimelineParams, TimelineEntry, TryOutcome};
use hearth_protocol::ids::FailureId;
use hearth_protocol::settings::{ModelSettingsParams, ProviderKind};
use hearth_testkit::model_server::{HttpError, ModelServer, Reply, Script};

use super::support::{collect, fast_config, settled, start};

const KEY: &str = "sk-failure-report-0123456789abcdefghijklmnop";

/// Words of the seeded school mail's body the run reads.
const MAIL_WORDS: &str = "community garden";

struct Failing {
    hearth: Hearth,
    server: ModelServer,
    dir: tempfile::TempDir,
}

/// A Hearth whose model is `script`'s server: the key stored in the vault through Settings, as
/// the owner would, then the same provider with retries that do not wait.
async fn failing(script: Script) -> Failing {
    let server = ModelServer::start(script).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    hearth
        .settings_model_set(&ModelSettingsParams {
            kind: ProviderKind::OpenaiChat,
            base_url: server.base_url(),
            model: "scripted-model".into(),
            api_key: Some(KEY.into()),
            accepts_images: false,
            unload_after_minutes: 0,
        })
        .await
        .unwrap();
    let retries = RetryPolicy { max_retries: 2, base_delay: Duration::ZERO, max_delay: Duration::from_millis(10) };
    let config = ProviderConfig::new("Scripted", server.base_url(), Some(KEY.into())).with_retry(retries);
    let hearth = hearth.with_model(Arc::new(OpenAiChat::new(&config).unwrap()), "scripted-model");
    Failing { hearth, server, dir }
}

fn three_500s(script: Script) -> Script {
    script.turn(HttpError::server_error()).turn(HttpError::server_error()).turn(HttpError::server_error())
}

fn tries(timeline: &FailureTimeline) -> Vec<(u32, u32, TryOutcome)> {
    timeline
        .entries
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::ProviderTry { try_number, retry, outcome, .. } => Some((*try_number, *retry, outcome.clone())),
            _ => None,
        })
        .collect()
}

async fn timeline(hearth: &Hearth, id: &str) -> FailureTimeline {
    hearth.failure_timeline(&FailureTimelineParams { id: id.to_owned() }).await.unwrap()
}

#[tokio::test]
async fn issue36_three_500s_show_an_id_and_a_timeline_of_three_tries() {
    // A fourth turn the client must never reach: two retries, then the error.
    let f = failing(three_500s(Script::new()).turn(Reply::new().text(&["never"]))).await;
    let (_, run_id, events) = start(&f.hearth, None, "plan my week").await;
    let events = collect(events).await;
    settled(&f.hearth).await;
    assert_eq!(f.server.requests().len(), 3, "the first try and two retries reached the server");
    assert_eq!(f.server.turns_left(), 1);

    // The id is shown with the message, and it is the run's.
    let id = failure_id_of(&run_id);
    let Some(Event::RunError(error)) = events.last() else { panic!("the run ends with RUN_ERROR: {events:?}") };
    assert!(error.message.contains("failed (500)"), "{}", error.message);
    assert!(error.message.contains(&id.to_string()), "the id is in the message: {}", error.message);
    let listed = f.hearth.failure_list().await.unwrap().failures;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id.clone(), listed[0].run_id.as_ref().map(|r| r.as_str()), listed[0].kind),
        (id.clone(), Some(run_id.as_str()), FailureKind::Chat)
    );
    assert!(!listed[0].message.contains(&id.to_string()), "the list keeps the message as it was, the id beside it");

    // Typed as someone reads it over the phone: lower case, with the hyphen.
    let opened = timeline(&f.hearth, &id.to_string().to_lowercase()).await;
    assert_eq!(opened.run_id.as_ref().map(|r| r.as_str()), Some(run_id.as_str()));
    let five_hundred = TryOutcome::Status { code: 500 };
    assert_eq!(tries(&opened), vec![(1, 0, five_hundred.clone()), (2, 1, five_hundred.clone()), (3, 2, five_hundred)]);
    assert!(matches!(opened.entries.first(), Some(TimelineEntry::Started { .. })), "{:?}", opened.entries);
    assert!(matches!(opened.entries.last(), Some(TimelineEntry::Failed { .. })), "{:?}", opened.entries);
    assert_eq!(opened.report.matches("HTTP 500").count(), 3, "{}", opened.report);
    assert!(opened.report.contains(&id.to_string()), "{}", opened.report);
    assert!(!opened.report.contains(KEY) && !opened.report.contains("0123456789abcdef"), "{}", opened.report);
    // The run id opens the same timeline.
    assert_eq!(timeline(&f.hearth, &run_id).await, opened);

    // After a restart the same id opens the same timeline.
    let Failing { hearth, dir, server } = f;
    drop(hearth);
    let reopened = Hearth::open(fast_config(dir.path())).await.unwrap();
    assert_eq!(tries(&timeline(&reopened, id.as_str()).await).len(), 3);
    assert_eq!(server.requests().len(), 3, "opening a timeline sends nothing");
}

#[tokio::test]
async fn issue36_the_report_leaves_out_the_key_and_the_mail_body() {
    // The model reads the school's mail and repeats the key in its text; then the provider fails.
    let first =
        Reply::new().text(&["Reading it. (key ", KEY, ")"]).tool_call("call-1", "read_mail_thread", &["{\"threadId\":\"thr-school\"}"]);
    let f = failing(three_500s(Script::new().turn(first))).await;
    let (_, run_id, events) = start(&f.hearth, None, "what did the school send?").await;
    let events = collect(events).await;
    settled(&f.hearth).await;
    assert_eq!(f.server.requests().len(), 4, "one answer, then three tries");
    let read: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.content.to_text()),
            _ => None,
        })
        .collect();
    assert!(read.iter().any(|r| r.contains(MAIL_WORDS)), "the run did read the mail body: {read:?}");

    let opened = timeline(&f.hearth, failure_id_of(&run_id).as_str()).await;
    let calls: Vec<(&str, Option<EffectClass>)> = opened
        .entries
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::ToolCall { tool, effect_class, .. } => Some((tool.as_str(), *effect_class)),
            _ => None,
        })
        .collect();
    assert_eq!(calls, vec![("read_mail_thread", Some(EffectClass::Read))]);
    let statuses: Vec<u16> = tries(&opened)
        .into_iter()
        .map(|(_, _, outcome)| match outcome {
            TryOutcome::Status { code } => code,
            TryOutcome::Transport { .. } => 0,
        })
        .collect();
    assert_eq!(statuses, vec![200, 500, 500, 500], "the answer that came, then the three that failed");

    let report = &opened.report;
    assert!(!report.contains(KEY) && !report.contains("sk-failure"), "no key: {report}");
    assert!(!report.contains(MAIL_WORDS) && !report.contains("Alvarez") && !report.contains("riverside-school"), "no mail: {report}");
    assert!(report.contains("tool call read_mail_thread (read)"), "{report}");
    assert!(report.contains("Sizes only"), "{report}");
    // The report is short enough to paste into a message.
    assert!(report.len() < 4096, "{} bytes", report.len());
    eprintln!("report: {} bytes, {} lines", report.len(), report.lines().count());
}

#[tokio::test]
async fn issue36_an_unknown_failure_id_says_what_to_do() {
    let f = failing(Script::new()).await;
    let err = f.hearth.failure_timeline(&FailureTimelineParams { id: "ZZZZ-ZZZZ".into() }).await.unwrap_err().to_ipc();
    assert_eq!(err.code, hearth_protocol::ErrorCode::NotFound);
    assert!(err.message.contains("ZZZZ-ZZZZ") && err.message.contains("Activity"), "{}", err.message);
    let err = f.hearth.failure_timeline(&FailureTimelineParams { id: "<script>".into() }).await.unwrap_err().to_ipc();
    assert_eq!(err.code, hearth_protocol::ErrorCode::InvalidInput);
    assert!(f.server.requests().is_empty());
}

#[tokio::test]
async fn issue36_a_failed_task_run_carries_its_id_and_opens_its_timeline() {
    let t = super::tasks::with_scripted_handler().await;
    let task_id = super::tasks::run_to_rest(t.hearth.tasks(), "failing-task", "fail").await;
    let detail = t.hearth.task_get(&task_id).await.unwrap();
    assert_eq!(detail.runs.len(), 1, "one run happened");
    let run_id = detail.runs[0].id.clone();
    let id = failure_id_of(&run_id);
    let shown = detail.task.error.unwrap_or_default();
    assert!(shown.starts_with("it broke") && shown.contains(&id.to_string()), "the task's message carries the id: {shown}");

    let listed = t.hearth.failure_list().await.unwrap().failures;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].kind, listed[0].task_id.as_deref(), listed[0].message.as_str()),
        (FailureKind::Task, Some(task_id.as_str()), "it broke")
    );
    let opened = timeline(&t.hearth, id.as_str()).await;
    assert_eq!(opened.run_id, Some(run_id));
    assert!(matches!(opened.entries.first(), Some(TimelineEntry::Started { .. })), "{:?}", opened.entries);
    assert!(opened.entries.iter().any(|e| matches!(e, TimelineEntry::Failed { .. })), "{:?}", opened.entries);
    assert!(tries(&opened).is_empty(), "this task asked no model");
    assert!(opened.report.contains("a background task's run"), "{}", opened.report);
}

/// What the cold review found: deleting a chat takes its failures and its provider tries with it,
/// so its id opens nothing and the list (a paired device's too) no longer shows its message.
#[tokio::test]
async fn issue36_deleting_a_chat_forgets_its_failures_and_tries() {
    let f = failing(three_500s(Script::new())).await;
    let (thread_id, run_id, events) = start(&f.hearth, None, "plan my week").await;
    collect(events).await;
    settled(&f.hearth).await;
    let id = failure_id_of(&run_id);
    assert_eq!(tries(&timeline(&f.hearth, id.as_str()).await).len(), 3);
    let params = hearth_protocol::ipc::ThreadDeleteParams {
        thread_id: hearth_protocol::ids::ThreadId::parse(thread_id).unwrap(),
        acknowledge_uncertain: false,
    };
    f.hearth.thread_delete(&params).await.unwrap();
    assert!(f.hearth.failure_list().await.unwrap().failures.is_empty());
    assert!(f.hearth.failure_timeline(&FailureTimelineParams { id: id.to_string() }).await.is_err());
    let rows: i64 = sqlx::query_scalar("SELECT (SELECT count(*) FROM run_failures) + (SELECT count(*) FROM provider_tries)")
        .fetch_one(&sqlx::SqlitePool::connect(&format!("sqlite://{}", f.hearth.store().path().display())).await.unwrap())
        .await
        .unwrap();
    assert_eq!(rows, 0, "no row of the chat's failure is left");
}

/// Rows of a table, read through a connection of the test's own (the oracle is the database).
async fn rows(hearth: &Hearth, sql: &str) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", hearth.store().path().display())).await.unwrap();
    sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap()
}

/// The failure id a tool result names.
fn result_failure_id(events: &[Event]) -> Option<FailureId> {
    events.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => serde_json::from_str::<serde_json::Value>(&r.content.to_text())
            .ok()?
            .get("failureId")
            .and_then(serde_json::Value::as_str)
            .and_then(|id| FailureId::parse(id).ok()),
        _ => None,
    })
}

/// Point 5's "every failed effect": an effect that fails inside a chat that goes on carries an
/// id in what the card and the model see; the id is listed and opens the run's timeline at the
/// failed receipt. Nothing was imported (files: 0), one failure row was made, and after a chat
/// deletion none is left.
#[tokio::test]
async fn issue36_a_failed_effect_carries_an_id_that_opens_its_runs_timeline() {
    let script = Script::new()
        .turn(Reply::new().tool_call("call-1", "import_pdf", &[r#"{"attachmentId":"att-not-there"}"#]))
        .turn(Reply::new().text(&["That attachment is gone."]));
    let f = failing(script).await;
    let (thread_id, run_id, events) = start(&f.hearth, None, "import the form").await;
    let events = collect(events).await;
    settled(&f.hearth).await;
    assert!(matches!(events.last(), Some(Event::RunFinished(_))), "the run goes on past the failed effect: {:?}", events.last());
    assert_eq!(f.hearth.files().list().await.unwrap().len(), 0, "nothing was imported");
    let id = result_failure_id(&events).expect("the failed import's result names its failure id");
    let shown = events.iter().any(|e| matches!(e, Event::ToolCallResult(r) if r.content.to_text().contains(&format!("Failure {id}"))));
    assert!(shown, "the message the card shows carries the id");
    assert_eq!(rows(&f.hearth, "SELECT count(*) FROM effect_failures").await, 1);
    assert_eq!(rows(&f.hearth, "SELECT count(*) FROM run_failures").await, 0, "the run itself did not fail");

    let listed = f.hearth.failure_list().await.unwrap().failures;
    assert_eq!(listed.len(), 1);
    let failure = &listed[0];
    assert_eq!((&failure.id, failure.kind, failure.tool.as_deref()), (&id, FailureKind::Effect, Some("import_pdf")));
    assert_eq!(failure.run_id.as_ref().map(|r| r.as_str()), Some(run_id.as_str()));
    assert_eq!(failure.thread_id.as_ref().map(|t| t.as_str()), Some(thread_id.as_str()));

    let opened = timeline(&f.hearth, &id.to_string().to_lowercase()).await;
    assert_eq!(opened.run_id.as_ref().map(|r| r.as_str()), Some(run_id.as_str()), "the id opens its run's timeline");
    let receipts: Vec<(&str, &str)> = opened
        .entries
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Receipt { tool, status, .. } => Some((tool.as_str(), status.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(receipts, vec![("import_pdf", "failed")]);
    assert!(
        opened.entries.iter().any(|e| matches!(e, TimelineEntry::Failed { message, .. } if message.starts_with("import_pdf: "))),
        "{:?}",
        opened.entries
    );
    assert!(opened.report.contains(&id.to_string()) && opened.report.contains("a tool's effect"), "{}", opened.report);
    assert!(!opened.report.contains(KEY), "{}", opened.report);

    // A deleted chat takes its effects' failures with it.
    let params = hearth_protocol::ipc::ThreadDeleteParams {
        thread_id: hearth_protocol::ids::ThreadId::parse(thread_id).unwrap(),
        acknowledge_uncertain: false,
    };
    f.hearth.thread_delete(&params).await.unwrap();
    assert_eq!(rows(&f.hearth, "SELECT count(*) FROM effect_failures").await, 0);
    assert!(f.hearth.failure_timeline(&FailureTimelineParams { id: id.to_string() }).await.is_err());
}

/// An approved send that fails when it is carried out (its attachment changed after review) has
/// no run at all: its card carries the id, which opens the approval's own timeline — prepared,
/// approved, the failed receipt — and no mail left (Sent: 0).
#[tokio::test]
async fn issue36_an_approved_send_that_fails_carries_an_id_that_opens_its_own_timeline() {
    use hearth_protocol::approvals::{
        ApprovalDecideParams, Decision, DraftAttachment, EmailDraft, ProposalDraft, ProposalOrigin, ProposalStatus,
    };
    use hearth_protocol::ids::FileId;

    let f = failing(Script::new()).await;
    let (info, bytes) = f.hearth.mail().fetch_attachment("att-permission-form").await.unwrap();
    let file = f.hearth.files().import("file-1", bytes, &info.filename, &info.id).await.unwrap();
    let draft = ProposalDraft::EmailSend(EmailDraft {
        to: vec!["alvarez@riverside-school.example".into()],
        cc: vec![],
        bcc: vec![],
        subject: "Re: Community visit".into(),
        body: "The signed form, attached.".into(),
        attachments: vec![DraftAttachment {
            file_id: FileId::trusted(file.id.as_str()),
            name: file.name.clone(),
            size: file.size,
            sha256: file.sha256.clone(),
        }],
        thread_id: Some("thr-school".into()),
        in_reply_to: Some("msg-school-1".into()),
        reply_to: None,
    });
    let gate = f.hearth.approvals();
    let proposal = gate.proposer().prepare("chat:form", None, None, ProposalOrigin::OwnerChat, Vec::new(), draft).await.unwrap();
    std::fs::write(&file.path, b"%PDF-1.7 something else").unwrap();
    let params = ApprovalDecideParams { proposal_id: proposal.view().id, hash: proposal.hash.clone(), decision: Decision::Approve };
    let card = gate.decide(&params).await.unwrap();
    assert_eq!(card.status, ProposalStatus::Failed, "{:?}", card.error);
    assert_eq!(f.hearth.store().sent_messages().await.unwrap().len(), 0, "nothing was sent");
    let id = card.failure_id.clone().expect("the failed card carries its failure id");
    assert_eq!(f.hearth.approval_get(&proposal.id).await.unwrap().failure_id, Some(id.clone()), "the same id on every read");

    let listed = f.hearth.failure_list().await.unwrap().failures;
    assert_eq!(listed.len(), 1);
    assert_eq!((&listed[0].id, listed[0].kind, listed[0].run_id.as_ref()), (&id, FailureKind::Approval, None));
    assert_eq!(listed[0].proposal_id.as_ref().map(|p| p.as_str()), Some(proposal.id.as_str()));
    assert!(listed[0].message.contains("changed after you reviewed it"), "{}", listed[0].message);

    let opened = timeline(&f.hearth, id.as_str()).await;
    assert_eq!(opened.run_id, None);
    let kinds: Vec<&str> = opened
        .entries
        .iter()
        .map(|e| match e {
            TimelineEntry::Started { .. } => "started",
            TimelineEntry::Note { kind, .. } => kind.as_str(),
            TimelineEntry::Receipt { status, .. } => status.as_str(),
            TimelineEntry::Failed { .. } => "failure",
            TimelineEntry::ProviderTry { .. } | TimelineEntry::ToolCall { .. } => "other",
        })
        .collect();
    assert_eq!(kinds, vec!["started", "prepared", "decided", "failed", "failure"]);
    assert!(opened.report.contains("an approved action") && !opened.report.contains("The signed form"), "{}", opened.report);
    assert!(!opened.report.contains("alvarez@"), "an address keeps only its domain: {}", opened.report);
}

/// What the cold review found: an effect's failure follows what became of it (acknowledged by
/// the owner, withdrawn because it never started), so Activity does not show a settled doubt as
/// open; and an effect of a deleted chat that settles late records no failure the deletion
/// meant to forget. The journal's rows are driven with SQL, as the store's own sweeps do.
#[tokio::test]
async fn issue36_a_failed_effects_later_outcome_shows_and_a_deleted_chat_records_none() {
    let t = super::support::open().await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", t.hearth.store().path().display())).await.unwrap();
    let exec = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query(sql).execute(&pool).await.unwrap() }
    };
    exec(
        "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at, claimant)
          VALUES ('task:t-later', 'op-1', 'save_artifact', '{}', 'h', 'dispatching', 1, 'run-gone')",
    )
    .await;
    exec("UPDATE operations SET status = 'outcome_unknown', settled_at = 2 WHERE op_id = 'op-1'").await;
    let listed = t.hearth.failure_list().await.unwrap().failures;
    assert_eq!((listed.len(), listed[0].kind, listed[0].later), (1, FailureKind::Effect, None));
    let id = listed[0].id.clone();
    assert!(listed[0].message.contains("may or may not have happened"), "{}", listed[0].message);
    // Its run is not kept: the id opens the effect's own timeline.
    let opened = timeline(&t.hearth, id.as_str()).await;
    assert_eq!(opened.run_id, None);
    assert!(opened.report.contains("characters (on its card, not copied here)"), "{}", opened.report);

    exec("UPDATE operations SET status = 'acknowledged' WHERE op_id = 'op-1'").await;
    let listed = t.hearth.failure_list().await.unwrap().failures;
    assert_eq!((&listed[0].id, listed[0].later), (&id, Some(hearth_protocol::failures::LaterOutcome::Acknowledged)));

    exec(
        "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at, claimant)
          VALUES ('task:t-later', 'op-2', 'save_artifact', '{}', 'h', 'dispatching', 3, 'run-gone')",
    )
    .await;
    exec("UPDATE operations SET status = 'outcome_unknown', settled_at = 4 WHERE op_id = 'op-2'").await;
    exec("DELETE FROM operations WHERE op_id = 'op-2'").await;
    let withdrawn = t.hearth.failure_list().await.unwrap().failures;
    assert_eq!(withdrawn.len(), 2);
    assert_eq!(withdrawn[0].later, Some(hearth_protocol::failures::LaterOutcome::Withdrawn));

    // A deleted chat's effect settling late: no failure is recorded.
    exec("INSERT INTO threads (id, title, created_at, updated_at, deleted_at) VALUES ('th-gone', '', 1, 1, 5)").await;
    exec(
        "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at, claimant)
          VALUES ('thread:th-gone', 'op-3', 'save_artifact', '{}', 'h', 'dispatching', 6, 'run-gone')",
    )
    .await;
    exec("UPDATE operations SET status = 'failed', settled_at = 7 WHERE op_id = 'op-3'").await;
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM effect_failures WHERE scope = 'thread:th-gone'").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 0);
}
