//! Two Hearth processes on loopback: the app's own binary as the headless home server
//! (`hearth serve`), and a companion (this test, through the core's pairing client) that pairs
//! with the offer the owner makes at the host, works through it, and is revoked.
//!
//! What a paired device may do, request by request, is tested against an in-process host in
//! the core's `suite::devices`; this test shows the same wire between two real processes, the
//! pairings surviving the host's restart, and what the bytes on the wire carry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use hearth_core::pairing::{Companion, CompanionConfig, ErrorCode, PairingError, PairingOffer, Push, StaticKeypair, StreamId};
use hearth_testkit::home_server::HomeServer;
use serde_json::{Value, json};

const APP: &str = env!("CARGO_BIN_EXE_hearth");

/// A bound for awaits that must finish: a hung host fails the test instead of hanging it.
async fn guarded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), future).await.expect("the test's guard ran out: the host hangs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_companion_pairs_with_a_home_server_chats_through_it_and_is_revoked() {
    let data = tempfile::tempdir().unwrap();
    let mut host = HomeServer::start(APP, data.path()).await;

    // The owner makes an offer at the host: the QR code's text goes to the device.
    let answer = host.ask("offer Phone read,chat").await;
    let offer = PairingOffer::parse(answer["offer"]["uri"].as_str().unwrap()).unwrap();
    assert_eq!(offer.host, host.listening);
    assert_eq!(offer.fingerprint.to_string(), answer["offer"]["fingerprint"].as_str().unwrap());

    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    let mut pairing = guarded(companion.pair(&offer, "phone")).await.unwrap();
    let mut connection = guarded(companion.connect(&pairing)).await.unwrap();

    // Chat runs on the host's agent; its events come back on the connection.
    let client = connection.client();
    let request = client.reserve();
    let started = guarded(client.request_as(request, "run_start", json!({"text": "hello"}))).await.unwrap();
    assert!(started["runId"].is_string(), "{started}");
    let run_stream = StreamId::opened_by(request);
    let mut last = String::new();
    loop {
        match guarded(connection.next_push()).await {
            Some(Push::Event { event, .. }) => last = event["type"].as_str().unwrap_or_default().to_owned(),
            Some(Push::StreamEnd { stream }) if stream == run_stream => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(last, "RUN_FINISHED");
    // Outside its scopes (read, chat): refused by the host.
    match guarded(connection.request("approval_decide", json!({"proposalId": "p", "hash": "0".repeat(64), "decision": "approve"}))).await {
        Err(PairingError::Remote(error)) => assert_eq!(error.code, ErrorCode::Forbidden, "{}", error.message),
        other => panic!("expected a refusal, got {other:?}"),
    }
    drop(connection);

    // The host restarts on the same data folder: the pairing holds (the host's key is in its
    // vault, the device in its store).
    host.stop().await;
    let mut host = HomeServer::start(APP, data.path()).await;
    pairing.host = host.listening;
    let connection = guarded(companion.connect(&pairing)).await.unwrap();
    let threads = guarded(connection.request("thread_list", Value::Null)).await.unwrap();
    assert_eq!(threads["threads"].as_array().map(Vec::len), Some(1), "the chat is on the host: {threads}");

    // Revoked at the host: the open connection ends, and the device cannot come back.
    let devices = host.ask("devices").await;
    let id = devices["devices"][0]["id"].as_str().unwrap().to_owned();
    let revoked = host.ask(&format!("revoke {id}")).await;
    assert!(revoked["revoked"]["revokedAt"].is_i64(), "{revoked}");
    let refused = guarded(connection.request("thread_list", Value::Null)).await;
    assert!(refused.is_err(), "a revoked device's next request is refused: {refused:?}");
    assert!(matches!(guarded(companion.connect(&pairing)).await, Err(PairingError::DeviceRefused)));
    host.stop().await;
}
