//! The host's device table, answered from Hearth's store (`store::devices`), the scopes the
//! owner chose for the offer a device pairs through, and the running host as Hearth keeps it.

use std::collections::HashMap;
use std::sync::Mutex;

use hearth_protocol::devices::DeviceScopes;
use hearth_protocol::ids::DeviceId as StoredDeviceId;

use super::BoxFuture;
use super::host::OfferId;
use super::keys::{DeviceId, PublicKey};
use super::store::{DeviceStore, PairedDevice, Standing, StoreError};
use crate::store::Store;

/// What the owner decided when making an offer: the device's name in the list, and its scopes.
#[derive(Debug, Clone)]
pub(crate) struct OfferTerms {
    pub(crate) name: String,
    pub(crate) scopes: DeviceScopes,
}

/// [`DeviceStore`] over Hearth's SQLite.
pub(crate) struct StoredDevices {
    store: Store,
    /// The terms of offers not yet used (the host keeps one live offer; a few are kept so a
    /// slow pairing on the last one still finds its terms). A device pairing through an offer
    /// with no terms here is refused.
    terms: Mutex<HashMap<OfferId, OfferTerms>>,
}

impl StoredDevices {
    pub(crate) fn new(store: Store) -> Self {
        Self { store, terms: Mutex::new(HashMap::new()) }
    }

    /// Records the owner's terms for `offer`, dropping those of older offers.
    pub(crate) fn set_terms(&self, offer: OfferId, terms: OfferTerms) {
        let mut all = self.terms.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.retain(|id, _| id.0 + 4 > offer.0);
        all.insert(offer, terms);
    }
}

fn stored_id(id: &DeviceId) -> StoredDeviceId {
    StoredDeviceId::trusted(id.as_str())
}

impl DeviceStore for StoredDevices {
    fn register(&self, device: PairedDevice) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let terms = self.terms.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&device.offer);
            let Some(terms) = terms else {
                return Err("the offer this device used has no terms on record; make a new offer in Settings → Devices".into());
            };
            self.store.pair_device(device.public_key.as_bytes(), &terms.name, terms.scopes).await?;
            Ok(())
        })
    }

    fn standing<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<Standing, StoreError>> {
        Box::pin(async move {
            Ok(match self.store.device_key(&stored_id(device)).await? {
                None => Standing::Unknown,
                Some((_, true)) => Standing::Revoked,
                Some((key, false)) => Standing::Active(PublicKey::from_bytes(&key)?),
            })
        })
    }

    fn revoke<'a>(&'a self, device: &'a DeviceId) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let before = self.store.device(&stored_id(device)).await?;
            let was_active = before.as_ref().is_some_and(|d| d.revoked_at.is_none());
            if before.is_some() {
                self.store.revoke_device(&stored_id(device)).await?;
            }
            Ok(was_active)
        })
    }
}

/// The pairing host while it serves (held by `Hearth`, run by `hearth::devices`).
pub(crate) struct PairingService {
    pub(crate) host: super::Host,
    pub(crate) devices: std::sync::Arc<StoredDevices>,
    /// Where it listens.
    pub(crate) listening: std::net::SocketAddr,
    /// Where a device is told to dial: the listening port on this machine's LAN address.
    pub(crate) advertised: std::net::SocketAddr,
}
