//! The app as a companion, through the real window: it pairs with a Hearth at home (`hearth
//! serve`, a second process) from Settings, and then its chat, its cards and its screens are
//! the host's. The fact a chat asks to keep waits on a card; the owner approves it in this
//! window and the host keeps exactly one. What the device may not do is refused in the host's
//! own words. Counted at the host through a second paired device.

use hearth_core::pairing::{Companion, CompanionConfig, Connection, PairingOffer, StaticKeypair};
use hearth_testkit::TestHome;
use hearth_testkit::home_server::HomeServer;
use hearth_testkit::webdriver::Session;
use serde_json::Value;

use crate::APP;

/// The headless home server: the app's own binary.
const HOME_APP: &str = env!("CARGO_BIN_EXE_hearth");

/// A second device, paired to read only: the test's view of the host's data.
async fn checker(host: &mut HomeServer) -> Connection {
    let answer = host.ask("offer Checker read").await;
    let offer = PairingOffer::parse(answer["offer"]["uri"].as_str().unwrap()).unwrap();
    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    let pairing = companion.pair(&offer, "checker").await.unwrap();
    companion.connect(&pairing).await.unwrap()
}

async fn memories_at_home(checker: &Connection) -> Vec<String> {
    let listed = checker.request("memory_list", Value::Null).await.unwrap();
    listed["memories"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_pairs_with_its_hearth_at_home_and_approves_there() {
    let host_data = tempfile::tempdir().unwrap();
    let mut host = HomeServer::start(HOME_APP, host_data.path()).await;
    let checker = checker(&mut host).await;
    // The owner's offer at home for this laptop: read, chat and decide; not delete.
    let answer = host.ask("offer Laptop read,chat,decide_approvals").await;
    let offer = &answer["offer"];
    let (address, code, fingerprint) =
        (offer["address"].as_str().unwrap(), offer["shortCode"].as_str().unwrap(), offer["fingerprint"].as_str().unwrap());

    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    assert!(session.client.find(fantoccini::Locator::Css("#home-link")).await.is_err(), "on its own at first");
    session.find("[data-screen=settings]").await.click().await.unwrap();
    session.find("#home-address").await.send_keys(address).await.unwrap();
    session.find("#home-code").await.send_keys(code).await.unwrap();
    session.find("#home-name").await.send_keys("Laptop").await.unwrap();
    session.find("[data-action=pair-home]").await.click().await.unwrap();
    // Paired, the window starts again on the new transport.
    session.until_texts("#home-link", "the window works through the Hearth at home", |t| t == ["Through your Hearth at home"]).await;
    session.find("[data-screen=settings]").await.click().await.unwrap();
    session.until_texts(".home-link-fingerprint", "Settings shows the host's fingerprint", |t| t == [fingerprint]).await;
    session.screenshot("home-link").await;

    // A chat from here runs at home, as outside content: keeping a fact waits on a card.
    session.find("[data-screen=chat]").await.click().await.unwrap();
    session.send("remember that the alarm code is 4711").await;
    session
        .until_texts(".approval-card[data-status=awaiting_review] .approval-held-tool", "the card is the host's", |t| t.len() == 1)
        .await;
    assert!(memories_at_home(&checker).await.is_empty(), "nothing is kept before the owner approves");
    session.find(".approval-card [data-action=approve]").await.click().await.unwrap();
    session.until_texts(".approval-card .approval-receipt", "the receipt shows", |t| t.len() == 1).await;
    let kept = memories_at_home(&checker).await;
    assert_eq!(kept.len(), 1, "approved here, kept once at home: {kept:?}");
    assert!(kept[0].contains("4711"), "{kept:?}");

    // The Memory screen is the host's; forgetting needs "delete", which this device lacks.
    session.find("[data-screen=memory]").await.click().await.unwrap();
    session.until_texts(".fact .fact-text", "the host's fact is listed", |t| t.len() == 1 && t[0].contains("4711")).await;
    session.find(".fact [data-action=forget]").await.click().await.unwrap();
    session.until_texts(".memory-error", "the host refuses, in its words", |t| t.len() == 1 && t[0].contains("destructive")).await;
    assert_eq!(memories_at_home(&checker).await.len(), 1, "nothing was forgotten");

    // Back on its own: the link is forgotten and the window's commands stay here.
    session.find("[data-screen=settings]").await.click().await.unwrap();
    session.find("[data-action=forget-home]").await.click().await.unwrap();
    session.until_script("return document.querySelector('#home-link') === null", "working alone again").await;
    session.find("[data-screen=settings]").await.click().await.unwrap();
    session.find("#home-address").await;
    // The fact was kept at home only: this app's own core has none.
    let here = session.invoke("memory_list", "{}").await;
    let here: Value = serde_json::from_str(here.strip_prefix("resolved:").unwrap_or_else(|| panic!("{here}"))).unwrap();
    assert_eq!(here["memories"].as_array().map(Vec::len), Some(0), "this app's own memory: {here}");
    session.close().await;
    host.stop().await;
}
