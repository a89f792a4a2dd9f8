//! Plug-in tools through the real window: the owner adds the rmcp test server in Settings →
//! Tools (a stdio command), sees its tools listed with every one off, allows its writing tool;
//! the chat's model asks for it, its card names the server and the tool and nothing happens at
//! the server (its ledger file stays empty) until the owner clicks Approve — then exactly once.

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

/// The test server, built beside this test by the workspace build.
fn server_binary() -> String {
    let here = std::env::current_exe().unwrap();
    let built = here.parent().and_then(|deps| deps.parent()).unwrap().join("hearth-mcp-test-server");
    assert!(built.exists(), "{} is missing: build the workspace first", built.display());
    built.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_in_settings_lists_its_tools_and_a_call_runs_once_from_its_card() {
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().tool_call("c1", "mcp__notes__record", &[r#"{"line":"from the window"}"#]))
            .turn(Reply::new().text(&["Noted."])),
    )
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let ledger = home.data_dir().parent().unwrap().join("mcp-ledger");
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));

    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    session.find("[data-field=mcp-name]").await.send_keys("notes").await.unwrap();
    session.find("select[data-field=mcp-kind]").await.select_by_value("stdio").await.unwrap();
    session.find("[data-field=mcp-command]").await.send_keys(&server_binary()).await.unwrap();
    session.find("[data-field=mcp-args]").await.send_keys("stdio").await.unwrap();
    session.find("[data-field=mcp-env]").await.send_keys(&format!("HEARTH_MCP_LEDGER={}", ledger.display())).await.unwrap();
    session.find("[data-action=mcp-add]").await.click().await.unwrap();
    session
        .until_texts(".mcp-server[data-server=notes] .mcp-connection[data-state=connected]", "the server connects", |t| {
            t.len() == 1 && t[0].contains("2025-11-25")
        })
        .await;
    session
        .until_texts(".mcp-server[data-server=notes] .mcp-tool[data-policy=off] .mcp-tool-name", "its tools, every one off", |t| {
            t.iter().any(|n| n == "record") && t.iter().any(|n| n == "lookup")
        })
        .await;
    session
        .find(".mcp-server[data-server=notes] .mcp-tool[data-tool=record] select[data-field=mcp-policy]")
        .await
        .select_by_value("allowed")
        .await
        .unwrap();
    session.find(".mcp-server[data-server=notes] .mcp-tool[data-tool=record][data-policy=allowed]").await;
    session.screenshot("settings-tools").await;

    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send("note this down").await;
    session
        .until_texts(
            ".approval-card[data-status=awaiting_review] dl[data-held-tool=mcp] .approval-held-server",
            "the card names the server",
            |t| t.len() == 1 && t[0] == "notes",
        )
        .await;
    session
        .until_texts(".approval-card dl[data-held-tool=mcp] .approval-held-tool", "and the tool", |t| t.len() == 1 && t[0] == "record")
        .await;
    assert!(!ledger.exists(), "nothing happened at the server before the owner decided");
    session.screenshot("mcp-call-card").await;
    session.find(".approval-card [data-action=approve]").await.click().await.unwrap();
    session.until_texts(".approval-card .approval-receipt", "the receipt shows", |t| t.len() == 1).await;
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), "record from the window\n", "exactly one effect at the server");
    assert_eq!(server.requests().len(), 1, "the run ended at the card");
    session.close().await;
}
