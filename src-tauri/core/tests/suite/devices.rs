//! Hearth as the pairing host (Settings → Devices): a companion on loopback pairs through the
//! owner's offer and reaches exactly what the scopes the owner chose allow — checked by the host
//! from its own store on every request. Counted in Sent rows, devices and pushed events.

use std::net::SocketAddr;

use hearth_core::Hearth;
use hearth_core::pairing::{
    Companion, CompanionConfig, Connection, ErrorCode, HostPairing, PairingError, PairingOffer, Push, StaticKeypair, StreamId,
};
use hearth_protocol::approvals::{ProposalStatus, ProposalView};
use hearth_protocol::devices::{DevicePairOfferParams, DeviceScopes};
use hearth_protocol::ids::DeviceId;
use serde_json::{Value, json};

use super::support::{TestHearth, email_awaiting_review, fast_config, guarded};

/// A host Hearth whose pairing host listens on loopback, on a free port.
pub(super) async fn host_in(dir: tempfile::TempDir) -> TestHearth {
    let mut config = fast_config(dir.path());
    config.pairing_listen = SocketAddr::from(([127, 0, 0, 1], 0));
    TestHearth { hearth: Hearth::open(config).await.unwrap(), dir }
}

pub(super) async fn host() -> TestHearth {
    host_in(tempfile::tempdir().unwrap()).await
}

/// The owner's offer with `scopes`, as the QR code carries it.
async fn offer(hearth: &Hearth, scopes: DeviceScopes) -> PairingOffer {
    let view = hearth.device_pair_offer(&DevicePairOfferParams { name: "Test phone".into(), scopes }).await.unwrap();
    assert!(view.qr_svg.starts_with("<?xml") || view.qr_svg.contains("<svg"), "a QR code is drawn");
    PairingOffer::parse(&view.uri).unwrap()
}

/// A companion paired with `hearth` under `scopes`, connected.
async fn paired(hearth: &Hearth, scopes: DeviceScopes) -> (Companion, HostPairing, Connection) {
    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    let pairing = guarded(companion.pair(&offer(hearth, scopes).await, "a name the device chose")).await.unwrap();
    let connection = guarded(companion.connect(&pairing)).await.unwrap();
    (companion, pairing, connection)
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

fn decide(proposal: &ProposalView) -> Value {
    json!({"proposalId": proposal.id, "hash": proposal.hash, "decision": "approve"})
}

fn refused(result: Result<Value, PairingError>) -> String {
    match result {
        Err(PairingError::Remote(error)) => {
            assert_eq!(error.code, ErrorCode::Forbidden, "{}", error.message);
            error.message
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_companion_that_may_decide_approves_once_and_the_host_sends_once() {
    let t = host().await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let (_, _, connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;

    let listed = guarded(connection.request("approval_list", Value::Null)).await.unwrap();
    let shown = &listed["proposals"][0];
    assert_eq!(shown["hash"], json!(proposal.hash), "the device sees the hash the host's card shows");

    let decided = guarded(connection.request("approval_decide", decide(&proposal))).await.unwrap();
    assert_eq!(decided["status"], json!("succeeded"), "{decided}");
    // The same decision again (a retry after a lost answer) sends nothing more.
    let _again = guarded(connection.request("approval_decide", decide(&proposal))).await;
    assert_eq!(sent(&t.hearth).await, 1, "one approval from the device, one message in Sent");
    let devices = t.hearth.device_list().await.unwrap();
    assert_eq!(devices.len(), 1);
    assert!(devices[0].last_used_at.is_some(), "Settings shows the device's last use");
    assert_eq!(devices[0].name, "Test phone", "the owner's name for it, not the device's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_companion_without_the_scope_is_refused_and_nothing_is_sent() {
    let t = host().await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let read_only = DeviceScopes { read: true, chat: false, decide_approvals: false, control_tasks: false, destructive: false };
    let (_, _, connection) = paired(&t.hearth, read_only).await;

    // Reading is allowed...
    guarded(connection.request("approval_get", json!({"proposalId": proposal.id}))).await.unwrap();
    // ...deciding, chatting and deleting are not.
    let message = refused(guarded(connection.request("approval_decide", decide(&proposal))).await);
    assert!(message.contains("decide_approvals"), "{message}");
    refused(guarded(connection.request("run_start", json!({"text": "hello"}))).await);
    refused(guarded(connection.request("memory_forget", json!({"id": 1}))).await);
    assert_eq!(sent(&t.hearth).await, 0, "the host sent nothing");
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_only_the_window_may_do_is_refused_to_every_device() {
    let t = host().await;
    let everything = DeviceScopes { read: true, chat: true, decide_approvals: true, control_tasks: true, destructive: true };
    let (_, _, connection) = paired(&t.hearth, everything).await;
    for (command, params) in [
        ("settings_get", Value::Null),
        ("accounts_get", Value::Null),
        ("mandate_grant", json!({})),
        ("file_import", json!({"path": "/etc/passwd"})),
        ("computer_run", json!({})),
        ("no_such_command", Value::Null),
    ] {
        let message = refused(guarded(connection.request(command, params)).await);
        assert!(message.contains("at home") || message.contains("not available"), "{command}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_from_a_companion_runs_on_the_host_and_streams_back() {
    let t = host().await;
    let (_, _, mut connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;
    // The run's stream is named by the request that starts it, so the device listens first.
    let client = connection.client();
    let request = client.reserve();
    let run_stream = StreamId::opened_by(request);
    let started = guarded(client.request_as(request, "run_start", json!({"text": "hello"}))).await.unwrap();
    assert!(started["runId"].is_string(), "{started}");
    let mut kinds = Vec::new();
    loop {
        match guarded(connection.next_push()).await {
            Some(Push::Event { stream, event }) if stream == run_stream => kinds.push(event["type"].as_str().unwrap_or("").to_owned()),
            Some(Push::StreamEnd { stream }) if stream == run_stream => break,
            Some(other) => panic!("unexpected push {other:?}"),
            None => panic!("the connection ended before the run"),
        }
    }
    assert_eq!(kinds.first().map(String::as_str), Some("RUN_STARTED"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("RUN_FINISHED"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "TEXT_MESSAGE_CONTENT"), "the reply's text came through: {kinds:?}");
    let threads = t.hearth.thread_list().await.unwrap();
    assert_eq!(threads.threads.len(), 1, "the chat is the host's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_companion_is_refused_and_its_open_stream_closes() {
    let t = host().await;
    let (companion, pairing, mut connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;
    guarded(connection.request("notification_watch", Value::Null)).await.unwrap();

    let id = DeviceId::parse(pairing.device_id.as_str()).unwrap();
    let revoked = t.hearth.device_revoke(&id).await.unwrap();
    assert!(revoked.revoked_at.is_some());
    // The open stream ends at once, with the reason.
    match guarded(connection.next_push()).await {
        Some(Push::Closed { message, .. }) => assert!(!message.is_empty()),
        other => panic!("expected the connection to close, got {other:?}"),
    }
    // And the device cannot come back.
    let again = guarded(companion.connect(&pairing)).await;
    assert!(matches!(again, Err(PairingError::DeviceRefused)), "{:?}", again.err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_or_reused_secret_pairs_nothing() {
    let t = host().await;
    let good = offer(&t.hearth, DeviceScopes::DEFAULT).await;
    let mut wrong = PairingOffer::parse(&offer(&t.hearth, DeviceScopes::DEFAULT).await.to_text()).unwrap();
    // A secret the owner never showed (the live offer is the second one now).
    wrong.secret = good.secret.clone();
    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    assert!(guarded(companion.pair(&wrong, "x")).await.is_err(), "a withdrawn offer's secret pairs nothing");
    assert!(t.hearth.device_list().await.unwrap().is_empty());

    let live = offer(&t.hearth, DeviceScopes::DEFAULT).await;
    guarded(companion.pair(&live, "x")).await.unwrap();
    let second = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    assert!(guarded(second.pair(&live, "y")).await.is_err(), "a used secret pairs nothing");
    assert_eq!(t.hearth.device_list().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_restarts_keeps_its_pairings() {
    let t = host().await;
    let (companion, mut pairing, connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;
    drop(connection);
    let TestHearth { hearth, dir } = t;
    hearth.shutdown().await;
    drop(hearth);

    // The same data folder: the host key comes from the vault, the device from the store, and
    // the host serves again at start because a device is paired.
    let t = host_in(dir).await;
    let listening = t.hearth.pairing_serve(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    pairing.host = listening;
    let connection = guarded(companion.connect(&pairing)).await.unwrap();
    guarded(connection.request("thread_list", Value::Null)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_whose_connection_drops_happens_at_most_once() {
    let t = host().await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let (companion, pairing, connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;
    // The decision leaves, and the device drops the connection without waiting for the answer.
    let client = connection.client();
    let pending = tokio::spawn({
        let params = decide(&proposal);
        async move { client.request("approval_decide", params).await }
    });
    drop(connection);
    let _lost = guarded(pending).await.unwrap();
    // The device reconnects and decides again, as an owner would after "outcome unknown".
    let connection = guarded(companion.connect(&pairing)).await.unwrap();
    let _again = guarded(connection.request("approval_decide", decide(&proposal))).await;
    // The first decision, if it reached the host, runs on in the host's own task: wait for the
    // proposal to leave Executing before counting.
    let settled = guarded(async {
        loop {
            let view = t.hearth.approval_get(&proposal.id).await.unwrap();
            if view.status != ProposalStatus::Executing {
                break view;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(settled.status, ProposalStatus::Succeeded, "{settled:?}");
    assert_eq!(sent(&t.hearth).await, 1, "two decisions across a dropped connection, one message in Sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_from_a_device_asks_before_any_effect() {
    let t = host().await;
    let (_, _, mut connection) = paired(&t.hearth, DeviceScopes::DEFAULT).await;
    // In the owner's own chat at home this is remembered at once (the sample agent's
    // remember_fact); from a device it waits on a card.
    let client = connection.client();
    let request = client.reserve();
    guarded(client.request_as(request, "run_start", json!({"text": "remember that the alarm code is 4711"}))).await.unwrap();
    loop {
        match guarded(connection.next_push()).await {
            Some(Push::StreamEnd { stream }) if stream == StreamId::opened_by(request) => break,
            Some(Push::Event { .. } | Push::StreamEnd { .. }) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(t.hearth.memory_list().await.unwrap().memories.is_empty(), "nothing was remembered without the owner");
    let waiting = t.hearth.approval_list().await.unwrap();
    assert_eq!(waiting.len(), 1, "the call waits on one card: {waiting:?}");
    assert_eq!(waiting[0].origin, hearth_protocol::approvals::ProposalOrigin::PairedDevice);
}
