//! A host on loopback with a counting handler, and a recording proxy.

#[path = "support_handler.rs"]
pub mod handler;
#[path = "support_proxy.rs"]
pub mod proxy;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::pairing::{Companion, CompanionConfig, Host, HostConfig, HostPairing, MemoryDeviceStore, PairingOffer, StaticKeypair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub use handler::TestHandler;
pub use proxy::RecordingProxy;

/// A bound for awaits that must finish; a test fails rather than hangs. Never a synchronisation.
pub const GUARD: Duration = Duration::from_secs(20);

/// Awaits `future` or fails the test after [`GUARD`].
pub async fn guarded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(GUARD, future).await.expect("the test's guard ran out: something hangs")
}

/// A host serving on 127.0.0.1 with an in-memory device table and a counting handler.
pub struct TestHost {
    pub host: Host,
    pub store: Arc<MemoryDeviceStore>,
    pub handler: Arc<TestHandler>,
    pub addr: SocketAddr,
}

impl TestHost {
    pub async fn start(config: HostConfig) -> Self {
        Self::start_with_key(StaticKeypair::generate().unwrap(), config).await
    }

    pub async fn start_with_key(keypair: StaticKeypair, config: HostConfig) -> Self {
        let store = Arc::new(MemoryDeviceStore::new());
        let handler = Arc::new(TestHandler::default());
        let host = Host::new(keypair, store.clone(), handler.clone(), config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = host.clone();
        tokio::spawn(async move { serving.serve(listener).await });
        Self { host, store, handler, addr }
    }

    /// A fresh offer naming this host's address.
    pub fn offer(&self) -> PairingOffer {
        self.host.offer_pairing(self.addr).unwrap().offer
    }

    /// Waits until `n` connections have ended on the host (each after its socket closed).
    pub async fn wait_finished(&self, n: u64) {
        let mut counts = self.host.connection_counts();
        guarded(counts.wait_for(|c| c.finished >= n)).await.unwrap();
    }

    /// Pairs a new companion directly; the companion and what it keeps.
    pub async fn paired_companion(&self) -> (Companion, HostPairing) {
        let companion = companion();
        let pairing = companion.pair(&self.offer(), "Test phone").await.unwrap();
        (companion, pairing)
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.host.shutdown();
    }
}

/// A companion with a fresh key and default bounds.
pub fn companion() -> Companion {
    Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default())
}

/// Sends recorded bytes to `addr` on a fresh connection and reads whatever comes back until the
/// host closes (a reset counts as closed).
pub async fn replay(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(bytes).await;
    let mut back = Vec::new();
    let _ = guarded(stream.read_to_end(&mut back)).await;
    back
}
