//! The companion: a phone, or a desktop in companion mode, working through the owner's Hearth.
//!
//! It pairs once ([`Companion::pair`] from a scanned offer, or [`Companion::pair_with_code`]
//! from a typed code), keeps the returned [`HostPairing`] and its own keypair, and then
//! [`Companion::connect`]s whenever it needs the host.

mod connection;
mod link;
mod pairing;

use std::net::SocketAddr;

use crate::pairing::Limits;
use crate::pairing::error::Result;
use crate::pairing::keys::{DeviceId, PublicKey, StaticKeypair};
use crate::pairing::offer::{PairingOffer, PairingSecret};

pub use connection::{CompanionClient, Connection, Push};
pub use link::{HostLink, WindowEpoch};

/// The companion's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompanionConfig {
    /// Message size (what it sends at most and reads at most) and handshake time (which also
    /// bounds the TCP connect).
    pub limits: Limits,
    /// Pushed events held for the app before the connection stops reading (back-pressure).
    pub push_capacity: usize,
}

impl Default for CompanionConfig {
    fn default() -> Self {
        Self { limits: Limits::default(), push_capacity: 256 }
    }
}

/// What a companion keeps after pairing (with its own keypair, sealed in its vault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPairing {
    /// Where the host was; a hint, tried first on every connect.
    pub host: SocketAddr,
    /// The host's static key: the only key this companion's sessions accept.
    pub host_key: PublicKey,
    /// The id the host registered this device under.
    pub device_id: DeviceId,
}

/// A companion device and its static keypair.
pub struct Companion {
    keypair: StaticKeypair,
    config: CompanionConfig,
}

impl Companion {
    /// A companion with its keypair (one per host it pairs with, kept in its vault).
    pub fn new(keypair: StaticKeypair, config: CompanionConfig) -> Self {
        Self { keypair, config }
    }

    /// This device's public key.
    pub fn public_key(&self) -> PublicKey {
        self.keypair.public()
    }

    /// The id a host registers this device under.
    pub fn device_id(&self) -> DeviceId {
        self.keypair.public().device_id()
    }

    /// Pairs with the host that showed `offer` (its QR code). The host's key is checked against
    /// the offer's fingerprint before anything depending on the secret is sent.
    /// `name` is what Settings → Devices on the host will call this device.
    pub async fn pair(&self, offer: &PairingOffer, name: &str) -> Result<HostPairing> {
        pairing::pair(&self.keypair, self.config, offer.host, Some(offer.fingerprint), &offer.secret, name).await
    }

    /// Pairs from a typed code, with no fingerprint to check the host against. The host proves
    /// it knew the secret before this returns; still, show the owner
    /// `pairing.host_key.fingerprint()` to compare with Settings on the host.
    pub async fn pair_with_code(&self, host: SocketAddr, secret: &PairingSecret, name: &str) -> Result<HostPairing> {
        pairing::pair(&self.keypair, self.config, host, None, secret, name).await
    }

    /// Opens a session with a paired host.
    pub async fn connect(&self, pairing: &HostPairing) -> Result<Connection> {
        connection::connect(&self.keypair, self.config, pairing).await
    }
}
