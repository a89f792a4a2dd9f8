//! Failures through the webview (issue 36, point 5): the model provider (the scripted server on
//! loopback, speaking OpenAI's wire) answers 500 three times; the chat shows the failure's id with
//! its message, and that id opens the run's timeline in Activity, listing the three tries. The
//! server's request log counts the tries that happened; the report holds no key. A failed effect
//! carries its own id on its card, and that id opens the run it happened in.

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{HttpError, ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

const KEY: &str = "sk-e2e-failure-key-0123456789";

/// Settings → Model: the scripted server, a key, and model mode on, as the owner sets them.
async fn use_model(session: &Session, server: &ModelServer) {
    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    let base_url = session.find("#model-base-url").await;
    base_url.clear().await.unwrap();
    base_url.send_keys(&server.base_url()).await.unwrap();
    session.find("#model-name").await.send_keys("scripted-model").await.unwrap();
    session.find("#model-api-key").await.send_keys(KEY).await.unwrap();
    session.find("[data-action=save-model]").await.click().await.unwrap();
    session.find("input[name=agent-mode][value=model]").await.click().await.unwrap();
    session.until_script("return document.querySelector('input[name=agent-mode][value=model]').checked", "model mode is on").await;
}

/// The app on a fresh home with `script`'s server as its model, and `first` sent in a new chat.
async fn chat_with(script: Script, first: &str) -> (ModelServer, TestHome, Session) {
    let server = ModelServer::start(script).await.unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    use_model(&session, &server).await;
    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send(first).await;
    (server, home, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue36_a_failed_reply_shows_its_id_and_activity_opens_its_timeline() {
    let script = Script::new().turn(HttpError::server_error()).turn(HttpError::server_error()).turn(HttpError::server_error());
    let (server, _home, session) = chat_with(script, "hello").await;
    let shown = session
        .until_texts(".run-error", "the failure shows with its id", |t| {
            t.len() == 1 && t[0].contains("failed (500)") && t[0].contains("Failure ")
        })
        .await;
    assert_eq!(server.requests().len(), 3, "the first try and two retries reached the server");
    let id: String = shown[0].split("Failure ").nth(1).unwrap().chars().take(9).collect();
    assert_eq!(id.len(), 9, "four characters, a hyphen, four: {id}");

    session.find(".nav-item[data-screen=activity]").await.click().await.unwrap();
    session.until_texts(".failure-row .failure-id", "the failure is listed by its id", |t| t == [id.clone()]).await;
    // Typed as it was read out: lower case.
    session.find(".failure-open input").await.send_keys(&id.to_lowercase()).await.unwrap();
    session.find("[data-action=open-failure]").await.click().await.unwrap();
    let tries = session
        .until_texts(".failure-timeline .timeline-entry[data-type=provider_try]", "the timeline lists three tries", |t| t.len() == 3)
        .await;
    for (n, line) in tries.iter().enumerate() {
        assert!(line.contains(&format!("try {} (retry {n}): HTTP 500", n + 1)), "{line}");
    }
    session.until_texts(".failure-timeline .timeline-entry[data-type=failed]", "the failure ends it", |t| t.len() == 1).await;
    let report = session.client.execute("return document.querySelector('.failure-report pre').textContent", vec![]).await.unwrap();
    let report = report.as_str().unwrap_or_default().to_owned();
    assert!(report.contains(&id) && report.matches("HTTP 500").count() == 3, "{report}");
    assert!(!report.contains(KEY) && !report.contains("sk-e2e"), "{report}");
    session.find("[data-action=copy-details]").await.click().await.unwrap();
    session.until_texts(".failure-copied", "copying answers", |t| t.len() == 1).await;
    assert_eq!(server.requests().len(), 3, "opening the timeline sent nothing to the provider");
    session.screenshot("failures").await;
    session.close().await;
}

/// A failed effect (point 5's "every failed effect"): the model imports an attachment that is
/// not there; the reply goes on, the tool's card carries the failure's id, Activity lists it as
/// an effect, and the id opens the run's timeline at the failed receipt. Nothing was imported
/// (Files stays empty).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue36_a_failed_effect_shows_its_id_on_its_card_and_activity_opens_its_run() {
    let script = Script::new()
        .turn(Reply::new().tool_call("call-import", "import_pdf", &[r#"{"attachmentId":"att-not-there"}"#]))
        .turn(Reply::new().text(&["That attachment is gone."]));
    let (server, home, session) = chat_with(script, "import the form").await;
    session
        .until_texts(".msg-assistant:not(.streaming)", "the reply goes on past the failed effect", |t| t.iter().any(|m| m.contains("gone")))
        .await;
    let result = session
        .until_texts(".card-generic[data-tool=import_pdf] .card-result", "the failed import's card carries an id", |t| {
            t.len() == 1 && t[0].contains("failureId")
        })
        .await;
    let value: serde_json::Value = serde_json::from_str(&result[0]).unwrap();
    let id = value["failureId"].as_str().unwrap().to_owned();
    assert!(value["error"].as_str().unwrap().contains(&format!("Failure {id}")), "{value}");

    session.find(".nav-item[data-screen=activity]").await.click().await.unwrap();
    session
        .until_texts(".failure-row[data-failure-id] .failure-what[data-kind=effect]", "listed as a failed effect", |t| {
            t == ["Effect import_pdf"]
        })
        .await;
    session.find(&format!(".failure-row[data-failure-id='{id}']")).await.click().await.unwrap();
    let receipts = session
        .until_texts(".failure-timeline .timeline-entry[data-type=receipt]", "the timeline shows the failed receipt", |t| t.len() == 1)
        .await;
    assert!(receipts[0].contains("import_pdf: failed"), "{}", receipts[0]);
    session
        .until_texts(".failure-timeline .timeline-entry[data-type=failed]", "and the effect's failure", |t| {
            t.len() == 1 && t[0].contains("import_pdf: There is no attachment")
        })
        .await;
    assert_eq!(server.requests().len(), 2, "one request per turn: the failure did not retry the model");
    let files = match std::fs::read_dir(home.data_dir().join("files")) {
        Ok(folder) => folder.count(),
        // No files folder: nothing was kept.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => 0,
        Err(err) => panic!("the files folder could not be read: {err}"),
    };
    assert_eq!(files, 0, "nothing was imported");
    session.close().await;
}
