//! Schedules and the inbox, end to end: the sample agent makes a reminder from a chat message
//! (its card), Activity lists it, Run now makes a run whose notice raises the Inbox badge,
//! opening the notice shows the task and clears the badge, and the owner makes a schedule with
//! the form.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_made_in_chat_runs_now_and_its_notice_opens_the_task() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;

    session.send("Remind me every morning to check the garden").await;
    session
        .until_texts(".card-schedule .schedule-title", "the schedule card shows", |t| t == ["Check the garden"])
        .await;
    session.until_texts(".card-schedule .schedule-rule", "in words", |t| t.len() == 1 && t[0].starts_with("every day at 08:00")).await;
    session.find(".card-schedule .open-schedules").await.click().await.unwrap();
    session
        .until_texts(".schedule .schedule-title", "Activity lists the schedule", |t| t == ["Check the garden"])
        .await;
    session.until_texts(".schedule .schedule-next", "with its next run", |t| t.len() == 1 && t[0].starts_with("Next:")).await;
    assert!(session.client.find(fantoccini::Locator::Css("#inbox-badge")).await.is_err(), "nothing unread yet");

    // Run now: a reminder task runs at once; its success is the notice.
    session.find(".schedule [data-action=run-now]").await.click().await.unwrap();
    session.until_texts("#inbox-badge", "the badge counts the reminder", |t| t == ["1"]).await;
    session
        .until_texts(".schedule .schedule-run", "the run is on the schedule's record", |t| {
            t.len() == 1 && t[0].contains("run now") && t[0].contains("succeeded")
        })
        .await;
    session.find("[data-screen=inbox]").await.click().await.unwrap();
    session
        .until_texts(".notice[data-kind=reminder] .notice-body", "the inbox shows what to do", |t| t == ["Check the garden"])
        .await;
    session.screenshot("inbox").await;
    session.find(".notice[data-kind=reminder]").await.click().await.unwrap();
    session
        .until_texts(".task-detail .task-status", "the notice opens its task", |t| t.len() == 1 && t[0].contains("succeeded"))
        .await;
    session.until_script("return document.querySelector('#inbox-badge') === null", "the badge is gone once read").await;

    // Pause: no next run.
    session.find(".schedule [data-action=pause]").await.click().await.unwrap();
    session.until_texts(".schedule .schedule-next", "paused", |t| t.len() == 1 && t[0].starts_with("Paused")).await;

    // The owner's own schedule, through the form.
    session.find("[data-action=new-schedule]").await.click().await.unwrap();
    session.find(".schedule-form input[name=title]").await.send_keys("Water the plants").await.unwrap();
    let rule = session.find(".schedule-form select[name=rule]").await;
    rule.select_by_value("interval").await.unwrap();
    let minutes = session.find(".schedule-form input[name=minutes]").await;
    minutes.clear().await.unwrap();
    minutes.send_keys("90").await.unwrap();
    session.find("[data-action=create-schedule]").await.click().await.unwrap();
    session
        .until_texts(".schedule .schedule-title", "both schedules are listed", |t| {
            t.len() == 2 && t.contains(&"Water the plants".to_owned())
        })
        .await;
    session.until_texts(".schedule .schedule-rule", "its rule in words", |t| t.iter().any(|r| r.starts_with("every 90 min"))).await;
    session.screenshot("schedules").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_page_changes_and_the_inbox_shows_the_diff() {
    use std::collections::HashMap;
    use std::net::SocketAddr;

    use hearth_testkit::pages::PageServer;

    let page = |price: &str| format!("<html><head><title>Kettle</title></head><body><p>Kettle</p><p>Price: {price}</p></body></html>");
    let pages: HashMap<String, String> = [("/kettle".to_owned(), page("$20"))].into();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let home = TestHome::new().unwrap();
    let allow = [("HEARTH_E2E_BROWSER_ALLOW", server.address().to_string())];
    let session = Session::start_app_with(APP, &home, &allow).await;

    session.send(&format!("watch http://{}/kettle", server.address())).await;
    // The first look runs at once and records the page; then the monitor waits for its next look.
    session.until_texts(".card-delegate-task .task-status", "the monitor is scheduled", |t| t == ["scheduled"]).await;
    server.set_page("/kettle", &page("$18"));
    session.find(".card-delegate-task .open-task").await.click().await.unwrap();
    session.find("#monitor-check-now").await.click().await.unwrap();
    session.until_texts("#inbox-badge", "the change is a notice", |t| t == ["1"]).await;
    session.find("[data-screen=inbox]").await.click().await.unwrap();
    session
        .until_texts(".notice[data-kind=monitor_notice] .notice-body", "with the line that changed", |t| {
            t.len() == 1 && t[0].contains("The page changed.") && t[0].contains("~ Price: $18")
        })
        .await;
    session.screenshot("monitor-notice").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idea_is_accepted_into_a_task_and_another_dismissed() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("[data-screen=inbox]").await.click().await.unwrap();
    session
        .until_texts(".idea .idea-title", "the seeded mail suggests two ideas", |t| {
            t.contains(&"Fill the form from Ms. Alvarez".to_owned()) && t.iter().any(|i| i.starts_with("Answer Sam Okafor"))
        })
        .await;
    session.find(".idea[data-kind=answer_meeting] [data-action=dismiss]").await.click().await.unwrap();
    session.until_texts(".idea[data-kind=answer_meeting]", "dismissed", |t| t.is_empty()).await;
    session.find(".idea[data-kind=fill_form] [data-action=accept]").await.click().await.unwrap();
    session
        .until_texts(".task-detail .task-detail-title", "accepting opened the task it made", |t| {
            t.len() == 1 && t[0].starts_with("Complete the form from")
        })
        .await;
    session.find("[data-screen=inbox]").await.click().await.unwrap();
    session.until_script("return document.querySelectorAll('.idea').length === 0", "no idea is offered again").await;
    // Asked directly, so an empty list not yet loaded cannot pass for it.
    let offered = session.invoke("idea_list", "{}").await;
    assert!(offered.contains(r#""ideas":[]"#), "{offered}");
    session.close().await;
}
