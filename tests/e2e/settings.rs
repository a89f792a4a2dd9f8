//! Settings through the webview: configure a model provider (the scripted model server on
//! loopback, speaking OpenAI's real streaming format), test the connection, switch the
//! chat to it and get its answer; turn Hearth's AG-UI endpoint on and see its token; choose
//! the undo window, and take an approved email back from the Inbox before it leaves.

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_is_configured_tested_and_answers_the_chat() {
    let server =
        ModelServer::start(Script::new().turn(Reply::new().text(&["OK"])).turn(Reply::new().text(&["Hello", " from", " the", " model."])))
            .await
            .unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;

    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    let base_url = session.find("#model-base-url").await;
    base_url.clear().await.unwrap();
    base_url.send_keys(&server.base_url()).await.unwrap();
    session.find("#model-name").await.send_keys("scripted-model").await.unwrap();
    session.find("#model-api-key").await.send_keys("sk-e2e-key").await.unwrap();
    session.find("[data-action=save-model]").await.click().await.unwrap();
    session.find("[data-action=test-model]:not([disabled])").await.click().await.unwrap();
    session
        .until_texts(".settings-test-result[data-ok=true]", "the connection test passes", |t| t.len() == 1 && t[0].contains("Connected"))
        .await;
    assert_eq!(server.requests()[0].header("authorization"), Some("Bearer sk-e2e-key"));
    session.find("input[name=agent-mode][value=model]").await.click().await.unwrap();
    session.until_script("return document.querySelector('input[name=agent-mode][value=model]').checked", "model mode is on").await;

    session.find("#endpoint-enabled").await.click().await.unwrap();
    session.until_texts(".endpoint-url", "the endpoint listens", |t| t.len() == 1 && t[0].starts_with("http://127.0.0.1:")).await;
    session
        .until_script("const t = document.querySelector('.endpoint-token'); return !!t && t.value.startsWith('hearth_')", "the token shows")
        .await;
    session.screenshot("settings").await;

    // Undo send: the window the owner types is the one in force.
    let window = session.find("#undo-window-seconds").await;
    window.clear().await.unwrap();
    window.send_keys("30").await.unwrap();
    session.find("[data-action=save-undo-window]").await.click().await.unwrap();
    session.until_texts(".undo-window-now", "the window is saved", |t| t.len() == 1 && t[0].contains("wait 30 s")).await;

    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send("hello").await;
    session
        .until_texts(".msg-assistant:not(.streaming)", "the model answers", |t| t.len() == 1 && t[0].contains("Hello from the model."))
        .await;
    assert_eq!(server.requests().len(), 2, "the chat went to the configured model");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_prepares_an_email_in_chat_and_only_the_owner_sends_it() {
    let email = r#"{"to":["alvarez@riverside-school.example"],"subject":"Re: Community visit","body":"Léa can come. Thank you!"}"#;
    let first = r#"{"to":["alvarez@riverside-school.example"],"subject":"Re: Community visit","body":"Léa cannot come."}"#;
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().text(&["I'll draft it."]).tool_call("call-first", "prepare_email", &[first]))
            .turn(Reply::new().text(&["I'll draft the reply."]).tool_call("call-mail", "prepare_email", &[email])),
    )
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));

    let store = hearth_core::store::Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();

    // The first draft is approved, then taken back from the Inbox inside the undo window (two
    // minutes here, so a slow machine is still inside it): nothing leaves.
    assert!(session.invoke("settings_undo_window_set", r#"{"params":{"seconds":120}}"#).await.starts_with("resolved:"));
    session.send("Tell the school Léa cannot come").await;
    session.find(".approval-card[data-status=awaiting_review] [data-action=approve]").await.click().await.unwrap();
    session.until_texts(".approval-card[data-status=leaving] .approval-leaves-in", "the card counts down", |t| t.len() == 1).await;
    session.find(".nav-item[data-screen=inbox]").await.click().await.unwrap();
    session.find(".inbox-list .notice[data-kind=leaving] ~ [data-action=undo]").await.click().await.unwrap();
    session.until_texts(".notice-undo-outcome", "the Inbox says it was undone", |t| t.len() == 1 && t[0].starts_with("Undone")).await;
    session.screenshot("inbox-undo").await;
    assert_eq!(store.sent_messages().await.unwrap().len(), 0, "Undo sent nothing");
    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.until_texts(".approval-card[data-status=undone] .approval-undone", "the chat's card follows the Undo", |t| t.len() == 1).await;

    session.send("Tell the school Léa can come").await;
    session
        .until_texts(".approval-card[data-status=awaiting_review] .approval-to", "the approval card shows in chat", |t| {
            t.len() == 1 && t[0].contains("alvarez@riverside-school.example")
        })
        .await;
    assert_eq!(store.sent_messages().await.unwrap().len(), 0, "the model only proposed");
    session.screenshot("chat-approval").await;
    session.find(".approval-card[data-status=awaiting_review] [data-action=approve]").await.click().await.unwrap();
    session.find(".approval-card[data-status=leaving] [data-action=send-now]").await.click().await.unwrap();
    session
        .until_texts(".approval-card .approval-receipt", "the receipt shows in chat", |t| {
            t.len() == 1 && t[0].contains("Saved to local sent mail")
        })
        .await;
    let sent = store.sent_messages().await.unwrap();
    assert_eq!(sent.len(), 1, "exactly the approved email left, once");
    assert_eq!(sent[0].body, "Léa can come. Thank you!");
    assert_eq!(server.requests().len(), 2, "each run ended for the owner's review");
    session.close().await;
}
