//! Every (status, control) pair: the allowed ones apply, the others are conflicts that
//! change nothing; a stale view is a conflict; Cancel reaches a running handler at once.

use hearth_core::CoreError;
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus, allowed_controls};
use serde_json::json;

use super::support::{TestHearth, engine_idle, new_task};
use super::tasks::{run_to_rest, with_scripted_handler};

/// Puts a fresh task into `status` through real transitions.
async fn task_in(t: &TestHearth, key: &str, status: TaskStatus) -> String {
    let engine = t.hearth.tasks();
    let store = t.hearth.store();
    let plain = json!({});
    let control = |id: &str, expected, control| {
        let params = TaskControlParams { task_id: TaskId::trusted(id), expected_status: expected, expected_attempts: 0, control };
        let hearth = t.hearth.clone();
        async move { hearth.task_control(&params).await.unwrap() }
    };
    match status {
        TaskStatus::Queued => engine.create(new_task(key, &plain)).await.unwrap().id,
        TaskStatus::Running => {
            let id = engine.create(new_task(key, &plain)).await.unwrap().id;
            let claim = store.claim_next("another-process", 600_000).await.unwrap().unwrap();
            assert_eq!(claim.task.id, id);
            id
        }
        TaskStatus::WaitingInput => run_to_rest(engine, key, "ask").await,
        TaskStatus::WaitingApproval => run_to_rest(engine, key, "approve").await,
        TaskStatus::Scheduled => run_to_rest(engine, key, "schedule").await,
        TaskStatus::Succeeded => run_to_rest(engine, key, "succeed").await,
        TaskStatus::Failed => run_to_rest(engine, key, "fail").await,
        TaskStatus::Paused => {
            let id = engine.create(new_task(key, &plain)).await.unwrap().id;
            control(&id, TaskStatus::Queued, TaskControl::Pause).await;
            id
        }
        TaskStatus::Cancelled => {
            let id = engine.create(new_task(key, &plain)).await.unwrap().id;
            control(&id, TaskStatus::Queued, TaskControl::Cancel).await;
            id
        }
        TaskStatus::Interrupted => {
            let id = engine.create(new_task(key, &plain)).await.unwrap().id;
            let claim = store.claim_next("another-process", 600_000).await.unwrap().unwrap();
            assert!(store.interrupt_run(&id, &claim.lease_id, "test").await.unwrap());
            id
        }
    }
}

#[tokio::test]
async fn every_status_and_control_pair() {
    let controls = [
        TaskControl::Pause,
        TaskControl::Resume,
        TaskControl::Cancel,
        TaskControl::Retry { acknowledge_uncertain: false },
        TaskControl::Answer { text: "Tuesday".into() },
    ];
    let mut applied = 0;
    for &status in TaskStatus::ALL {
        for control in &controls {
            let key = format!("{}-{}", status.as_str(), control.name());
            // A fresh Hearth per case, so "the next due task" is always this one.
            let t = with_scripted_handler().await;
            let id = task_in(&t, &key, status).await;
            let before = t.hearth.store().get_task(&id).await.unwrap().unwrap();
            assert_eq!(before.status, status, "{key}: setup");
            let params = TaskControlParams {
                task_id: TaskId::trusted(id.as_str()),
                expected_status: status,
                expected_attempts: before.attempts,
                control: control.clone(),
            };
            let result = t.hearth.task_control(&params).await;
            let after = t.hearth.store().get_task(&id).await.unwrap().unwrap();
            if allowed_controls(status).contains(&control.kind()) {
                let expected = match control {
                    TaskControl::Pause => TaskStatus::Paused,
                    TaskControl::Cancel => TaskStatus::Cancelled,
                    TaskControl::Resume | TaskControl::Retry { .. } | TaskControl::Answer { .. } => TaskStatus::Queued,
                };
                assert_eq!(result.unwrap().status, expected, "{key}");
                assert_eq!(after.status, expected, "{key}");
                if let TaskControl::Answer { text } = control {
                    assert_eq!(after.state["answer"], json!(text), "{key}: the answer is kept for the next run");
                    assert_eq!(after.question, None);
                }
                applied += 1;
            } else {
                let err = result.unwrap_err();
                assert!(matches!(err, CoreError::Conflict(_)), "{key}: {err:?}");
                assert!(err.to_string().starts_with("You cannot"), "{key}: {err}");
                assert_eq!(after, before, "{key}: a refused control changes nothing");
            }
        }
    }
    assert_eq!(applied, TaskStatus::ALL.iter().map(|s| allowed_controls(*s).len()).sum::<usize>());
}

#[tokio::test]
async fn a_control_on_a_stale_view_is_a_conflict() {
    let t = with_scripted_handler().await;
    let id = task_in(&t, "stale-view", TaskStatus::WaitingInput).await;
    let params = TaskControlParams {
        task_id: TaskId::trusted(id.as_str()),
        expected_status: TaskStatus::Queued,
        expected_attempts: 1,
        control: TaskControl::Pause,
    };
    let err = t.hearth.task_control(&params).await.unwrap_err();
    assert!(err.to_string().contains("changed while you were looking"), "{err}");
    // The same status from an older attempt is stale too: that question is not this one.
    let older = TaskControlParams {
        task_id: TaskId::trusted(id.as_str()),
        expected_status: TaskStatus::WaitingInput,
        expected_attempts: 0,
        control: TaskControl::Answer { text: "Tuesday".into() },
    };
    let err = t.hearth.task_control(&older).await.unwrap_err();
    assert!(err.to_string().contains("changed while you were looking"), "{err}");
    let task = t.hearth.store().get_task(&id).await.unwrap().unwrap();
    assert_eq!((task.status, task.state.get("answer")), (TaskStatus::WaitingInput, None));
    let missing = TaskControlParams {
        task_id: TaskId::parse("nope").unwrap(),
        expected_status: TaskStatus::Queued,
        expected_attempts: 0,
        control: TaskControl::Cancel,
    };
    assert!(matches!(t.hearth.task_control(&missing).await.unwrap_err(), CoreError::NotFound(_)));
}

#[tokio::test]
async fn cancel_reaches_a_running_handler_at_once() {
    let t = super::support::open().await;
    let engine = t.hearth.tasks();
    let (saw_tx, saw_rx) = tokio::sync::oneshot::channel::<()>();
    let saw = std::sync::Mutex::new(Some(saw_tx));
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started = std::sync::Mutex::new(Some(started_tx));
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let started = started.lock().unwrap().take();
        let saw = saw.lock().unwrap().take();
        async move {
            if let Some(tx) = started {
                let _ = tx.send(());
            }
            ctx.cancel_token().cancelled().await;
            if let Some(tx) = saw {
                let _ = tx.send(());
            }
            TaskOutcome::Stopped
        }
    });
    let input = json!({});
    let task = engine.create(new_task("to-cancel", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    started_rx.await.unwrap();
    let params = TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::Running,
        expected_attempts: 1,
        control: TaskControl::Cancel,
    };
    t.hearth.task_control(&params).await.unwrap();
    saw_rx.await.unwrap();
    engine_idle(engine, &mut changes).await;
    let detail = t.hearth.task_get(&task.id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Cancelled);
    assert_eq!(detail.runs[0].status, hearth_protocol::tasks::TaskRunStatus::Cancelled);
}

#[tokio::test]
async fn retry_waits_for_review_while_an_outcome_is_unknown() {
    let t = with_scripted_handler().await;
    let store = t.hearth.store();
    let input = json!({});
    let task = t.hearth.tasks().create(new_task("uncertain", &input)).await.unwrap();
    // A process that no longer exists holds the lease.
    let claim = store.claim_next("other-boot:1:1", 600_000).await.unwrap().unwrap();
    // The effect was dispatched, then the holder vanished.
    let scope = format!("task:{}", task.id);
    let op = hearth_core::store::journal::OpKey { scope: &scope, op_id: "send-1" };
    assert!(store.insert_operation(op, "test_send", "{}", "h", &claim.run_id, None).await.unwrap());
    assert!(store.interrupt_run(&task.id, &claim.lease_id, "lost").await.unwrap());
    let interrupted = store.get_task(&task.id).await.unwrap().unwrap();
    assert!(interrupted.outcome_uncertain);
    assert_eq!(store.get_operation(op).await.unwrap().unwrap().status, hearth_core::store::journal::OpStatus::OutcomeUnknown);

    let retry = |ack| TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::Interrupted,
        expected_attempts: 1,
        control: TaskControl::Retry { acknowledge_uncertain: ack },
    };
    let err = t.hearth.task_control(&retry(false)).await.unwrap_err();
    assert!(err.to_string().contains("Retry after review"), "{err}");
    assert_eq!(store.get_task(&task.id).await.unwrap().unwrap(), interrupted);
    let view = t.hearth.task_control(&retry(true)).await.unwrap();
    assert_eq!((view.status, view.outcome_uncertain), (TaskStatus::Queued, false));
    assert_eq!(store.get_operation(op).await.unwrap().unwrap().status, hearth_core::store::journal::OpStatus::Acknowledged);
}

#[tokio::test]
async fn an_uncertain_effect_makes_its_failed_task_wait_for_review() {
    let t = super::support::open().await;
    let engine = t.hearth.tasks();
    engine.register(TaskKind::Monitor, |ctx: TaskContext| async move {
        let sent = ctx
            .test_effect("send-1", "test_send", &json!({ "to": "sam@example.com" }), |_| async {
                Err(hearth_core::journal::EffectError::Uncertain("the connection dropped after sending".into()))
            })
            .await;
        match sent {
            Ok(_) => TaskOutcome::Succeeded("sent".into()),
            Err(err) => TaskOutcome::Failed(err.to_string()),
        }
    });
    let input = json!({});
    let task = engine.create(new_task("uncertain-send", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
    let failed = t.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.outcome_uncertain, "the failed run left an effect in doubt");
    let retry = |ack| TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::Failed,
        expected_attempts: 1,
        control: TaskControl::Retry { acknowledge_uncertain: ack },
    };
    assert!(t.hearth.task_control(&retry(false)).await.is_err(), "a plain Retry waits for review");
    assert_eq!(t.hearth.task_control(&retry(true)).await.unwrap().status, TaskStatus::Queued);
}
