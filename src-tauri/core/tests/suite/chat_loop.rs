//! The chat loop through a real provider client (OpenAI Chat Completions) against the
//! scripted model server: streamed text, tools run serially with their results sent back,
//! "paused" after a proposal, malformed arguments the model can recover from, Stop that
//! drops the connection, the 6-step limit, and a provider error shown plainly.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::agent::{CONTINUE_NOTE, MAX_TOOL_STEPS};
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_core::tools::PAUSED_RESULT;
use hearth_protocol::agui::Event;
use hearth_testkit::model_server::{End, HttpError, ModelServer, Reply, Script, ScriptedCall};
use serde_json::Value;

use super::support::{collect, fast_config, settled, start, text_of};

struct Chat {
    hearth: Hearth,
    server: ModelServer,
    _dir: tempfile::TempDir,
}

async fn chat(script: Script) -> Chat {
    let server = ModelServer::start(script).await.unwrap();
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-chat-loop-key".into())).with_retry(RetryPolicy {
        max_retries: 2,
        base_delay: Duration::ZERO,
        max_delay: Duration::from_millis(10),
    });
    let provider = Arc::new(OpenAiChat::new(&config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap().with_model(provider, "scripted-model");
    Chat { hearth, server, _dir: dir }
}

fn results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.content.to_text()),
            _ => None,
        })
        .collect()
}

/// The `tool` messages the model received in request `n`.
fn tool_messages(server: &ModelServer, n: usize) -> Vec<Value> {
    let body = &server.requests()[n].body;
    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").cloned().collect()
}

#[tokio::test]
async fn text_streams_and_the_rules_and_tools_reach_the_model() {
    let c = chat(Script::new().turn(Reply::new().text(&["Hello", " from the", " model."]))).await;
    let (_, _, events) = start(&c.hearth, None, "hi").await;
    let events = collect(events).await;
    assert_eq!(text_of(&events), "Hello from the model.");
    assert!(matches!(events.last(), Some(Event::RunFinished(_))));
    let request = &c.server.requests()[0].body;
    assert!(request["messages"][0]["content"].as_str().unwrap().contains("untrusted data"), "the system prompt carries the rules");
    let tools: Vec<&str> = request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"search_mail") && tools.contains(&"prepare_email"), "{tools:?}");
}

#[tokio::test]
async fn a_tool_result_reaches_the_model_in_the_next_request() {
    let c = chat(
        Script::new()
            .turn(Reply::new().tool_call("call-1", "search_mail", &["{\"query\":", " \"permission\"}"]))
            .turn(Reply::new().text(&["The school sent a permission form."])),
    )
    .await;
    let (_, _, events) = start(&c.hearth, None, "did the school write?").await;
    let events = collect(events).await;
    assert_eq!(text_of(&events), "The school sent a permission form.");
    let sent_back = tool_messages(&c.server, 1);
    assert_eq!(sent_back.len(), 1);
    assert_eq!(sent_back[0]["tool_call_id"], "call-1");
    assert!(sent_back[0]["content"].as_str().unwrap().contains("msg-school-1"), "{sent_back:?}");
    assert_eq!(c.server.requests().len(), 2);
}

#[tokio::test]
async fn parallel_calls_run_in_order_and_stop_after_a_proposal() {
    let email = r#"{"to":["alvarez@riverside-school.example"],"subject":"Re: visit","body":"Form attached."}"#;
    let c = chat(Script::new().turn(Reply::new().parallel_tool_calls(vec![
        ScriptedCall::new("call-a", "prepare_email", &[email]),
        ScriptedCall::new("call-b", "search_mail", &["{\"query\":\"dentist\"}"]),
    ])))
    .await;
    let (_, _, events) = start(&c.hearth, None, "reply to the school").await;
    let events = collect(events).await;
    let results = results(&events);
    assert_eq!(results.len(), 2);
    assert!(results[0].contains("awaiting_review"), "{}", results[0]);
    assert!(results[1].contains(PAUSED_RESULT), "{}", results[1]);
    assert!(matches!(events.last(), Some(Event::RunFinished(_))));
    assert_eq!(c.server.requests().len(), 1, "the run ended for the owner's review");
    assert_eq!(c.hearth.approval_list().await.unwrap().len(), 1);
    assert_eq!(c.hearth.store().sent_messages().await.unwrap().len(), 0, "the model can only propose");
}

#[tokio::test]
async fn malformed_arguments_get_a_tool_error_the_model_recovers_from() {
    let c = chat(
        Script::new()
            .turn(Reply::new().tool_call("call-1", "search_mail", &["{\"query\": \"perm"]))
            .turn(Reply::new().text(&["Let me try that again later."])),
    )
    .await;
    let (_, _, events) = start(&c.hearth, None, "search my mail").await;
    let events = collect(events).await;
    let results = results(&events);
    assert!(results[0].contains("not valid JSON"), "{results:?}");
    assert_eq!(text_of(&events), "Let me try that again later.");
    assert!(matches!(events.last(), Some(Event::RunFinished(_))), "not a crashed run");
    assert!(tool_messages(&c.server, 1)[0]["content"].as_str().unwrap().contains("not valid JSON"));
}

#[tokio::test]
async fn stop_mid_stream_drops_the_provider_request() {
    let c = chat(
        Script::new()
            .turn(Reply::new().text(&["One", " two", " three"]).chunk_delay(Duration::from_millis(20)).end(End::HoldUntilDisconnect)),
    )
    .await;
    let (_, run_id, mut events) = start(&c.hearth, None, "count").await;
    // Wait for the first streamed text, then press Stop.
    loop {
        match events.recv().await {
            Some(Event::TextMessageContent(_)) => break,
            Some(_) => {}
            None => panic!("the run ended before any text"),
        }
    }
    assert!(c.hearth.stop_run(&run_id));
    c.server.wait_for_disconnects(1).await;
    let rest = collect(events).await;
    let last = rest.last().unwrap();
    assert!(serde_json::to_string(last).unwrap().contains("cancelled"), "{last:?}");
    settled(&c.hearth).await;
}

#[tokio::test]
async fn six_tool_steps_then_say_continue() {
    let mut script = Script::new();
    for n in 0..MAX_TOOL_STEPS + 1 {
        script = script.turn(Reply::new().tool_call(&format!("call-{n}"), "agent_status", &["{}"]));
    }
    let c = chat(script).await;
    let (_, _, events) = start(&c.hearth, None, "keep checking").await;
    let events = collect(events).await;
    assert_eq!(results(&events).len(), MAX_TOOL_STEPS);
    assert_eq!(c.server.requests().len(), MAX_TOOL_STEPS);
    assert!(text_of(&events).contains(CONTINUE_NOTE));
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_a_plain_message() {
    let c = chat(Script::new().turn(HttpError::unauthorized())).await;
    let (_, _, events) = start(&c.hearth, None, "hello").await;
    let events = collect(events).await;
    let Some(Event::RunError(error)) = events.last() else { panic!("{events:?}") };
    assert!(error.message.contains("401"), "{}", error.message);
    assert!(!error.message.contains("sk-chat-loop-key"));
}

#[tokio::test]
async fn a_delegated_task_runs_with_the_model_and_finishes_through_its_tools() {
    let c = chat(
        Script::new()
            .turn(Reply::new().tool_call("c1", "delegate_task", &[r#"{"title":"Find a plumber","instructions":"Get two quotes."}"#]))
            .turn(Reply::new().text(&["I saved it as a task."]))
            .turn(Reply::new().tool_call("t1", "set_plan", &[r#"{"steps":["Search","Compare"]}"#]))
            .turn(Reply::new().tool_call("t2", "finish_task", &[r#"{"result":"Two quotes found."}"#])),
    )
    .await;
    let (_, _, events) = start(&c.hearth, None, "find me a plumber").await;
    collect(events).await;
    let engine = c.hearth.tasks();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    super::support::engine_idle(engine, &mut changes).await;
    let tasks = c.hearth.task_list().await.unwrap().tasks;
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    assert_eq!(task.status, hearth_protocol::tasks::TaskStatus::Succeeded, "{:?}", task.error);
    assert_eq!(task.result.as_deref(), Some("Two quotes found."));
    assert_eq!(task.plan.len(), 2);
    assert_eq!(c.server.requests().len(), 4);
    let brief = c.server.requests()[2].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(brief.contains("Find a plumber") && brief.contains("Get two quotes."), "{brief}");
    assert_eq!(tool_messages(&c.server, 3)[0]["tool_call_id"], "t1", "the plan's result reached the model");
}

/// The conversation a Send builds is kept and extended by what the log gained since (the
/// third Send reads only the second turn's events): it must equal the whole log's, turn by
/// turn, and another thread's Send in between must not mix into it.
#[tokio::test]
async fn each_send_sees_every_earlier_turn_when_the_conversation_is_kept_between_sends() {
    let c = chat(
        Script::new()
            .turn(Reply::new().text(&["One."]))
            .turn(Reply::new().text(&["Two."]))
            .turn(Reply::new().text(&["Other."]))
            .turn(Reply::new().text(&["Three."])),
    )
    .await;
    let (thread_id, _, events) = start(&c.hearth, None, "first?").await;
    collect(events).await;
    settled(&c.hearth).await;
    // "second?" keeps the thread's conversation; another thread's Send comes between it and
    // "third?", which then reads only what the thread's log gained.
    for (thread, text) in [(Some(thread_id.as_str()), "second?"), (None, "elsewhere?"), (Some(thread_id.as_str()), "third?")] {
        let (_, _, events) = start(&c.hearth, thread, text).await;
        collect(events).await;
        settled(&c.hearth).await;
    }
    let contents = |n: usize| -> Vec<(String, String)> {
        c.server.requests()[n].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1) // the system prompt
            .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap_or_default().to_owned()))
            .collect()
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> { list.iter().map(|(r, t)| ((*r).to_owned(), (*t).to_owned())).collect() };
    assert_eq!(contents(1), pairs(&[("user", "first?"), ("assistant", "One."), ("user", "second?")]));
    assert_eq!(contents(2), pairs(&[("user", "elsewhere?")]));
    assert_eq!(
        contents(3),
        pairs(&[("user", "first?"), ("assistant", "One."), ("user", "second?"), ("assistant", "Two."), ("user", "third?")])
    );
    // The kept conversation is the whole log's.
    let mut whole = hearth_core::agent::conversation_from_events(&c.hearth.thread_history(&thread_id).await.unwrap().events);
    assert_eq!(whole.len(), 6, "{whole:#?}");
    whole.truncate(5);
    let sent: Vec<String> = contents(3).into_iter().map(|(_, text)| text).collect();
    let logged: Vec<String> = whole
        .iter()
        .map(|m| match m {
            hearth_protocol::agui::Message::User(u) => serde_json::to_value(&u.content).unwrap().as_str().unwrap_or_default().to_owned(),
            hearth_protocol::agui::Message::Assistant(a) => a.content.clone().unwrap_or_default(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(sent, logged);
}

#[tokio::test]
async fn the_model_sees_the_earlier_turns_of_the_thread() {
    let c = chat(
        Script::new()
            .turn(Reply::new().text(&["Let me look."]).tool_call("call-1", "agent_status", &["{}"]))
            .turn(Reply::new().text(&["You have no tasks."]))
            .turn(Reply::new().text(&["Still none."])),
    )
    .await;
    let (thread_id, _, events) = start(&c.hearth, None, "any tasks?").await;
    collect(events).await;
    settled(&c.hearth).await;
    let (_, _, events) = start(&c.hearth, Some(&thread_id), "and now?").await;
    assert_eq!(text_of(&collect(events).await), "Still none.");
    let messages = c.server.requests()[2].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "user"], "{messages:#?}");
    assert_eq!(messages[1]["content"], "any tasks?");
    assert_eq!(messages[2]["content"], "Let me look.");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call-1");
    assert_eq!(messages[3]["tool_call_id"], "call-1");
    assert_eq!(messages[4]["content"], "You have no tasks.");
    assert_eq!(messages[5]["content"], "and now?");
    // The log stores each turn once: the second run's input holds only its own message.
    let history = c.hearth.thread_history(&thread_id).await.unwrap().events;
    let inputs: Vec<usize> = history
        .iter()
        .filter_map(|e| match e {
            Event::RunStarted(s) => s.input.as_ref().map(|i| i.messages.len()),
            _ => None,
        })
        .collect();
    assert_eq!(inputs, [1, 1]);
}
