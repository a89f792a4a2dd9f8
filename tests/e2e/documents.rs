//! The permission slip, end to end through the webview: the sample agent starts the
//! document task, the owner answers with the values, reviews the reply in its approval card
//! (found again through the review's OS notification, which opens Approvals at its card)
//! and approves; the receipt shows, exactly one message is in Sent, and the filled copy
//! opens in the PDF viewer.

use std::time::Duration;

use hearth_core::store::Store;
use hearth_testkit::TestHome;
use hearth_testkit::desktop_bus::NotificationServer;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_permission_slip_is_filled_approved_and_sent_from_the_ui() {
    let home = TestHome::new().unwrap();
    let bus_dir = tempfile::tempdir().unwrap();
    let desktop = NotificationServer::start(bus_dir.path()).await;
    let session = Session::start_app_with(APP, &home, &[("DBUS_SESSION_BUS_ADDRESS", desktop.address().to_owned())]).await;

    session.send("Please complete the permission slip").await;
    session.until_texts(".card-delegate-task .task-status", "the task asks for the values", |t| t == ["waiting input"]).await;
    session.find(".card-delegate-task .open-task").await.click().await.unwrap();
    session.until_texts(".task-detail", "the question lists the fields", |t| t.len() == 1 && t[0].contains("participant_name")).await;

    let answer = session.find("#task-answer-text").await;
    answer
        .send_keys(
            "participant_name: Léa Martin\nguardian_name: Samuel Martin-Okafor\nemergency_contact: Zoë Müller\n\
             emergency_phone: +33 6 12 34 56 78\npermission_granted: yes",
        )
        .await
        .unwrap();
    session.find("#task-answer-send").await.click().await.unwrap();

    // The reply waits for review; its card shows exactly what will be sent.
    session
        .until_texts(".approval-card[data-status=awaiting_review] .approval-to", "the approval card shows the recipient", |t| {
            t.len() == 1 && t[0].contains("alvarez@riverside-school.example")
        })
        .await;
    session.until_texts(".approval-card .approval-subject", "the subject", |t| t.len() == 1 && t[0].contains("Re: Community visit")).await;
    session
        .until_texts(".approval-card .approval-attachment", "the filled copy is attached", |t| {
            t.len() == 1 && t[0].contains("(filled).pdf")
        })
        .await;
    session.until_texts(".approval-card .approval-expiry", "the countdown runs", |t| t.len() == 1 && t[0].contains(':')).await;

    // The review is also an OS notification; clicked while the owner is in the chat, it opens
    // Approvals with this card marked (that it scrolls into view is not checked here: one
    // waiting card is in view anyway). The kind only: no recipient, no subject.
    let shown = desktop.until_shown(2).await;
    let summaries: Vec<&str> = shown.iter().map(|n| n.summary.as_str()).collect();
    assert_eq!(summaries, ["Hearth: Question", "Hearth: Review needed"]);
    assert!(shown.iter().all(|n| !n.body.contains("alvarez") && !n.body.contains("Community")), "{shown:?}");
    session.find("[data-screen=chat]").await.click().await.unwrap();
    session.find(".composer").await;
    desktop.click(shown[1].id, "default").await;
    session
        .until_texts(
            ".approvals .approval-slot.selected .approval-card[data-status=awaiting_review] .approval-to",
            "the click opens the card",
            |t| t.len() == 1 && t[0].contains("alvarez@riverside-school.example"),
        )
        .await;
    session.find("[data-screen=activity]").await.click().await.unwrap();
    session.find(".task-detail .approval-card[data-status=awaiting_review]").await;

    let store = Store::open(&home.data_dir().join("hearth.db"), Duration::from_secs(5)).await.unwrap();
    assert_eq!(store.sent_messages().await.unwrap().len(), 0, "nothing is sent before approval");
    session.screenshot("approval-card").await;

    session.find(".approval-card [data-action=approve]").await.click().await.unwrap();
    // Past the undo window at once.
    session.find(".approval-card[data-status=leaving] [data-action=send-now]").await.click().await.unwrap();
    session
        .until_texts(".approval-card .approval-receipt", "the receipt shows", |t| t.len() == 1 && t[0].contains("Saved to local sent mail"))
        .await;
    session.until_texts(".task-detail .task-status", "the task finishes", |t| t.len() == 1 && t[0].contains("succeeded")).await;
    let sent = store.sent_messages().await.unwrap();
    assert_eq!(sent.len(), 1, "exactly one message in Sent");
    assert_eq!(store.message_attachments(&sent[0].id).await.unwrap().len(), 1);

    // The filled copy in Files: rendered by PDFium, two pages.
    session.find(".nav-item[data-screen=files]").await.click().await.unwrap();
    let rows = session.until_texts(".file-row", "both files are listed", |t| t.len() == 2).await;
    assert!(rows.iter().any(|r| r.contains("(filled)")), "{rows:?}");
    let filled = session.find(".file-row:first-child").await;
    filled.click().await.unwrap();
    session.find(".pdf-viewer img.pdf-page").await;
    let page_loaded = "const img = document.querySelector('.pdf-viewer img.pdf-page'); \
                       return !!img && img.complete && img.naturalWidth > 500;";
    session.until_script(page_loaded, "page 1 is rendered and decoded").await;
    session.until_texts(".pdf-page-label", "page 1 of 2", |t| t == ["Page 1 of 2"]).await;
    session.screenshot("pdf-viewer").await;
    session.find("[data-action=next-page]").await.click().await.unwrap();
    session.until_texts(".pdf-page-label", "page 2 of 2", |t| t == ["Page 2 of 2"]).await;
    session.close().await;
}
