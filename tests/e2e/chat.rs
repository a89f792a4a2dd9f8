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
    session.until_texts(".card-delegate-task .task-status", "the task card shows its live status", |t| t == ["waiting input"]).await;
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
        .until_texts(".msg-user", "history reloads", |t| t == ["hello", "Book a table for two at Luigi's on Friday", "count to 50 slowly"])
        .await;
    session.until_texts(".card-delegate-task .task-status", "the task card reloads", |t| t == ["waiting input"]).await;
    session.until_texts(".run-cancelled", "the cancelled notice reloads", |t| t.len() == 1).await;
    session.close().await;
}

/// A thread of three history pages: the chat opens on its newest 200 rows, and "Show earlier"
/// reveals the rest of the loaded page, then fetches the pages before, until the thread's first
/// message — every turn shown once, in order (the oracle is the turns written into the log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_thread_opens_on_its_newest_rows_and_shows_earlier_ones_without_gaps() {
    use hearth_core::store::Store;
    use hearth_protocol::agui::Event;

    const TURNS: usize = 400;
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.send("hello").await;
    session.until_texts(".msg-assistant:not(.streaming)", "the sample agent answers", |t| t.len() == 1).await;
    session.close().await;
    // 400 earlier turns of 12 events each (a question, an answer in 8 tokens) written into the
    // thread's log while the app is closed: 4,800 events, three pages of history.
    let store = Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();
    let thread = store.list_threads().await.unwrap().remove(0);
    let events = store.thread_events(&thread.id).await.unwrap();
    let Some(Event::RunStarted(started)) = events.first() else { panic!("the thread starts with {:?}", events.first()) };
    for turn in 0..TURNS {
        for event in turn_events(&thread.id, turn) {
            store.append_event(&thread.id, &started.run_id, &event).await.unwrap();
        }
    }
    store.close().await;

    let session = Session::start_app(APP, &home).await;
    let questions = "return [...document.querySelectorAll('.msg-user')].map(e => e.textContent)";
    let shown = || async {
        let value = session.client.execute(questions, vec![]).await.unwrap();
        serde_json::from_value::<Vec<String>>(value).unwrap()
    };
    let question = |turn: usize| format!("Earlier question number {turn}");
    session.until_texts(".msg-user", "the newest turns show", |t| t.last().is_some_and(|q| q.starts_with(&question(TURNS - 1)))).await;
    let first = shown().await;
    // The newest page (2,004 events: 167 whole turns) holds 334 rows; the chat shows 200.
    assert_eq!(first.len(), 100, "{first:?}");
    let mut clicks = 0;
    let mut before = first.len();
    while session.client.find(fantoccini::Locator::Css("#show-earlier")).await.is_ok() {
        session.find("#show-earlier").await.click().await.unwrap();
        clicks += 1;
        // Counted in the page: reading each of hundreds of rows through WebDriver is slow.
        let more = format!("return document.querySelectorAll('.msg-user').length > {before}");
        session.until_script(&more, "Show earlier shows more").await;
        before = shown().await.len();
        assert!(clicks <= 10, "Show earlier never ran out");
    }
    // Two reveals of loaded rows and two fetches of the pages before.
    assert_eq!(clicks, 4);
    let all = shown().await;
    let mut expected = vec!["hello".to_owned()];
    expected.extend((0..TURNS).map(hearth_testkit::history::question));
    assert_eq!(all, expected, "every turn once, in order");
    session.close().await;
}

/// One earlier turn as the log holds it (`hearth_testkit::history`).
fn turn_events(thread_id: &str, turn: usize) -> Vec<hearth_protocol::agui::Event> {
    hearth_testkit::history::turn(thread_id, turn).into_iter().map(|e| serde_json::from_value(e).unwrap()).collect()
}

/// Delete chat, from the window: after its second step the chat's messages are gone from the
/// database, its browser profile folder from the disk, the chat list no longer has it, and the
/// screen shows the chat that is left. Oracle: the thread's rows and the folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_deleted_from_the_window_loses_its_messages_and_its_profile() {
    use hearth_core::store::Store;

    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.send("hello").await;
    session.until_texts(".msg-assistant:not(.streaming)", "the first chat is answered", |t| t.len() == 1).await;
    session.find("#new-chat").await.click().await.unwrap();
    session.until_texts(".msg-user", "the new chat starts empty", <[String]>::is_empty).await;
    session.send("hi there").await;
    session.until_texts(".msg-user", "the second chat shows its message", |t| t == ["hi there"]).await;
    session.until_texts(".msg-assistant:not(.streaming)", "the second chat is answered", |t| t.len() == 1).await;

    let store = Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();
    let threads = store.list_threads().await.unwrap();
    assert_eq!(threads.len(), 2);
    let (doomed, kept) = (threads[0].id.clone(), threads[1].id.clone());
    assert!(!store.thread_events(&doomed).await.unwrap().is_empty());
    // Its browser profile, as a browse would have left it (no Chromium needed to count a folder).
    let profile = home.data_dir().join("browser").join(format!("thread-{doomed}"));
    std::fs::create_dir_all(profile.join("Default")).unwrap();
    std::fs::write(profile.join("Default").join("Cookies"), b"session=1").unwrap();

    // The first click only asks; Cancel leaves everything as it was.
    session.find("#delete-chat").await.click().await.unwrap();
    session.find("#delete-chat-confirm [data-action=cancel-delete-chat]").await.click().await.unwrap();
    session.find("#delete-chat").await.click().await.unwrap();
    assert!(!store.thread_events(&doomed).await.unwrap().is_empty() && profile.exists());
    session.find("#delete-chat-confirm [data-action=confirm-delete-chat]").await.click().await.unwrap();

    // The screen shows the chat that is left.
    session.until_texts(".msg-user", "the remaining chat is shown", |t| t == ["hello"]).await;
    assert_eq!(store.thread_events(&doomed).await.unwrap().len(), 0, "the deleted chat's messages are gone");
    assert!(!profile.exists(), "the deleted chat's profile folder is gone");
    let left: Vec<String> = store.list_threads().await.unwrap().into_iter().map(|t| t.id.into_string()).collect();
    assert_eq!(left, [kept.as_str()], "the chat list no longer has it");
    assert!(!store.thread_events(&kept).await.unwrap().is_empty(), "the other chat is untouched");
    session.close().await;
}
