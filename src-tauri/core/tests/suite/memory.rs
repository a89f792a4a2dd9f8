//! Memory: among 1,000 facts the relevant ones reach the model, within the cap; a forgotten
//! fact never reaches a later request; remember_fact keeps one fact per step. The oracle is
//! what the scripted model server received.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::memory::{MAX_RECALLED, RECALL_CHAR_CAP};
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_protocol::memory::{MemoryForgetParams, MemorySaveParams, MemorySource};
use hearth_testkit::model_server::{ModelServer, Reply, Script};

use super::support::{collect, fast_config, start};

async fn with_model(script: Script) -> (Hearth, ModelServer, tempfile::TempDir) {
    let server = ModelServer::start(script).await.unwrap();
    let config = ProviderConfig::new("Scripted", server.base_url(), Some("sk-memory".into())).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    let provider = Arc::new(OpenAiChat::new(&config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap().with_model(provider, "scripted-model");
    (hearth, server, dir)
}

/// The system prompt of request `n`.
fn system_of(server: &ModelServer, n: usize) -> String {
    server.requests()[n].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

/// The facts a system prompt carried.
fn facts_in(system: &str) -> Vec<String> {
    system
        .split_once("(notes, not instructions):")
        .map_or_else(Vec::new, |(_, facts)| facts.lines().filter_map(|l| l.strip_prefix("- ")).map(str::to_owned).collect())
}

async fn save(hearth: &Hearth, text: &str) -> i64 {
    hearth.memory_save(&MemorySaveParams { id: None, text: text.into() }).await.unwrap().id
}

#[tokio::test]
async fn among_a_thousand_facts_the_relevant_ones_go_out_within_the_cap_and_a_forgotten_one_never_again() {
    let script =
        Script::new().turn(Reply::new().text(&["Noted."])).turn(Reply::new().text(&["Noted again."])).turn(Reply::new().text(&["Hello."]));
    let (hearth, server, _dir) = with_model(script).await;
    // 975 facts about other things, 20 that share only the word "dinner" with the question
    // (more than the cap), and five that matter more.
    for i in 0..975 {
        save(&hearth, &format!("Fact {i}: the blue folder number {i} sits on shelf {} in the garage.", i % 40)).await;
    }
    for i in 0..20 {
        save(&hearth, &format!("The dinner plates of set {i} are in the garage.")).await;
    }
    let vegetarian = save(&hearth, "I'm vegetarian: no meat at dinner, and no fish either.").await;
    let allergy = save(&hearth, "Sam is allergic to peanuts: never cook with peanut sauce for dinner.").await;
    let _thai = save(&hearth, "Our favourite restaurant for dinner is the Thai place on Elm Street.").await;
    let _cook = save(&hearth, "On Fridays Alex cooks dinner.").await;
    let _budget = save(&hearth, "Keep the dinner budget under 30 euros.").await;
    assert_eq!(hearth.memory_list().await.unwrap().memories.len(), 1000);

    let (_, _, events) = start(&hearth, None, "What should we cook for dinner tonight? Nothing with meat.").await;
    collect(events).await;
    let sent = facts_in(&system_of(&server, 0));
    assert!(sent.iter().any(|f| f.starts_with("I'm vegetarian")), "{sent:?}");
    assert!(sent.iter().any(|f| f.starts_with("Sam is allergic")), "{sent:?}");
    assert!(sent.iter().all(|f| f.contains("dinner")), "only relevant facts: {sent:?}");
    assert_eq!(sent.len() as i64, MAX_RECALLED, "25 facts share a word; the cap holds");
    assert!(sent.iter().map(|f| f.chars().count()).sum::<usize>() <= RECALL_CHAR_CAP);
    // The Memory screen shows which facts that request carried.
    let uses = hearth.memory_list().await.unwrap().uses;
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].memory_ids.len(), sent.len());
    assert!(uses[0].memory_ids.contains(&vegetarian) && uses[0].memory_ids.contains(&allergy));

    // Forgotten: gone from the list, the index, the record of uses, and the next request.
    let after = hearth.memory_forget(&MemoryForgetParams { id: vegetarian }).await.unwrap();
    assert_eq!(after.memories.len(), 999);
    assert!(after.uses.iter().all(|u| !u.memory_ids.contains(&vegetarian)));
    let (_, _, events) = start(&hearth, None, "And what do we cook for dinner tomorrow, still no meat?").await;
    collect(events).await;
    let sent = facts_in(&system_of(&server, 1));
    assert!(!sent.iter().any(|f| f.contains("vegetarian")), "a forgotten fact went out: {sent:?}");
    assert!(sent.iter().any(|f| f.starts_with("Sam is allergic")), "{sent:?}");
    let later: Vec<String> = server.requests().iter().skip(1).map(|r| r.body.to_string()).collect();
    assert!(!later.iter().any(|b| b.contains("vegetarian")), "{later:?}");
    // A message that shares no word with any fact carries none.
    let (_, _, events) = start(&hearth, None, "Good morning!").await;
    collect(events).await;
    assert!(facts_in(&system_of(&server, 2)).is_empty(), "{}", system_of(&server, 2));
    assert_eq!(hearth.memory_list().await.unwrap().uses.len(), 2, "the third request carried nothing to record");
}

#[tokio::test]
async fn a_corrected_fact_goes_out_as_corrected() {
    let (hearth, server, _dir) = with_model(Script::new().turn(Reply::new().text(&["Ok."]))).await;
    let id = save(&hearth, "The garden gate code is 1234.").await;
    hearth.memory_save(&MemorySaveParams { id: Some(id), text: "The garden gate code is 4321.".into() }).await.unwrap();
    let (_, _, events) = start(&hearth, None, "What is the garden gate code?").await;
    collect(events).await;
    assert_eq!(facts_in(&system_of(&server, 0)), ["The garden gate code is 4321."]);
    let bad = hearth.memory_save(&MemorySaveParams { id: None, text: "x".repeat(2_001) }).await.unwrap_err().to_string();
    assert!(bad.contains("2000") || bad.contains("2,000"), "{bad}");
}

#[tokio::test]
async fn remember_fact_keeps_one_fact_per_step_and_the_sample_agent_uses_it() {
    let t = super::support::open().await;
    let (_, _, events) = start(&t.hearth, None, "Remember that I'm vegetarian").await;
    let events = collect(events).await;
    assert!(super::support::text_of(&events).contains("I'll remember"), "{}", super::support::text_of(&events));
    let facts = t.hearth.memory_list().await.unwrap().memories;
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "I'm vegetarian");
    assert_eq!(facts[0].source, MemorySource::Agent);
    // The same call again (a retry of its step) keeps no second fact.
    let thread_id = "thread-memory";
    let run_id = "run-memory";
    t.hearth.store().open_run(thread_id, run_id, "remember", "test", hearth_core::store::threads::RunOrigin::Window).await.unwrap();
    let ctx = t.hearth.toolbox().for_chat(
        thread_id,
        run_id,
        hearth_protocol::approvals::ProposalOrigin::OwnerChat,
        tokio_util::sync::CancellationToken::new(),
    );
    let step = hearth_core::tools::StepId::Call("c1".into());
    let args = r#"{"text":"Sam is allergic to peanuts"}"#;
    let first = hearth_core::tools::dispatch(&ctx, "remember_fact", args, step.clone()).await;
    let again = hearth_core::tools::dispatch(&ctx, "remember_fact", args, step.clone()).await;
    assert!(!first.is_error && first.content == again.content, "{first:?} {again:?}");
    let changed = hearth_core::tools::dispatch(&ctx, "remember_fact", r#"{"text":"Sam likes peanuts"}"#, step).await;
    assert!(changed.is_error && changed.content.contains("different fact"), "{changed:?}");
    assert_eq!(t.hearth.memory_list().await.unwrap().memories.len(), 2);
    // Forgotten, then the same step retried: it stays forgotten.
    let sam = t.hearth.memory_list().await.unwrap().memories.into_iter().find(|m| m.text.starts_with("Sam")).unwrap();
    t.hearth.memory_forget(&MemoryForgetParams { id: sam.id }).await.unwrap();
    let retried = hearth_core::tools::dispatch(&ctx, "remember_fact", args, hearth_core::tools::StepId::Call("c1".into())).await;
    assert!(retried.is_error && retried.content.contains("forget"), "{retried:?}");
    assert_eq!(t.hearth.memory_list().await.unwrap().memories.len(), 1);
    // Once the run has ended it keeps nothing.
    t.hearth.store().end_run(run_id, hearth_core::store::threads::RunEnd::Finished).await.unwrap();
    let late =
        hearth_core::tools::dispatch(&ctx, "remember_fact", r#"{"text":"late"}"#, hearth_core::tools::StepId::Call("c2".into())).await;
    assert!(late.is_error, "{late:?}");
    assert_eq!(t.hearth.memory_list().await.unwrap().memories.len(), 1);
}
