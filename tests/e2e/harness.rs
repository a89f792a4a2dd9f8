//! An external agent in the window: the official Python AG-UI server (ag-ui-protocol 1.0.0,
//! `tests/agui_server/server.py`) answers the chat; its text renders, and its call of
//! Hearth's search_mail runs in Hearth and shows as a mail card.

use tokio::io::{AsyncBufReadExt, BufReader};

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_agent_answers_and_its_tool_call_renders_as_a_card() {
    let python = std::env::var("HEARTH_PYTHON").unwrap_or_else(|_| "/var/tmp/hearth-py/bin/python".to_owned());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/agui_server/server.py");
    let mut server = tokio::process::Command::new(&python)
        .args([script, "0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("no Python AG-UI agent at {python} ({err}); scripts/test.sh installs it"));
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let ready = lines.next_line().await.unwrap().unwrap_or_default();
    let port = ready.strip_prefix("READY ").unwrap_or_else(|| panic!("unexpected {ready:?}")).to_owned();

    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let harness = format!(r#"{{"params":{{"url":"http://127.0.0.1:{port}/agent"}}}}"#);
    assert!(session.invoke("settings_harness_set", &harness).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"harness"}}"#).await.starts_with("resolved:"));

    session.send("search my mail for the form").await;
    session.until_texts(".mail-card", "the harness's search_mail call shows as a mail card", |t| t.len() == 1).await;
    session
        .until_texts(".msg-assistant:not(.streaming)", "the harness's answer renders", |t| t.iter().any(|m| m.contains("I found:")))
        .await;
    session.screenshot("harness").await;
    session.close().await;
    let _ = server.kill().await;
}
