//! The host's one live pairing offer: its PSK, its expiry, its wrong tries.
//!
//! One offer at a time, because the responder must choose the PSK before message 3 arrives and
//! nothing earlier in the handshake may say which offer the companion holds. Making a new offer
//! withdraws the old one (Settings shows one code). Each offer has a generation, so a slow
//! handshake that started under an old offer can neither consume nor count against a new one.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::pairing::offer::{PairingSecret, Psk};

/// The longest an offer may live: a one-time secret is for the pairing at hand.
const MAX_OFFER_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Which offer a pairing used: the core keeps what the owner chose for it (the device's scope)
/// under this id, and applies it when [`DeviceStore::register`](crate::pairing::DeviceStore::register)
/// receives a device paired through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OfferId(pub u64);

/// A live offer, as the host holds it (the PSK only: the secret itself is not kept).
struct Live {
    generation: u64,
    psk: Psk,
    expires: Instant,
    expires_at: i64,
    failures: u32,
}

/// What a pairing connection takes from the live offer when it starts.
pub(crate) struct Ticket {
    pub(crate) offer: OfferId,
    pub(crate) generation: u64,
    pub(crate) psk: Psk,
}

/// The live offer as Settings shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferState {
    /// Wrong secrets tried so far.
    pub failures: u32,
    /// Wrong secrets after which the offer is withdrawn.
    pub max_failures: u32,
    /// When it expires, Unix milliseconds.
    pub expires_at: i64,
}

#[derive(Default)]
struct Slot {
    live: Option<Live>,
    generation: u64,
}

/// The slot holding at most one live offer.
pub(crate) struct OfferSlot {
    slot: Mutex<Slot>,
    max_failures: u32,
}

impl OfferSlot {
    pub(crate) fn new(max_failures: u32) -> Self {
        Self { slot: Mutex::new(Slot::default()), max_failures: max_failures.max(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        // Every write under this lock is a single assignment, so a poisoned slot is consistent.
        self.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes `secret` the live offer for `ttl` (at most a day), withdrawing any other; its id and
    /// its expiry in Unix ms.
    pub(crate) fn put(&self, secret: &PairingSecret, ttl: Duration) -> (OfferId, i64) {
        let ttl = ttl.min(MAX_OFFER_TTL);
        let expires_at = crate::pairing::host::now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let mut slot = self.lock();
        slot.generation += 1;
        let generation = slot.generation;
        slot.live = Some(Live { generation, psk: secret.psk(), expires: Instant::now() + ttl, expires_at, failures: 0 });
        (OfferId(generation), expires_at)
    }

    /// Withdraws the live offer, if any.
    pub(crate) fn withdraw(&self) {
        self.lock().live = None;
    }

    /// The live offer's PSK, if one is live and not expired (an expired one is dropped here).
    pub(crate) fn ticket(&self) -> Option<Ticket> {
        let mut slot = self.lock();
        match &slot.live {
            Some(live) if Instant::now() < live.expires => {
                Some(Ticket { offer: OfferId(live.generation), generation: live.generation, psk: live.psk.clone() })
            }
            Some(_) => {
                slot.live = None;
                None
            }
            None => None,
        }
    }

    /// Counts a wrong secret against the offer of `generation`; withdraws it at the limit.
    pub(crate) fn record_failure(&self, generation: u64) {
        let mut slot = self.lock();
        let max = self.max_failures;
        let withdraw = match &mut slot.live {
            Some(live) if live.generation == generation => {
                live.failures += 1;
                live.failures >= max
            }
            _ => false,
        };
        if withdraw {
            tracing::warn!(failures = max, "pairing offer withdrawn after too many wrong secrets");
            slot.live = None;
        }
    }

    /// Consumes the offer of `generation` if it is still live: true for exactly one caller.
    pub(crate) fn consume(&self, generation: u64) -> bool {
        let mut slot = self.lock();
        match &slot.live {
            Some(live) if live.generation == generation && Instant::now() < live.expires => {
                slot.live = None;
                true
            }
            _ => false,
        }
    }

    /// The live offer's state, for Settings.
    pub(crate) fn state(&self) -> Option<OfferState> {
        let slot = self.lock();
        slot.live.as_ref().filter(|live| Instant::now() < live.expires).map(|live| OfferState {
            failures: live.failures,
            max_failures: self.max_failures,
            expires_at: live.expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn secret() -> PairingSecret {
        PairingSecret::generate().unwrap()
    }

    #[test]
    fn an_offer_is_consumed_once() {
        let slot = OfferSlot::new(5);
        slot.put(&secret(), Duration::from_secs(60));
        let ticket = slot.ticket().unwrap();
        assert!(slot.consume(ticket.generation));
        assert!(!slot.consume(ticket.generation));
        assert!(slot.ticket().is_none());
    }

    #[test]
    fn the_fifth_failure_withdraws_the_offer() {
        let slot = OfferSlot::new(5);
        slot.put(&secret(), Duration::from_secs(60));
        let generation = slot.ticket().unwrap().generation;
        for _ in 0..4 {
            slot.record_failure(generation);
        }
        assert_eq!(slot.state().unwrap().failures, 4);
        slot.record_failure(generation);
        assert!(slot.ticket().is_none());
        assert!(!slot.consume(generation));
    }

    #[test]
    fn an_old_generation_neither_counts_nor_consumes() {
        let slot = OfferSlot::new(1);
        slot.put(&secret(), Duration::from_secs(60));
        let old = slot.ticket().unwrap().generation;
        slot.put(&secret(), Duration::from_secs(60));
        slot.record_failure(old);
        assert!(!slot.consume(old));
        assert!(slot.ticket().is_some(), "the new offer is untouched");
    }

    #[test]
    fn an_expired_offer_is_gone() {
        let slot = OfferSlot::new(5);
        slot.put(&secret(), Duration::ZERO);
        assert!(slot.ticket().is_none());
        assert!(slot.state().is_none());
    }
}
