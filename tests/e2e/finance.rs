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
    session
        .until_texts(".finance-totals", "the totals", |t| t == ["Income 5715.00 · Spending 2454.69 · Saved 3260.31"])
        .await;
    session
        .until_texts(".finance-categories .finance-bar-name", "categories, largest first", |t| {
            t.first().map(String::as_str) == Some("Housing") && t.len() == 8
        })
        .await;
    session.until_texts(".finance-months .finance-bar-name", "months in order", |t| t == ["2026-10", "2026-11"]).await;
    session.screenshot("finance").await;
    session.close().await;
}
