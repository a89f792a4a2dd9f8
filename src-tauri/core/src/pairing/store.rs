//! Where the host keeps its paired devices: a trait the core answers from SQLite.
//!
//! The wire layer asks three things: register a newly paired device, read a device's standing
//! (at every handshake and every request, so a revocation written by any path is effective on
//! the device's next request), and revoke one. [`MemoryDeviceStore`] is the in-memory answer
//! for tests and this prototype; the core's `store::devices` is the real one.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::pairing::BoxFuture;
use crate::pairing::host::OfferId;
use crate::pairing::keys::{DeviceId, PublicKey};

pub use crate::pairing::error::StoreError;

/// The longest device name kept, in characters.
pub const MAX_DEVICE_NAME: usize = 64;

/// A device's name as the companion gave it, cleaned: control characters dropped, trimmed,
/// at most [`MAX_DEVICE_NAME`] characters, never empty. It is text from outside the owner:
/// show it, never act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceName(String);

impl DeviceName {
    /// Cleans a name the companion sent.
    pub fn from_untrusted(name: &str) -> Self {
        let cleaned: String = name.chars().filter(|c| !c.is_control()).take(MAX_DEVICE_NAME).collect();
        let trimmed = cleaned.trim();
        Self(if trimmed.is_empty() { "Unnamed device".to_owned() } else { trimmed.to_owned() })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A device the host has just paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairedDevice {
    /// Its id (the fingerprint of its key).
    pub id: DeviceId,
    /// The offer it paired through (the core applies the scope the owner chose for it).
    pub offer: OfferId,
    /// Its static public key, checked again at every handshake.
    pub public_key: PublicKey,
    /// What it calls itself.
    pub name: DeviceName,
    /// When it paired, Unix milliseconds.
    pub paired_at: i64,
}

/// A device's standing, as read from the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Paired and not revoked, with the key it paired with.
    Active(PublicKey),
    /// Paired, then revoked.
    Revoked,
    /// Never paired (or forgotten).
    Unknown,
}

/// The host's table of paired devices.
///
/// `register` of an id that exists (a revoked device paired again with a fresh offer) makes it
/// active again with the new name and time: the owner made a new offer and the device proved it
/// knew its secret.
pub trait DeviceStore: Send + Sync + 'static {
    /// Records a newly paired device.
    fn register(&self, device: PairedDevice) -> BoxFuture<'_, Result<(), StoreError>>;
    /// The device's standing now.
    fn standing<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<Standing, StoreError>>;
    /// Marks the device revoked; `false` if it was not active.
    fn revoke<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<bool, StoreError>>;
}

#[derive(Debug, Clone)]
struct Row {
    device: PairedDevice,
    revoked: bool,
}

/// An in-memory device table.
#[derive(Debug, Default)]
pub struct MemoryDeviceStore {
    rows: Mutex<BTreeMap<DeviceId, Row>>,
}

impl MemoryDeviceStore {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every device ever registered (active or revoked), for tests to count.
    pub fn devices(&self) -> Vec<PairedDevice> {
        self.lock().values().map(|row| row.device.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<DeviceId, Row>> {
        // A panic while holding this lock cannot leave a row half-written (each write is one
        // insert or one flag), so a poisoned lock's data is still good.
        self.rows.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl DeviceStore for MemoryDeviceStore {
    fn register(&self, device: PairedDevice) -> BoxFuture<'_, Result<(), StoreError>> {
        self.lock().insert(device.id.clone(), Row { device, revoked: false });
        Box::pin(async { Ok(()) })
    }

    fn standing<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<Standing, StoreError>> {
        let standing = match self.lock().get(device) {
            None => Standing::Unknown,
            Some(row) if row.revoked => Standing::Revoked,
            Some(row) => Standing::Active(row.device.public_key),
        };
        Box::pin(async move { Ok(standing) })
    }

    fn revoke<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<bool, StoreError>> {
        let changed = match self.lock().get_mut(device) {
            Some(row) if !row.revoked => {
                row.revoked = true;
                true
            }
            _ => false,
        };
        Box::pin(async move { Ok(changed) })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn device_names_are_cleaned() {
        assert_eq!(DeviceName::from_untrusted("  Pixel\u{7}\n 8 ").as_str(), "Pixel 8");
        assert_eq!(DeviceName::from_untrusted("\u{1b}[31m").as_str(), "[31m");
        assert_eq!(DeviceName::from_untrusted(" \n").as_str(), "Unnamed device");
        assert_eq!(DeviceName::from_untrusted(&"x".repeat(500)).as_str().chars().count(), MAX_DEVICE_NAME);
    }
}
