//! Sessions (IK): a paired key gets a working session; any other key, or a replay, gets nothing.

use hearth_core::pairing::{ErrorCode, HostConfig, HostPairing, PairingError, Push, StreamId};
use serde_json::json;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::{RecordingProxy, TestHost, companion, guarded, replay};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_with_ik_round_trips_a_request() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;

    let connection = companion.connect(&pairing).await.unwrap();
    let answer = connection.request("echo", json!({"hello": "world"})).await.unwrap();
    assert_eq!(answer, json!({"device": companion.device_id().as_str(), "params": {"hello": "world"}}));
    assert_eq!(host.handler.calls(), 1);
    assert_eq!(host.host.connected_devices(), vec![companion.device_id()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_errors_reach_the_companion_with_their_code() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let connection = companion.connect(&pairing).await.unwrap();

    match connection.request("fail", json!({})).await.unwrap_err() {
        PairingError::Remote(error) => {
            assert_eq!(error.code, ErrorCode::NotFound);
            assert!(error.message.contains("thread 42"));
        }
        other => panic!("expected the host's error, got {other}"),
    }
    // The connection goes on.
    connection.request("echo", json!(1)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unregistered_key_is_refused() {
    let host = TestHost::start(HostConfig::default()).await;
    let stranger = companion();
    let claimed = HostPairing { host: host.addr, host_key: host.host.public_key(), device_id: stranger.device_id() };

    let err = stranger.connect(&claimed).await.err().unwrap();
    assert!(matches!(err, PairingError::DeviceRefused), "{err}");
    assert_eq!(host.handler.calls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    assert_eq!(host.host.revoke(&pairing.device_id).await.unwrap(), 0, "no connection was open");

    let err = companion.connect(&pairing).await.err().unwrap();
    assert!(matches!(err, PairingError::DeviceRefused), "{err}");
    assert_eq!(host.handler.calls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_session_handshake_serves_nothing() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let mut proxy = RecordingProxy::start(host.addr).await;
    let through_proxy = HostPairing { host: proxy.addr, ..pairing };

    let connection = companion.connect(&through_proxy).await.unwrap();
    connection.request("echo", json!({"n": 1})).await.unwrap();
    assert_eq!(host.handler.calls(), 1);
    drop(connection);
    let recording = proxy.next_recording().await;
    host.wait_finished(2).await; // the pairing and the recorded session

    // Message 1, hello and the request, verbatim, on a fresh connection.
    let back = replay(host.addr, &recording.to_host).await;
    host.wait_finished(3).await;
    assert_eq!(host.handler.calls(), 1, "no request was served to the replay");
    assert!(host.host.connected_devices().is_empty(), "the replay never became a session");
    // The host answered message 1 (it cannot tell a replay from it) and nothing more.
    assert!(back.len() < 100, "the replay got {} bytes", back.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_notice_reaches_every_open_connection() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let mut first = companion.connect(&pairing).await.unwrap();
    let mut second = companion.connect(&pairing).await.unwrap();
    // A request on each proves both sessions are registered (hello is read before that).
    first.request("echo", json!(1)).await.unwrap();
    second.request("echo", json!(2)).await.unwrap();

    let stream = StreamId::new("approvals");
    let sent = host.host.notify(&pairing.device_id, &stream, json!({"approval": "ap-1"}));
    assert_eq!(sent, 2);
    for connection in [&mut first, &mut second] {
        let push = guarded(connection.next_push()).await.unwrap();
        assert_eq!(push, Push::Event { stream: stream.clone(), event: json!({"approval": "ap-1"}) });
    }
}

#[tokio::test]
async fn a_replayed_first_message_alone_never_becomes_a_session() {
    let host = TestHost::start(HostConfig::default()).await;
    let (companion, pairing) = host.paired_companion().await;
    let mut proxy = RecordingProxy::start(host.addr).await;
    let connection = companion.connect(&HostPairing { host: proxy.addr, ..pairing.clone() }).await.unwrap();
    connection.request("echo", json!(1)).await.unwrap();
    drop(connection);
    let recording = proxy.next_recording().await;
    host.wait_finished(2).await;

    // Preamble and message 1 only; the host answers message 2 and then waits for a hello the
    // replayer cannot make.
    let first_len = 6 + 2 + usize::from(u16::from_be_bytes([recording.to_host[6], recording.to_host[7]]));
    let mut replayer = TcpStream::connect(host.addr).await.unwrap();
    replayer.write_all(&recording.to_host[..first_len]).await.unwrap();
    let mut message_2 = [0u8; 2];
    guarded(replayer.read_exact(&mut message_2)).await.unwrap();
    let mut rest = vec![0u8; usize::from(u16::from_be_bytes(message_2))];
    guarded(replayer.read_exact(&mut rest)).await.unwrap();

    assert!(host.host.connected_devices().is_empty(), "not a session before hello");
    assert_eq!(host.host.notify(&pairing.device_id, &StreamId::new("approvals"), json!({})), 0, "no notice goes to a replayer");
    drop(replayer);
    host.wait_finished(3).await;
    assert_eq!(host.handler.calls(), 1);
}
