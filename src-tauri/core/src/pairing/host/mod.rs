//! The host: the owner's Hearth, listening on the LAN for its companions.
//!
//! [`Host::serve`] accepts connections (at most [`HostConfig::max_connections`] at once; more
//! are closed at once), reads the preamble and runs the pairing or the session handshake under
//! [`Limits::handshake_timeout`]. The core holds one `Host`, calls
//! [`Host::offer_pairing`] from Settings, [`Host::revoke`] when the owner revokes a device, and
//! [`Host::notify`] to push a notice (a new approval) to a device's open connections.

mod offers;
mod pairing;
mod registry;
mod session;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::pairing::Limits;
use crate::pairing::error::{PairingError, Result};
use crate::pairing::handler::RequestHandler;
use crate::pairing::keys::{DeviceId, Fingerprint, PublicKey, StaticKeypair};
use crate::pairing::offer::{PairingOffer, PairingSecret};
use crate::pairing::store::DeviceStore;
use crate::pairing::wire::{CloseReason, ServerMessage, StreamId};

use offers::OfferSlot;
pub use offers::{OfferId, OfferState};
use registry::Registry;

/// The host's bounds and timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// Message size and handshake time.
    pub limits: Limits,
    /// Connections open at once (handshaking or established); one more is closed at once.
    pub max_connections: usize,
    /// Requests one connection may have in flight; the next waits (and so does reading).
    pub max_in_flight: usize,
    /// Messages queued for one connection's writer; producers wait when it is full.
    pub outbox_capacity: usize,
    /// How long a pairing offer lives (at most a day).
    pub offer_ttl: Duration,
    /// Wrong secrets after which an offer is withdrawn.
    pub offer_max_failures: u32,
    /// After refusing a connection's message, how long the host still reads (and discards)
    /// while the refusal goes out, and how long a goodbye may take to write.
    pub linger: Duration,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            max_connections: 32,
            max_in_flight: 16,
            outbox_capacity: 256,
            offer_ttl: Duration::from_secs(10 * 60),
            offer_max_failures: 5,
            linger: Duration::from_secs(2),
        }
    }
}

/// An offer just made: what to show, and until when.
#[derive(Debug, Clone)]
pub struct IssuedOffer {
    /// Its id, handed back with the device it pairs ([`PairedDevice::offer`](crate::pairing::PairedDevice::offer)).
    pub id: OfferId,
    /// What the QR code carries ([`PairingOffer::to_text`]) and the short code
    /// ([`PairingSecret::short_code`]).
    pub offer: PairingOffer,
    /// When it expires, Unix milliseconds.
    pub expires_at: i64,
}

/// How many connections the host has, for Settings and for tests to wait on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionCounts {
    /// Open now (handshaking or established).
    pub open: usize,
    /// Ended since the host started (each after its socket was closed).
    pub finished: u64,
}

/// The owner's Hearth, serving its paired devices. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    keypair: StaticKeypair,
    store: Arc<dyn DeviceStore>,
    handler: Arc<dyn RequestHandler>,
    config: HostConfig,
    offers: OfferSlot,
    registry: Registry,
    shutdown: CancellationToken,
    slots: Arc<Semaphore>,
    counts: watch::Sender<ConnectionCounts>,
    tasks: TaskTracker,
}

impl Host {
    /// A host with its static keypair (from the vault), its device table and its handler.
    pub fn new(keypair: StaticKeypair, store: Arc<dyn DeviceStore>, handler: Arc<dyn RequestHandler>, config: HostConfig) -> Self {
        let inner = HostInner {
            keypair,
            store,
            handler,
            offers: OfferSlot::new(config.offer_max_failures),
            registry: Registry::default(),
            shutdown: CancellationToken::new(),
            slots: Arc::new(Semaphore::new(config.max_connections.max(1))),
            counts: watch::Sender::new(ConnectionCounts::default()),
            tasks: TaskTracker::new(),
            config,
        };
        Self { inner: Arc::new(inner) }
    }

    /// The host's public key.
    pub fn public_key(&self) -> PublicKey {
        self.inner.keypair.public()
    }

    /// The fingerprint Settings shows and the QR code carries.
    pub fn fingerprint(&self) -> Fingerprint {
        self.public_key().fingerprint()
    }

    /// Makes a new pairing offer with a fresh secret, withdrawing any other. `advertised` is the
    /// address the companion should dial: the host's LAN address and the port it serves on
    /// (not the wildcard it may listen on).
    pub fn offer_pairing(&self, advertised: SocketAddr) -> Result<IssuedOffer> {
        Ok(self.offer_pairing_with_secret(advertised, PairingSecret::generate()?))
    }

    /// Makes a pairing offer with a given secret. For tests (and a UI that draws its own
    /// secret); [`Host::offer_pairing`] is the ordinary way.
    pub fn offer_pairing_with_secret(&self, advertised: SocketAddr, secret: PairingSecret) -> IssuedOffer {
        let (id, expires_at) = self.inner.offers.put(&secret, self.inner.config.offer_ttl);
        IssuedOffer { id, offer: PairingOffer { host: advertised, fingerprint: self.fingerprint(), secret }, expires_at }
    }

    /// Withdraws the live offer (the owner closed the pairing screen).
    pub fn withdraw_offer(&self) {
        self.inner.offers.withdraw();
    }

    /// The live offer's state (wrong tries, expiry), or `None` when no offer is live.
    pub fn offer_state(&self) -> Option<OfferState> {
        self.inner.offers.state()
    }

    /// Revokes a device: writes the store first, then closes every open connection of the
    /// device at once (each gets a `closing` message if it is idle). Returns how many were
    /// closed. Its next request, or its next handshake, is refused.
    pub async fn revoke(&self, device: &DeviceId) -> Result<usize> {
        self.inner.store.revoke(device).await.map_err(PairingError::DeviceStore)?;
        let closed = self.inner.registry.close_device(device, CloseReason::Revoked);
        tracing::info!(%device, closed, "device revoked");
        Ok(closed)
    }

    /// Pushes an event on `stream` to every open connection of `device` that has room for it
    /// now, without waiting; how many got it. For notices (a new approval): a companion that
    /// missed one re-reads the list when it reconnects.
    pub fn notify(&self, device: &DeviceId, stream: &StreamId, event: Value) -> usize {
        self.inner.registry.notify(device, &ServerMessage::Event { stream: stream.clone(), event })
    }

    /// The devices with at least one authenticated connection open.
    pub fn connected_devices(&self) -> Vec<DeviceId> {
        self.inner.registry.connected()
    }

    /// Connection counts; the receiver sees every change (tests wait on it rather than sleep).
    pub fn connection_counts(&self) -> watch::Receiver<ConnectionCounts> {
        self.inner.counts.subscribe()
    }

    /// Stops accepting, closes every connection (each told the host is shutting down) and lets
    /// [`Host::serve`] return once they and their handlers have ended.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// Serves `listener` until [`Host::shutdown`].
    pub async fn serve(&self, listener: TcpListener) -> Result<()> {
        let inner = &self.inner;
        loop {
            let accepted = tokio::select! {
                biased;
                () = inner.shutdown.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors or a connection aborted before accept: wait a moment
                    // rather than spin, then go on serving.
                    tracing::warn!(%error, "accepting a companion connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(permit) = Arc::clone(&inner.slots).try_acquire_owned() else {
                tracing::warn!(%peer, max = inner.config.max_connections, "refused a connection: too many open");
                drop(stream);
                continue;
            };
            inner.counts.send_modify(|counts| counts.open += 1);
            let inner = Arc::clone(inner);
            self.inner.tasks.spawn(async move {
                let _slot = Slot { _permit: permit, counts: inner.counts.clone() };
                serve_connection(&inner, stream, peer).await;
            });
        }
        inner.tasks.close();
        inner.tasks.wait().await;
        Ok(())
    }
}

/// A connection's slot: frees the permit and counts the connection as finished when dropped
/// (after the connection's socket, which the connection's future owned).
struct Slot {
    _permit: OwnedSemaphorePermit,
    counts: watch::Sender<ConnectionCounts>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.counts.send_modify(|counts| {
            counts.open = counts.open.saturating_sub(1);
            counts.finished += 1;
        });
    }
}

/// Runs one connection to its end; failures are logged, never returned (the peer is not owed
/// an explanation before it has authenticated).
async fn serve_connection(inner: &Arc<HostInner>, stream: TcpStream, peer: SocketAddr) {
    super::keepalive(&stream);
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%peer, %error, "could not set TCP_NODELAY");
    }
    match session::run(inner, stream, peer).await {
        Ok(()) => {}
        Err(error) => tracing::info!(%peer, %error, "companion connection ended"),
    }
}

/// Now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)).unwrap_or(0)
}
