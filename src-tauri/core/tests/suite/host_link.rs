//! This app as a companion (`Hearth::host_link_*`, `host_call`, `host_stream`): a second Hearth
//! pairs with a host Hearth on loopback from the owner's offer, and the window's requests go
//! there as they are. Counted on the host (its threads, Sent rows, memories) and on the
//! companion (its own threads, its vault).

use hearth_core::Hearth;
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::ProposalStatus;
use hearth_protocol::devices::{DevicePairOfferParams, DeviceScopes, HostLinkPairParams, HostRequest};
use hearth_protocol::ids::DeviceId;
use serde_json::{Value, json};

use super::devices::{host, host_in};
use super::support::{TestHearth, email_awaiting_review, fast_config, guarded};

/// A Hearth that has never paired: the companion app.
async fn app_in(dir: tempfile::TempDir) -> TestHearth {
    TestHearth { hearth: Hearth::open(fast_config(dir.path())).await.unwrap(), dir }
}

/// The host's offer with `scopes`, typed into the companion as address and short code.
async fn pair_by_code(host: &Hearth, app: &Hearth, scopes: DeviceScopes) -> hearth_protocol::devices::HostLinkView {
    let offer = host.device_pair_offer(&DevicePairOfferParams { name: "Laptop".into(), scopes }).await.unwrap();
    let params = HostLinkPairParams { address: offer.address.clone(), code: offer.short_code.clone(), name: "My laptop".into() };
    let status = guarded(app.host_link_pair(&params)).await.unwrap();
    let link = status.link.expect("paired");
    assert_eq!(link.fingerprint, offer.fingerprint, "the companion shows the fingerprint the host's Settings shows");
    link
}

fn request(command: &str, params: Value) -> HostRequest {
    HostRequest { command: command.to_owned(), params }
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_app_chats_through_its_host_and_nothing_runs_here() {
    let host = host().await;
    let app = app_in(tempfile::tempdir().unwrap()).await;
    pair_by_code(&host.hearth, &app.hearth, DeviceScopes::DEFAULT).await;

    let (started, mut events) = guarded(app.hearth.host_stream(&request("run_start", json!({"text": "hello"})))).await.unwrap();
    assert!(started["runId"].is_string(), "{started}");
    let mut kinds = Vec::new();
    while let Some(event) = guarded(events.recv()).await {
        kinds.push(event["type"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(kinds.first().map(String::as_str), Some("RUN_STARTED"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("RUN_FINISHED"), "the stream ends with the run: {kinds:?}");
    assert_eq!(host.hearth.thread_list().await.unwrap().threads.len(), 1, "the chat is the host's");
    assert!(app.hearth.thread_list().await.unwrap().threads.is_empty(), "nothing ran on the companion");
    let threads = guarded(app.hearth.host_call(&request("thread_list", Value::Null))).await.unwrap();
    assert_eq!(threads["threads"].as_array().map(Vec::len), Some(1), "the window's list comes from the host: {threads}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_from_the_app_sends_once_with_the_hash_the_host_shows() {
    let host = host().await;
    let (_, proposal) = email_awaiting_review(&host).await;
    let app = app_in(tempfile::tempdir().unwrap()).await;
    pair_by_code(&host.hearth, &app.hearth, DeviceScopes::DEFAULT).await;

    // The card the app shows is the host's, hash and all.
    let card = guarded(app.hearth.host_call(&request("approval_get", json!({"proposalId": proposal.id})))).await.unwrap();
    assert_eq!(card["hash"].as_str(), Some(proposal.hash.as_str()));
    // A hash that is not the shown one decides nothing.
    let stale = json!({"proposalId": proposal.id, "hash": "0".repeat(64), "decision": "approve"});
    assert!(guarded(app.hearth.host_call(&request("approval_decide", stale))).await.is_err());
    assert_eq!(sent(&host.hearth).await, 0);

    let decide = json!({"proposalId": proposal.id, "hash": proposal.hash, "decision": "approve"});
    let decided = guarded(app.hearth.host_call(&request("approval_decide", decide.clone()))).await.unwrap();
    assert_eq!(decided["status"].as_str(), Some("succeeded"), "{decided}");
    // The same decision again (a retry after a lost answer) is answered with the outcome.
    let again = guarded(app.hearth.host_call(&request("approval_decide", decide))).await.unwrap();
    assert_eq!(again["receipt"], decided["receipt"], "{again}");
    assert_eq!(sent(&host.hearth).await, 1, "one approval from the app, one message in Sent");
    assert_eq!(host.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::Succeeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_its_scopes_the_app_gets_the_hosts_refusal_and_nothing_is_sent() {
    let host = host().await;
    let (_, proposal) = email_awaiting_review(&host).await;
    let app = app_in(tempfile::tempdir().unwrap()).await;
    let read_only = DeviceScopes { read: true, chat: false, decide_approvals: false, control_tasks: false, destructive: false };
    pair_by_code(&host.hearth, &app.hearth, read_only).await;

    let decide = json!({"proposalId": proposal.id, "hash": proposal.hash, "decision": "approve"});
    let refused = guarded(app.hearth.host_call(&request("approval_decide", decide))).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Forbidden, "{}", refused.message);
    assert!(refused.message.contains("decide_approvals"), "the refusal names what is missing: {}", refused.message);
    // What only the window at home may do, in its own words.
    let settings = guarded(app.hearth.host_call(&request("settings_get", Value::Null))).await.unwrap_err();
    assert_eq!(settings.code, ErrorCode::Forbidden);
    assert!(settings.message.contains("only available in the Hearth app at home"), "{}", settings.message);
    // The link's own commands and names that are no command never leave the app.
    for command in ["host_call", "no_such_command"] {
        let invalid = app.hearth.host_call(&request(command, Value::Null)).await.unwrap_err();
        assert_eq!(invalid.code, ErrorCode::InvalidInput, "{command}: {}", invalid.message);
    }
    assert_eq!(sent(&host.hearth).await, 0);
    assert_eq!(host.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_survives_a_restart_of_either_side_and_forgetting_it_leaves_nothing() {
    let host_dir = tempfile::tempdir().unwrap();
    let mut host = host_in(host_dir).await;
    let app_dir = tempfile::tempdir().unwrap();
    let app = app_in(app_dir).await;
    pair_by_code(&host.hearth, &app.hearth, DeviceScopes::DEFAULT).await;
    guarded(app.hearth.host_call(&request("thread_list", Value::Null))).await.unwrap();

    // The companion restarts: the link is read back from its vault.
    let TestHearth { hearth, dir } = app;
    hearth.shutdown().await;
    let app = app_in(dir).await;
    let status = app.hearth.host_link_status().await.unwrap();
    let link = status.link.expect("the link is kept");
    assert!(!link.connected, "not connected until used");
    guarded(app.hearth.host_call(&request("thread_list", Value::Null))).await.unwrap();
    assert!(app.hearth.host_link_status().await.unwrap().link.unwrap().connected);

    // The host restarts on the same address: the next request connects again.
    let address: std::net::SocketAddr = link.address.parse().unwrap();
    let TestHearth { hearth, dir } = host;
    hearth.shutdown().await;
    let mut config = fast_config(dir.path());
    config.pairing_listen = address;
    host = TestHearth { hearth: Hearth::open(config).await.unwrap(), dir };
    let threads = guarded(app.hearth.host_call(&request("thread_list", Value::Null))).await.unwrap();
    assert!(threads["threads"].is_array(), "{threads}");

    // Forgotten: the keys leave the vault, and nothing goes to the host any more.
    assert!(app.hearth.host_link_forget().await.unwrap().link.is_none());
    let again = app.hearth.host_call(&request("thread_list", Value::Null)).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Unavailable, "{}", again.message);
    let TestHearth { hearth, dir } = app;
    hearth.shutdown().await;
    let app = app_in(dir).await;
    assert!(app.hearth.host_link_status().await.unwrap().link.is_none(), "forgotten for good");
    drop(host);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_app_is_refused_and_its_open_stream_ends() {
    let host = host().await;
    let app = app_in(tempfile::tempdir().unwrap()).await;
    let link = pair_by_code(&host.hearth, &app.hearth, DeviceScopes::DEFAULT).await;
    let (_, mut notices) = guarded(app.hearth.host_stream(&request("notification_watch", Value::Null))).await.unwrap();

    host.hearth.device_revoke(&DeviceId::parse(link.device_id.as_str()).unwrap()).await.unwrap();
    assert!(guarded(notices.recv()).await.is_none(), "the open stream ends at once");
    let refused = guarded(app.hearth.host_call(&request("thread_list", Value::Null))).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Forbidden, "{}", refused.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_code_pairs_nothing_and_keeps_nothing() {
    let host = host().await;
    let app = app_in(tempfile::tempdir().unwrap()).await;
    let offer =
        host.hearth.device_pair_offer(&DevicePairOfferParams { name: "Laptop".into(), scopes: DeviceScopes::DEFAULT }).await.unwrap();
    let wrong = hearth_core::pairing::PairingSecret::generate().unwrap().short_code().to_string();
    let params = HostLinkPairParams { address: offer.address.clone(), code: wrong, name: "My laptop".into() };
    let failed = guarded(app.hearth.host_link_pair(&params)).await;
    assert!(failed.is_err(), "a wrong code pairs nothing");
    for (address, code) in [("not an address", offer.short_code.as_str()), (offer.address.as_str(), "short")] {
        let params = HostLinkPairParams { address: address.into(), code: code.into(), name: "My laptop".into() };
        let refused = app.hearth.host_link_pair(&params).await.unwrap_err();
        assert!(matches!(refused, hearth_core::CoreError::InvalidInput(_)), "{refused}");
    }
    assert!(app.hearth.host_link_status().await.unwrap().link.is_none());
    assert!(host.hearth.device_list().await.unwrap().is_empty(), "the host registered nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_with_work_under_way_is_not_paired() {
    let host = host().await;
    // A card waits here: once paired, this window would show the home Hearth's and the owner
    // could no longer decide it.
    let app = app_in(tempfile::tempdir().unwrap()).await;
    let (_, waiting) = email_awaiting_review(&app).await;
    let offer =
        host.hearth.device_pair_offer(&DevicePairOfferParams { name: "Laptop".into(), scopes: DeviceScopes::DEFAULT }).await.unwrap();
    let params = HostLinkPairParams { address: offer.address.clone(), code: offer.short_code.clone(), name: "My laptop".into() };
    let refused = app.hearth.host_link_pair(&params).await.unwrap_err();
    assert!(matches!(&refused, hearth_core::CoreError::Conflict(why) if why.contains("approval card")), "{refused}");
    assert!(app.hearth.host_link_status().await.unwrap().link.is_none());
    assert!(host.hearth.device_list().await.unwrap().is_empty(), "nothing reached the host");
    assert_eq!(app.hearth.approval_get(&waiting.id).await.unwrap().status, ProposalStatus::AwaitingReview, "the card is still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_link_never_connects_again_and_a_reloaded_window_gets_a_new_connection() {
    use hearth_core::pairing::{Companion, CompanionConfig, HostLink, PairingError, PairingOffer, StaticKeypair, WindowEpoch};
    let host = host().await;
    let offer =
        host.hearth.device_pair_offer(&DevicePairOfferParams { name: "Laptop".into(), scopes: DeviceScopes::DEFAULT }).await.unwrap();
    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    let pairing = guarded(companion.pair(&PairingOffer::parse(&offer.uri).unwrap(), "laptop")).await.unwrap();
    let window = WindowEpoch::default();
    let link = HostLink::new(companion, pairing, std::sync::Arc::clone(&window));
    guarded(link.request("thread_list", Value::Null)).await.unwrap();
    assert!(link.is_connected());

    // The window reloads: the next request gets a new connection, and the old page's stream
    // ends with the old one.
    let (_, mut watch) = guarded(link.open_stream("task_watch", Value::Null)).await.unwrap();
    window.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    guarded(link.request("thread_list", Value::Null)).await.unwrap();
    assert!(guarded(watch.recv()).await.is_none(), "the old page's stream ended with its connection");
    assert!(link.is_connected());
    // The new page's streams are kept across its own requests.
    let (_, mut kept) = guarded(link.open_stream("task_watch", Value::Null)).await.unwrap();
    guarded(link.request("thread_list", Value::Null)).await.unwrap();
    assert!(matches!(kept.try_recv(), Err(tokio::sync::mpsc::error::TryRecvError::Empty)), "still open");

    // Closed (forgotten): nothing connects with these keys again.
    link.close().await;
    assert!(matches!(link.request("thread_list", Value::Null).await, Err(PairingError::NotConnected)));
    assert!(!link.is_connected());
}
