//! Goals: a task that succeeds marks its milestone done (in the same statement, by trigger);
//! pausing a goal pauses its open tasks and its schedules and refuses new work on it;
//! resuming brings them back. Oracles: milestone rows, task and schedule statuses.

use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{StepId, dispatch};
use hearth_protocol::approvals::ProposalOrigin;
use hearth_protocol::goals::{GoalAction, GoalControlParams, GoalStatus, GoalView};
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::schedules::ScheduleStatus;
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{engine_idle, open};

#[tokio::test]
async fn milestones_follow_their_tasks_and_a_paused_goal_pauses_its_work() {
    let t = open().await;
    let hearth = &t.hearth;
    hearth.tasks().register(TaskKind::Agent, |ctx: TaskContext| async move {
        match ctx.task().input["milestone"].as_u64() {
            Some(1) => TaskOutcome::Succeeded("Booked.".into()),
            // Waits for a later day (a waiting-for-input task has no Pause; a scheduled one has).
            _ => TaskOutcome::Scheduled(hearth_core::store::now_ms() + 86_400_000),
        }
    });
    hearth.store().open_run("thread-goal", "run-goal", "goal", "test", hearth_core::store::threads::RunOrigin::Window).await.unwrap();
    let ctx = hearth.toolbox().for_chat("thread-goal", "run-goal", ProposalOrigin::OwnerChat, CancellationToken::new());
    let call = |n: &str| StepId::Call(n.into());
    let made = dispatch(
        &ctx,
        "create_goal",
        &json!({
            "title": "Run a half marathon", "category": "Health",
            "milestones": ["Book a physio check", "Run 10 km"]
        })
        .to_string(),
        call("g"),
    )
    .await;
    assert!(!made.is_error, "{made:?}");
    let goal: GoalView = serde_json::from_str(&made.content).unwrap();
    assert_eq!((goal.category.as_str(), goal.milestones.len()), ("health", 2));

    let delegate =
        |milestone: u32| json!({ "title": format!("Milestone {milestone}"), "goalId": goal.id, "milestone": milestone }).to_string();
    let first = dispatch(&ctx, "delegate_task", &delegate(1), call("d1")).await;
    let second = dispatch(&ctx, "delegate_task", &delegate(2), call("d2")).await;
    assert!(!first.is_error && !second.is_error, "{first:?} {second:?}");
    let second_id = serde_json::from_str::<DelegateTaskResult>(&second.content).unwrap().task_id;
    let bad = dispatch(&ctx, "delegate_task", &delegate(3), call("d3")).await;
    assert!(bad.is_error && bad.content.contains("has milestones 1, 2."), "{bad:?}");
    let schedule = dispatch(
        &ctx,
        "schedule_task",
        &json!({
            "title": "Long run", "repeat": { "every": "week", "days": ["sunday"], "at": "08:00" }, "goalId": goal.id
        })
        .to_string(),
        call("s"),
    )
    .await;
    assert!(!schedule.is_error, "{schedule:?}");

    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
    let now = hearth.store().goal(&goal.id).await.unwrap().unwrap();
    assert!(now.milestones[0].done_at.is_some(), "the task that succeeded marked its milestone");
    assert!(now.milestones[1].done_at.is_none(), "a task not done marks nothing");
    assert_eq!(now.open_tasks, 1);

    // A third task on the goal, which the owner pauses by hand before the goal is paused.
    let third = dispatch(&ctx, "delegate_task", &json!({ "title": "Buy shoes", "goalId": goal.id }).to_string(), call("d5")).await;
    let third_id = serde_json::from_str::<DelegateTaskResult>(&third.content).unwrap().task_id;
    let owner_pause = hearth_protocol::tasks::TaskControlParams {
        task_id: third_id.clone(),
        expected_status: TaskStatus::Queued,
        expected_attempts: 0,
        control: hearth_protocol::tasks::TaskControl::Pause,
    };
    hearth.task_control(&owner_pause).await.unwrap();
    let paused = hearth.goal_control(&GoalControlParams { goal_id: goal.id.clone(), action: GoalAction::Pause }).await.unwrap();
    assert_eq!(paused.status, GoalStatus::Paused);
    assert_eq!(hearth.store().get_task(&second_id).await.unwrap().unwrap().status, TaskStatus::Paused);
    let schedules = hearth.schedule_list().await.unwrap().schedules;
    assert_eq!(schedules[0].status, ScheduleStatus::Paused);
    let refused = dispatch(&ctx, "delegate_task", &json!({ "title": "More", "goalId": goal.id }).to_string(), call("d4")).await;
    assert!(refused.is_error && refused.content.contains("paused"), "{refused:?}");
    assert_eq!(hearth.store().list_tasks(50).await.unwrap().len(), 3, "nothing new started on a paused goal");

    hearth.goal_control(&GoalControlParams { goal_id: goal.id.clone(), action: GoalAction::Resume }).await.unwrap();
    assert_eq!(hearth.store().get_task(&second_id).await.unwrap().unwrap().status, TaskStatus::Queued);
    assert_eq!(hearth.schedule_list().await.unwrap().schedules[0].status, ScheduleStatus::Active);
    assert_eq!(
        hearth.store().get_task(&third_id).await.unwrap().unwrap().status,
        TaskStatus::Paused,
        "what the owner paused by hand stays paused"
    );
}

#[tokio::test]
async fn the_owner_adds_renames_and_removes_milestones_and_positions_never_move() {
    use hearth_protocol::goals::{GoalCreateParams, GoalMilestonesParams, MilestoneChange};
    let t = open().await;
    let hearth = &t.hearth;
    let created = GoalCreateParams {
        title: "Move house".into(),
        description: String::new(),
        category: "home".into(),
        milestones: vec!["Find a flat".into(), "Pack".into()],
    };
    let goal = hearth.goal_create(&created).await.unwrap();
    let change = |change: MilestoneChange| GoalMilestonesParams { goal_id: goal.id.clone(), change };
    let rows = |view: &GoalView| view.milestones.iter().map(|m| (m.position, m.title.clone())).collect::<Vec<_>>();

    let added = hearth.goal_milestones(&change(MilestoneChange::Add { title: " Hand back the keys ".into() })).await.unwrap();
    assert_eq!(rows(&added), [(1, "Find a flat".into()), (2, "Pack".into()), (3, "Hand back the keys".into())]);
    let renamed = hearth.goal_milestones(&change(MilestoneChange::Rename { position: 2, title: "Pack the books".into() })).await.unwrap();
    assert_eq!(renamed.milestones[1].title, "Pack the books");

    // A task works on milestone 1: it stays while the task is unfinished.
    let input = json!({ "title": "Search listings", "goalId": goal.id, "milestone": 1 });
    let new = hearth_core::store::tasks::NewTask {
        idempotency_key: "flat",
        kind: TaskKind::Monitor,
        title: "Search listings",
        input: &input,
        thread_id: None,
    };
    hearth.tasks().create(new).await.unwrap();
    let err = hearth.goal_milestones(&change(MilestoneChange::Remove { position: 1 })).await.unwrap_err();
    assert!(err.to_string().contains("task is working on it"), "{err}");
    // Milestone 2 goes; the others keep their positions, and a new one goes last.
    hearth.goal_milestones(&change(MilestoneChange::Remove { position: 2 })).await.unwrap();
    let again = hearth.goal_milestones(&change(MilestoneChange::Add { title: "Celebrate".into() })).await.unwrap();
    assert_eq!(rows(&again), [(1, "Find a flat".into()), (3, "Hand back the keys".into()), (4, "Celebrate".into())]);
    let missing = hearth.goal_milestones(&change(MilestoneChange::Rename { position: 2, title: "x".into() })).await.unwrap_err();
    assert!(missing.to_string().contains("no milestone 2"), "{missing}");
    assert!(hearth.goal_milestones(&change(MilestoneChange::Add { title: "  ".into() })).await.is_err(), "an empty title is refused");
}
