//! No plaintext on the wire: what the proxy saw carries none of what was said.

use hearth_core::pairing::{HostConfig, HostPairing, Push, StreamId};
use serde_json::json;

use super::support::{RecordingProxy, TestHost, companion, guarded};

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_never_appears_in_plaintext_on_the_wire() {
    const BODY: &str = "MARKER-mail-body-7f3a9c: Dear Sam, the keys are under the mat";
    const NAME: &str = "MARKER-device-name";
    let host = TestHost::start(HostConfig::default()).await;
    let mut proxy = RecordingProxy::start(host.addr).await;
    let issued = host.host.offer_pairing(proxy.addr).unwrap();
    let companion = companion();

    let pairing = companion.pair(&issued.offer, NAME).await.unwrap();
    let through_proxy = HostPairing { host: proxy.addr, ..pairing };
    let mut connection = companion.connect(&through_proxy).await.unwrap();
    let echoed = connection.request("echo", json!({"body": BODY})).await.unwrap();
    assert_eq!(echoed["params"]["body"], BODY, "the marker did travel, both ways");
    connection.request("stream", json!({"stream": "run-9", "event": {"delta": BODY}, "end": true})).await.unwrap();
    assert_eq!(
        guarded(connection.next_push()).await.unwrap(),
        Push::Event { stream: StreamId::new("run-9"), event: json!({"delta": BODY}) }
    );
    drop(connection);

    let secret_code = issued.offer.secret.short_code().replace('-', "");
    let forbidden: Vec<(&str, Vec<u8>)> = vec![
        ("the mail body", BODY.as_bytes().to_vec()),
        ("the marker alone", b"MARKER".to_vec()),
        ("the device name", NAME.as_bytes().to_vec()),
        ("the pairing secret", secret_code.into_bytes()),
        ("a JSON field name", b"\"command\"".to_vec()),
        ("the companion's static key", companion.public_key().as_bytes().to_vec()),
        ("the host's static key", host.host.public_key().as_bytes().to_vec()),
    ];
    for connection in ["pairing", "session"] {
        let recording = proxy.next_recording().await;
        assert!(!recording.to_host.is_empty() && !recording.to_client.is_empty());
        for (what, bytes) in &forbidden {
            assert!(!contains(&recording.to_host, bytes), "{what} in plaintext, companion → host, {connection}");
            assert!(!contains(&recording.to_client, bytes), "{what} in plaintext, host → companion, {connection}");
        }
    }
}
