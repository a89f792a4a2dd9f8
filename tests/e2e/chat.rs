//! The chat, end to end: streamed answers, the delegate_task card, Stop, and history
//! surviving a restart.

use hearth_testkit::TestHome;

use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_streams_delegates_stops_and_survives_a_restart() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;

    // A greeting streams back from the sample agent.
    session.send("hello").await;
    session.until_texts(".msg-user", "the owner's message shows", |t| t == ["hello"]).await;
    session
        .until_texts(".msg-assistant:not(.streaming)", "the greeting finishes", |t| {
            t.len() == 1 && t[0].starts_with("Hello! I'm Hearth") && t[0].contains("waits for your approval")
        })
        .await;

    // A job becomes a durable task with a delegate_task card and its status.
    session.send("Book a table for two at Luigi's on Friday").await;
    session
        .until_texts(".card-delegate-task .task-title", "the task card shows its title", |t| {
            t == ["Book a table for two at Luigi's on Friday"]
        })
        .await;
    // The worker picks it up at once; with no model configured it waits for the owner.
    session
        .until_texts(".card-delegate-task .task-status", "the task card shows its live status", |t| t == ["waiting input"])
        .await;
    session.until_texts(".msg-assistant:not(.streaming)", "the task reply finishes", |t| t.len() == 2).await;
    session.screenshot("chat").await;

    // Stop during the slow route: the run ends cancelled and the count never finishes.
    session.send("count to 50 slowly").await;
    session.until_texts(".msg-assistant.streaming", "counting starts", |t| t.len() == 1 && t[0].starts_with("1, 2")).await;
    session.find("#stop").await.click().await.unwrap();
    session.until_texts(".run-cancelled", "the cancelled notice shows", |t| t.len() == 1 && t[0].starts_with("Stopped")).await;
    let counted = session.until_texts(".msg-assistant", "the count stopped", |t| t.len() == 3).await;
    assert!(!counted[2].contains("50."), "the count reached 50 after Stop: {}", counted[2]);
    session.find("#send").await;
    session.close().await;

    // A restart shows the same conversation from SQLite.
    let session = Session::start_app(APP, &home).await;
    session
        .until_texts(".msg-user", "history reloads", |t| {
            t == ["hello", "Book a table for two at Luigi's on Friday", "count to 50 slowly"]
        })
        .await;
    session.until_texts(".card-delegate-task .task-status", "the task card reloads", |t| t == ["waiting input"]).await;
    session.until_texts(".run-cancelled", "the cancelled notice reloads", |t| t.len() == 1).await;
    session.close().await;
}
