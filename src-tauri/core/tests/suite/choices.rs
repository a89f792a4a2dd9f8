//! present_choices: a task waits with the options beside its question, the owner's pick is the
//! answer, and the model's next request carries it as the call's result (what the scripted
//! model server received); a chat run ends at the choice. Bad options change nothing.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_core::store::tasks::NewTask;
use hearth_protocol::agui::Event;
use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use serde_json::json;

use super::support::{collect, engine_idle, fast_config, start};

const CHOICE: &str = r#"{"question":"Two shops disagree on the price. Which one?","options":["Shop A: 12 euros","Shop B: 15 euros"]}"#;

async fn with_model(script: Script) -> (Hearth, ModelServer, tempfile::TempDir) {
    let server = ModelServer::start(script).await.unwrap();
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-choices".into())).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    let provider = Arc::new(OpenAiChat::new(&config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap().with_model(provider, "scripted-model");
    (hearth, server, dir)
}

async fn run_once(hearth: &Hearth) {
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
}

#[tokio::test]
async fn a_task_waits_on_its_choice_and_goes_on_with_the_pick() {
    let script = Script::new().turn(Reply::new().tool_call("c1", "present_choices", &[CHOICE])).turn(Reply::new().tool_call(
        "c2",
        "finish_task",
        &[r#"{"result":"Ordered from Shop B."}"#],
    ));
    let (hearth, server, _dir) = with_model(script).await;
    let input = json!({ "title": "Order the filter", "instructions": "Order the cheapest filter." });
    let task = hearth
        .tasks()
        .create(NewTask { idempotency_key: "choice", kind: TaskKind::Agent, title: "Order the filter", input: &input, thread_id: None })
        .await
        .unwrap();
    run_once(&hearth).await;
    let waiting = hearth.task_get(&task.id).await.unwrap().task;
    assert_eq!(waiting.status, TaskStatus::WaitingInput);
    assert_eq!(waiting.question.as_deref(), Some("Two shops disagree on the price. Which one?"));
    assert_eq!(waiting.choices, ["Shop A: 12 euros", "Shop B: 15 euros"]);
    let answer = TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: TaskStatus::WaitingInput,
        expected_attempts: waiting.attempts,
        control: TaskControl::Answer { text: "Shop B: 15 euros".into() },
    };
    let answered = hearth.task_control(&answer).await.unwrap();
    assert!(answered.choices.is_empty(), "no choice is shown once answered");
    run_once(&hearth).await;
    let done = hearth.task_get(&task.id).await.unwrap().task;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    // The second request carried the pick as present_choices' result.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let tool_results: Vec<String> =
        requests[1].body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").map(|m| m["content"].to_string()).collect();
    assert_eq!(tool_results.len(), 1);
    assert!(tool_results[0].contains("Shop B: 15 euros"), "{tool_results:?}");
}

#[tokio::test]
async fn a_chat_run_ends_at_the_choice_and_bad_options_are_refused() {
    let bad = r#"{"question":"Which?","options":["Only one"]}"#;
    let twice = r#"{"question":"Which?","options":["Tea","tea"]}"#;
    let script = Script::new()
        .turn(Reply::new().tool_call("b1", "present_choices", &[bad]).tool_call("b2", "present_choices", &[twice]))
        .turn(Reply::new().tool_call("c1", "present_choices", &[CHOICE]));
    let (hearth, server, _dir) = with_model(script).await;
    let (_, _, events) = start(&hearth, None, "Which shop should I buy the filter from?").await;
    let events = collect(events).await;
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.content.to_text()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("2 to 12 options"), "{results:?}");
    assert!(results[1].contains("given twice"), "{results:?}");
    assert!(results[2].contains("Shop A: 12 euros"), "{results:?}");
    assert!(matches!(events.last(), Some(Event::RunFinished(_))));
    // The run ended at the choice: no third request to the model.
    assert_eq!(server.requests().len(), 2);
}
