//! Scheduled backups: the owner's setting, when one is due, and keeping the newest few.
//!
//! The setting lives in the `meta` table (it travels with the database into a backup). A
//! scheduled backup never holds the vault key: the passphrase is not kept anywhere to seal it
//! with. Pruning deletes only scheduled backups ([`super::archive::SCHEDULED_PREFIX`]), oldest
//! first by name (the names carry the time), so the owner's own backups and any other file in
//! the folder are safe.

use std::path::{Path, PathBuf};

use hearth_protocol::backup::{BackupSchedule, MAX_EVERY_HOURS, MAX_KEEP};

use super::archive::{PREFIX, SCHEDULED_PREFIX, SUFFIX};
use super::error::BackupError;
use crate::store::Store;

const SCHEDULE_KEY: &str = "backup_every_hours";
const KEEP_KEY: &str = "backup_keep";
const FOLDER_KEY: &str = "backup_folder";
const LAST_KEY: &str = "backup_last_at";

/// How many scheduled backups are kept when the owner has not chosen.
pub const DEFAULT_KEEP: u32 = 7;

/// The backup folder when the owner has not chosen one: `backups` in the data folder (left out
/// of the backups themselves).
pub fn default_folder(data_dir: &Path) -> PathBuf {
    data_dir.join("backups")
}

/// The owner's backup settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSettings {
    /// When.
    pub schedule: BackupSchedule,
    /// How many to keep.
    pub keep: u32,
    /// The folder the owner chose, if any.
    pub folder: Option<PathBuf>,
}

impl BackupSettings {
    /// The folder backups go to for the data folder `data_dir`.
    pub fn folder_in(&self, data_dir: &Path) -> PathBuf {
        self.folder.clone().unwrap_or_else(|| default_folder(data_dir))
    }
}

/// The stored settings (off, keep [`DEFAULT_KEEP`], default folder when unset).
pub async fn load(store: &Store) -> Result<BackupSettings, BackupError> {
    let hours = store.setting(SCHEDULE_KEY).await?.and_then(|v| v.parse::<u32>().ok()).filter(|h| (1..=MAX_EVERY_HOURS).contains(h));
    let keep = store.setting(KEEP_KEY).await?.and_then(|v| v.parse::<u32>().ok()).filter(|k| (1..=MAX_KEEP).contains(k));
    let folder = store.setting(FOLDER_KEY).await?.filter(|f| !f.is_empty()).map(PathBuf::from);
    Ok(BackupSettings {
        schedule: match hours {
            Some(hours) => BackupSchedule::Every { hours },
            None => BackupSchedule::Off,
        },
        keep: keep.unwrap_or(DEFAULT_KEEP),
        folder,
    })
}

/// Stores `settings` (already validated by the caller).
pub async fn save(store: &Store, settings: &BackupSettings) -> Result<(), BackupError> {
    let hours = match settings.schedule {
        BackupSchedule::Off => 0,
        BackupSchedule::Every { hours } => hours,
    };
    store.put_setting(SCHEDULE_KEY, &hours.to_string()).await?;
    store.put_setting(KEEP_KEY, &settings.keep.to_string()).await?;
    let folder = settings.folder.as_ref().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    store.put_setting(FOLDER_KEY, &folder).await?;
    Ok(())
}

/// When the last scheduled backup was made (Unix ms).
pub async fn last_at(store: &Store) -> Result<Option<i64>, BackupError> {
    Ok(store.setting(LAST_KEY).await?.and_then(|v| v.parse().ok()))
}

/// Records a scheduled backup made at `at`.
pub async fn mark_made(store: &Store, at: i64) -> Result<(), BackupError> {
    Ok(store.put_setting(LAST_KEY, &at.to_string()).await?)
}

/// Whether a scheduled backup is due at `now`.
pub fn due(schedule: BackupSchedule, last_at: Option<i64>, now: i64) -> bool {
    match schedule {
        BackupSchedule::Off => false,
        BackupSchedule::Every { hours } => match last_at {
            None => true,
            Some(last) => now.saturating_sub(last) >= i64::from(hours) * 3_600_000,
        },
    }
}

/// Hearth's backup files in `folder` (the owner's and the scheduled ones), newest first.
pub fn backups_in(folder: &Path) -> Result<Vec<PathBuf>, BackupError> {
    let mut found = named(folder, PREFIX)?;
    // By the time in the name, whichever prefix comes before it.
    found.sort_by_key(|(name, _)| std::cmp::Reverse(name.strip_prefix(SCHEDULED_PREFIX).or(name.strip_prefix(PREFIX)).map(str::to_owned)));
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// Files in `folder` whose names start with `prefix` and end with [`SUFFIX`], with their names.
fn named(folder: &Path, prefix: &str) -> Result<Vec<(String, PathBuf)>, BackupError> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(BackupError::Io { doing: "list the backups in", path: folder.to_owned(), source }),
    };
    Ok(entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            (name.starts_with(prefix) && name.ends_with(SUFFIX)).then(|| (name, e.path()))
        })
        .collect())
}

/// Deletes all but the newest `keep` scheduled backups in `folder` (never one the owner made);
/// how many were deleted.
pub fn prune(folder: &Path, keep: u32) -> Result<usize, BackupError> {
    let mut scheduled = named(folder, SCHEDULED_PREFIX)?;
    scheduled.sort_by(|a, b| b.0.cmp(&a.0));
    let mut removed = 0;
    for (_, old) in scheduled.into_iter().skip(keep as usize) {
        std::fs::remove_file(&old).map_err(|source| BackupError::Io { doing: "delete the old backup", path: old.clone(), source })?;
        removed += 1;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_is_due_after_its_interval_and_never_when_off() {
        let every = BackupSchedule::Every { hours: 2 };
        assert!(due(every, None, 0));
        assert!(!due(every, Some(1_000), 1_000 + 7_199_999));
        assert!(due(every, Some(1_000), 1_000 + 7_200_000));
        assert!(!due(BackupSchedule::Off, None, i64::MAX));
    }
}
