//! Activity, end to end: a delegated task's live status in its card, the task in Activity,
//! Answer and Cancel applied through the real controls, a standing order granted and revoked
//! on its page, updates pushed without reload.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_task_is_live_in_its_card_and_controllable_in_activity() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;

    session.send("Renew the car insurance before the 12th").await;
    // The worker picks the task up at once; with no model it waits for the owner.
    session.until_texts(".card-delegate-task .task-status", "the card shows the live status", |t| t == ["waiting input"]).await;
    session.find(".card-delegate-task .open-task").await.click().await.unwrap();
    session.until_texts(".task-detail .task-status", "Activity opens the task", |t| t.len() == 1 && t[0].contains("waiting")).await;
    session.until_texts(".task-detail", "the question shows", |t| t.len() == 1 && t[0].contains("A model is required")).await;
    session.until_texts(".task-run", "one run so far", |t| t.len() == 1).await;
    assert!(session.client.find(fantoccini::Locator::Css("#task-retry")).await.is_err(), "Retry does not apply here");

    // Answer: the task runs again (a second run) and waits again.
    let answer = session.find("#task-answer-text").await;
    answer.send_keys("continue").await.unwrap();
    session.find("#task-answer-send").await.click().await.unwrap();
    session.until_texts(".task-run", "a second run happened", |t| t.len() == 2).await;
    session.until_texts(".task-detail .task-status", "it waits again", |t| t.len() == 1 && t[0].contains("waiting")).await;

    // A standing order, granted and revoked on the task page: the rows are the oracle.
    let store = hearth_core::store::Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();
    session.find(".mandate-grant-form select").await.select_by_value("send_mail").await.unwrap();
    session.find(".mandate-scope").await.send_keys("Friend <friend@EXAMPLE.com>, team@example.com").await.unwrap();
    session.find("button.mandate-grant").await.click().await.unwrap();
    session
        .until_texts(".mandate .mandate-grant", "the order is listed", |t| t == ["Send email to friend@example.com, team@example.com"])
        .await;
    let granted = store.mandates(None).await.unwrap();
    assert_eq!(granted.len(), 1);
    assert_eq!(
        granted[0].grant,
        hearth_protocol::mandates::MandateGrant::SendMail { recipients: vec!["friend@example.com".into(), "team@example.com".into()] }
    );
    assert!(granted[0].revoked_at.is_none());
    session.find(".mandate .mandate-revoke").await.click().await.unwrap();
    session.until_texts(".mandate .mandate-state", "the order shows revoked", |t| t.len() == 1 && t[0].starts_with("revoked")).await;
    assert!(store.mandate(&granted[0].id).await.unwrap().unwrap().revoked_at.is_some(), "revoked in the store");

    // Cancel: the status changes and the controls that no longer apply disappear.
    session.find("#task-cancel").await.click().await.unwrap();
    session.until_texts(".task-detail .task-status", "the task is cancelled", |t| t.len() == 1 && t[0].contains("cancelled")).await;
    session.until_texts("#task-cancel, #task-answer-send", "no controls are left", |t| t.is_empty()).await;
    session.until_texts(".task-row[data-status=cancelled]", "the list updated", |t| t.len() == 1).await;
    session.screenshot("activity").await;
    session.close().await;
}
