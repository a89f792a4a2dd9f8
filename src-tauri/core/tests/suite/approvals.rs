//! The approval gate, counted in sent-message rows: races, expiry, stale hashes, a changed
//! account, deny-then-approve, changed drafts, and what a crash mid-execution leaves.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::approvals::CHANGED_MESSAGE;
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{ALL_HANDLERS, RunOutcome, ToolCall, run_serially};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{
    ApprovalDecideParams, Decision, DraftAttachment, EmailDraft, ProposalDraft, ProposalStatus, ProposalView,
};
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use serde_json::json;

use super::support::{TestHearth, engine_idle, fast_config, new_task};

/// A Monitor task whose one run calls prepare_email; it ends waiting for approval.
async fn email_awaiting_review(t: &TestHearth) -> (String, ProposalView) {
    let hearth = t.hearth.clone();
    let engine = hearth.tasks().clone();
    let tool_hearth = hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.tool_context(Some(ctx), None);
        async move {
            let args = json!({
                "to": ["Ms. Alvarez <alvarez@Riverside-School.example>"],
                "subject": "Re: Community visit",
                "body": "Hello,\n\nThe form is attached.",
            });
            let calls = [ToolCall { id: "call-1".into(), name: "prepare_email".into(), arguments: args.to_string() }];
            let outputs = run_serially(&tools, &calls, ALL_HANDLERS).await;
            match outputs.into_iter().find_map(|(_, o)| o.outcome) {
                Some(RunOutcome::WaitingApproval(id)) => TaskOutcome::WaitingApproval(id),
                other => TaskOutcome::Failed(format!("prepare_email did not wait for approval: {other:?}")),
            }
        }
    });
    let input = json!({});
    let task = engine.create(new_task("email", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(&engine, &mut changes).await;
    let task = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::WaitingApproval, "{:?}", task.error);
    // Read the row directly: `approval_get` would already sweep an expired proposal.
    let proposal = hearth.store().get_proposal(task.action_id.as_deref().unwrap()).await.unwrap().unwrap().view();
    (task.id, proposal)
}

async fn open_with(ttl: Duration) -> TestHearth {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.approval_ttl = ttl;
    TestHearth { hearth: Hearth::open(config).await.unwrap(), dir }
}

fn decide(proposal: &ProposalView, decision: Decision) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision }
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_approvals_send_exactly_once() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    assert_eq!(proposal.status, ProposalStatus::AwaitingReview);
    assert_eq!(proposal.connection.account, "owner@hearth.local");
    let ProposalDraft::EmailSend(draft) = &proposal.draft else { panic!("not an email") };
    assert_eq!(draft.to, ["alvarez@riverside-school.example"], "the address is normalized for review");
    let barrier = Arc::new(tokio::sync::Barrier::new(20));
    let mut racers = Vec::new();
    for _ in 0..20 {
        let (hearth, params, barrier) = (t.hearth.clone(), decide(&proposal, Decision::Approve), barrier.clone());
        racers.push(tokio::spawn(async move {
            barrier.wait().await;
            hearth.approval_decide(&params).await
        }));
    }
    let mut succeeded = 0;
    for racer in racers {
        let view = racer.await.unwrap().unwrap();
        if view.status == ProposalStatus::Succeeded {
            succeeded += 1;
        }
    }
    assert!(succeeded >= 1);
    assert_eq!(sent(&t.hearth).await, 1, "twenty approvals, one message in Sent");
    let after = t.hearth.approval_get(&proposal.id).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Succeeded);
    assert_eq!(after.receipt.as_deref(), Some(format!("Saved to local sent mail · sent-{}", proposal.id).as_str()));
}

#[tokio::test]
async fn an_approval_after_expiry_sends_nothing() {
    let t = open_with(Duration::ZERO).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let err = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::ApprovalExpired, "{err}");
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::Expired);
    let again = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Expired, "an expired proposal comes back unchanged");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_stale_hash_is_a_conflict_and_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let mut stale = decide(&proposal, Decision::Approve);
    stale.hash = "0".repeat(64);
    let err = t.hearth.approval_decide(&stale).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert_eq!(err.to_string(), CHANGED_MESSAGE);
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_changed_account_is_refused_and_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    t.hearth.store().set_local_account("someone-else@hearth.local").await.unwrap();
    let err = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert!(err.to_string().contains("someone-else@hearth.local"), "{err}");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn deny_then_approve_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    let denied = t.hearth.approval_decide(&decide(&proposal, Decision::Deny)).await.unwrap();
    assert_eq!(denied.status, ProposalStatus::Denied);
    let again = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Denied, "a decided proposal comes back unchanged");
    assert_eq!(sent(&t.hearth).await, 0);
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "the task goes on to see the decision");
}

#[tokio::test]
async fn a_cancelled_task_cannot_be_approved() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    let cancel = TaskControlParams {
        task_id: task_id.clone(),
        expected_status: task.status,
        expected_attempts: task.attempts,
        control: TaskControl::Cancel,
    };
    t.hearth.task_control(&cancel).await.unwrap();
    let after = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Denied, "Cancel withdrew the proposal before it returned");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_proposal_whose_task_stopped_waiting_cannot_be_approved() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    // The task left waiting_approval without the gate hearing of it (no Cancel hook ran).
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    t.hearth.store().apply_control(&task_id, task.status, task.attempts, &TaskControl::Cancel).await.unwrap();
    let err = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert!(err.to_string().contains("cancelled"), "{err}");
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
    assert!(!t.hearth.store().claim_proposal(&proposal.id, hearth_core::store::now_ms()).await.unwrap(), "the claim checks the task too");
    assert_eq!(sent(&t.hearth).await, 0);
}

fn draft_with(body: &str, attachment: Option<DraftAttachment>) -> ProposalDraft {
    ProposalDraft::EmailSend(EmailDraft {
        to: vec!["alvarez@riverside-school.example".into()],
        cc: vec![],
        bcc: vec![],
        subject: "Re: Community visit".into(),
        body: body.into(),
        attachments: attachment.into_iter().collect(),
        thread_id: Some("thr-school".into()),
        in_reply_to: Some("msg-school-1".into()),
    })
}

#[tokio::test]
async fn a_changed_draft_conflicts_and_an_identical_retry_returns_the_receipt_even_after_its_file_is_deleted() {
    let t = open_with(Duration::from_secs(1800)).await;
    let gate = t.hearth.approvals();
    // A real file to attach: the seeded form, imported.
    let (info, bytes) = gate.workspace().fetch_attachment("att-permission-form").await.unwrap();
    let file = t.hearth.files().import("file-1", bytes, &info.filename, &info.id).await.unwrap();
    let attachment = DraftAttachment { file_id: file.id.clone(), name: file.name.clone(), size: file.size, sha256: file.sha256.clone() };
    let body = "x".repeat(199) + "a";
    let first = gate.prepare("chat:reply-1", None, draft_with(&body, Some(attachment.clone()))).await.unwrap();
    let approved = gate.decide(&decide(&first.view(), Decision::Approve)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Succeeded, "{:?}", approved.error);
    assert_eq!(sent(&t.hearth).await, 1);

    t.hearth.files().delete(&file.id).await.unwrap();
    let retry = gate.prepare("chat:reply-1", None, draft_with(&body, Some(attachment.clone()))).await.unwrap();
    assert_eq!((retry.id.as_str(), retry.status), (first.id.as_str(), ProposalStatus::Succeeded));
    assert_eq!(retry.receipt, approved.receipt, "the receipt outlives the deleted file");

    let changed = "x".repeat(199) + "b";
    let err = gate.prepare("chat:reply-1", None, draft_with(&changed, Some(attachment))).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert!(err.to_string().contains("new review"), "{err}");
    assert_eq!(sent(&t.hearth).await, 1, "neither retry sent anything");
}

#[tokio::test]
async fn an_attachment_changed_after_review_is_not_sent() {
    let t = open_with(Duration::from_secs(1800)).await;
    let gate = t.hearth.approvals();
    let (info, bytes) = gate.workspace().fetch_attachment("att-permission-form").await.unwrap();
    let file = t.hearth.files().import("file-2", bytes, &info.filename, &info.id).await.unwrap();
    let attachment = DraftAttachment { file_id: file.id.clone(), name: file.name.clone(), size: file.size, sha256: file.sha256.clone() };
    let proposal = gate.prepare("chat:reply-2", None, draft_with("See attached.", Some(attachment))).await.unwrap();
    std::fs::write(&file.path, b"%PDF-1.7 something else").unwrap();
    let view = gate.decide(&decide(&proposal.view(), Decision::Approve)).await.unwrap();
    assert_eq!(view.status, ProposalStatus::Failed);
    assert!(view.error.unwrap().contains("changed after you reviewed it"));
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn an_execution_cut_off_by_a_crash_becomes_outcome_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let proposal = {
        let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
        let proposal = hearth.approvals().prepare("chat:crash", None, draft_with("Hello", None)).await.unwrap();
        // What a crash between the claim and the send leaves behind.
        assert!(hearth.store().claim_proposal(&proposal.id, hearth_core::store::now_ms()).await.unwrap());
        proposal
    };
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let after = hearth.approval_get(&proposal.id).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown);
    let again = hearth.approval_decide(&decide(&proposal.view(), Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::OutcomeUnknown, "never retried automatically");
    assert_eq!(sent(&hearth).await, 0);
}
