//! Search and the model's finance tool, through the real window:
//! - Documents: the owner adds a folder, searches it, sees the matched passages (count) and
//!   opens a preview; a binary file is listed as not read.
//! - Web search: the owner points Settings → Web search at a results page served on loopback
//!   (allowed for this build only); the model's search_web shows its results in a card and the
//!   page's server received exactly that one search.
//! - The model starts a statement summary with summarize_statement; its task is charted.

use std::collections::HashMap;
use std::net::SocketAddr;

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::pages::PageServer;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_adds_a_folder_searches_it_and_previews_a_hit() {
    let home = TestHome::new().unwrap();
    let docs = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::write(docs.path().join(format!("orchard-{i}.md")), format!("# Orchard {i}\n\nPrune the apple trees in late winter.\n"))
            .unwrap();
    }
    std::fs::write(docs.path().join("shopping.txt"), "Bread, milk and eggs.\n").unwrap();
    std::fs::write(docs.path().join("photo.txt"), [0u8, 159, 146, 150, 0, 1, 2, 3]).unwrap();
    let session = Session::start_app(APP, &home).await;

    session.find(".nav-item[data-screen=documents]").await.click().await.unwrap();
    session.find(".documents-add input[name=folder]").await.send_keys(&docs.path().display().to_string()).await.unwrap();
    session.find("[data-action=add-folder]").await.click().await.unwrap();
    session
        .until_texts(".documents-folder .documents-folder-summary", "the folder is read", |t| {
            t.len() == 1 && t[0].starts_with("4 files indexed") && t[0].ends_with("1 not read")
        })
        .await;
    // Inside a closed <details>: read as the page holds it, not as shown.
    session
        .until_script(
            "const p = document.querySelectorAll('.documents-skipped .skipped-path'); \
             return p.length === 1 && p[0].textContent.endsWith('photo.txt');",
            "the binary file is listed as not read",
        )
        .await;
    session.find(".documents-search input[name=query]").await.send_keys("prune apple").await.unwrap();
    session.find("[data-action=search]").await.click().await.unwrap();
    let passages = session.until_texts(".documents-hit .documents-passage", "one hit per orchard note", |t| t.len() == 3).await;
    assert!(passages.iter().all(|p| p.contains("Prune") && p.contains("apple")), "{passages:?}");
    session.until_texts(".documents-passage mark", "the matched words are marked", |t| t.len() >= 6).await;
    session.find(".documents-hit [data-action=preview]").await.click().await.unwrap();
    session
        .until_texts(".documents-preview-text", "the preview shows the file's text", |t| t.len() == 1 && t[0].contains("late winter"))
        .await;
    session.screenshot("documents").await;
    session.close().await;
}

/// A DuckDuckGo-shaped results page.
const RESULTS: &str = r#"<!doctype html><html><head><title>tides at DuckDuckGo</title></head><body>
<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" href="https://tides.example/north">North harbour tides</a></h2>
  <a class="result__snippet" href="https://tides.example/north">High water at 06:12.</a></div>
<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" href="https://sea.example/">The sea</a></h2>
  <a class="result__snippet" href="https://sea.example/">Everything about the sea.</a></div>
<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" href="http://10.0.0.5/admin">Printer</a></h2>
  <a class="result__snippet" href="http://10.0.0.5/admin">On the local network.</a></div>
</body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_web_search_shows_its_results_and_the_statement_it_starts_is_charted() {
    let pages: HashMap<String, String> = [("/html/".to_owned(), RESULTS.to_owned())].into();
    let search = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let csv = r#"{"csv":"date,description,amount,category\n2026-11-01,Pay,100.10,Income\n2026-11-02,Lunch,-0.10,Food"}"#;
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().tool_call("c1", "search_web", &[r#"{"query":"tides north"}"#]))
            .turn(Reply::new().text(&["Two results."]))
            .turn(Reply::new().tool_call("c2", "summarize_statement", &[csv]))
            .turn(Reply::new().text(&["Started."])),
    )
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let allow = [("HEARTH_E2E_BROWSER_ALLOW", search.address().to_string())];
    let session = Session::start_app_with(APP, &home, &allow).await;
    session.find("#composer").await;
    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));

    // Settings → Web search: the owner's own search page.
    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    let template = session.find("#web-search-template").await;
    template.clear().await.unwrap();
    template.send_keys(&format!("http://{}/html/?q={{query}}", search.address())).await.unwrap();
    session.find("[data-action=save-web-search]").await.click().await.unwrap();
    session.until_texts(".settings-web-search .settings-saved", "the search page is saved", |t| t == ["Saved"]).await;

    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send("look up the tides").await;
    let titles = session.until_texts(".search-card .search-result-title", "the card lists the results", |t| t.len() == 2).await;
    assert_eq!(titles, ["North harbour tides", "The sea"], "the local-network result is left out");
    session.until_texts(".msg-assistant:not(.streaming)", "the model answers", |t| t.iter().any(|m| m.contains("Two results."))).await;
    let searched: Vec<String> = search.requests().into_iter().filter(|r| r != "/favicon.ico").collect();
    assert_eq!(searched, ["/html/?q=tides+north"], "one search, and no result was opened");

    // In a new chat: after the search's results (outside content) the same call would wait on
    // a card, as the trust policy's own tests show; here it runs as the owner's own request.
    session.find("#new-chat").await.click().await.unwrap();
    session.send("summarize my statement").await;
    session.until_texts(".card-delegate-task .task-status", "the summary finished", |t| t == ["succeeded"]).await;
    session.find(".card-delegate-task .open-task").await.click().await.unwrap();
    session.until_texts(".finance-totals", "the statement is added up", |t| t == ["Income 100.10 · Spending 0.10 · Saved 100.00"]).await;
    session.close().await;
}
