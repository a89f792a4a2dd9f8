//! The two Noise handshakes, set up in one place so both ends build them identically.
//!
//! - Pairing: `Noise_XXpsk3_25519_ChaChaPoly_BLAKE2s`. XX because the host does not know the
//!   companion's key yet (and the companion learns the host's from message 2, to check it against
//!   the offer's fingerprint); `psk3` mixes the secret into message 3, so the host learns whether
//!   the companion knew it before anything is registered.
//! - Session: `Noise_IK_25519_ChaChaPoly_BLAKE2s`. The companion already holds the host's key, so
//!   the host learns (and checks) the companion's key from message 1, in one round trip, and the
//!   companion's identity stays hidden from anyone on the network.
//!
//! The prologue binds the connection's preamble (wire version and mode) into the handshake hash.

use snow::HandshakeState;
use snow::params::NoiseParams;

use crate::pairing::error::Result;
use crate::pairing::frame::Mode;
use crate::pairing::keys::{PublicKey, StaticKeypair};
use crate::pairing::offer::Psk;

const PAIRING_PATTERN: &str = "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2s";
const SESSION_PATTERN: &str = "Noise_IK_25519_ChaChaPoly_BLAKE2s";

/// Where `psk3` sits in snow's PSK slots.
pub(crate) const PAIRING_PSK_SLOT: u8 = 3;

/// The bytes of a Noise transport message beyond its plaintext (the AEAD tag).
pub(crate) const TAG_LEN: usize = 16;

fn prologue(mode: Mode) -> Vec<u8> {
    let mut out = b"hearth-companion-wire:".to_vec();
    out.extend_from_slice(&mode.preamble());
    out
}

fn params(pattern: &str) -> Result<NoiseParams> {
    Ok(pattern.parse::<NoiseParams>()?)
}

/// The companion's side of pairing; the PSK is known from the offer.
pub(crate) fn pairing_initiator(local: &StaticKeypair, psk: &Psk) -> Result<HandshakeState> {
    let prologue = prologue(Mode::Pairing);
    let state = snow::Builder::new(params(PAIRING_PATTERN)?)
        .local_private_key(local.private_bytes())?
        .prologue(&prologue)?
        .psk(PAIRING_PSK_SLOT, psk)?
        .build_initiator()?;
    Ok(state)
}

/// The host's side of pairing. The PSK is set (with `set_psk`) only when message 3 arrives, from
/// the offer that is live at that moment.
pub(crate) fn pairing_responder(local: &StaticKeypair) -> Result<HandshakeState> {
    let prologue = prologue(Mode::Pairing);
    let state =
        snow::Builder::new(params(PAIRING_PATTERN)?).local_private_key(local.private_bytes())?.prologue(&prologue)?.build_responder()?;
    Ok(state)
}

/// The companion's side of a session with a host it has paired with.
pub(crate) fn session_initiator(local: &StaticKeypair, host: &PublicKey) -> Result<HandshakeState> {
    let prologue = prologue(Mode::Session);
    let state = snow::Builder::new(params(SESSION_PATTERN)?)
        .local_private_key(local.private_bytes())?
        .remote_public_key(host.as_bytes())?
        .prologue(&prologue)?
        .build_initiator()?;
    Ok(state)
}

/// The host's side of a session.
pub(crate) fn session_responder(local: &StaticKeypair) -> Result<HandshakeState> {
    let prologue = prologue(Mode::Session);
    let state =
        snow::Builder::new(params(SESSION_PATTERN)?).local_private_key(local.private_bytes())?.prologue(&prologue)?.build_responder()?;
    Ok(state)
}

/// The peer's static key, once the handshake has revealed it.
pub(crate) fn remote_static(state: &HandshakeState) -> Result<PublicKey> {
    let bytes = state
        .get_remote_static()
        .ok_or_else(|| crate::pairing::error::PairingError::protocol("the handshake did not reveal the peer's key"))?;
    PublicKey::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn both_patterns_build_on_both_sides() {
        let a = StaticKeypair::generate().unwrap();
        let b = StaticKeypair::generate().unwrap();
        let psk = zeroize::Zeroizing::new([5u8; 32]);
        pairing_initiator(&a, &psk).unwrap();
        pairing_responder(&b).unwrap();
        session_initiator(&a, &b.public()).unwrap();
        session_responder(&b).unwrap();
    }
}
