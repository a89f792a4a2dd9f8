//! The tool path: serial execution in order, "paused" after an outcome, recoverable errors,
//! and effects through the journal — counted in rows and files.

use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{PAUSED_RESULT, RunOutcome, ToolCall, run_serially};
use hearth_protocol::tasks::{StepStatus, TaskKind, TaskStatus};
use serde_json::{Value, json};

use super::support::{engine_idle, new_task, open};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

/// Runs `calls` as one model turn inside a task; returns the outputs and the task after.
async fn in_a_task(calls: Vec<ToolCall>) -> (Vec<(String, Value, bool)>, hearth_core::store::tasks::TaskRow, super::support::TestHearth) {
    let t = open().await;
    let engine = t.hearth.tasks().clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let hearth = t.hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let calls = calls.clone();
        let tx = tx.lock().unwrap().take();
        let tools = hearth.toolbox().for_task(ctx);
        async move {
            let outputs = run_serially(&tools, &calls, 0).await;
            let outcome = outputs.iter().find_map(|(_, o)| o.outcome.clone());
            let seen: Vec<(String, Value, bool)> =
                outputs.into_iter().map(|(id, o)| (id, serde_json::from_str(&o.content).unwrap(), o.is_error)).collect();
            if let Some(tx) = tx {
                let _ = tx.send(seen);
            }
            match outcome {
                Some(RunOutcome::WaitingInput(q)) => TaskOutcome::WaitingInput(q),
                Some(RunOutcome::WaitingApproval(a)) => TaskOutcome::WaitingApproval(a),
                Some(RunOutcome::Finished(r)) => TaskOutcome::Succeeded(r),
                Some(RunOutcome::InDoubt(why)) => TaskOutcome::Interrupted(why),
                None => TaskOutcome::Succeeded("no outcome".into()),
            }
        }
    });
    let input = json!({});
    let task = engine.create(new_task("tools", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(&engine, &mut changes).await;
    let outputs = rx.await.unwrap();
    let after = t.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    (outputs, after, t)
}

#[tokio::test]
async fn parallel_calls_run_in_order_and_stop_after_an_outcome() {
    let (outputs, task, t) = in_a_task(vec![
        call("c1", "set_plan", r#"{"steps":["Find the form","Fill it"]}"#),
        call("c2", "ask_user", r#"{"question":"Who is the guardian?"}"#),
        call("c3", "delegate_task", r#"{"title":"should not exist"}"#),
        call("c4", "finish_task", r#"{"result":"should not finish"}"#),
    ])
    .await;
    let ids: Vec<&str> = outputs.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    assert_eq!(outputs[0].1, json!({ "steps": 2 }));
    assert_eq!(outputs[1].1, json!({ "asked": "Who is the guardian?" }));
    for (_, value, is_error) in &outputs[2..] {
        assert_eq!(value, &json!({ "error": PAUSED_RESULT }));
        assert!(is_error);
    }
    assert_eq!(t.hearth.store().count_tasks().await.unwrap(), 1, "the paused delegate_task created nothing");
    assert_eq!(task.status, TaskStatus::WaitingInput);
    assert_eq!(task.question.as_deref(), Some("Who is the guardian?"));
    assert_eq!(task.plan.len(), 2);
    assert_eq!(task.plan[0].status, StepStatus::Pending);
}

#[tokio::test]
async fn malformed_and_unknown_calls_get_errors_the_model_can_use() {
    let (outputs, task, _t) = in_a_task(vec![
        call("c1", "set_plan", r#"{"steps": ["unterminated"#),
        call("c2", "set_plan", r#"["not","an","object"]"#),
        call("c3", "weather_lookup", "{}"),
        call("c4", "set_plan", r#"{"steps": []}"#),
        call("c5", "finish_task", r#"{"result":"recovered"}"#),
    ])
    .await;
    assert!(outputs[0].1["error"].as_str().unwrap().contains("not valid JSON"));
    assert!(outputs[1].1["error"].as_str().unwrap().contains("must be a JSON object"));
    assert!(outputs[2].1["error"].as_str().unwrap().contains("no tool named"));
    assert!(outputs[3].1["error"].as_str().unwrap().contains("1 to 20 steps"));
    assert!(outputs[..4].iter().all(|(_, _, e)| *e));
    assert_eq!(task.status, TaskStatus::Succeeded, "the run recovered and finished");
    assert_eq!(task.result.as_deref(), Some("recovered"));
}

/// One step of a task writes its artifact once, however often the step is retried; the
/// same step with changed content is a conflict. Counted in files on disk.
#[tokio::test]
async fn save_artifact_writes_once_per_task_step() {
    let t = open().await;
    let engine = t.hearth.tasks().clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let hearth = t.hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = hearth.toolbox().for_task(ctx);
        let tx = tx.lock().unwrap().take();
        async move {
            let save = |content: &str| json!({ "name": "../notes.md", "content": content }).to_string();
            let mut seen = Vec::new();
            for content in ["hello", "hello", "changed"] {
                // The same task step each time, as a retried run would ask it.
                let out = hearth_core::tools::dispatch(&tools, "save_artifact", &save(content), hearth_core::tools::StepId::Step(0)).await;
                seen.push((serde_json::from_str::<Value>(&out.content).unwrap(), out.is_error));
            }
            if let Some(tx) = tx {
                let _ = tx.send(seen);
            }
            TaskOutcome::Succeeded("saved".into())
        }
    });
    let input = json!({});
    let task = engine.create(new_task("artifact", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(&engine, &mut changes).await;
    let outputs = rx.await.unwrap();
    assert!(!outputs[0].1 && !outputs[1].1, "{outputs:?}");
    assert_eq!(outputs[0].0, outputs[1].0, "the retry returned the same receipt");
    assert!(outputs[2].0["error"].as_str().unwrap().contains("different content"), "{:?}", outputs[2]);
    let dir = t.dir.path().join("artifacts");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 1, "one file on disk");
    let path = outputs[0].0["path"].as_str().unwrap();
    assert!(path.starts_with(dir.to_str().unwrap()) && path.ends_with("_notes.md"), "{path}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), "hello");
    let task = t.hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(task.state["artifacts"]["_notes.md"]["bytes"], json!(5));
}

#[tokio::test]
async fn read_workspace_and_agent_status_report_what_is_there() {
    let (outputs, _task, _t) = in_a_task(vec![call("c1", "read_workspace", ""), call("c2", "agent_status", "{}")]).await;
    let workspace = &outputs[0].1;
    assert_eq!(workspace["untrustedData"], json!(true));
    assert!(workspace["inbox"]["messages"].as_u64().unwrap() >= 6);
    assert_eq!(workspace["attachments"][0]["name"], json!("permission-form.pdf"));
    assert_eq!(outputs[1].1["tasks"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn every_tool_has_a_schema_and_refuses_unknown_fields() {
    let t = open().await;
    let ctx = t.hearth.toolbox().for_chat("thread-1", "run-1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    let specs = hearth_core::tools::tool_specs(hearth_core::tools::Vision::Images);
    assert_eq!(specs.len(), hearth_protocol::ToolName::ALL.len(), "every tool has a handler and a schema");
    // A model that reads no images is not offered the one tool that shows pictures.
    let text_only = hearth_core::tools::tool_specs(hearth_core::tools::Vision::TextOnly);
    assert_eq!(text_only.len(), specs.len() - 1);
    assert!(!text_only.iter().any(|s| s.name == "look_page"));
    for tool in hearth_protocol::ToolName::ALL {
        let spec = specs.iter().find(|s| s.name == tool.as_str());
        let output =
            hearth_core::tools::dispatch(&ctx, tool.as_str(), "{\"unexpectedField\":1}", hearth_core::tools::StepId::Call("c".into()))
                .await;
        // Every tool refuses the unknown field, by name.
        assert!(output.is_error && output.content.contains("unexpectedField"), "{tool}: {}", output.content);
        let spec = spec.unwrap_or_else(|| panic!("{tool} has no schema"));
        assert_eq!(spec.parameters["type"], "object", "{tool}");
        assert!(!spec.description.is_empty());
    }
    let email = specs.iter().find(|s| s.name == "prepare_email").unwrap();
    for field in ["to", "cc", "bcc", "subject", "body", "attachmentIds", "threadId"] {
        assert!(email.parameters["properties"].get(field).is_some(), "prepare_email's schema has {field}");
    }
}
