//! Issue 9, invariant 9: an approval's effect and its receipt commit together, and a process
//! killed at any stage of an approval leaves a durable outcome the restart settles. A real
//! process (`examples/approval_worker.rs`) approves and is SIGKILLed at each stage; the
//! restarted Hearth is checked in Sent rows, proposal rows and task rows.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::process::ProcessIdentity;
use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalStatus, ProposalView};
use hearth_protocol::tasks::TaskStatus;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::support::{email_awaiting_review_in, fast_config};

fn approval_worker() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("examples").join("approval_worker");
    assert!(path.is_file(), "{} is missing; `cargo test` builds it (cargo build --examples -p hearth-core)", path.display());
    path
}

fn data_dir(dir: &Path) -> PathBuf {
    dir.join("data")
}

/// A Monitor task whose one run prepares an email through the real tool path, left waiting
/// for the owner's approval; then this Hearth is closed. Returns (task id, proposal).
async fn email_awaiting_review(dir: &Path) -> (String, ProposalView) {
    let hearth = Hearth::open(fast_config(&data_dir(dir))).await.unwrap();
    let (task_id, proposal) = email_awaiting_review_in(&hearth).await;
    let proposal = hearth.store().get_proposal(proposal.id.as_str()).await.unwrap().unwrap();
    assert_eq!(proposal.status, ProposalStatus::AwaitingReview);
    assert_eq!(proposal.task_id.as_deref(), Some(task_id.as_str()));
    assert_eq!(hearth.store().sent_messages().await.unwrap().len(), 0, "nothing is sent before approval");
    assert_eq!(hearth.tasks().running(), 0, "no run is left in flight before the handover");
    hearth.store().close().await;
    (task_id, proposal.view())
}

/// Runs the approval in a real worker process, waits for it to reach `stage`, SIGKILLs it
/// and reaps it. Returns the worker's pid.
async fn approve_and_kill_at(dir: &Path, proposal: &ProposalView, stage: &str) -> u32 {
    let mut child = Command::new(approval_worker())
        .arg(data_dir(dir))
        .arg(proposal.id.as_str())
        .arg(&proposal.hash)
        .arg(stage)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().expect("the worker is running");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Only a hang detector: the worker's own stdout line says where it is.
    let line = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("the approval worker did not reach the {stage} stage within 120 s"))
        .unwrap();
    assert_eq!(line.as_deref(), Some("AT_STAGE"), "the approval worker did not reach the {stage} stage");
    // tokio's start_kill sends SIGKILL on Unix: no destructor, no shutdown, nothing flushed.
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success(), "the worker was killed, not finished: {status:?}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "the worker died of SIGKILL: {status:?}");
    }
    pid
}

/// Straight from the rows, without opening Hearth (which would run recovery): the task's
/// status and status note (the task views do not carry the note), and the proposal's status.
async fn rows(dir: &Path, task_id: &str, proposal_id: &str) -> (String, Option<String>, String) {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(data_dir(dir).join("hearth.db"));
    // No idle reaping or lifetime limit, so no sqlx maintenance task (as in processes.rs).
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await
        .unwrap();
    let (status, note): (String, Option<String>) =
        sqlx::query_as("SELECT status, status_note FROM tasks WHERE id = ?1").bind(task_id).fetch_one(&pool).await.unwrap();
    let proposal: String =
        sqlx::query_scalar("SELECT status FROM proposals WHERE id = ?1").bind(proposal_id).fetch_one(&pool).await.unwrap();
    pool.close().await;
    (status, note, proposal)
}

fn approve(proposal: &ProposalView) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Approve }
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

/// The claim recorded the killed worker as the executor, not this (the parent) process.
fn assert_executed_by(executor: Option<&str>, worker_pid: u32) {
    let executor = executor.expect("the claim records who carries the approval out");
    assert_ne!(executor, ProcessIdentity::current().as_str(), "the parent did not execute it");
    assert_eq!(executor.split(':').nth(1), Some(worker_pid.to_string().as_str()), "the worker executed it: {executor}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue9_kill_after_the_claim_sends_nothing_and_releases_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let (task_id, proposal) = email_awaiting_review(dir.path()).await;
    let worker = approve_and_kill_at(dir.path(), &proposal, "claimed").await;
    let (task_status, _, proposal_status) = rows(dir.path(), &task_id, &proposal.id).await;
    assert_eq!((task_status.as_str(), proposal_status.as_str()), ("waiting_approval", "executing"), "what the kill left");

    // Reopening runs recovery.
    let hearth = Hearth::open(fast_config(&data_dir(dir.path()))).await.unwrap();
    assert_eq!(sent(&hearth).await, 0, "killed before carrying it out: nothing in Sent");
    let row = hearth.store().get_proposal(proposal.id.as_str()).await.unwrap().unwrap();
    assert_eq!(row.status, ProposalStatus::Failed, "{:?}", row.error);
    assert_eq!(row.receipt, None, "no receipt was committed");
    assert!(row.error.as_deref().unwrap_or_default().contains("nothing was sent"), "{:?}", row.error);
    assert_executed_by(row.executor.as_deref(), worker);

    let task = hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "released to see the outcome, not stuck waiting for approval");
    assert_eq!(task.action_id.as_deref(), Some(proposal.id.as_str()));
    let (_, note, _) = rows(dir.path(), &task_id, &proposal.id).await;
    assert!(note.as_deref().unwrap_or_default().contains("failed"), "the task says how the approval ended: {note:?}");

    // Approving again does not carry it out a second time.
    let again = hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Failed, "never retried");
    assert_eq!(sent(&hearth).await, 0, "approving again sent nothing");
    hearth.store().close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue9_kill_after_the_receipt_keeps_one_sent_row_and_releases_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let (task_id, proposal) = email_awaiting_review(dir.path()).await;
    let worker = approve_and_kill_at(dir.path(), &proposal, "settled").await;
    let (task_status, _, proposal_status) = rows(dir.path(), &task_id, &proposal.id).await;
    assert_eq!((task_status.as_str(), proposal_status.as_str()), ("waiting_approval", "succeeded"), "what the kill left");

    let hearth = Hearth::open(fast_config(&data_dir(dir.path()))).await.unwrap();
    assert_eq!(sent(&hearth).await, 1, "the send committed before the kill: one row in Sent");
    let row = hearth.store().get_proposal(proposal.id.as_str()).await.unwrap().unwrap();
    assert_eq!(row.status, ProposalStatus::Succeeded, "{:?}", row.error);
    let receipt = format!("Saved to local sent mail · sent-{}", proposal.id);
    assert_eq!(row.receipt.as_deref(), Some(receipt.as_str()), "the receipt committed with the send");
    assert_executed_by(row.executor.as_deref(), worker);

    let task = hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "released at restart, not stuck waiting for approval");
    assert_eq!(task.action_id.as_deref(), Some(proposal.id.as_str()));
    let (_, note, _) = rows(dir.path(), &task_id, &proposal.id).await;
    assert_eq!(note.as_deref(), Some("Approved by you."), "the task says how the approval ended");

    let again = hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Succeeded);
    assert_eq!(again.receipt.as_deref(), Some(receipt.as_str()), "the stored receipt comes back");
    assert_eq!(sent(&hearth).await, 1, "approving again sent nothing more");
    hearth.store().close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue36_kill_inside_the_undo_window_sends_nothing_and_returns_it_for_review() {
    let dir = tempfile::tempdir().unwrap();
    let (task_id, proposal) = email_awaiting_review(dir.path()).await;
    approve_and_kill_at(dir.path(), &proposal, "leaving").await;
    let (task_status, _, proposal_status) = rows(dir.path(), &task_id, &proposal.id).await;
    assert_eq!((task_status.as_str(), proposal_status.as_str()), ("waiting_approval", "leaving"), "what the kill left");

    // Reopening runs recovery (this Hearth's own window is zero: an approval leaves at once).
    let hearth = Hearth::open(fast_config(&data_dir(dir.path()))).await.unwrap();
    assert_eq!(sent(&hearth).await, 0, "killed inside the window: nothing in Sent, and nothing sent on restart");
    let row = hearth.store().get_proposal(proposal.id.as_str()).await.unwrap().unwrap();
    assert_eq!(row.status, ProposalStatus::AwaitingReview, "shown for review again, not dropped: {:?}", row.error);
    assert_eq!(row.leaves_at, None);
    assert!(row.error.as_deref().unwrap_or_default().contains("nothing was sent"), "{:?}", row.error);
    assert!(row.expires_at > hearth_core::store::now_ms(), "the owner has time to review it again");
    let notices = hearth.notification_list().await.unwrap().notifications;
    assert!(
        notices
            .iter()
            .any(|n| n.kind == hearth_protocol::notifications::NotificationKind::ReviewNeeded && n.title.contains("was not sent")),
        "a notice says it needs review again: {notices:?}"
    );
    let task = hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::WaitingApproval, "the task still waits on the owner's decision");

    // The owner approves it again: it goes exactly once (the stored hash is still the one shown).
    let again = hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Succeeded, "{:?}", again.error);
    assert_eq!(sent(&hearth).await, 1, "sent once, after the owner's second look");
    hearth.approval_decide(&approve(&proposal)).await.unwrap();
    assert_eq!(sent(&hearth).await, 1, "never twice");
    hearth.store().close().await;
}
