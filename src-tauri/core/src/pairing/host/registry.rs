//! Which connections each device has open, so a revocation can close them all at once and a
//! notice can reach them all.
//!
//! A connection registers itself once its session is authenticated and unregisters when it ends
//! (by dropping its [`Registration`]). To close no connection too late, revocation writes the
//! store *before* cancelling, and a connection registers *before* its last standing check: then
//! either the revocation sees the registration, or the check sees the revocation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::pairing::keys::DeviceId;
use crate::pairing::outbox::Outbox;
use crate::pairing::wire::{CloseReason, ServerMessage};

/// Why a connection was cancelled, set once by whoever cancels it first.
pub(crate) type CloseCause = Arc<OnceLock<CloseReason>>;

struct Entry {
    id: u64,
    cancel: CancellationToken,
    cause: CloseCause,
    outbox: Outbox,
}

/// Open connections by device.
#[derive(Default)]
pub(crate) struct Registry {
    devices: Mutex<HashMap<DeviceId, Vec<Entry>>>,
    next_id: AtomicU64,
}

/// A connection's place in the registry; dropping it removes the connection.
pub(crate) struct Registration<'a> {
    registry: &'a Registry,
    device: DeviceId,
    id: u64,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<DeviceId, Vec<Entry>>> {
        // Each write is one push or one retain: a poisoned map is still consistent.
        self.devices.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a connection of `device`.
    pub(crate) fn register(&self, device: &DeviceId, cancel: CancellationToken, cause: CloseCause, outbox: Outbox) -> Registration<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock().entry(device.clone()).or_default().push(Entry { id, cancel, cause, outbox });
        Registration { registry: self, device: device.clone(), id }
    }

    /// Closes every open connection of `device` for `reason`; how many there were.
    pub(crate) fn close_device(&self, device: &DeviceId, reason: CloseReason) -> usize {
        let devices = self.lock();
        let Some(entries) = devices.get(device) else {
            return 0;
        };
        for entry in entries {
            // The first cause set wins: a connection already closing keeps its reason.
            let _ = entry.cause.set(reason);
            entry.cancel.cancel();
        }
        entries.len()
    }

    /// Queues a message on every open connection of `device` that has room now; how many.
    pub(crate) fn notify(&self, device: &DeviceId, message: &ServerMessage) -> usize {
        let devices = self.lock();
        let Some(entries) = devices.get(device) else {
            return 0;
        };
        entries
            .iter()
            .filter(|entry| !entry.cancel.is_cancelled())
            .filter(|entry| match entry.outbox.try_send(message) {
                Ok(sent) => sent,
                Err(error) => {
                    tracing::debug!(%device, %error, "a notice was not queued");
                    false
                }
            })
            .count()
    }

    /// The devices with at least one open connection.
    pub(crate) fn connected(&self) -> Vec<DeviceId> {
        let mut ids: Vec<DeviceId> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut devices = self.registry.lock();
        if let Some(entries) = devices.get_mut(&self.device) {
            entries.retain(|entry| entry.id != self.id);
            if entries.is_empty() {
                devices.remove(&self.device);
            }
        }
    }
}
