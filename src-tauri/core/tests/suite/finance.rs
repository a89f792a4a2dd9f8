//! The finance task: a statement in, the tracker kept and saved once as an artifact (files
//! counted), a chart's totals in the task's detail; a statement Hearth cannot read fails the
//! task with the row and keeps nothing.

use hearth_core::Hearth;
use hearth_core::store::tasks::NewTask;
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use serde_json::json;

use super::support::{engine_idle, open};

async fn run_once(hearth: &Hearth) {
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
}

fn artifacts(hearth: &Hearth) -> usize {
    std::fs::read_dir(hearth.config().data_dir.join("artifacts")).unwrap().count()
}

#[tokio::test]
async fn a_statement_becomes_a_tracker_and_one_artifact() {
    let t = open().await;
    let input = json!({ "title": "Summarize", "csv": hearth_core::finance::SAMPLE_STATEMENT });
    let task = t
        .hearth
        .tasks()
        .create(NewTask { idempotency_key: "finance-1", kind: TaskKind::Finance, title: "Summarize", input: &input, thread_id: None })
        .await
        .unwrap();
    run_once(&t.hearth).await;
    let detail = t.hearth.task_get(&task.id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Succeeded, "{:?}", detail.task.error);
    let tracker = detail.finance.unwrap();
    // Hand-added from the sample: income 2850 + 2850 + 15; spending the rest.
    assert_eq!(tracker.income_cents, 571_500);
    assert_eq!(tracker.count, 18);
    assert_eq!(tracker.categories[0].name, "Housing");
    assert_eq!(tracker.categories[0].cents, 190_000);
    assert_eq!(tracker.months.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["2026-10", "2026-11"]);
    assert_eq!(tracker.income_cents - tracker.spending_cents, tracker.saved_cents);
    assert_eq!(
        tracker.spending_cents,
        95_000 + 4630 + 6120 + 840 + 4900 + 3850 + 1295 + 8310 + 95_000 + 9145 + 2999 + 2200 + 4900 + 3500 + 2780
    );
    assert!(detail.task.result.unwrap().starts_with("18 transactions from 2026-10-01 to 2026-11-28"));
    assert_eq!(artifacts(&t.hearth), 1, "the tracker was saved once");
}

#[tokio::test]
async fn an_unreadable_statement_fails_with_its_row_and_keeps_nothing() {
    let t = open().await;
    let input = json!({ "title": "Summarize", "csv": "date,description,amount\n2026-11-01,Rent,\"1,000.00\"\n" });
    let task = t
        .hearth
        .tasks()
        .create(NewTask { idempotency_key: "finance-bad", kind: TaskKind::Finance, title: "Summarize", input: &input, thread_id: None })
        .await
        .unwrap();
    run_once(&t.hearth).await;
    let detail = t.hearth.task_get(&task.id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Failed);
    assert!(detail.task.error.unwrap().contains("row 2"));
    assert!(detail.finance.is_none());
    assert_eq!(artifacts(&t.hearth), 0);
}

#[tokio::test]
async fn the_sample_agent_summarizes_a_pasted_statement() {
    let t = open().await;
    let text = "Summarize this CSV\ndate,description,amount,category\n2026-11-01,Pay,100.10,Income\n2026-11-02,Lunch,-0.10,Food\n2026-11-03,Tea,-0.20,Food";
    let (_, _, events) = super::support::start(&t.hearth, None, text).await;
    super::support::collect(events).await;
    run_once(&t.hearth).await;
    let tasks = t.hearth.store().list_tasks(10).await.unwrap();
    let finance = tasks.iter().find(|t| t.kind == TaskKind::Finance).unwrap();
    let detail = t.hearth.task_get(&finance.id).await.unwrap();
    let tracker = detail.finance.unwrap();
    assert_eq!((tracker.income_cents, tracker.spending_cents, tracker.saved_cents), (10_010, 30, 9_980));
}

#[tokio::test]
async fn the_owner_pastes_a_statement_in_activity() {
    let t = open().await;
    let params =
        hearth_protocol::finance::FinanceStartParams { csv: "date,description,amount\n2026-11-01,Pay,10\n2026-11-02,Tea,-2.50\n".into() };
    let task = t.hearth.finance_start(&params).await.unwrap();
    run_once(&t.hearth).await;
    let tracker = t.hearth.task_get(&task.id).await.unwrap().finance.unwrap();
    assert_eq!((tracker.income_cents, tracker.spending_cents), (1000, 250));
    let empty = hearth_protocol::finance::FinanceStartParams { csv: "  ".into() };
    assert!(t.hearth.finance_start(&empty).await.is_err());
    assert_eq!(t.hearth.store().list_tasks(10).await.unwrap().len(), 1, "nothing made of an empty paste");
}

// The model's finance tool and a schedule of statement summaries (issue 36, point 6).

use super::doc_index::doc_folder;

const PASTED: &str =
    "date,description,amount,category\n2026-11-01,Pay,100.10,Income\n2026-11-02,Lunch,-0.10,Food\n2026-11-03,Tea,-0.20,Food";

fn finance_tasks(tasks: &[hearth_core::store::tasks::TaskRow]) -> Vec<&hearth_core::store::tasks::TaskRow> {
    tasks.iter().filter(|t| t.kind == TaskKind::Finance).collect()
}

#[tokio::test]
async fn summarize_statement_starts_one_summary_per_step_and_a_changed_one_is_a_conflict() {
    use hearth_core::tools::{StepId, dispatch};
    let t = open().await;
    let ctx = t.hearth.toolbox().for_chat("t-money", "r1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    let args = json!({ "csv": PASTED }).to_string();
    let first = super::support::guarded(dispatch(&ctx, "summarize_statement", &args, StepId::Call("c1".into()))).await;
    assert!(!first.is_error, "{}", first.content);
    let again = super::support::guarded(dispatch(&ctx, "summarize_statement", &args, StepId::Call("c1".into()))).await;
    let task_of = |out: &hearth_core::tools::ToolOutput| serde_json::from_str::<serde_json::Value>(&out.content).unwrap()["taskId"].clone();
    assert_eq!(task_of(&again), task_of(&first), "the same step answers the same task");
    let changed = json!({ "csv": PASTED.replace("100.10", "200.10") }).to_string();
    let conflict = super::support::guarded(dispatch(&ctx, "summarize_statement", &changed, StepId::Call("c1".into()))).await;
    assert!(conflict.is_error && conflict.content.contains("different"), "a changed statement under the same step: {}", conflict.content);
    for bad in [
        json!({}),
        json!({ "csv": PASTED, "fileId": "x" }),
        json!({ "fileId": "no-such-file" }),
        json!({ "fileId": "../etc" }),
        json!({ "documentPath": "/etc/passwd" }),
    ] {
        let out = super::support::guarded(dispatch(&ctx, "summarize_statement", &bad.to_string(), StepId::Call("c2".into()))).await;
        assert!(out.is_error, "{bad}: {}", out.content);
    }
    assert_eq!(finance_tasks(&t.hearth.store().list_tasks(50).await.unwrap()).len(), 1, "one task, however often the step ran");

    run_once(&t.hearth).await;
    let tasks = t.hearth.store().list_tasks(50).await.unwrap();
    let detail = t.hearth.task_get(&finance_tasks(&tasks)[0].id).await.unwrap();
    let tracker = detail.finance.unwrap_or_else(|| panic!("{:?}", detail.task.error));
    assert_eq!((tracker.income_cents, tracker.spending_cents, tracker.count), (10_010, 30, 3));
    assert_eq!(artifacts(&t.hearth), 1);
    assert_eq!(finance_tasks(&tasks)[0].thread_id.as_deref(), Some("t-money"), "it belongs to the chat that asked");
}

#[tokio::test]
async fn a_statement_pdf_in_files_is_summarized_and_a_schedule_sums_a_documents_statement_as_it_is_at_each_run() {
    use hearth_core::tools::{StepId, dispatch};
    use hearth_protocol::schedules::{ScheduleAction, ScheduleControlParams, ScheduledJob};
    let t = open().await;
    let lines: Vec<String> = PASTED.lines().map(str::to_owned).collect();
    let file = t.hearth.files().import("statement-pdf", doc_folder::text_pdf(&lines), "statement.pdf", "test").await.unwrap();
    let ctx = t.hearth.toolbox().for_chat("t-money", "r1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());

    let out = super::support::guarded(dispatch(
        &ctx,
        "summarize_statement",
        &json!({ "fileId": file.id }).to_string(),
        StepId::Call("c1".into()),
    ))
    .await;
    assert!(!out.is_error, "{}", out.content);
    run_once(&t.hearth).await;
    let tasks = t.hearth.store().list_tasks(50).await.unwrap();
    let detail = t.hearth.task_get(&finance_tasks(&tasks)[0].id).await.unwrap();
    let tracker = detail.finance.unwrap_or_else(|| panic!("the PDF's statement was read: {:?}", detail.task.error));
    assert_eq!((tracker.income_cents, tracker.spending_cents, tracker.count), (10_010, 30, 3));

    // A monthly summary of a statement in the owner's document folders, which the bank's export
    // overwrites: each run reads it as the index holds it then.
    let docs = tempfile::tempdir().unwrap();
    let statement = docs.path().join("statement.csv");
    std::fs::write(&statement, PASTED).unwrap();
    let folder = hearth_protocol::documents::DocFolderAddParams { path: docs.path().to_string_lossy().into_owned() };
    t.hearth.document_folder_add(&folder).await.unwrap();
    let path = statement.to_string_lossy().into_owned();
    let schedule = |args: serde_json::Value, step: &'static str| {
        let ctx = &ctx;
        async move { super::support::guarded(dispatch(ctx, "schedule_task", &args.to_string(), StepId::Call(step.into()))).await }
    };
    let repeat = json!({ "every": "month", "day": 1, "at": "08:00" });
    let without = schedule(json!({ "title": "Monthly money", "job": "finance", "repeat": repeat }), "s1").await;
    assert!(without.is_error && without.content.contains("documentPath"), "{}", without.content);
    let stray = schedule(json!({ "title": "Nudge", "job": "reminder", "documentPath": path, "repeat": repeat }), "s2").await;
    assert!(stray.is_error, "{}", stray.content);
    let outside = schedule(json!({ "title": "Sneaky", "job": "finance", "documentPath": "/etc/hostname", "repeat": repeat }), "s3").await;
    assert!(outside.is_error, "only an indexed document: {}", outside.content);
    let args = json!({ "title": "Monthly money", "job": "finance", "documentPath": path, "repeat": repeat, "timeZone": "UTC" });
    let made = schedule(args, "s4").await;
    assert!(!made.is_error, "{}", made.content);
    let schedules = t.hearth.schedule_list().await.unwrap().schedules;
    assert_eq!((schedules.len(), schedules[0].job), (1, ScheduledJob::Finance));

    // The bank overwrites the file; the index follows (a rescan here), and Run now sums the new one.
    std::fs::write(&statement, PASTED.replace("100.10", "1250.00")).unwrap();
    t.hearth.document_rescan().await.unwrap();
    let control = ScheduleControlParams {
        schedule_id: schedules[0].id.clone(),
        action: ScheduleAction::RunNow,
        operation_id: Some(hearth_protocol::ids::OperationId::parse("press-1").unwrap()),
    };
    t.hearth.schedule_control(&control).await.unwrap();
    run_once(&t.hearth).await;
    let tasks = t.hearth.store().list_tasks(50).await.unwrap();
    let runs = finance_tasks(&tasks);
    assert_eq!(runs.len(), 2, "the chat's summary and the schedule's one run");
    let scheduled = runs.iter().find(|r| r.input.get("scheduleId").is_some()).unwrap();
    let detail = t.hearth.task_get(&scheduled.id).await.unwrap();
    let tracker = detail.finance.unwrap_or_else(|| panic!("{:?}", detail.task.error));
    assert_eq!(
        tracker.income_cents, 125_000,
        "the run read the statement as it is now (a longer file: the index sees the change by its size)"
    );
    assert_eq!(artifacts(&t.hearth), 2);
}
