//! Bounds: message size, handshake time, connections at once.

use std::time::Duration;

use hearth_core::pairing::{
    CloseReason, Companion, CompanionConfig, ErrorCode, HostConfig, HostPairing, Limits, PairingError, Push, StaticKeypair,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::support::{TestHost, companion, guarded};

const MIB: usize = 1024 * 1024;

/// Reads until the host closes; true if it did (EOF or reset), within the guard.
async fn closed_by_peer(stream: &mut TcpStream) -> bool {
    let mut sink = Vec::new();
    guarded(stream.read_to_end(&mut sink)).await.map(|_| true).unwrap_or(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_five_mib_request_is_refused_with_a_clear_error_and_the_connection_closes() {
    let host = TestHost::start(HostConfig::default()).await;
    // A companion that would send up to 8 MiB, so the host's 4 MiB bound is what refuses.
    let generous = CompanionConfig { limits: Limits { max_message_len: 8 * MIB, ..Limits::default() }, ..Default::default() };
    let companion = Companion::new(StaticKeypair::generate().unwrap(), generous);
    let pairing = companion.pair(&host.offer(), "Phone").await.unwrap();
    let mut connection = companion.connect(&pairing).await.unwrap();

    let err = connection.request("echo", json!({"blob": "x".repeat(5 * MIB)})).await.unwrap_err();
    match &err {
        PairingError::MessageTooLarge { len, max } => {
            assert!(*len > 5 * MIB);
            assert_eq!(*max, 4 * MIB);
        }
        other => panic!("expected the host's refusal, got {other}"),
    }
    assert!(err.to_string().contains("send less"), "{err}");
    match guarded(connection.next_push()).await.unwrap() {
        Push::Closed { reason, message } => {
            assert_eq!(reason, CloseReason::MessageTooLarge);
            assert!(message.contains("4194304"), "{message}");
        }
        other => panic!("expected the connection to close, got {other:?}"),
    }
    let after = connection.request("echo", json!(1)).await.unwrap_err();
    assert!(matches!(after, PairingError::Closed { reason: CloseReason::MessageTooLarge, .. }), "{after}");
    assert_eq!(host.handler.calls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_companion_refuses_to_send_over_its_own_bound() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let connection = companion.connect(&pairing).await.unwrap();

    let err = connection.request("echo", json!({"blob": "x".repeat(5 * MIB)})).await.unwrap_err();
    assert!(matches!(err, PairingError::MessageTooLarge { max, .. } if max == 4 * MIB), "{err}");
    connection.request("echo", json!(1)).await.unwrap();
    assert_eq!(host.handler.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_bound_becomes_an_error() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let connection = companion.connect(&pairing).await.unwrap();

    match connection.request("big", json!({"len": 5 * MIB})).await.unwrap_err() {
        PairingError::Remote(error) => {
            assert_eq!(error.code, ErrorCode::Internal);
            assert!(error.message.contains("ask for less"), "{}", error.message);
        }
        other => panic!("expected an error answer, got {other}"),
    }
    connection.request("echo", json!(1)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_handshake_times_out() {
    let limits = Limits { handshake_timeout: Duration::from_millis(200), ..Limits::default() };
    let host = TestHost::start(HostConfig { limits, ..HostConfig::default() }).await;

    // Silent from the start, and silent after the preamble.
    let mut silent = TcpStream::connect(host.addr).await.unwrap();
    let mut after_preamble = TcpStream::connect(host.addr).await.unwrap();
    after_preamble.write_all(b"HRTH\x01S").await.unwrap();
    assert!(closed_by_peer(&mut silent).await);
    assert!(closed_by_peer(&mut after_preamble).await);
    host.wait_finished(2).await;
    assert_eq!(*host.host.connection_counts().borrow(), hearth_core::pairing::ConnectionCounts { open: 0, finished: 2 });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_never_answers_times_out_the_companion() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let limits = Limits { handshake_timeout: Duration::from_millis(200), ..Limits::default() };
    let companion = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig { limits, ..Default::default() });
    let somewhere = HostPairing { host: addr, host_key: StaticKeypair::generate().unwrap().public(), device_id: companion.device_id() };
    let err = companion.connect(&somewhere).await.err().unwrap();
    assert!(matches!(err, PairingError::HandshakeTimeout { .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_closed_at_once() {
    let limits = Limits { handshake_timeout: Duration::from_secs(60), ..Limits::default() };
    let host = TestHost::start(HostConfig { limits, max_connections: 1, ..HostConfig::default() }).await;
    let mut counts = host.host.connection_counts();

    let holder = TcpStream::connect(host.addr).await.unwrap();
    guarded(counts.wait_for(|c| c.open == 1)).await.unwrap();
    let mut extra = TcpStream::connect(host.addr).await.unwrap();
    assert!(closed_by_peer(&mut extra).await, "the extra connection was closed while the holder waits");

    drop(holder);
    host.wait_finished(1).await;
    companion().pair(&host.offer(), "Phone").await.unwrap();
    assert_eq!(host.store.devices().len(), 1, "a freed slot serves again");
}
