//! Pairing: the right secret and key pair once; anything else pairs nothing.

use hearth_core::pairing::{HostConfig, PairingError, PairingOffer, PairingSecret, PublicKey, StaticKeypair};
use std::time::Duration;

use super::support::{RecordingProxy, TestHost, companion, replay};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_with_the_right_secret_and_fingerprint_registers_one_device() {
    let host = TestHost::start(HostConfig::default()).await;
    let issued = host.host.offer_pairing(host.addr).unwrap();
    let companion = companion();
    let pairing = companion.pair(&issued.offer, "Owner's phone").await.unwrap();

    assert_eq!(pairing.host_key, host.host.public_key());
    assert_eq!(pairing.device_id, companion.device_id());
    let devices = host.store.devices();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].id, companion.device_id());
    assert_eq!(devices[0].public_key, companion.public_key());
    assert_eq!(devices[0].name.as_str(), "Owner's phone");
    assert_eq!(devices[0].offer, issued.id, "the core learns which offer (and so which scope) it used");
    assert_eq!(host.host.offer_state(), None, "the offer is consumed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_secret_pairs_nothing() {
    let host = TestHost::start(HostConfig::default()).await;
    let offer = host.offer();
    let wrong = PairingOffer { secret: PairingSecret::generate().unwrap(), ..offer.clone() };

    let err = companion().pair(&wrong, "Intruder").await.unwrap_err();
    assert!(matches!(err, PairingError::PairingRefused), "{err}");
    assert!(host.store.devices().is_empty());
    assert_eq!(host.host.offer_state().unwrap().failures, 1, "the wrong try was counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reused_secret_pairs_nothing() {
    let host = TestHost::start(HostConfig::default()).await;
    let offer = host.offer();
    let first = companion();
    first.pair(&offer, "First").await.unwrap();

    for again in [companion(), first] {
        let err = again.pair(&offer, "Again").await.unwrap_err();
        assert!(matches!(err, PairingError::PairingRefused), "{err}");
    }
    assert_eq!(host.store.devices().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_fingerprint_is_refused_before_the_secret_is_used() {
    let host = TestHost::start(HostConfig::default()).await;
    let offer = host.offer();
    let other = PublicKey::from_bytes(&[3; 32]).unwrap().fingerprint();
    let pinned_elsewhere = PairingOffer { fingerprint: other, ..offer.clone() };

    let err = companion().pair(&pinned_elsewhere, "Phone").await.unwrap_err();
    match err {
        PairingError::HostKeyMismatch { expected, found, .. } => {
            assert_eq!(expected, other.to_string());
            assert_eq!(found, host.host.fingerprint().to_string());
        }
        other => panic!("expected a key mismatch, got {other}"),
    }
    assert!(host.store.devices().is_empty());
    // Message 3 never reached the host: no try counted, and the offer still pairs.
    assert_eq!(host.host.offer_state().unwrap().failures, 0);
    companion().pair(&offer, "Phone").await.unwrap();
    assert_eq!(host.store.devices().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_pairing_exchange_registers_nothing() {
    let key = StaticKeypair::generate().unwrap();
    let twin_key = StaticKeypair::from_private_bytes(key.private_bytes()).unwrap();
    let host = TestHost::start_with_key(key, HostConfig::default()).await;
    let mut proxy = RecordingProxy::start(host.addr).await;
    let issued = host.host.offer_pairing(proxy.addr).unwrap();
    let secret = issued.offer.secret.clone();
    companion().pair(&issued.offer, "Phone").await.unwrap();
    let recording = proxy.next_recording().await;
    assert_eq!(host.store.devices().len(), 1);
    host.wait_finished(1).await;

    // To the same host, whose offer is now used.
    replay(host.addr, &recording.to_host).await;
    host.wait_finished(2).await;
    assert_eq!(host.store.devices().len(), 1, "the replay registered nothing more");

    // To a host with the same key and a live offer of the same secret: refused by the
    // handshake itself (its fresh ephemeral), not by the offer being gone.
    let twin = TestHost::start_with_key(twin_key, HostConfig::default()).await;
    twin.host.offer_pairing_with_secret(twin.addr, secret);
    replay(twin.addr, &recording.to_host).await;
    twin.wait_finished(1).await;
    assert!(twin.store.devices().is_empty());
    assert_eq!(twin.host.offer_state().unwrap().failures, 1, "the replayed message 3 failed authentication");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offer_is_withdrawn_after_five_wrong_secrets() {
    let host = TestHost::start(HostConfig::default()).await;
    let offer = host.offer();
    for _ in 0..5 {
        let wrong = PairingOffer { secret: PairingSecret::generate().unwrap(), ..offer.clone() };
        assert!(matches!(companion().pair(&wrong, "Guess").await, Err(PairingError::PairingRefused)));
    }
    assert_eq!(host.host.offer_state(), None);
    let err = companion().pair(&offer, "Owner").await.unwrap_err();
    assert!(matches!(err, PairingError::PairingRefused), "{err}");
    assert!(host.store.devices().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_offer_pairs_nothing() {
    let host = TestHost::start(HostConfig { offer_ttl: Duration::ZERO, ..HostConfig::default() }).await;
    let err = companion().pair(&host.offer(), "Late").await.unwrap_err();
    assert!(matches!(err, PairingError::PairingRefused), "{err}");
    assert!(host.store.devices().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_offer_withdraws_the_old_one() {
    let host = TestHost::start(HostConfig::default()).await;
    let old = host.offer();
    let new = host.offer();
    assert!(matches!(companion().pair(&old, "Old").await, Err(PairingError::PairingRefused)));
    companion().pair(&new, "New").await.unwrap();
    assert_eq!(host.store.devices().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_code_pairs_and_the_host_proves_it_knew_the_secret() {
    let host = TestHost::start(HostConfig::default()).await;
    let offer = host.offer();
    let typed = PairingSecret::from_short_code(&offer.secret.short_code().to_lowercase()).unwrap();

    let wrong = PairingSecret::generate().unwrap();
    assert!(matches!(companion().pair_with_code(host.addr, &wrong, "Phone").await, Err(PairingError::PairingRefused)));
    let pairing = companion().pair_with_code(host.addr, &typed, "Phone").await.unwrap();
    assert_eq!(pairing.host_key.fingerprint(), host.host.fingerprint(), "shown to the owner to compare");
    assert_eq!(host.store.devices().len(), 1);
}
