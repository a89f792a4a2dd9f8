//! The task engine in one process: ids, the cap, runs, fencing, shutdown.

use hearth_core::CoreError;
use hearth_core::store::tasks::{MAX_OPEN_TASKS, RunEnding, task_id_for_key};
use hearth_core::tasks::{TaskContext, TaskEngine, TaskOutcome};
use hearth_protocol::ids::{OperationId, TaskId};
use hearth_protocol::tasks::{TaskKind, TaskRunStatus, TaskStatus};
use serde_json::json;

use super::support::{TestHearth, engine_idle, new_task, open};

/// The handler the engine tests use: the task's input says how it ends.
pub async fn scripted(ctx: TaskContext) -> TaskOutcome {
    match ctx.task().input["outcome"].as_str().unwrap_or("succeed") {
        "fail" => TaskOutcome::Failed("it broke".into()),
        "ask" => TaskOutcome::WaitingInput("Which day?".into()),
        "approve" => TaskOutcome::WaitingApproval("proposal-1".into()),
        "schedule" => TaskOutcome::Scheduled(i64::MAX),
        "hang" => {
            ctx.cancel_token().cancelled().await;
            TaskOutcome::Stopped
        }
        _ => TaskOutcome::Succeeded("done".into()),
    }
}

pub async fn with_scripted_handler() -> TestHearth {
    let t = open().await;
    t.hearth.tasks().register(TaskKind::Monitor, scripted);
    t
}

/// Creates a task and runs it to its first resting state.
pub async fn run_to_rest(engine: &TaskEngine, key: &str, outcome: &str) -> String {
    let mut changes = engine.subscribe();
    let input = json!({ "outcome": outcome });
    let task = engine.create(new_task(key, &input)).await.unwrap();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(engine, &mut changes).await;
    task.id
}

#[tokio::test]
async fn ids_are_deterministic_and_a_second_create_returns_the_same_task() {
    let t = open().await;
    let engine = t.hearth.tasks();
    let input = json!({ "x": 1 });
    let first = engine.create(new_task("renew-insurance", &input)).await.unwrap();
    let second = engine.create(new_task("renew-insurance", &json!({ "x": 2 }))).await.unwrap();
    assert_eq!(first.id, task_id_for_key("renew-insurance"));
    assert_eq!(first.id.len(), 64);
    assert_eq!(second, first, "the second create returns the first task unchanged");
    assert_eq!(t.hearth.store().count_tasks().await.unwrap(), 1);
}

#[tokio::test]
async fn at_most_a_hundred_unfinished_tasks() {
    let t = with_scripted_handler().await;
    let engine = t.hearth.tasks();
    let input = json!({});
    for i in 0..MAX_OPEN_TASKS {
        engine.create(new_task(&format!("t{i}"), &input)).await.unwrap();
    }
    let err = engine.create(new_task("one-too-many", &input)).await.unwrap_err();
    assert!(matches!(err, CoreError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains("100 unfinished tasks"), "{err}");
    assert_eq!(t.hearth.store().count_tasks().await.unwrap(), MAX_OPEN_TASKS);
    // An existing key still answers; finishing work frees room.
    engine.create(new_task("t0", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
    engine.create(new_task("one-too-many", &input)).await.unwrap();
}

#[tokio::test]
async fn a_run_claims_counts_the_attempt_and_records_its_end() {
    let t = with_scripted_handler().await;
    let engine = t.hearth.tasks();
    let id = run_to_rest(engine, "ask-me", "ask").await;
    let detail = t.hearth.task_get(&id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::WaitingInput);
    assert_eq!(detail.task.question.as_deref(), Some("Which day?"));
    assert_eq!(detail.task.attempts, 1);
    assert_eq!(detail.runs.len(), 1);
    assert_eq!(detail.runs[0].status, TaskRunStatus::Finished);
    assert!(detail.events.iter().any(|e| e.message == "Run 1 started."));
    // Nothing else is due: another tick claims nothing.
    assert_eq!(engine.tick().await.unwrap(), 0);
}

#[tokio::test]
async fn at_most_max_running_runs_at_once() {
    let t = with_scripted_handler().await;
    let engine = t.hearth.tasks();
    let hang = json!({ "outcome": "hang" });
    for i in 0..5 {
        engine.create(new_task(&format!("h{i}"), &hang)).await.unwrap();
    }
    assert_eq!(engine.tick().await.unwrap(), 3);
    assert_eq!(engine.running(), 3);
    assert_eq!(engine.tick().await.unwrap(), 0);
    t.hearth.shutdown().await;
}

#[tokio::test]
async fn a_stale_lease_holder_cannot_write_after_expiry() {
    let t = open().await;
    let hearth = &t.hearth;
    let store = hearth.store();
    let input = json!({});
    let task = hearth.tasks().create(new_task("stale", &input)).await.unwrap();
    // Another worker claimed with a lease that lapsed at once; nobody has swept it yet, so the
    // task is still `running` and only the expiry fences the old holder.
    let claim = store.claim_next("some-other-process", 0).await.unwrap().unwrap();
    assert_eq!(claim.task.id, task.id);
    let snapshot = || async {
        (
            store.get_task(&task.id).await.unwrap(),
            store.task_runs(&task.id).await.unwrap(),
            store.task_events(&task.id, 1000).await.unwrap(),
        )
    };
    let before = snapshot().await;
    assert_eq!(before.0.as_ref().unwrap().status, TaskStatus::Running);

    let done = RunEnding {
        status: TaskStatus::Succeeded,
        result: Some("late".into()),
        error: None,
        question: None,
        next_run_at: None,
        action_id: None,
    };
    let failed = RunEnding { status: TaskStatus::Failed, error: Some("late".into()), ..done.clone() };
    assert!(!store.checkpoint(&task.id, &claim.lease_id, &json!({ "step": 2 })).await.unwrap());
    assert!(!store.finish_run(&task.id, &claim.lease_id, &done).await.unwrap());
    assert!(!store.finish_run(&task.id, &claim.lease_id, &failed).await.unwrap());
    assert!(!store.set_plan(&task.id, &claim.lease_id, &[]).await.unwrap());
    assert!(!store.renew_lease(&task.id, &claim.lease_id, 60_000).await.unwrap());
    let after = snapshot().await;
    assert_eq!(after, before, "the database is unchanged");
    // The sweep then makes it interrupted, durably.
    assert_eq!(hearth.tasks().sweep().await.unwrap(), 1);
    let swept = store.get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(swept.status, TaskStatus::Interrupted);
    assert_eq!(swept.error.as_deref(), Some(hearth_core::tasks::INTERRUPTED_REASON));
}

#[tokio::test]
async fn a_stale_lease_holder_cannot_write_after_cancel() {
    let t = open().await;
    let store = t.hearth.store();
    let input = json!({});
    let task = t.hearth.tasks().create(new_task("cancelled", &input)).await.unwrap();
    let claim = store.claim_next("some-other-process", 60_000).await.unwrap().unwrap();
    let cancel = hearth_protocol::tasks::TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::Running,
        expected_attempts: 1,
        control: hearth_protocol::tasks::TaskControl::Cancel,
    };
    t.hearth.task_control(&cancel).await.unwrap();
    let before = store.get_task(&task.id).await.unwrap();
    let done = RunEnding {
        status: TaskStatus::Succeeded,
        result: Some("late".into()),
        error: None,
        question: None,
        next_run_at: None,
        action_id: None,
    };
    assert!(!store.checkpoint(&task.id, &claim.lease_id, &json!({ "step": 2 })).await.unwrap());
    assert!(!store.finish_run(&task.id, &claim.lease_id, &done).await.unwrap());
    assert_eq!(store.get_task(&task.id).await.unwrap(), before);
    assert_eq!(before.unwrap().status, TaskStatus::Cancelled);
}

#[tokio::test]
async fn checkpoints_merge_into_durable_state() {
    let t = open().await;
    let engine = t.hearth.tasks();
    engine.register(TaskKind::Monitor, |ctx: TaskContext| async move {
        ctx.checkpoint(&json!({ "filled": "file-1", "nested": { "a": 1 } })).await.unwrap();
        ctx.checkpoint(&json!({ "nested": { "b": 2 } })).await.unwrap();
        TaskOutcome::Succeeded(ctx.task().attempts.to_string())
    });
    let id = run_to_rest(engine, "state", "succeed").await;
    let task = t.hearth.store().get_task(&id).await.unwrap().unwrap();
    assert_eq!(task.state, json!({ "filled": "file-1", "nested": { "a": 1, "b": 2 } }));
    assert_eq!(task.result.as_deref(), Some("1"));
}

#[tokio::test]
async fn graceful_shutdown_interrupts_running_tasks() {
    let t = with_scripted_handler().await;
    let engine = t.hearth.tasks();
    let input = json!({ "outcome": "hang" });
    let task = engine.create(new_task("long", &input)).await.unwrap();
    engine.tick().await.unwrap();
    assert_eq!(engine.running(), 1);
    t.hearth.shutdown().await;
    let after = t.hearth.task_get(&task.id).await.unwrap();
    assert_eq!(after.task.status, TaskStatus::Interrupted);
    assert!(after.task.error.unwrap().starts_with("Hearth was closed during this run"));
    assert_eq!(after.runs[0].status, TaskRunStatus::Interrupted);
    assert_eq!(engine.tick().await.unwrap(), 0, "a stopped engine claims nothing");
}

#[tokio::test]
async fn an_interrupted_task_is_never_claimed_again_until_retry() {
    let t = with_scripted_handler().await;
    let engine = t.hearth.tasks();
    let input = json!({ "outcome": "succeed" });
    let task = engine.create(new_task("interrupted", &input)).await.unwrap();
    let claim = t.hearth.store().claim_next("dead-process", 60_000).await.unwrap().unwrap();
    assert!(t.hearth.store().interrupt_run(&task.id, &claim.lease_id, "test").await.unwrap());
    for _ in 0..3 {
        assert_eq!(engine.tick().await.unwrap(), 0);
    }
    let retry = hearth_protocol::tasks::TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::Interrupted,
        expected_attempts: 1,
        control: hearth_protocol::tasks::TaskControl::Retry { acknowledge_uncertain: false },
    };
    t.hearth.task_control(&retry).await.unwrap();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(engine, &mut changes).await;
    let detail = t.hearth.task_get(&task.id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Succeeded);
    assert_eq!(detail.runs.len(), 2);
    assert_ne!(detail.runs[0].id, detail.runs[1].id);
    assert_eq!((detail.runs[0].attempt, detail.runs[1].attempt), (1, 2));
}

/// A task that runs again and again (a monitor every minute) keeps its newest 100 runs and
/// the events they wrote; older runs go with their events as each later run ends — except a
/// run an unsettled operation names as its claimant, and the task's own events. Counted in
/// the rows, across 130 runs.
#[tokio::test]
async fn a_recurring_tasks_history_keeps_its_newest_hundred_runs() {
    use hearth_core::store::journal::{OpKey, OpStatus};
    let t = open().await;
    let store = t.hearth.store();
    let input = json!({});
    let task = t.hearth.tasks().create(new_task("every-minute", &input)).await.unwrap();
    let again =
        RunEnding { status: TaskStatus::Scheduled, result: None, error: None, question: None, next_run_at: Some(0), action_id: None };
    let scope = format!("task:{}", task.id);
    let op = OpKey { scope: &scope, op_id: "look-1" };
    let mut runs = Vec::new();
    for attempt in 1..=130 {
        let claim = store.claim_next("me", 600_000).await.unwrap().expect("the task is due again");
        assert_eq!(claim.task.attempts, attempt);
        if attempt == 2 {
            // This run dispatched an effect that has not settled: who held it is read from the run.
            assert!(store.insert_operation(op, "test_look", "{}", "h", &claim.run_id, None).await.unwrap());
        }
        if attempt == 3 {
            // This one's effect settled: nothing reads its run any more.
            let settled = OpKey { scope: &scope, op_id: "look-3" };
            assert!(store.insert_operation(settled, "test_look", "{}", "h", &claim.run_id, None).await.unwrap());
            assert!(store.settle_operation(settled, &claim.run_id, OpStatus::Succeeded, Some("ok")).await.unwrap());
        }
        runs.push(claim.run_id.clone());
        assert!(store.finish_run(&task.id, &claim.lease_id, &again).await.unwrap());
    }
    let kept = store.task_runs(&task.id).await.unwrap();
    let kept_attempts: Vec<i64> = kept.iter().map(|r| r.attempt).collect();
    assert_eq!(kept.len(), 101, "the newest 100 and the one an unsettled operation names: {kept_attempts:?}");
    assert!(kept_attempts.contains(&2) && !kept_attempts.contains(&1) && !kept_attempts.contains(&3) && !kept_attempts.contains(&30));
    assert!((31..=130).all(|a| kept_attempts.contains(&a)));
    let events = store.task_events(&task.id, 100_000).await.unwrap();
    assert!(events.iter().all(|e| e.run_id.as_deref().is_none_or(|run| kept.iter().any(|k| k.id == run))), "no event of a dropped run");
    assert!(events.iter().any(|e| e.run_id.as_deref() == Some(runs[129].as_str())), "the newest run's events are there");
    assert!(events.iter().any(|e| e.run_id.as_deref() == Some(runs[1].as_str())), "the kept old run's events are there");
    assert!(events.iter().any(|e| e.run_id.is_none()), "the task's own events are kept");
    assert_eq!(store.get_operation(op).await.unwrap().unwrap().status, OpStatus::Dispatching);
}

/// The first run hangs until it is stopped; every later one succeeds (a monitor's look, a
/// schedule's reminder).
async fn hangs_the_first_time(ctx: TaskContext) -> TaskOutcome {
    if ctx.task().attempts == 1 {
        ctx.cancel_token().cancelled().await;
        return TaskOutcome::Stopped;
    }
    TaskOutcome::Succeeded("looked".into())
}

/// A monitor's look or a schedule's run that Hearth's shutdown or a dead process cut short,
/// with nothing in doubt, runs again by itself; its cut-off run stays in the history as
/// interrupted. Counted in run rows.
#[tokio::test]
async fn a_recurring_run_cut_off_with_nothing_in_doubt_runs_again_by_itself() {
    let t = open().await;
    t.hearth.tasks().register(TaskKind::Monitor, hangs_the_first_time);
    t.hearth.tasks().register(TaskKind::Reminder, hangs_the_first_time);
    let monitor_input = json!({ "title": "Kettle", "intervalMinutes": 60 });
    let monitor = t.hearth.tasks().create(new_task("a-monitor", &monitor_input)).await.unwrap();
    let schedule = t
        .hearth
        .schedules()
        .create(
            "test:cut-off",
            &hearth_core::schedules::ScheduleSpec {
                title: "Stretch".into(),
                job: hearth_protocol::schedules::ScheduledJob::Reminder,
                instructions: "Stretch".into(),
                repeat: hearth_protocol::schedules::Repeat::Interval { minutes: 60 },
                time_zone: "UTC".into(),
                missed: hearth_protocol::schedules::MissedRuns::Skip,
                goal_id: None,
            },
            &[],
            None,
            None,
            None,
            hearth_core::store::now_ms(),
        )
        .await
        .unwrap()
        .unwrap();
    let press = hearth_protocol::schedules::ScheduleControlParams {
        schedule_id: schedule.id.clone(),
        action: hearth_protocol::schedules::ScheduleAction::RunNow,
        operation_id: Some(OperationId::parse("press").unwrap()),
    };
    t.hearth.schedule_control(&press).await.unwrap();
    let reminder = t.hearth.store().list_tasks(10).await.unwrap().into_iter().find(|task| task.kind == TaskKind::Reminder).unwrap();
    assert_eq!(t.hearth.tasks().tick().await.unwrap(), 2);
    assert_eq!(t.hearth.tasks().running(), 2);
    // Hearth closes while both run: nothing was dispatched, so neither waits for the owner.
    t.hearth.shutdown().await;
    t.hearth.store().close().await;

    let hearth = hearth_core::Hearth::open(super::support::fast_config(t.dir.path())).await.unwrap();
    hearth.tasks().register(TaskKind::Monitor, hangs_the_first_time);
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 2, "both were due again by themselves");
    engine_idle(engine, &mut changes).await;
    for id in [&monitor.id, &reminder.id] {
        let runs = hearth.store().task_runs(id).await.unwrap();
        assert_eq!(runs.len(), 2, "{id}: one run cut off, one run after it");
        assert_eq!((runs[0].status, runs[1].status), (TaskRunStatus::Interrupted, TaskRunStatus::Finished));
    }
    assert_eq!(hearth.store().get_task(&reminder.id).await.unwrap().unwrap().status, TaskStatus::Succeeded);

    // A process that died mid-look (its lease held by a process that cannot be alive): the
    // start-up recovery makes it due again, and the next tick runs it.
    let input = json!({ "title": "Price", "intervalMinutes": 30 });
    let killed = engine.create(new_task("killed-monitor", &input)).await.unwrap();
    let claim = hearth.store().claim_next("dead-boot:1:1", 60_000).await.unwrap().unwrap();
    assert_eq!(claim.task.id, killed.id);
    assert_eq!(engine.recover().await.unwrap(), 1);
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(engine, &mut changes).await;
    assert_eq!(hearth.store().task_runs(&killed.id).await.unwrap().len(), 2);
}

/// The same, with an operation of the cut-off run in doubt: it stays interrupted, and no tick
/// claims it (only the owner's Retry after review would). Counted in claims (attempts, runs).
#[tokio::test]
async fn a_recurring_run_cut_off_with_an_effect_in_doubt_waits_for_the_owner() {
    let t = open().await;
    t.hearth.tasks().register(TaskKind::Monitor, hangs_the_first_time);
    let engine = t.hearth.tasks();
    let input = json!({ "title": "Kettle", "intervalMinutes": 60 });
    let task = engine.create(new_task("doubtful-monitor", &input)).await.unwrap();
    let claim = t.hearth.store().claim_next("dead-boot:1:1", 60_000).await.unwrap().unwrap();
    let scope = hearth_core::store::tasks::task_scope(&task.id);
    let key = hearth_core::store::journal::OpKey { scope: &scope, op_id: "step-1" };
    assert!(t.hearth.store().insert_operation(key, "send_email", "{}", "h", &claim.run_id, None).await.unwrap());
    assert_eq!(engine.recover().await.unwrap(), 1);
    for _ in 0..3 {
        assert_eq!(engine.tick().await.unwrap(), 0, "a run with an effect in doubt was claimed again");
    }
    let row = t.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts), (TaskStatus::Interrupted, 1));
    assert_eq!(t.hearth.store().task_runs(&task.id).await.unwrap().len(), 1);
    assert_eq!(t.hearth.store().count_operations(&scope, hearth_core::store::journal::OpStatus::OutcomeUnknown).await.unwrap(), 1);
}
