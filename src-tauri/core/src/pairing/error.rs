//! What can go wrong while pairing or talking to a paired device, worded for the owner.
//!
//! Every message says what failed and what to do. None carries a secret, a key's private half
//! or a message body: fingerprints and device ids are public by design and may appear.

use std::net::SocketAddr;
use std::time::Duration;

use crate::pairing::wire::{CloseReason, RemoteError, RequestId};

/// This module's result.
pub type Result<T, E = PairingError> = std::result::Result<T, E>;

/// A failure of pairing, of a connection, or of a request.
/// What a device store's failure is carried as (the core boxes its `CoreError`). Here, not in
/// `store.rs`, so errors sit below everything that can fail.
pub type StoreError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    /// The text scanned or pasted is not a pairing offer this Hearth can read.
    #[error("this is not a Hearth pairing code ({reason}); scan the code shown in Settings → Devices on your Hearth")]
    InvalidOffer {
        /// What was wrong with it (never the secret itself).
        reason: String,
    },

    /// The offer was made by a newer Hearth.
    #[error("this pairing code is version {version}, which this app does not know; update the app and scan again")]
    UnsupportedOfferVersion {
        /// The version the code names.
        version: String,
    },

    /// The typed code is not 16 letters and digits from the code alphabet.
    #[error(
        "the code must be 16 characters, letters A–Z and digits 2–7 (dashes and spaces are ignored); check it against the code shown on your Hearth"
    )]
    InvalidShortCode,

    /// A stored or received key is not a 32-byte X25519 key.
    #[error("a key is {len} bytes, not 32: the stored pairing is damaged; pair this device again")]
    InvalidKey {
        /// Its length.
        len: usize,
    },

    /// A device id is not 32 lowercase hex digits.
    #[error("{value:?} is not a device id (32 lowercase hex digits)")]
    InvalidDeviceId {
        /// The text given (ids are public).
        value: String,
    },

    /// The host could not be reached.
    #[error("could not connect to the Hearth at {addr}: {source}; check that it is on and on the same network")]
    Connect {
        /// Where the companion tried.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },

    /// The device at the offer's address has another key than the one the offer names.
    /// Nothing that depends on the pairing secret was sent.
    #[error(
        "the device at {addr} is not the Hearth that showed this code (its key is {found}, the code names {expected}); nothing was sent. Make sure you are on your own network and scan the code again"
    )]
    HostKeyMismatch {
        /// Where the companion connected.
        addr: SocketAddr,
        /// The fingerprint the offer names, as shown.
        expected: String,
        /// The fingerprint of the key that answered, as shown.
        found: String,
    },

    /// The host closed the pairing without confirming it.
    #[error(
        "your Hearth refused the pairing code: it is wrong, already used, expired, or was withdrawn after too many wrong tries. Make a new code in Settings → Devices on your Hearth and try again"
    )]
    PairingRefused,

    /// The host does not accept this device's key (never paired, or revoked).
    #[error(
        "your Hearth does not accept this device: it was never paired, or it has been revoked. Pair it again from Settings → Devices on your Hearth"
    )]
    DeviceRefused,

    /// The handshake did not finish in time.
    #[error("the handshake did not finish within {after:?}; check the network and try again")]
    HandshakeTimeout {
        /// The bound that ran out.
        after: Duration,
    },

    /// A message is larger than the side that would read it accepts.
    #[error("the message is {len} bytes, more than the {max} bytes a message may carry; send less at once")]
    MessageTooLarge {
        /// Its size in bytes of JSON.
        len: usize,
        /// The bound.
        max: usize,
    },

    /// The host closed the connection and said why.
    #[error("your Hearth closed the connection: {message}")]
    Closed {
        /// Why, as a type.
        reason: CloseReason,
        /// Why, for the owner.
        message: String,
    },

    /// The connection ended before the host answered the request. The host may or may not have
    /// acted on it, so this is never a reason to repeat it blindly.
    #[error(
        "the connection to your Hearth ended before it answered request {id} ({detail}); whether it was carried out is unknown. Check the activity on your Hearth before trying again"
    )]
    AnswerLost {
        /// The request left without an answer.
        id: RequestId,
        /// Why the connection ended.
        reason: CloseReason,
        /// Why, for the owner (the host's own words when it gave any).
        detail: String,
    },

    /// The connection ended (or was never open) when the companion tried to send.
    #[error("the connection to your Hearth is closed; connect again")]
    NotConnected,

    /// The host answered the request with an error.
    #[error("{0}")]
    Remote(RemoteError),

    /// A message failed authentication: altered on the way, replayed, or sent under other keys.
    #[error("a message failed authentication (altered, replayed, or from another session); the connection was closed, connect again")]
    Decrypt,

    /// The peer broke the wire protocol.
    #[error("the other side broke the pairing protocol ({what}); the connection was closed. If it repeats, update both apps")]
    Protocol {
        /// What it did.
        what: String,
    },

    /// The connection failed while reading or writing.
    #[error("the connection failed: {0}; connect again")]
    Io(#[from] std::io::Error),

    /// The paired-devices table could not be read or written.
    #[error("the paired-devices store failed: {0}")]
    DeviceStore(#[source] StoreError),

    /// The Noise library refused a setup step: a bug, not a network event.
    #[error("the Noise handshake could not be set up ({0}); this is a bug in Hearth, please report it")]
    Noise(snow::Error),

    /// The operating system's random source failed.
    #[error("the system's random number source failed ({0}); try again")]
    Random(getrandom::Error),
}

impl From<snow::Error> for PairingError {
    fn from(error: snow::Error) -> Self {
        match error {
            snow::Error::Decrypt => Self::Decrypt,
            other => Self::Noise(other),
        }
    }
}

impl PairingError {
    /// A protocol violation, with what the peer did.
    pub(crate) fn protocol(what: impl Into<String>) -> Self {
        Self::Protocol { what: what.into() }
    }
}
