//! Settings → Data: backups made now or on a schedule, and restoring one into a new folder.
//!
//! Every command here is the owner's at the window only (a paired device never reaches them:
//! `devices::COMPANION_REACH`): a backup can carry the vault key, and a restore writes folders.

use serde::{Deserialize, Serialize};

use crate::IpcError;

/// The longest a passphrase may be (it is hashed, not stored; this only bounds the input).
pub const MAX_PASSPHRASE_CHARS: usize = 1024;

/// The most backups a schedule keeps.
pub const MAX_KEEP: u32 = 100;

/// The longest interval between scheduled backups, in hours (30 days).
pub const MAX_EVERY_HOURS: u32 = 24 * 30;

/// `backup_create`: make a backup now, into the backup folder. Its Debug form hides the
/// passphrase.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupCreateParams {
    /// Put the vault key in the backup, sealed under `passphrase` (secrets then open wherever
    /// the backup is restored with it).
    pub include_vault_key: bool,
    /// The passphrase, when the key goes in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passphrase: Option<String>,
}

impl std::fmt::Debug for BackupCreateParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupCreateParams")
            .field("include_vault_key", &self.include_vault_key)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

impl BackupCreateParams {
    /// A passphrase exactly when the key goes in, and bounded.
    pub fn validate(&self) -> Result<(), IpcError> {
        match (self.include_vault_key, &self.passphrase) {
            (true, None) => Err(IpcError::invalid("Enter a passphrase to protect the vault key, or leave the key out.")),
            (true, Some(p)) | (false, Some(p)) if p.chars().count() > MAX_PASSPHRASE_CHARS => {
                Err(IpcError::invalid(format!("Choose a passphrase of at most {MAX_PASSPHRASE_CHARS} characters.")))
            }
            (true, Some(_)) | (false, Some(_) | None) => Ok(()),
        }
    }
}

/// A backup file that was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupMadeView {
    /// Where it is.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// When it was made (Unix ms).
    pub created_at: i64,
    /// Whether it holds the vault key.
    pub holds_vault_key: bool,
}

/// A backup file found in the folder (listing reads no backup, so no hash here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupFileView {
    /// Where it is.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// When it was last written (Unix ms).
    pub modified_at: i64,
}

/// When backups are made without the owner asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum BackupSchedule {
    /// Only when the owner asks.
    Off,
    /// Every so many hours while Hearth runs (and at a start after a missed one).
    Every {
        /// Hours, 1 to [`MAX_EVERY_HOURS`].
        hours: u32,
    },
}

/// Settings → Data as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupSettingsView {
    /// The schedule.
    pub schedule: BackupSchedule,
    /// How many scheduled backups are kept (older ones are deleted).
    pub keep: u32,
    /// The folder backups go to.
    pub folder: String,
    /// The newest backup in it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<BackupFileView>,
    /// The data folder in use (restores go elsewhere).
    pub data_dir: String,
}

/// `backup_schedule_set`: the schedule, the kept count and the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupScheduleParams {
    /// When.
    pub schedule: BackupSchedule,
    /// How many to keep, 1 to [`MAX_KEEP`].
    pub keep: u32,
    /// An absolute folder, or none for the default (`backups` in the data folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

impl BackupScheduleParams {
    /// In range.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.keep == 0 || self.keep > MAX_KEEP {
            return Err(IpcError::invalid(format!("Keep 1 to {MAX_KEEP} backups.")));
        }
        match self.schedule {
            BackupSchedule::Every { hours } if hours == 0 || hours > MAX_EVERY_HOURS => {
                return Err(IpcError::invalid(format!("Choose every 1 to {MAX_EVERY_HOURS} hours, or turn scheduled backups off.")));
            }
            BackupSchedule::Every { .. } | BackupSchedule::Off => {}
        }
        if let Some(folder) = &self.folder
            && !folder.trim().is_empty()
            && !is_full_path(folder.trim())
        {
            return Err(IpcError::invalid("Give the backup folder as a full path (starting with /), or leave it empty for the default."));
        }
        Ok(())
    }
}

/// `backup_restore`: restore a backup file into a new or empty folder. Its Debug form hides the
/// passphrase.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupRestoreParams {
    /// The backup file (a full path).
    pub file: String,
    /// The folder to restore into (a full path; new or empty).
    pub target: String,
    /// Opens the vault key if the backup holds one; without it the secrets must be entered
    /// again after restoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passphrase: Option<String>,
}

impl std::fmt::Debug for BackupRestoreParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupRestoreParams")
            .field("file", &self.file)
            .field("target", &self.target)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

/// A full path on Unix (`/…`) or Windows (`C:\…`): the app's working folder means nothing to
/// the owner.
fn is_full_path(path: &str) -> bool {
    path.starts_with('/') || path.get(1..3) == Some(":\\")
}

impl BackupRestoreParams {
    /// Both paths given, in full.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.file.trim().is_empty() || self.target.trim().is_empty() {
            return Err(IpcError::invalid("Choose a backup file and a new folder to restore into."));
        }
        if !is_full_path(self.file.trim()) || !is_full_path(self.target.trim()) {
            return Err(IpcError::invalid("Give the backup file and the new folder as full paths (starting with /)."));
        }
        if self.passphrase.as_ref().is_some_and(|p| p.chars().count() > MAX_PASSPHRASE_CHARS) {
            return Err(IpcError::invalid(format!("Choose a passphrase of at most {MAX_PASSPHRASE_CHARS} characters.")));
        }
        Ok(())
    }
}

/// What a restore did, and how to start Hearth on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupRestoredView {
    /// The folder now holding the data.
    pub target: String,
    /// Files written (the database counts as one).
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Whether the vault key was restored (else secrets must be entered again).
    pub vault_key_restored: bool,
    /// How to start Hearth on the restored folder.
    pub start_hint: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_schedule_and_params_keep_their_wire_form() {
        let params = BackupScheduleParams { schedule: BackupSchedule::Every { hours: 24 }, keep: 7, folder: None };
        assert_eq!(serde_json::to_value(&params).unwrap(), serde_json::json!({"schedule": {"type": "every", "hours": 24}, "keep": 7}));
        assert!(params.validate().is_ok());
        assert!(BackupScheduleParams { keep: 0, ..params.clone() }.validate().is_err());
        assert!(BackupScheduleParams { schedule: BackupSchedule::Every { hours: 0 }, ..params.clone() }.validate().is_err());
        assert!(BackupScheduleParams { folder: Some("relative/dir".into()), ..params }.validate().is_err());
        assert!(BackupCreateParams { include_vault_key: true, passphrase: None }.validate().is_err());
        let restore = BackupRestoreParams { file: "/b.tar".into(), target: "relative".into(), passphrase: Some("secret words".into()) };
        assert!(restore.validate().is_err());
        assert!(!format!("{restore:?}").contains("secret words"));
    }
}
