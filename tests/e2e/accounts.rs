//! Settings → Accounts through the webview, against the Google fixture on loopback (its real
//! OAuth, Gmail and Calendar wire protocol): set the OAuth client, connect an account with
//! write access (the test plays the owner's browser at the consent page), let the model find a
//! message and prepare a reply, approve it on its card, and see the receipt. The oracle is the
//! messages the fixture took.

use hearth_testkit::TestHome;
use hearth_testkit::google::{CLIENT_ID, CLIENT_SECRET, FixtureMail, GoogleFixture};
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_google_account_is_connected_its_mail_searched_and_a_reply_approved() {
    let fixture = GoogleFixture::start(3600).await.unwrap();
    fixture.add_mail(FixtureMail {
        id: "18f0c1".into(),
        thread_id: "18f0c0".into(),
        from: "Bakery <hello@bakery.example>".into(),
        to: "owner@example.com".into(),
        subject: "Your sourdough order".into(),
        text: Some("Ready on Friday. Shall we hold it until Saturday?".into()),
        sent_at: 1_764_000_000_000,
        labels: vec!["INBOX".into()],
        message_id: "bakery-2@bakery.example".into(),
        ..FixtureMail::default()
    });
    let reply = r#"{"to":["hello@bakery.example"],"subject":"Re: Your sourdough order","body":"Saturday is perfect, thank you!","replyToMessageId":"18f0c1"}"#;
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().tool_call("call-search", "search_mail", &[r#"{"query":"sourdough"}"#]))
            .turn(Reply::new().text(&["I'll answer the bakery."]).tool_call("call-reply", "prepare_email", &[reply])),
    )
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app_with(APP, &home, &[("HEARTH_E2E_GOOGLE_BASE", fixture.base_url())]).await;

    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    session.find("#google-client-id").await.send_keys(CLIENT_ID).await.unwrap();
    session.find("#google-client-secret").await.send_keys(CLIENT_SECRET).await.unwrap();
    session.find("[data-action=save-google-client]").await.click().await.unwrap();
    session
        .until_script(
            "const s = document.querySelector('#google-client-secret'); return !!s && s.placeholder.startsWith('stored')",
            "the secret is stored, not shown",
        )
        .await;
    session.find("[data-action=connect-write]:not([disabled])").await.click().await.unwrap();
    // The owner's browser at Google's consent page: it agrees, and Google sends it back.
    let consent = session.find(".consent-url").await.text().await.unwrap();
    assert!(consent.starts_with(&fixture.base_url()), "{consent}");
    let answer = reqwest::get(&consent).await.unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    session
        .until_texts(".account-row[data-provider=Google] .account-address", "the account is connected", |t| {
            t.len() == 1 && t[0] == "owner@example.com"
        })
        .await;
    session
        .until_script(
            "const r = document.querySelector('.account-row[data-provider=Google] input[type=radio]'); return !!r && r.checked",
            "and chosen",
        )
        .await;
    assert_eq!(fixture.exchanges(), 1);
    session.screenshot("settings-accounts").await;

    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));
    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send("Answer the bakery: Saturday is fine").await;
    session
        .until_texts(".approval-card[data-status=awaiting_review] .approval-to", "the reply waits for approval", |t| {
            t.len() == 1 && t[0].contains("hello@bakery.example")
        })
        .await;
    // The search reached Gmail, and the model only proposed.
    assert!(fixture.paths().iter().any(|p| p == "/gmail/v1/users/me/messages"), "{:?}", fixture.paths());
    assert!(fixture.sent().is_empty());
    session.find(".approval-card [data-action=approve]").await.click().await.unwrap();
    // Past the undo window at once.
    session.find(".approval-card[data-status=leaving] [data-action=send-now]").await.click().await.unwrap();
    session
        .until_texts(".approval-card .approval-receipt", "the receipt shows", |t| {
            t.len() == 1 && t[0].contains("Sent from owner@example.com")
        })
        .await;
    session.screenshot("google-reply-sent").await;
    let sent = fixture.sent();
    assert_eq!(sent.len(), 1, "one message went");
    let raw = String::from_utf8_lossy(&sent[0]);
    assert!(raw.contains("In-Reply-To: <bakery-2@bakery.example>"), "threaded: {raw}");
    assert!(raw.contains("Saturday is perfect, thank you!"));
    session.close().await;
}
