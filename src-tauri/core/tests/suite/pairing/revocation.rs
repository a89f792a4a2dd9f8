//! Revocation: effective on the next request, and open streams close at once.

use hearth_core::pairing::{CloseReason, DeviceStore, ErrorCode, HostConfig, PairingError, Push, StreamId};
use serde_json::json;

use super::support::{TestHost, guarded};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoke_closes_an_open_stream_at_once_and_the_next_request_is_refused() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let mut connection = companion.connect(&pairing).await.unwrap();
    connection.request("stream", json!({"stream": "run-1", "event": {"token": "Hel"}})).await.unwrap();
    let first = guarded(connection.next_push()).await.unwrap();
    assert_eq!(first, Push::Event { stream: StreamId::new("run-1"), event: json!({"token": "Hel"}) });

    assert_eq!(host.host.revoke(&pairing.device_id).await.unwrap(), 1);

    match guarded(connection.next_push()).await.unwrap() {
        Push::Closed { reason, .. } => assert_eq!(reason, CloseReason::Revoked),
        other => panic!("expected the stream to close, got {other:?}"),
    }
    assert_eq!(guarded(connection.next_push()).await, None);
    // The host-side producer saw its connection close.
    guarded(host.handler.streams_cancelled.subscribe().wait_for(|n| *n >= 1)).await.unwrap();

    let err = connection.request("echo", json!(1)).await.unwrap_err();
    assert!(matches!(err, PairingError::Closed { reason: CloseReason::Revoked, .. }), "{err}");
    let err = companion.connect(&pairing).await.err().unwrap();
    assert!(matches!(err, PairingError::DeviceRefused), "{err}");
    assert_eq!(host.handler.calls(), 1, "only the stream request was served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocation_written_elsewhere_refuses_the_next_request() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let mut connection = companion.connect(&pairing).await.unwrap();
    connection.request("echo", json!(1)).await.unwrap();

    // The core's store revoked it without going through Host::revoke.
    assert!(host.store.revoke(&pairing.device_id).await.unwrap());

    match connection.request("echo", json!(2)).await.unwrap_err() {
        PairingError::Remote(error) => assert_eq!(error.code, ErrorCode::Forbidden),
        other => panic!("expected a refusal, got {other}"),
    }
    assert_eq!(host.handler.calls(), 1, "the refused request never reached the handler");
    match guarded(connection.next_push()).await.unwrap() {
        Push::Closed { reason, .. } => assert_eq!(reason, CloseReason::Revoked),
        other => panic!("expected the connection to close, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_flight_at_revocation_is_reported_as_unknown() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let connection = companion.connect(&pairing).await.unwrap();
    let client = connection.client();
    let waiting = tokio::spawn(async move { client.request("wait", json!({})).await });
    guarded(host.handler.waits_started.subscribe().wait_for(|n| *n >= 1)).await.unwrap();

    host.host.revoke(&pairing.device_id).await.unwrap();

    let err = guarded(waiting).await.unwrap().unwrap_err();
    assert!(matches!(err, PairingError::AnswerLost { reason: CloseReason::Revoked, .. }), "{err}");
    assert!(err.to_string().contains("unknown"), "{err}");
}
