//! This app as a companion: working through the owner's Hearth at home (the other side of
//! `hearth::devices`).
//!
//! The owner pairs once, from the host's QR text or its address and short code; this device's
//! keypair and the host's key are sealed in this app's vault as one secret, so a restart keeps
//! the link and a forgotten link leaves nothing behind. The window's requests then go to the
//! host as they are ([`Hearth::host_call`], [`Hearth::host_stream`]): the host decides what
//! this device may do, from its own store, and its refusal comes back as the window's error.

use std::net::SocketAddr;
use std::sync::Arc;

use hearth_protocol::devices::{HostLinkPairParams, HostLinkStatus, HostLinkView, HostRequest};
use hearth_protocol::ids::DeviceId;
use hearth_protocol::{ErrorCode, IpcError};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::pairing::{
    Companion, CompanionConfig, HostLink, HostPairing, PairingError, PairingOffer, PairingSecret, PublicKey, StaticKeypair,
};

/// The vault's name for the link (this device's private key, the host's key and address).
const LINK_SECRET: &str = "pairing:host_link";

/// What the vault keeps of the link, as JSON inside the sealed secret.
#[derive(Serialize, Deserialize)]
struct StoredLink {
    /// This device's static private key, hex.
    key: String,
    /// Where the host was last reached.
    host: SocketAddr,
    /// The host's static public key, hex.
    host_key: String,
    /// The id the host knows this device by.
    device_id: String,
}

impl Drop for StoredLink {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.key);
    }
}

/// The link once read from the vault: `None` inside when this app is not a companion.
pub(super) type LinkSlot = Arc<tokio::sync::Mutex<Option<Option<Arc<HostLink>>>>>;

impl Hearth {
    /// Whether this app works through a Hearth at home, and which. A stored link that cannot
    /// be read is a problem to show (with Forget), not a reason for the window not to start.
    pub async fn host_link_status(&self) -> Result<HostLinkStatus> {
        match self.host_link().await {
            Ok(Some(link)) => Ok(HostLinkStatus { link: Some(view(&link)), problem: None }),
            Ok(None) => Ok(HostLinkStatus { link: None, problem: None }),
            Err(err @ (CoreError::CorruptRow(_) | CoreError::Vault(_))) => {
                Ok(HostLinkStatus { link: None, problem: Some(err.to_string()) })
            }
            Err(err) => Err(err),
        }
    }

    /// Pairs this app with the owner's Hearth at home and keeps the link; a link kept before
    /// is replaced only once the new pairing has succeeded. Refused while this app has work
    /// under way: once paired, its window shows the home Hearth's, and the owner could no
    /// longer see, stop or decide what runs here.
    pub async fn host_link_pair(&self, params: &HostLinkPairParams) -> Result<HostLinkStatus> {
        params.validate()?;
        self.refuse_if_under_way().await?;
        let keypair = StaticKeypair::generate().map_err(pairing_error)?;
        let private = zeroize::Zeroizing::new(keypair.private_bytes().to_vec());
        let companion = Companion::new(keypair, CompanionConfig::default());
        let name = params.name.trim();
        let address = params.address.trim();
        let pairing = if address.to_ascii_lowercase().starts_with("hearth-pair:") {
            let offer = PairingOffer::parse(address).map_err(pairing_error)?;
            companion.pair(&offer, name).await
        } else {
            // Not echoed: a pairing text pasted with something before it carries the secret.
            let host: SocketAddr = address.parse().map_err(|_| {
                CoreError::InvalidInput(
                    "That is neither a pairing text (hearth-pair:…) nor an address with a port (like 192.168.1.20:47800); Settings → Devices on your Hearth at home shows both."
                        .into(),
                )
            })?;
            let secret = PairingSecret::from_short_code(&params.code).map_err(pairing_error)?;
            companion.pair_with_code(host, &secret, name).await
        }
        .map_err(pairing_error)?;

        let stored = StoredLink {
            key: hex::encode(private.as_slice()),
            host: pairing.host,
            host_key: hex::encode(pairing.host_key.as_bytes()),
            device_id: pairing.device_id.to_string(),
        };
        let text = serde_json::to_string(&stored)?;
        let link = Arc::new(HostLink::new(companion, pairing, Arc::clone(&self.window_epoch)));
        // The vault and the slot change together (a forget meanwhile waits), so what a restart
        // reads back is what this process uses.
        let replaced = {
            let mut slot = self.host_link.lock().await;
            // Again, now: something may have started while the pairing crossed the network.
            self.refuse_if_under_way().await?;
            self.settings.put_secret(LINK_SECRET, &SecretString::from(text)).await?;
            slot.replace(Some(Arc::clone(&link))).flatten()
        };
        if let Some(old) = replaced {
            old.close().await;
        }
        tracing::info!(host = %link.pairing().host, "this app now works through a Hearth at home");
        Ok(HostLinkStatus { link: Some(view(&link)), problem: None })
    }

    /// Forgets the link: the keys leave the vault and the connection closes. The Hearth at
    /// home still lists this device until the owner removes it there.
    pub async fn host_link_forget(&self) -> Result<HostLinkStatus> {
        let forgotten = {
            let mut slot = self.host_link.lock().await;
            self.settings.update_secret(LINK_SECRET, Some("")).await?;
            slot.replace(None).flatten()
        };
        if let Some(link) = forgotten {
            link.close().await;
        }
        Ok(HostLinkStatus { link: None, problem: None })
    }

    /// The window began to (re)load: whatever it streamed from home (a chat, the watches) has
    /// no reader any more. The next request opens a new connection and the old one ends, with
    /// every stream the home Hearth kept on it (a chat there is stopped, as a local one is when
    /// its window goes). Synchronous, so it is counted before the new page's first request.
    pub fn window_reloaded(&self) {
        self.window_epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// What this app has under way, in words: chats and terminal commands running, tasks not
    /// finished, cards waiting, executing or to review, active schedules, its own paired devices
    /// (their chats and decisions run here), the AG-UI endpoint on. Counted whole, not from a
    /// page of a list.
    async fn local_work(&self) -> Result<Vec<String>> {
        use hearth_protocol::schedules::ScheduleStatus;
        let mut under_way = Vec::new();
        let count = |n: usize, what: &str| (n > 0).then(|| format!("{n} {what}"));
        let tasks = usize::try_from(self.store.count_unfinished_tasks().await?).unwrap_or(usize::MAX);
        let cards = usize::try_from(self.store.count_open_proposals().await?).unwrap_or(usize::MAX);
        let schedules = self.schedule_list().await?.schedules.iter().filter(|s| s.status == ScheduleStatus::Active).count();
        let devices = self.store.devices().await?.iter().filter(|d| d.revoked_at.is_none()).count();
        under_way.extend(count(self.runs.len(), "chat(s) running"));
        under_way.extend(count(self.screen_runs.running(), "command(s) running in the computer"));
        under_way.extend(count(tasks, "task(s) not finished, in Activity"));
        under_way.extend(count(cards, "approval card(s) to decide or review"));
        under_way.extend(count(schedules, "active schedule(s)"));
        under_way.extend(count(devices, "device(s) paired with this app (Settings → Devices)"));
        if self.settings.load().await?.endpoint_enabled {
            under_way.push("the AG-UI endpoint is on (Settings)".to_owned());
        }
        Ok(under_way)
    }

    /// Refuses while [`Self::local_work`] finds anything.
    async fn refuse_if_under_way(&self) -> Result<()> {
        let under_way = self.local_work().await?;
        if under_way.is_empty() {
            return Ok(());
        }
        Err(CoreError::Conflict(format!(
            "This app has work under way ({}). Finish, stop or decide it here first: once paired, this window shows your Hearth at home instead.",
            under_way.join("; ")
        )))
    }

    /// One of the window's requests, answered by the Hearth at home.
    pub async fn host_call(&self, request: &HostRequest) -> std::result::Result<Value, IpcError> {
        request.validate()?;
        let link = self.linked().await?;
        link.request(&request.command, request.params.clone()).await.map_err(remote_error)
    }

    /// A request that opens a stream (a chat, a watch) at the Hearth at home: its answer and
    /// the stream's events, as JSON the window reads as it reads its own.
    pub async fn host_stream(&self, request: &HostRequest) -> std::result::Result<(Value, mpsc::Receiver<Value>), IpcError> {
        request.validate()?;
        let link = self.linked().await?;
        link.open_stream(&request.command, request.params.clone()).await.map_err(remote_error)
    }

    /// Closes the link's connection (Hearth is closing).
    pub(super) async fn host_link_close(&self) {
        let open = self.host_link.lock().await.clone().flatten();
        if let Some(link) = open {
            link.close().await;
        }
    }

    async fn linked(&self) -> std::result::Result<Arc<HostLink>, IpcError> {
        self.host_link().await.map_err(|e| e.to_ipc())?.ok_or_else(|| {
            IpcError::new(ErrorCode::Unavailable, "This app is not paired with a Hearth at home; pair it in Settings → Devices.".to_owned())
        })
    }

    /// The link, read from the vault on first use.
    async fn host_link(&self) -> Result<Option<Arc<HostLink>>> {
        let mut slot = self.host_link.lock().await;
        if let Some(known) = slot.as_ref() {
            return Ok(known.clone());
        }
        let link = match self.settings.secret(LINK_SECRET).await? {
            Some(text) => Some(Arc::new(restore(text.expose_secret(), Arc::clone(&self.window_epoch))?)),
            None => None,
        };
        *slot = Some(link.clone());
        Ok(link)
    }
}

/// The link from the vault's secret.
fn restore(text: &str, window: crate::pairing::WindowEpoch) -> Result<HostLink> {
    let damaged = |what: &str| CoreError::CorruptRow(format!("the stored link to your Hearth at home is damaged ({what}); pair again"));
    let stored: StoredLink = serde_json::from_str(text).map_err(|_| damaged("not readable"))?;
    let key = zeroize::Zeroizing::new(hex::decode(&stored.key).map_err(|_| damaged("this device's key"))?);
    let keypair = StaticKeypair::from_private_bytes(&key).map_err(|_| damaged("this device's key"))?;
    let host_key = hex::decode(&stored.host_key).ok().and_then(|bytes| PublicKey::from_bytes(&bytes).ok());
    let host_key = host_key.ok_or_else(|| damaged("the host's key"))?;
    let device_id = stored.device_id.parse().map_err(|_| damaged("the device id"))?;
    let pairing = HostPairing { host: stored.host, host_key, device_id };
    Ok(HostLink::new(Companion::new(keypair, CompanionConfig::default()), pairing, window))
}

fn view(link: &HostLink) -> HostLinkView {
    let pairing = link.pairing();
    HostLinkView {
        address: pairing.host.to_string(),
        fingerprint: pairing.host_key.fingerprint().to_string(),
        device_id: DeviceId::trusted(pairing.device_id.as_str()),
        connected: link.is_connected(),
    }
}

/// A pairing that failed, in the owner's words (the pairing errors say what to do).
fn pairing_error(error: PairingError) -> CoreError {
    match error {
        PairingError::InvalidOffer { .. } | PairingError::UnsupportedOfferVersion { .. } | PairingError::InvalidShortCode => {
            CoreError::InvalidInput(error.to_string())
        }
        PairingError::PairingRefused | PairingError::HostKeyMismatch { .. } => CoreError::Forbidden(error.to_string()),
        other => CoreError::Unavailable(other.to_string()),
    }
}

/// A request's failure: the host's own refusal as it gave it, else why the host was not reached
/// or its answer was lost (whether it acted is then unknown, and the message says so).
fn remote_error(error: PairingError) -> IpcError {
    match error {
        PairingError::Remote(refusal) => refusal,
        PairingError::DeviceRefused => IpcError::new(ErrorCode::Forbidden, error.to_string()),
        // Its own words say the outcome is unknown and to look before trying again.
        other => IpcError::new(ErrorCode::Unavailable, other.to_string()),
    }
}
