#![allow(clippy::unwrap_used)]

use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{PlanStep, TaskKind};
use pretty_assertions::assert_eq;

use super::*;

fn task(id: &str, status: TaskStatus, updated_at: i64) -> TaskView {
    TaskView {
        id: TaskId::parse(id).unwrap(),
        kind: TaskKind::Agent,
        title: format!("task {id}"),
        status,
        plan: Vec::new(),
        attempts: 1,
        question: None,
        choices: Vec::new(),
        result: None,
        error: None,
        outcome_uncertain: false,
        proposal_id: None,
        created_at: 1,
        updated_at,
    }
}

#[test]
fn newer_updates_replace_and_older_ones_are_dropped() {
    let mut store = TaskStore::default();
    assert_eq!(store.upsert(task("a", TaskStatus::Queued, 10)), Upsert::Changed);
    assert_eq!(store.upsert(task("a", TaskStatus::Running, 20)), Upsert::Changed);
    assert_eq!(store.upsert(task("a", TaskStatus::Queued, 15)), Upsert::Stale);
    assert_eq!(store.get("a").unwrap().status, TaskStatus::Running);
}

#[test]
fn an_equal_timestamp_with_new_content_is_kept() {
    let mut store = TaskStore::default();
    store.upsert(task("a", TaskStatus::Running, 10));
    let mut stepped = task("a", TaskStatus::Running, 10);
    stepped.plan.push(PlanStep { title: "look".into(), status: StepStatus::Active });
    assert_eq!(store.upsert(stepped.clone()), Upsert::Changed);
    assert_eq!(store.get("a"), Some(&stepped));
}

#[test]
fn revisions_count_changes_only() {
    let mut store = TaskStore::default();
    assert_eq!(store.revision("a"), None);
    store.upsert(task("a", TaskStatus::Queued, 10));
    assert_eq!(store.revision("a"), Some(0));
    assert_eq!(store.upsert(task("a", TaskStatus::Queued, 10)), Upsert::Unchanged);
    store.upsert(task("a", TaskStatus::Queued, 5));
    assert_eq!(store.revision("a"), Some(0));
    store.upsert(task("a", TaskStatus::Running, 11));
    assert_eq!(store.revision("a"), Some(1));
    store.touch("a");
    store.touch("missing");
    assert_eq!(store.revision("a"), Some(2));
    assert_eq!(store.revision("missing"), None);
}

#[test]
fn ids_are_most_recently_updated_first() {
    let mut store = TaskStore::default();
    assert!(store.is_empty());
    store.upsert(task("old", TaskStatus::Succeeded, 1));
    store.upsert(task("b", TaskStatus::Queued, 5));
    store.upsert(task("a", TaskStatus::Queued, 5));
    store.upsert(task("new", TaskStatus::Running, 9));
    assert_eq!(store.ids_by_recency(), ["new", "a", "b", "old"]);
    store.upsert(task("old", TaskStatus::Succeeded, 10));
    assert_eq!(store.ids_by_recency()[0], "old");
}

#[test]
fn newest_prefers_the_later_view_and_the_first_on_a_tie() {
    let held = task("a", TaskStatus::Running, 10);
    let fetched = task("a", TaskStatus::Paused, 12);
    assert_eq!(newest(Some(&held), Some(&fetched)), Some(fetched.clone()));
    assert_eq!(newest(Some(&fetched), Some(&held)), Some(fetched.clone()));
    let tie = task("a", TaskStatus::Queued, 10);
    assert_eq!(newest(Some(&held), Some(&tie)), Some(held.clone()));
    assert_eq!(newest(None, Some(&held)), Some(held));
    assert_eq!(newest(None, None), None);
}

#[test]
fn buttons_follow_allowed_controls() {
    let actions = |status| available_actions(&task("a", status, 1));
    assert_eq!(actions(TaskStatus::Running), [TaskAction::Pause, TaskAction::Cancel]);
    assert_eq!(actions(TaskStatus::Paused), [TaskAction::Resume, TaskAction::Cancel]);
    let uncertain = |status| available_actions(&TaskView { outcome_uncertain: true, ..task("a", status, 1) });
    assert_eq!(uncertain(TaskStatus::Paused), [TaskAction::RetryAfterReview, TaskAction::Cancel], "a pause that left an effect uncertain");
    assert_eq!(uncertain(TaskStatus::Failed), [TaskAction::RetryAfterReview, TaskAction::Cancel]);
    assert_eq!(actions(TaskStatus::Failed), [TaskAction::Retry, TaskAction::Cancel]);
    assert_eq!(actions(TaskStatus::WaitingInput), [TaskAction::Cancel]);
    assert!(actions(TaskStatus::Succeeded).is_empty());
    assert!(accepts_answer(&task("a", TaskStatus::WaitingInput, 1)));
    assert!(!accepts_answer(&task("a", TaskStatus::Running, 1)));
}

#[test]
fn an_uncertain_interruption_retries_only_after_review() {
    let mut interrupted = task("a", TaskStatus::Interrupted, 1);
    assert_eq!(available_actions(&interrupted), [TaskAction::Retry, TaskAction::Cancel]);
    interrupted.outcome_uncertain = true;
    assert!(needs_review(&interrupted));
    assert_eq!(available_actions(&interrupted), [TaskAction::RetryAfterReview, TaskAction::Cancel]);
    assert_eq!(TaskAction::RetryAfterReview.control(), TaskControl::Retry { acknowledge_uncertain: true });
    assert_eq!(TaskAction::Retry.control(), TaskControl::Retry { acknowledge_uncertain: false });
    // A failed task whose effect is in doubt is refused a plain Retry by the core too.
    let mut failed = task("a", TaskStatus::Failed, 1);
    failed.outcome_uncertain = true;
    assert_eq!(available_actions(&failed)[0], TaskAction::RetryAfterReview);
}

#[test]
fn element_ids_are_the_test_hooks() {
    let ids: Vec<_> = [TaskAction::Pause, TaskAction::Resume, TaskAction::Cancel, TaskAction::Retry, TaskAction::RetryAfterReview]
        .map(TaskAction::element_id)
        .to_vec();
    assert_eq!(ids, ["task-pause", "task-resume", "task-cancel", "task-retry", "task-retry-review"]);
}

#[test]
fn conflicts_say_the_task_changed() {
    let conflict = IpcError::new(ErrorCode::Conflict, "Task a is paused now.");
    let text = control_failure_message(&conflict);
    assert!(text.contains("changed") && text.contains("Task a is paused now."), "{text}");
    let other = IpcError::new(ErrorCode::NotFound, "No task a.");
    assert_eq!(control_failure_message(&other), "No task a.");
    // A refusal that waits for the owner's review is not "it changed".
    let review = IpcError::new(
        ErrorCode::NeedsReview,
        "An action of this task is still being stopped. Wait until it reports what it did, then retry.",
    );
    assert_eq!(control_failure_message(&review), review.message);
}

#[test]
fn labels_read_as_words() {
    assert_eq!(status_label(TaskStatus::WaitingInput), "waiting input");
    assert_eq!(step_status_label(StepStatus::Done), "done");
    assert_eq!(run_status_label(TaskRunStatus::Interrupted), "interrupted");
    assert_eq!(attempts_label(1), "1 attempt");
    assert_eq!(attempts_label(0), "0 attempts");
}
