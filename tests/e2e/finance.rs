//! A statement, end to end: "summarize this CSV" makes a finance task on the sample statement;
//! its detail charts spending by category and by month.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summarized_statement_is_charted_in_its_task() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.send("Summarize this CSV").await;
    session.until_texts(".card-delegate-task .task-status", "the task finished", |t| t == ["succeeded"]).await;
    session.find(".card-delegate-task .open-task").await.click().await.unwrap();
    session.until_texts(".finance-totals", "the totals", |t| t == ["Income 5715.00 · Spending 2454.69 · Saved 3260.31"]).await;
    session
        .until_texts(".finance-categories .finance-bar-name", "categories, largest first", |t| {
            t.first().map(String::as_str) == Some("Housing") && t.len() == 8
        })
        .await;
    session.until_texts(".finance-months .finance-bar-name", "months in order", |t| t == ["2026-10", "2026-11"]).await;
    session.screenshot("finance").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_pastes_a_statement_in_activity() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("[data-screen=activity]").await.click().await.unwrap();
    session.find("[data-action=statement]").await.click().await.unwrap();
    // The text goes in as the page's own input event (typed line breaks would be keystrokes).
    session.find(".statement-form textarea[name=csv]").await;
    session
        .client
        .execute(
            "const t = document.querySelector('.statement-form textarea[name=csv]'); \
             t.value = 'date,description,amount,category\\n2026-11-01,Pay,100.10,Income\\n2026-11-02,Lunch,-0.10,Food\\n2026-11-03,Tea,-0.20,Food'; \
             t.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![],
        )
        .await
        .unwrap();
    session.find("[data-action=summarize]").await.click().await.unwrap();
    session
        .until_texts(".finance-totals", "the pasted statement is added up in cents", |t| {
            t == ["Income 100.10 · Spending 0.30 · Saved 99.80"]
        })
        .await;
    session.close().await;
}
