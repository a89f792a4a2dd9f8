//! Schedules and the inbox, end to end: the sample agent makes a reminder from a chat message
//! (its card), Activity lists it, Run now makes a run whose notice raises the Inbox badge,
//! opening the notice shows the task and clears the badge, and the owner makes a schedule with
//! the form.

use hearth_testkit::TestHome;
use hearth_testkit::desktop_bus::NotificationServer;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_made_in_chat_runs_now_and_its_notice_opens_the_task() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;

    session.send("Remind me every morning to check the garden").await;
    session.until_texts(".card-schedule .schedule-title", "the schedule card shows", |t| t == ["Check the garden"]).await;
    session.until_texts(".card-schedule .schedule-rule", "in words", |t| t.len() == 1 && t[0].starts_with("every day at 08:00")).await;
    session.find(".card-schedule .open-schedules").await.click().await.unwrap();
    session.until_texts(".schedule .schedule-title", "Activity lists the schedule", |t| t == ["Check the garden"]).await;
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
    session.until_texts(".notice[data-kind=reminder] .notice-body", "the inbox shows what to do", |t| t == ["Check the garden"]).await;
    session.screenshot("inbox").await;
    session.find(".notice[data-kind=reminder]").await.click().await.unwrap();
    session.until_texts(".task-detail .task-status", "the notice opens its task", |t| t.len() == 1 && t[0].contains("succeeded")).await;
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

/// The desktop's side: the run's notice is shown as an OS notification of its kind only, and a
/// click on it (while the owner is on another screen) brings up its task and marks it read.
/// The desktop is a real session bus with a server of the freedesktop Notifications protocol.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clicked_os_notification_opens_its_task() {
    let home = TestHome::new().unwrap();
    let bus_dir = tempfile::tempdir().unwrap();
    let desktop = NotificationServer::start(bus_dir.path()).await;
    let session = Session::start_app_with(APP, &home, &[("DBUS_SESSION_BUS_ADDRESS", desktop.address().to_owned())]).await;

    session.send("Remind me every morning to check the garden").await;
    session.find(".card-schedule .open-schedules").await.click().await.unwrap();
    session.find(".schedule [data-action=run-now]").await.click().await.unwrap();
    let shown = desktop.until_shown(1).await;
    assert_eq!(shown[0].summary, "Hearth: Reminder");
    assert!(!shown[0].body.contains("garden"), "the notification shows the kind only, not {:?}", shown[0].body);
    assert_eq!(shown[0].actions, ["default", "Open"]);
    session.until_texts("#inbox-badge", "the notice is unread", |t| t == ["1"]).await;

    // The owner is in the chat when the notification is clicked.
    session.find("[data-screen=chat]").await.click().await.unwrap();
    session.find(".composer").await;
    desktop.click(shown[0].id, "default").await;
    session
        .until_texts(".task-detail .task-status", "the click opens the reminder's task", |t| t.len() == 1 && t[0].contains("succeeded"))
        .await;
    session.until_texts(".task-detail .task-detail-title", "the task is the reminder", |t| t.len() == 1 && t[0].contains("garden")).await;
    session.until_script("return document.querySelector('#inbox-badge') === null", "the opened notice is read").await;
    assert_eq!(desktop.shown().len(), 1, "one notice, one OS notification");
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
