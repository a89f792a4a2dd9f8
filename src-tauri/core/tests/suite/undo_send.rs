//! Undo send (issue 36): an approved email or event change waits out the owner's undo window
//! as `leaving` before it is carried out. The oracle is the Sent folder's rows, not statuses:
//! Undo inside the window sends nothing, no Undo sends exactly once, Send now and Undo racing
//! send at most once and the rows agree with the card, and Stop (a task's Cancel) reaches a
//! send that has not left. A process killed inside the window is in `approval_crash.rs`.

use std::time::Duration;

use hearth_core::Hearth;
use hearth_protocol::approvals::{ApprovalDecideParams, ApprovalLeavingParams, Decision, LeavingAction, ProposalStatus, ProposalView};
use hearth_protocol::ids::TaskId;
use hearth_protocol::notifications::{NotificationKind, NotificationTarget};
use hearth_protocol::settings::UndoWindowParams;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskStatus};

use super::support::{TestHearth, email_awaiting_review_in, fast_config};

async fn open_with_window(window: Duration) -> TestHearth {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.undo_window = window;
    let hearth = Hearth::open(config).await.unwrap();
    TestHearth { hearth, dir }
}

fn approve(proposal: &ProposalView) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Approve }
}

fn leaving(proposal: &ProposalView, action: LeavingAction) -> ApprovalLeavingParams {
    ApprovalLeavingParams { proposal_id: proposal.id.clone(), action }
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

/// The Inbox notices about `proposal` of `kind`.
async fn notices(hearth: &Hearth, proposal: &ProposalView, kind: NotificationKind) -> usize {
    let all = hearth.notification_list().await.unwrap().notifications;
    all.iter().filter(|n| n.kind == kind && n.target == NotificationTarget::Proposal(proposal.id.clone())).count()
}

#[tokio::test]
async fn undo_inside_the_window_sends_nothing_and_the_task_hears_it() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    let (task_id, proposal) = email_awaiting_review_in(&t.hearth).await;

    let approved = t.hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Leaving, "{:?}", approved.error);
    let leaves_at = approved.leaves_at.expect("a leaving card says when it leaves");
    assert!(leaves_at > approved.created_at, "it leaves after it was approved");
    assert_eq!(sent(&t.hearth).await, 0, "nothing leaves inside the window");
    assert_eq!(notices(&t.hearth, &proposal, NotificationKind::Leaving).await, 1, "the notice that carries Undo");
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::WaitingApproval, "the task waits while the send may still be undone");

    let undone = t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::Undo)).await.unwrap();
    assert_eq!(undone.status, ProposalStatus::Undone);
    assert_eq!(undone.leaves_at, None);
    assert_eq!(sent(&t.hearth).await, 0, "Undo performed nothing");
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "the task goes on to hear it was undone");

    // Nothing brings it back: Undo again, Send now, another approval.
    assert_eq!(t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::Undo)).await.unwrap().status, ProposalStatus::Undone);
    assert_eq!(t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::SendNow)).await.unwrap().status, ProposalStatus::Undone);
    assert_eq!(t.hearth.approval_decide(&approve(&proposal)).await.unwrap().status, ProposalStatus::Undone);
    assert_eq!(sent(&t.hearth).await, 0, "an undone send stays unsent");
}

#[tokio::test]
async fn without_undo_the_send_leaves_exactly_once_when_the_window_ends() {
    let t = open_with_window(Duration::from_secs(1)).await;
    let (task_id, proposal) = email_awaiting_review_in(&t.hearth).await;

    let approved = t.hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Leaving);
    assert_eq!(sent(&t.hearth).await, 0, "not before the window ends");
    // Waits on the window's own timer (a join, not a sleep).
    t.hearth.approvals().wait_leaving(proposal.id.as_str()).await;
    assert_eq!(sent(&t.hearth).await, 1, "it left once the window ended");
    let after = t.hearth.approval_get(proposal.id.as_str()).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Succeeded, "{:?}", after.error);
    assert!(after.receipt.is_some(), "the card shows the receipt");
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "released to see the receipt");

    let late = t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::Undo)).await.unwrap_err();
    assert!(late.to_string().contains("Too late to undo"), "{late}");
    t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::SendNow)).await.unwrap();
    t.hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(sent(&t.hearth).await, 1, "nothing sends it twice");
}

#[tokio::test]
async fn send_now_sends_once_however_often_it_is_pressed() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    let (_, proposal) = email_awaiting_review_in(&t.hearth).await;
    t.hearth.approval_decide(&approve(&proposal)).await.unwrap();

    let press = leaving(&proposal, LeavingAction::SendNow);
    let (a, b) = tokio::join!(t.hearth.approval_leaving(&press), t.hearth.approval_leaving(&press));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(sent(&t.hearth).await, 1, "two presses, one send");
    assert!([a.status, b.status].contains(&ProposalStatus::Succeeded), "one press carried it out: {:?} {:?}", a.status, b.status);
    assert_eq!(t.hearth.approval_get(proposal.id.as_str()).await.unwrap().status, ProposalStatus::Succeeded);
}

#[tokio::test]
async fn undo_racing_send_now_sends_at_most_once_and_the_card_tells_the_truth() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    let (_, proposal) = email_awaiting_review_in(&t.hearth).await;
    t.hearth.approval_decide(&approve(&proposal)).await.unwrap();

    let undo = leaving(&proposal, LeavingAction::Undo);
    let now = leaving(&proposal, LeavingAction::SendNow);
    let _ = tokio::join!(t.hearth.approval_leaving(&undo), t.hearth.approval_leaving(&now));
    let status = t.hearth.approval_get(proposal.id.as_str()).await.unwrap().status;
    match (status, sent(&t.hearth).await) {
        (ProposalStatus::Undone, 0) | (ProposalStatus::Succeeded, 1) => {}
        other => panic!("the card and the Sent folder disagree, or it went twice: {other:?}"),
    }
}

#[tokio::test]
async fn cancelling_the_task_inside_the_window_stops_the_send() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    let (task_id, proposal) = email_awaiting_review_in(&t.hearth).await;
    t.hearth.approval_decide(&approve(&proposal)).await.unwrap();

    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    let cancel = TaskControlParams {
        task_id: TaskId::trusted(task_id.as_str()),
        expected_status: task.status,
        expected_attempts: task.attempts,
        control: TaskControl::Cancel,
    };
    t.hearth.task_control(&cancel).await.unwrap();
    let after = t.hearth.approval_get(proposal.id.as_str()).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Undone, "Stop reached the send before it left: {:?}", after.error);
    // Send now after Stop dispatches nothing.
    t.hearth.approval_leaving(&leaving(&proposal, LeavingAction::SendNow)).await.unwrap();
    assert_eq!(sent(&t.hearth).await, 0, "nothing left after the task was cancelled");
}

#[tokio::test]
async fn the_owners_window_is_a_setting_and_zero_sends_at_once() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    assert_eq!(t.hearth.settings_get().await.unwrap().undo_window_seconds, 3600, "the default shows until the owner chooses");

    let refused = t.hearth.settings_undo_window_set(&UndoWindowParams { seconds: 121 }).await.unwrap_err();
    assert!(refused.to_string().contains("0 to 120 seconds"), "{refused}");
    assert_eq!(t.hearth.settings_get().await.unwrap().undo_window_seconds, 3600, "a refused value changes nothing");

    let view = t.hearth.settings_undo_window_set(&UndoWindowParams { seconds: 0 }).await.unwrap();
    assert_eq!(view.undo_window_seconds, 0);
    let (_, proposal) = email_awaiting_review_in(&t.hearth).await;
    let approved = t.hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Succeeded, "0 turns the window off: {:?}", approved.error);
    assert_eq!(sent(&t.hearth).await, 1);
    assert_eq!(notices(&t.hearth, &proposal, NotificationKind::Leaving).await, 0, "no Undo notice without a window");
}

/// A crash left an earlier email of the task in doubt, and the task has since prepared a newer
/// one the owner approved, now in its undo window: Retry of the doubtful one must not send it
/// beside the newer one (it may already have done the same thing another way).
#[tokio::test]
async fn a_retry_is_refused_while_a_newer_send_of_the_task_waits_out_its_window() {
    let t = open_with_window(Duration::from_secs(3600)).await;
    let (task_id, older) = email_awaiting_review_in(&t.hearth).await;
    let store = t.hearth.store();
    let newer_row = {
        let mut row = store.get_proposal(older.id.as_str()).await.unwrap().unwrap();
        row.id = "newer-send".into();
        row.key = format!("task:{task_id}:newer");
        row.created_at += 1;
        row
    };
    store.insert_proposal(&newer_row, None, None, None).await.unwrap().unwrap();
    // What a crash mid-send leaves for the older one, and an approval of the newer one.
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(t.dir.path().join("hearth.db")))
        .await
        .unwrap();
    sqlx::query("UPDATE proposals SET status = 'outcome_unknown' WHERE id = ?1").bind(older.id.as_str()).execute(&pool).await.unwrap();
    sqlx::query("UPDATE proposals SET status = 'leaving', leaves_at = ?2, decided_at = ?2 WHERE id = ?1")
        .bind("newer-send")
        .bind(hearth_core::store::now_ms() + 3_600_000)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let retry = hearth_protocol::approvals::ApprovalRecheckParams {
        proposal_id: older.id.clone(),
        hash: older.hash.clone(),
        action: hearth_protocol::approvals::Recheck::Retry,
    };
    let refused = t.hearth.approval_recheck(&retry).await.unwrap_err();
    assert!(refused.to_string().contains("can no longer be retried"), "{refused}");
    assert_eq!(sent(&t.hearth).await, 0, "the doubtful one was not sent beside the newer one");
}
