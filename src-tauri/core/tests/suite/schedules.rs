//! Schedules: missed-run policies across a restart, one run per due time across processes,
//! the owner's controls, the agent's schedule_task, and the notices runs leave. Oracles are
//! rows: tasks a schedule made, its due-time rows, notices in the inbox.

use hearth_core::Hearth;
use hearth_core::schedules::ScheduleSpec;
use hearth_protocol::ids::{OperationId, TaskId};
use hearth_protocol::notifications::{NotificationKind, NotificationReadParams, NotificationTarget};
use hearth_protocol::schedules::{
    DueOutcome, MissedRuns, Repeat, ScheduleAction, ScheduleControlParams, ScheduleCreateParams, ScheduleStatus, ScheduledJob, Weekday,
};
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use serde_json::json;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::processes::spawn_worker;
use super::support::{engine_idle, fast_config, open};

const HOUR: i64 = 3_600_000;
/// 2026-12-01T00:00:00Z, a fixed anchor so the due times are known.
const T0: i64 = 1_764_547_200_000;

fn hourly(title: &str, missed: MissedRuns) -> ScheduleSpec {
    ScheduleSpec {
        title: title.into(),
        job: ScheduledJob::Reminder,
        instructions: format!("{title} now"),
        repeat: Repeat::Interval { minutes: 60 },
        time_zone: "UTC".into(),
        missed,
        goal_id: None,
    }
}

/// The tasks a schedule made, as rows.
async fn tasks_of(hearth: &Hearth, schedule_id: &str) -> Vec<hearth_core::store::tasks::TaskRow> {
    let all = hearth.store().list_tasks(1000).await.unwrap();
    all.into_iter().filter(|t| t.input["scheduleId"] == json!(schedule_id)).collect()
}

#[tokio::test]
async fn each_missed_run_policy_applies_exactly_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    {
        let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
        for &policy in MissedRuns::ALL {
            let view = hearth
                .schedules()
                .create(&format!("test:{}", policy.as_str()), &hourly(policy.as_str(), policy), &[], None, None, None, T0)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(view.next_run_at, Some(T0 + HOUR));
            // On time at 01:00: one run each, whatever the policy.
            ids.push((policy, view.id));
        }
        assert_eq!(hearth.schedules().fire_due(T0 + HOUR + 1_000).await.unwrap(), 3);
        hearth.shutdown().await;
    }
    // Hearth was closed from 01:00 to 06:30: 02:00 … 06:00 (five due times) were missed.
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let made = hearth.schedules().fire_due(T0 + 6 * HOUR + HOUR / 2).await.unwrap();
    assert_eq!(made, 1 + 5, "skip: none; run once: one; run each: five");
    for (policy, id) in &ids {
        let tasks = tasks_of(&hearth, id).await;
        let expected = match policy {
            MissedRuns::Skip => 1,
            MissedRuns::RunOnce => 2,
            MissedRuns::RunEach => 6,
        };
        assert_eq!(tasks.len(), expected, "{policy:?}");
        let view = hearth.schedules().get(id).await.unwrap();
        assert_eq!(view.last_runs.len(), 6, "every due time is on record: {policy:?}");
        let skipped = view.last_runs.iter().filter(|r| r.outcome == DueOutcome::Skipped).count();
        assert_eq!(skipped, 6 - expected, "{policy:?}");
        assert_eq!(view.next_run_at, Some(T0 + 7 * HOUR));
        if *policy == MissedRuns::RunOnce {
            // The one made up is the newest missed: 06:00.
            let made_up: Vec<i64> = view.last_runs.iter().filter(|r| r.outcome == DueOutcome::MadeUp).map(|r| r.due_at).collect();
            assert_eq!(made_up, [T0 + 6 * HOUR]);
        }
    }
    // Ticking again at the same moment, or a little later, makes nothing more.
    assert_eq!(hearth.schedules().fire_due(T0 + 6 * HOUR + HOUR / 2).await.unwrap(), 0);
    assert_eq!(hearth.schedules().fire_due(T0 + 6 * HOUR + HOUR / 2 + 5_000).await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_never_run_one_due_time_twice() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let schedules = 8;
    {
        let hearth = Hearth::open(fast_config(&data)).await.unwrap();
        for i in 0..schedules {
            hearth
                .schedules()
                .create(&format!("race:{i}"), &hourly(&format!("race {i}"), MissedRuns::RunEach), &[], None, None, None, T0)
                .await
                .unwrap()
                .unwrap();
        }
        hearth.store().close().await;
    }
    // Both wake at 05:30 (five due times each missed), open, and tick once released together.
    // Each process's tick either wins a schedule's cursor swap or writes nothing for it, so the
    // tasks each says it made add up to 40: a loser that went on anyway would count a due
    // time's task (found under its key) a second time.
    let mode = format!("fire-schedules:{}", T0 + 5 * HOUR + HOUR / 2);
    let mut workers = [spawn_worker(dir.path(), &mode), spawn_worker(dir.path(), &mode)];
    let mut outputs = Vec::new();
    for worker in &mut workers {
        let mut lines = BufReader::new(worker.stdout.take().unwrap()).lines();
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("READY"));
        outputs.push(lines);
    }
    for worker in &mut workers {
        worker.stdin.take().unwrap().write_all(b"go\n").await.unwrap();
    }
    let mut made_by_each = Vec::new();
    for lines in &mut outputs {
        made_by_each.push(lines.next_line().await.unwrap().unwrap().parse::<usize>().unwrap());
    }
    for worker in &mut workers {
        assert!(worker.wait().await.unwrap().success(), "a worker failed");
    }
    assert_eq!(made_by_each.iter().sum::<usize>(), schedules * 5, "each due time's task made by one process: {made_by_each:?}");
    let hearth = Hearth::open(fast_config(&data)).await.unwrap();
    let all = hearth.store().list_tasks(1000).await.unwrap();
    let made: Vec<_> = all.iter().filter(|t| t.kind == TaskKind::Reminder).collect();
    assert_eq!(made.len(), schedules * 5, "one task per due time");
    let mut keys: Vec<(String, i64)> =
        made.iter().map(|t| (t.input["scheduleId"].as_str().unwrap().to_owned(), t.input["dueAt"].as_i64().unwrap())).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), schedules * 5, "no due time made two tasks");
}

#[tokio::test]
async fn a_weekly_schedule_in_paris_fires_at_the_shifted_instant_on_the_spring_forward_night() {
    let t = open().await;
    // Created on Saturday 2026-03-28 12:00Z; every day at 02:30 Paris time. The next one falls
    // in the gap on the 29th and runs at 03:30 CEST = 01:30Z.
    let created = 1_774_699_200_000; // 2026-03-28T12:00:00Z
    let spec = ScheduleSpec {
        title: "Water the seedlings".into(),
        job: ScheduledJob::Reminder,
        instructions: String::new(),
        repeat: Repeat::Week { days: Weekday::ALL.to_vec(), at: "02:30".into() },
        time_zone: "Europe/Paris".into(),
        missed: MissedRuns::Skip,
        goal_id: None,
    };
    let view = t.hearth.schedules().create("test:paris", &spec, &[], None, None, None, created).await.unwrap().unwrap();
    let gap_run = 1_774_747_800_000; // 2026-03-29T01:30:00Z
    assert_eq!(view.next_run_at, Some(gap_run));
    assert_eq!(t.hearth.schedules().fire_due(gap_run - 1).await.unwrap(), 0, "not yet");
    assert_eq!(t.hearth.schedules().fire_due(gap_run + 500).await.unwrap(), 1);
    let tasks = tasks_of(&t.hearth, &view.id).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].input["dueAt"], json!(gap_run));
    // The instructions default to the title.
    assert_eq!(tasks[0].input["instructions"], json!("Water the seedlings"));
}

#[tokio::test]
async fn a_reminder_run_notifies_once_and_a_failed_scheduled_run_notifies_as_a_schedule_failure() {
    let t = open().await;
    let engine = t.hearth.tasks().clone();
    // An agent run that fails (without a model the agent asks for one instead).
    engine.register(TaskKind::Agent, |_ctx: hearth_core::tasks::TaskContext| async {
        hearth_core::tasks::TaskOutcome::Failed("The news site did not answer.".into())
    });
    let mut changes = engine.subscribe();
    let remind = t
        .hearth
        .schedules()
        .create("test:remind", &hourly("Check the garden", MissedRuns::Skip), &[], None, None, None, T0)
        .await
        .unwrap()
        .unwrap();
    let agent = ScheduleSpec { job: ScheduledJob::Agent, ..hourly("Summarize the news", MissedRuns::Skip) };
    let agent = t.hearth.schedules().create("test:agent", &agent, &[], None, None, None, T0).await.unwrap().unwrap();
    assert_eq!(t.hearth.schedules().fire_due(T0 + HOUR + 10).await.unwrap(), 2);
    engine.tick().await.unwrap();
    engine_idle(&engine, &mut changes).await;
    // The reminder succeeded; the agent run failed.
    let reminder = tasks_of(&t.hearth, &remind.id).await;
    assert_eq!(reminder[0].status, TaskStatus::Succeeded);
    assert_eq!(reminder[0].result.as_deref(), Some("Check the garden now"));
    let failed = tasks_of(&t.hearth, &agent.id).await;
    assert_eq!(failed[0].status, TaskStatus::Failed);
    let inbox = t.hearth.notification_list().await.unwrap();
    let kinds: Vec<_> = inbox.notifications.iter().map(|n| (n.kind, n.target.clone())).collect();
    assert!(kinds.contains(&(NotificationKind::Reminder, NotificationTarget::Task(TaskId::trusted(reminder[0].id.as_str())))), "{kinds:?}");
    assert!(
        kinds.contains(&(NotificationKind::ScheduleFailed, NotificationTarget::Task(TaskId::trusted(failed[0].id.as_str())))),
        "{kinds:?}"
    );
    assert_eq!(inbox.notifications.len(), 2, "one notice each: {kinds:?}");
    assert_eq!(inbox.unread, 2);
    // The OS notifications' watch starts once the core has opened, beside the window: it
    // reads from where the core opened, so these two, written before it started, still pop up.
    let mut since_open = t.hearth.notification_watch_since_open();
    let mut popped = Vec::new();
    for _ in 0..2 {
        let notice =
            tokio::time::timeout(std::time::Duration::from_secs(30), since_open.recv()).await.expect("a notice since open").unwrap();
        popped.push(notice.id);
    }
    let mut listed: Vec<i64> = inbox.notifications.iter().map(|n| n.id).collect();
    listed.sort_unstable();
    assert_eq!(popped, listed, "each notice since open, oldest first");
    let reminder_notice = inbox.notifications.iter().find(|n| n.kind == NotificationKind::Reminder).unwrap();
    assert_eq!(reminder_notice.body, "Check the garden now");
    // The schedule shows the run's outcome through its task.
    let view = t.hearth.schedules().get(&agent.id).await.unwrap();
    assert_eq!(view.last_runs[0].task_status, Some(TaskStatus::Failed));
    // Read marks stick; the count goes down.
    let after = t.hearth.notification_read(&NotificationReadParams { ids: vec![reminder_notice.id], all: false }).await.unwrap();
    assert_eq!(after.unread, 1);
    let after = t.hearth.notification_read(&NotificationReadParams { ids: vec![], all: true }).await.unwrap();
    assert_eq!(after.unread, 0);
    assert_eq!(after.notifications.len(), 2);
}

/// Run now keyed by the press: the same operation id twice (a double click, a retry after a
/// lost answer) makes one task; a new press makes a second. Oracle: task rows and due-time rows.
#[tokio::test]
async fn run_now_makes_one_run_per_operation_id() {
    let t = open().await;
    let view = t
        .hearth
        .schedules()
        .create("test:run-now-id", &hourly("Water", MissedRuns::Skip), &[], None, None, None, T0)
        .await
        .unwrap()
        .unwrap();
    let press = |id: &str| ScheduleControlParams {
        schedule_id: view.id.clone(),
        action: ScheduleAction::RunNow,
        operation_id: Some(OperationId::parse(id).unwrap()),
    };
    let runs = || async { t.hearth.store().schedule_runs(&view.id, 100).await.unwrap().len() };
    // The same press twice, the second a millisecond later and at once (as a double click's).
    let now = hearth_core::store::now_ms();
    t.hearth.schedules().control(&press("click-a"), now).await.unwrap();
    t.hearth.schedules().control(&press("click-a"), now + 1).await.unwrap();
    let (first, second) = (press("click-a"), press("click-a"));
    let (a, b) = tokio::join!(t.hearth.schedules().control(&first, now + 2), t.hearth.schedules().control(&second, now + 3),);
    a.unwrap();
    b.unwrap();
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 1);
    assert_eq!(runs().await, 1);
    // A new press (a new id) is a second run, even in the same millisecond.
    t.hearth.schedules().control(&press("click-b"), now).await.unwrap();
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 2);
    assert_eq!(runs().await, 2);
    // Without an id, Run now is refused and makes nothing.
    let bare = ScheduleControlParams { operation_id: None, ..press("x") };
    assert!(t.hearth.schedule_control(&bare).await.is_err());
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 2);
}

#[tokio::test]
async fn pause_resume_run_now_and_delete() {
    let t = open().await;
    let params = ScheduleCreateParams {
        title: "Weekly review".into(),
        job: ScheduledJob::Reminder,
        instructions: String::new(),
        repeat: Repeat::Week { days: vec![Weekday::Friday], at: "17:00".into() },
        time_zone: "America/New_York".into(),
        missed: MissedRuns::RunOnce,
    };
    let view = t.hearth.schedule_create(&params).await.unwrap();
    assert_eq!(view.status, ScheduleStatus::Active);
    assert!(view.next_run_at.is_some());
    let control = |action| ScheduleControlParams {
        schedule_id: view.id.clone(),
        action,
        operation_id: (action == ScheduleAction::RunNow).then(|| OperationId::parse("press-1").unwrap()),
    };
    // Run now makes one task at once, beside the rule.
    let ran = t.hearth.schedule_control(&control(ScheduleAction::RunNow)).await.unwrap().unwrap();
    assert_eq!(ran.last_runs.len(), 1);
    assert_eq!(ran.last_runs[0].outcome, DueOutcome::RunNow);
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 1);
    // Paused: no next run, and a tick far in the future makes nothing.
    let paused = t.hearth.schedule_control(&control(ScheduleAction::Pause)).await.unwrap().unwrap();
    assert_eq!((paused.status, paused.next_run_at), (ScheduleStatus::Paused, None));
    assert_eq!(t.hearth.schedules().fire_due(hearth_core::store::now_ms() + 30 * 24 * HOUR).await.unwrap(), 0);
    // Resumed: due again from now on; what passed while paused is not made up.
    let resumed = t.hearth.schedule_control(&control(ScheduleAction::Resume)).await.unwrap().unwrap();
    assert_eq!(resumed.status, ScheduleStatus::Active);
    assert!(resumed.next_run_at.unwrap() > hearth_core::store::now_ms());
    // Paused again for a month (four Fridays): resumed then, none of them is made up, though
    // the schedule's policy is to run once for missed runs.
    t.hearth.schedule_control(&control(ScheduleAction::Pause)).await.unwrap();
    let later = hearth_core::store::now_ms() + 30 * 24 * HOUR;
    t.hearth.schedules().control(&control(ScheduleAction::Resume), later).await.unwrap();
    assert_eq!(t.hearth.schedules().fire_due(later + 1_000).await.unwrap(), 0);
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 1);
    // Deleted: gone from the list; its task stays as history.
    assert!(t.hearth.schedule_control(&control(ScheduleAction::Delete)).await.unwrap().is_none());
    assert!(t.hearth.schedule_list().await.unwrap().schedules.is_empty());
    assert_eq!(tasks_of(&t.hearth, &view.id).await.len(), 1);
    let err = t.hearth.schedule_control(&control(ScheduleAction::RunNow)).await.unwrap_err().to_string();
    assert!(err.contains("no schedule"), "{err}");
    // A zone Hearth does not know is refused with what to give, and nothing is stored.
    let bad = ScheduleCreateParams { time_zone: "Europe/Atlantis".into(), ..params };
    let err = t.hearth.schedule_create(&bad).await.unwrap_err().to_string();
    assert!(err.contains("IANA"), "{err}");
    assert!(t.hearth.schedule_list().await.unwrap().schedules.is_empty());
}

#[tokio::test]
async fn schedule_task_from_chat_makes_one_schedule_per_call_and_refuses_a_changed_rule() {
    let t = open().await;
    // A chat run the store knows as running, and a tool context of it.
    let thread_id = "thread-schedule";
    let run_id = "run-schedule";
    t.hearth.store().open_run(thread_id, run_id, "remind me", "test", hearth_core::store::threads::RunOrigin::Window).await.unwrap();
    let ctx = t.hearth.toolbox().for_chat(
        thread_id,
        run_id,
        hearth_protocol::approvals::ProposalOrigin::OwnerChat,
        tokio_util::sync::CancellationToken::new(),
    );
    let args = json!({
        "title": "Check the garden",
        "repeat": { "every": "week", "days": ["monday", "tuesday", "wednesday", "thursday", "friday"], "at": "08:00" },
        "timeZone": "Europe/Paris",
    });
    let step = hearth_core::tools::StepId::Call("call-1".into());
    let first = hearth_core::tools::dispatch(&ctx, "schedule_task", &args.to_string(), step.clone()).await;
    assert!(!first.is_error, "{first:?}");
    let again = hearth_core::tools::dispatch(&ctx, "schedule_task", &args.to_string(), step.clone()).await;
    assert_eq!(again.content, first.content, "the same call returns the same schedule");
    let list = t.hearth.schedule_list().await.unwrap().schedules;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].repeat.describe(), "weekdays at 08:00");
    assert_eq!(list[0].missed, MissedRuns::RunOnce);
    let changed = json!({ "title": "Check the garden", "repeat": { "every": "interval", "minutes": 60 } });
    let conflict = hearth_core::tools::dispatch(&ctx, "schedule_task", &changed.to_string(), step).await;
    assert!(conflict.is_error && conflict.content.contains("different schedule"), "{conflict:?}");
    // An ended run schedules nothing.
    t.hearth.store().end_run(run_id, hearth_core::store::threads::RunEnd::Finished).await.unwrap();
    let late =
        hearth_core::tools::dispatch(&ctx, "schedule_task", &args.to_string(), hearth_core::tools::StepId::Call("call-2".into())).await;
    assert!(late.is_error, "{late:?}");
    assert_eq!(t.hearth.schedule_list().await.unwrap().schedules.len(), 1);
}
