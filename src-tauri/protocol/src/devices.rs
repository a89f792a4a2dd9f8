//! Paired devices: what a companion (the phone app, or another desktop in companion mode) may
//! ask of the owner's Hearth, decided by the owner when it is paired.
//!
//! A paired device reaches the host's commands, never its window. Each command has one
//! [`Reach`] ([`companion_reach`]): the scope a device needs for it, or `Never` — sign-in,
//! settings, standing orders, the computer and the browser's screens stay with the window at
//! home. The host checks the device's scopes on every request, from its own store (so a
//! revocation or a narrowed scope holds from the next request); nothing the device says about
//! itself counts.

use serde::{Deserialize, Serialize};

use crate::commands::{self, Command};

/// One thing a paired device may be allowed, each on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::EnumIter, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DeviceScope {
    /// See chats, tasks, approvals waiting, files and the inbox.
    Read,
    /// Chat with the host's agent. Its tools run at home, and every effect its chat asks for
    /// waits on a card (the run starts as a paired device's: `SourceKind::PairedDevice`).
    Chat,
    /// Approve or deny what waits for the owner, as shown on the card.
    DecideApprovals,
    /// Start, pause, stop and retry background work, schedules and goals.
    ControlTasks,
    /// Delete chats, files and memories. Off unless the owner turns it on.
    Destructive,
}

/// A device's scopes, each on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceScopes {
    /// [`DeviceScope::Read`].
    pub read: bool,
    /// [`DeviceScope::Chat`].
    pub chat: bool,
    /// [`DeviceScope::DecideApprovals`].
    pub decide_approvals: bool,
    /// [`DeviceScope::ControlTasks`].
    pub control_tasks: bool,
    /// [`DeviceScope::Destructive`].
    pub destructive: bool,
}

impl DeviceScopes {
    /// What pairing offers unless the owner changes it: everything but deleting.
    pub const DEFAULT: DeviceScopes =
        DeviceScopes { read: true, chat: true, decide_approvals: true, control_tasks: true, destructive: false };

    /// Whether `scope` is on.
    pub const fn allows(self, scope: DeviceScope) -> bool {
        match scope {
            DeviceScope::Read => self.read,
            DeviceScope::Chat => self.chat,
            DeviceScope::DecideApprovals => self.decide_approvals,
            DeviceScope::ControlTasks => self.control_tasks,
            DeviceScope::Destructive => self.destructive,
        }
    }
}

impl Default for DeviceScopes {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Whether a paired device may call a command at all, and with which scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// With this scope on.
    Scope(DeviceScope),
    /// Only from the window at home.
    Never,
}

/// Each command's reach from a paired device. Every command of [`commands::ALL`] is here once
/// (a test checks it), so a new command is decided here before a device can call it — and one
/// missing from the table is `Never` ([`companion_reach`]).
pub const COMPANION_REACH: &[(Command, Reach)] = {
    use DeviceScope::{Chat, ControlTasks, DecideApprovals, Destructive, Read};
    use Reach::{Never, Scope};
    &[
        (commands::APP_INFO, Scope(Read)),
        // The window's own first paint (start-up timing).
        (commands::APP_PAINTED, Never),
        (commands::RUN_START, Scope(Chat)),
        (commands::RUN_STOP, Scope(Chat)),
        (commands::THREAD_LIST, Scope(Read)),
        (commands::THREAD_HISTORY, Scope(Read)),
        (commands::THREAD_DELETE, Scope(Destructive)),
        (commands::TASK_LIST, Scope(Read)),
        (commands::TASK_GET, Scope(Read)),
        (commands::TASK_CONTROL, Scope(ControlTasks)),
        (commands::TASK_WATCH, Scope(Read)),
        // What the chats and tasks a device may read already show, with the report redacted.
        (commands::FAILURE_LIST, Scope(Read)),
        (commands::FAILURE_TIMELINE, Scope(Read)),
        (commands::SCHEDULE_LIST, Scope(Read)),
        (commands::SCHEDULE_CREATE, Scope(ControlTasks)),
        (commands::SCHEDULE_CONTROL, Scope(ControlTasks)),
        (commands::MONITOR_CHECK_NOW, Scope(ControlTasks)),
        (commands::IDEA_LIST, Scope(Read)),
        (commands::IDEA_ACCEPT, Scope(ControlTasks)),
        (commands::IDEA_DISMISS, Scope(ControlTasks)),
        (commands::NOTIFICATION_LIST, Scope(Read)),
        (commands::NOTIFICATION_READ, Scope(Read)),
        (commands::NOTIFICATION_WATCH, Scope(Read)),
        // The desktop's OS notices (a click opens the window at home).
        (commands::NOTIFICATION_OPEN_WATCH, Never),
        (commands::FINANCE_START, Scope(ControlTasks)),
        (commands::GOAL_LIST, Scope(Read)),
        (commands::GOAL_CREATE, Scope(ControlTasks)),
        (commands::GOAL_CONTROL, Scope(ControlTasks)),
        (commands::GOAL_MILESTONES, Scope(Read)),
        (commands::MEMORY_LIST, Scope(Read)),
        // A fact goes into every later model request as the owner's own words: kept at home.
        (commands::MEMORY_SAVE, Never),
        (commands::MEMORY_FORGET, Scope(Destructive)),
        (commands::MANDATE_LIST, Scope(Read)),
        // A standing order lets effects through without a card: granted only at home.
        (commands::MANDATE_GRANT, Never),
        // Revoking one only takes power away.
        (commands::MANDATE_REVOKE, Scope(ControlTasks)),
        (commands::APPROVAL_LIST, Scope(Read)),
        (commands::APPROVAL_GET, Scope(Read)),
        (commands::APPROVAL_DECIDE, Scope(DecideApprovals)),
        (commands::APPROVAL_RECHECK, Scope(DecideApprovals)),
        (commands::APPROVAL_LEAVING, Scope(DecideApprovals)),
        (commands::FILE_LIST, Scope(Read)),
        (commands::FILE_GET, Scope(Read)),
        (commands::FILE_RENDER, Scope(Read)),
        (commands::FILE_FILL, Scope(ControlTasks)),
        // Names a path on the host's disk.
        (commands::FILE_IMPORT, Never),
        (commands::FILE_DELETE, Scope(Destructive)),
        (commands::MAIL_THREAD_GET, Scope(Read)),
        // Accounts, settings and the model: sign-in, keys and tokens stay at home.
        (commands::ACCOUNTS_GET, Never),
        (commands::ACCOUNTS_CLIENT_SET, Never),
        (commands::ACCOUNT_CONNECT_BEGIN, Never),
        (commands::ACCOUNT_CONNECT_FINISH, Never),
        (commands::ACCOUNT_CHOOSE, Never),
        (commands::ACCOUNT_DISCONNECT, Never),
        (commands::SETTINGS_GET, Never),
        (commands::SETTINGS_MODE_SET, Never),
        (commands::SETTINGS_MODEL_SET, Never),
        (commands::SETTINGS_MODEL_TEST, Never),
        (commands::SETTINGS_LOCAL_MODEL_INSPECT, Never),
        (commands::SETTINGS_LOCAL_MODEL_PROBE, Never),
        (commands::SETTINGS_LOCAL_MODEL_OVERRIDE, Never),
        (commands::LOCAL_MODEL_ACTIVITY, Scope(Read)),
        (commands::LOCAL_MODEL_PROBE_PROGRESS, Never),
        (commands::LOCAL_MODEL_CHOOSE_FILE, Never),
        (commands::SETTINGS_HARNESS_SET, Never),
        (commands::SETTINGS_ENDPOINT_SET, Never),
        (commands::SETTINGS_ENDPOINT_REGENERATE, Never),
        // A shorter window lets sends leave sooner: set only at home.
        (commands::SETTINGS_UNDO_WINDOW_SET, Never),
        (commands::SETTINGS_WEB_SEARCH_GET, Never),
        (commands::SETTINGS_WEB_SEARCH_SET, Never),
        // Backups can carry the vault key and restores write folders: the owner at home only.
        (commands::BACKUP_SETTINGS_GET, Never),
        (commands::BACKUP_SCHEDULE_SET, Never),
        (commands::BACKUP_CREATE, Never),
        (commands::BACKUP_RESTORE, Never),
        // The computer and the browser stay at home: the agent uses them there.
        (commands::COMPUTER_STATUS, Never),
        (commands::COMPUTER_ENABLE, Never),
        (commands::COMPUTER_START, Never),
        (commands::COMPUTER_STOP, Never),
        (commands::COMPUTER_RESET, Never),
        (commands::COMPUTER_RECREATE, Never),
        (commands::COMPUTER_REBUILD, Never),
        (commands::COMPUTER_RUN, Never),
        (commands::COMPUTER_RUN_STOP, Never),
        (commands::COMPUTER_LIST, Never),
        (commands::COMPUTER_READ, Never),
        (commands::COMPUTER_WRITE, Never),
        (commands::BROWSER_SCREENSHOT, Never),
        (commands::BROWSER_LIST, Never),
        (commands::BROWSER_CLOSE, Never),
        (commands::BROWSER_USE_PROFILE, Never),
        (commands::BROWSER_DELETE_PROFILE, Never),
        (commands::BROWSER_CONTROL_START, Never),
        (commands::BROWSER_CONTROL_INPUT, Never),
        (commands::BROWSER_CONTROL_STOP, Never),
        (commands::BROWSER_CONTROL_RELEASE_ALL, Never),
        // Pairing, listing and revoking devices: the owner, at home.
        (commands::DEVICE_LIST, Never),
        (commands::DEVICE_PAIR_OFFER, Never),
        (commands::DEVICE_REVOKE, Never),
        // This app's own link to a Hearth at home: never forwarded to one.
        (commands::HOST_LINK_STATUS, Never),
        (commands::HOST_LINK_PAIR, Never),
        (commands::HOST_LINK_FORGET, Never),
        (commands::HOST_CALL, Never),
        (commands::HOST_STREAM, Never),
        // The owner's plug-in tools: what runs in this Hearth's name is set at home only.
        (commands::MCP_SERVER_LIST, Never),
        (commands::MCP_SERVER_SAVE, Never),
        (commands::MCP_SERVER_TEST, Never),
        (commands::MCP_SERVER_ENABLE, Never),
        (commands::MCP_SERVER_REMOVE, Never),
        (commands::MCP_SERVER_LOG, Never),
        (commands::MCP_TOOL_POLICY, Never),
        // The owner's document folders are paths on the computer at home; their text stays
        // there (a phone would need the search forwarded through the companion's dispatcher,
        // which is not built).
        (commands::DOCUMENT_FOLDER_LIST, Never),
        (commands::DOCUMENT_FOLDER_ADD, Never),
        (commands::DOCUMENT_FOLDER_REMOVE, Never),
        (commands::DOCUMENT_RESCAN, Never),
        (commands::DOCUMENT_SEARCH, Never),
        (commands::DOCUMENT_PREVIEW, Never),
    ]
};

/// `command`'s reach from a paired device; a name that is no command of Hearth's is `Never`.
pub fn companion_reach(command: &str) -> Reach {
    COMPANION_REACH.iter().find(|(c, _)| c.name() == command).map_or(Reach::Never, |(_, reach)| *reach)
}

/// The most paired devices a host keeps (revoked ones included until removed).
pub const MAX_DEVICES: usize = 32;
/// The longest name a device may be given.
pub const MAX_DEVICE_NAME_CHARS: usize = 60;

/// A paired device, as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedDeviceView {
    /// Its id.
    pub id: crate::ids::DeviceId,
    /// The name the owner gave it when pairing.
    pub name: String,
    /// What it may do.
    pub scopes: DeviceScopes,
    /// Its key's fingerprint, as the device shows it.
    pub fingerprint: String,
    /// When it was paired.
    pub paired_at: i64,
    /// Its last request, if any.
    pub last_used_at: Option<i64>,
    /// When the owner revoked it; it is refused from then on.
    pub revoked_at: Option<i64>,
}

/// `device_pair_offer`: a one-time pairing for a device the owner names, with its scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePairOfferParams {
    /// What the device will be called in the list.
    pub name: String,
    /// What it will be allowed.
    pub scopes: DeviceScopes,
}

impl DevicePairOfferParams {
    /// A name of 1 to [`MAX_DEVICE_NAME_CHARS`] characters, no control characters.
    pub fn validate(&self) -> Result<(), crate::IpcError> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > MAX_DEVICE_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(crate::IpcError::invalid(format!(
                "Name the device in 1 to {MAX_DEVICE_NAME_CHARS} characters (letters, digits, spaces)."
            )));
        }
        Ok(())
    }
}

/// The offer Settings shows while a device pairs: the text its QR code carries, the short
/// code to type instead, and the host's fingerprint to compare. Its Debug hides the secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingOfferView {
    /// What the QR code carries (the host's address, its key's fingerprint, the one-time secret).
    pub uri: String,
    /// The QR code itself, as SVG.
    pub qr_svg: String,
    /// The secret, to type on a device without a camera.
    pub short_code: String,
    /// The host's key fingerprint, to compare on the device.
    pub fingerprint: String,
    /// Where the host listens.
    pub address: String,
    /// When the offer lapses unused.
    pub expires_at: i64,
}

impl std::fmt::Debug for PairingOfferView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairingOfferView")
            .field("uri", &"[REDACTED]")
            .field("short_code", &"[REDACTED]")
            .field("fingerprint", &self.fingerprint)
            .field("address", &self.address)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// `device_revoke`: the device is refused from its next request, and its open streams close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRevokeParams {
    /// The device.
    pub id: crate::ids::DeviceId,
}

/// The longest address or scanned pairing text `host_link_pair` accepts.
pub const MAX_HOST_ADDRESS_CHARS: usize = 512;

/// `host_link_pair`: this app becomes a companion of the owner's Hearth at home, from the text
/// its QR code carries (`hearth-pair:…`, code empty) or its address and the short code.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostLinkPairParams {
    /// The scanned pairing text, or the host's address and port as Settings there shows it.
    pub address: String,
    /// The short code, when `address` is an address.
    #[serde(default)]
    pub code: String,
    /// What the Hearth at home will call this device.
    pub name: String,
}

impl HostLinkPairParams {
    /// A name as a device name, an address or pairing text of at most
    /// [`MAX_HOST_ADDRESS_CHARS`], no control characters.
    pub fn validate(&self) -> Result<(), crate::IpcError> {
        DevicePairOfferParams { name: self.name.clone(), scopes: DeviceScopes::DEFAULT }.validate()?;
        let address = self.address.trim();
        if address.is_empty() || address.chars().count() > MAX_HOST_ADDRESS_CHARS || address.chars().any(char::is_control) {
            return Err(crate::IpcError::invalid(
                "Paste the pairing text, or type the address your Hearth at home shows in Settings → Devices (like 192.168.1.20:47800).",
            ));
        }
        if self.code.chars().count() > 64 {
            return Err(crate::IpcError::invalid("The code is the 16 letters and digits your Hearth at home shows."));
        }
        Ok(())
    }
}

/// Its Debug hides the code and pairing text (they carry the one-time secret).
impl std::fmt::Debug for HostLinkPairParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLinkPairParams").field("address", &"[REDACTED]").field("code", &"[REDACTED]").field("name", &self.name).finish()
    }
}

/// The Hearth at home this app works through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostLinkView {
    /// Where it was last reached.
    pub address: String,
    /// Its key's fingerprint, to compare with Settings → Devices there.
    pub fingerprint: String,
    /// The id it knows this device by.
    pub device_id: crate::ids::DeviceId,
    /// Whether a connection is open now.
    pub connected: bool,
}

/// `host_link_status`: whether this app works through a Hearth at home, and which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostLinkStatus {
    /// The link, when this app is a companion.
    pub link: Option<HostLinkView>,
    /// Why a stored link could not be read (this app then works on its own until it is
    /// forgotten or paired again).
    #[serde(default)]
    pub problem: Option<String>,
}

/// `host_call` and `host_stream`: one of Hearth's commands, sent to the Hearth at home. Its
/// Debug hides the parameters (a command's may carry a message or a key).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostRequest {
    /// The command's name.
    pub command: String,
    /// Its parameters, as the window would send them.
    #[serde(default)]
    pub params: serde_json::Value,
}

impl std::fmt::Debug for HostRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRequest").field("command", &self.command).field("params", &"[REDACTED]").finish()
    }
}

impl HostRequest {
    /// A command of Hearth's; never one of the link's own (they act on this app).
    pub fn validate(&self) -> Result<(), crate::IpcError> {
        let known = commands::ALL.iter().any(|c| c.name() == self.command);
        if !known || self.command.starts_with("host_") {
            return Err(crate::IpcError::invalid(format!("{:?} is not a command your Hearth at home answers.", self.command)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use strum::IntoEnumIterator;

    #[test]
    fn every_command_has_exactly_one_reach() {
        let listed: Vec<&str> = COMPANION_REACH.iter().map(|(c, _)| c.name()).collect();
        let unique: BTreeSet<&str> = listed.iter().copied().collect();
        assert_eq!(unique.len(), listed.len(), "a command is listed twice");
        let all: BTreeSet<&str> = commands::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(unique, all, "the companion table and commands::ALL differ");
    }

    #[test]
    fn deleting_is_off_by_default_and_everything_else_on() {
        for scope in DeviceScope::iter() {
            assert_eq!(DeviceScopes::DEFAULT.allows(scope), scope != DeviceScope::Destructive, "{scope:?}");
        }
    }

    #[test]
    fn secrets_and_standing_orders_never_reach_a_device() {
        for name in ["settings_get", "accounts_get", "mandate_grant", "file_import", "computer_run", "browser_control_start", "no_such"] {
            assert_eq!(companion_reach(name), Reach::Never, "{name}");
        }
        assert_eq!(companion_reach("approval_decide"), Reach::Scope(DeviceScope::DecideApprovals));
    }
}
