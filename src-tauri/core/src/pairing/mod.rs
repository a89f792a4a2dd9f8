//! Pairing a companion device with the owner's Hearth host, and the encrypted wire between them.
//!
//! A companion (the phone app, or another desktop in companion mode) reaches the owner's Hearth
//! over the LAN. Nothing here trusts the network: every byte after a six-byte preamble is a Noise
//! message, so the wire carries no plaintext, and both ends prove who they are.
//!
//! - **Pairing** ([`Host::offer_pairing`] → [`Companion::pair`]): the host shows a
//!   [`PairingOffer`] (a QR code with its address, its key's [`Fingerprint`] and a one-time
//!   [`PairingSecret`]; or the secret alone as a short code to type). The two run
//!   `Noise_XXpsk3_25519_ChaChaPoly_BLAKE2s` with a PSK derived from the secret. The companion
//!   checks the host's key against the fingerprint *before* it sends anything that depends on the
//!   secret; the host learns the companion's static key, registers it through its
//!   [`DeviceStore`] and consumes the offer. A wrong secret, a reused one, an expired offer or a
//!   replayed exchange registers nothing.
//! - **Every later connection** ([`Companion::connect`]): `Noise_IK_25519_ChaChaPoly_BLAKE2s`.
//!   The host accepts only a key its store knows as active, and serves nothing until the
//!   companion's first transport message proves the session is live (so a replayed first
//!   message yields nothing).
//! - **Requests and streams** ([`RequestHandler`], [`StreamSink`], [`Connection`]): JSON
//!   requests `{id, command, params}` answered by `{id, result | error}`, and pushed
//!   `{stream, event}` messages, each up to [`Limits::max_message_len`].
//! - **Revocation** ([`Host::revoke`]): persisted first, then every open connection of the
//!   device is closed at once; its next request, or its next handshake, is refused.
//!
//! What a device may do (its scope) is decided by the core's handler, which receives the
//! [`DeviceId`] with every request; this module only guarantees that the id is authentic and
//! current.

mod channel;
pub mod companion;
pub mod error;
mod frame;
pub mod handler;
pub mod host;
pub(crate) mod host_store;
pub mod keys;
mod noise;
pub mod offer;
mod outbox;
pub mod store;
pub mod wire;

use std::time::Duration;

pub use companion::{Companion, CompanionClient, CompanionConfig, Connection, HostLink, HostPairing, Push, WindowEpoch};
pub use error::{PairingError, Result};
pub use handler::{RequestContext, RequestHandler, StreamClosed, StreamSink};
pub use host::{ConnectionCounts, Host, HostConfig, IssuedOffer, OfferId, OfferState};
pub use keys::{DeviceId, Fingerprint, PublicKey, StaticKeypair};
pub use offer::{PairingOffer, PairingSecret};
pub use store::{DeviceName, DeviceStore, MemoryDeviceStore, PairedDevice, Standing, StoreError};
pub use wire::{CloseReason, ErrorCode, RemoteError, RequestId, StreamId};

pub use futures::future::BoxFuture;

/// Bounds both ends hold to, so neither can be made to buffer without limit or wait forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest application message (a request, a response, a pushed event), in bytes of
    /// JSON. A larger one is refused before it is read, and the connection closes.
    pub max_message_len: usize,
    /// How long a handshake may take, from the TCP connection to the first authenticated
    /// message. A peer that stalls is dropped when it runs out.
    pub handshake_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_message_len: 4 * 1024 * 1024, handshake_timeout: Duration::from_secs(10) }
    }
}

/// TCP keepalive on a companion connection: a phone that leaves the network without closing
/// leaves a half-open connection, which would otherwise hold one of the host's slots (and a
/// device's streams) for good. Probes after 30 s of silence, every 10 s, 3 of them: a dead peer
/// is noticed within about a minute and its connection ends like any other.
pub(crate) fn keepalive(stream: &tokio::net::TcpStream) {
    let probes = socket2::TcpKeepalive::new().with_time(Duration::from_secs(30)).with_interval(Duration::from_secs(10));
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "ios"))]
    let probes = probes.with_retries(3);
    if let Err(error) = socket2::SockRef::from(stream).set_tcp_keepalive(&probes) {
        tracing::warn!(%error, "could not turn on TCP keepalive for a companion connection");
    }
}
