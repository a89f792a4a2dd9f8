//! Settings → Data: backups now and on a schedule, and restore into a new folder. The work is in
//! `crate::backup`; this maps the owner's words to it and runs the scheduled ones.

use std::path::PathBuf;
use std::time::Duration;

use hearth_protocol::backup::{
    BackupCreateParams, BackupFileView, BackupMadeView, BackupRestoreParams, BackupRestoredView, BackupScheduleParams, BackupSettingsView,
};
use secrecy::SecretString;

use super::Hearth;
use crate::backup::{BackupError, BackupMade, BackupOrigin, KeyChoice, schedule};
use crate::error::{CoreError, Result};

/// How often the background checks whether a scheduled backup is due.
const CHECK_EVERY: Duration = Duration::from_secs(60);

fn view(made: &BackupMade) -> BackupMadeView {
    BackupMadeView {
        path: made.path.to_string_lossy().into_owned(),
        bytes: made.bytes,
        sha256: made.sha256.clone(),
        created_at: made.created_at,
        holds_vault_key: made.holds_vault_key,
    }
}

impl Hearth {
    /// Settings → Data as it stands, with the newest backup in the folder.
    pub async fn backup_settings_get(&self) -> Result<BackupSettingsView> {
        let settings = schedule::load(&self.store).await?;
        let folder = settings.folder_in(&self.config.data_dir);
        let last = match schedule::backups_in(&folder)?.into_iter().next() {
            Some(path) => {
                let meta = std::fs::metadata(&path).map_err(|source| BackupError::Io { doing: "read", path: path.clone(), source })?;
                let modified_at =
                    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis() as i64);
                Some(BackupFileView { path: path.to_string_lossy().into_owned(), bytes: meta.len(), modified_at })
            }
            None => None,
        };
        Ok(BackupSettingsView {
            schedule: settings.schedule,
            keep: settings.keep,
            folder: folder.to_string_lossy().into_owned(),
            last,
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
        })
    }

    /// Stores the schedule, kept count and folder (validated by the caller's params).
    pub async fn backup_schedule_set(&self, params: &BackupScheduleParams) -> Result<BackupSettingsView> {
        let folder = params.folder.as_deref().map(str::trim).filter(|f| !f.is_empty()).map(PathBuf::from);
        let settings = schedule::BackupSettings { schedule: params.schedule, keep: params.keep, folder };
        schedule::save(&self.store, &settings).await?;
        self.backup_settings_get().await
    }

    /// Makes a backup now, into the backup folder; with the vault key only when asked.
    pub async fn backup_create(&self, params: &BackupCreateParams) -> Result<BackupMadeView> {
        let key = match (params.include_vault_key, &params.passphrase) {
            (true, Some(passphrase)) => KeyChoice::Include(SecretString::from(passphrase.clone())),
            (true, None) => {
                return Err(CoreError::InvalidInput("Enter a passphrase to protect the vault key, or leave the key out.".to_owned()));
            }
            (false, Some(_) | None) => KeyChoice::Leave,
        };
        let settings = schedule::load(&self.store).await?;
        let folder = settings.folder_in(&self.config.data_dir);
        let made =
            crate::backup::create(&self.store, self.settings.vault(), &self.config.data_dir, &folder, key, BackupOrigin::Owner).await?;
        Ok(view(&made))
    }

    /// Restores a backup file into a new or empty folder (never the one in use); the answer
    /// says how to start Hearth on it.
    pub async fn backup_restore(&self, params: &BackupRestoreParams) -> Result<BackupRestoredView> {
        let target = PathBuf::from(params.target.trim());
        if inside(&target, &self.config.data_dir) {
            return Err(CoreError::InvalidInput(
                "Restore into a new folder outside Hearth's data folder, not the one Hearth is using now nor one inside it.".to_owned(),
            ));
        }
        let file = PathBuf::from(params.file.trim());
        let passphrase = params.passphrase.clone().filter(|p| !p.is_empty()).map(SecretString::from);
        let restored = tokio::task::spawn_blocking(move || crate::backup::restore(&file, &target, passphrase.as_ref()))
            .await
            .map_err(|err| CoreError::Unavailable(format!("the restore stopped unexpectedly: {err}")))??;
        Ok(restored.view())
    }

    /// Makes the scheduled backup if one is due at `now` and prunes to the kept count; the
    /// backup made, if any. The background calls this every minute; tests call it with their
    /// own clock.
    pub async fn backup_run_due(&self, now: i64) -> Result<Option<BackupMadeView>> {
        let settings = schedule::load(&self.store).await?;
        if !schedule::due(settings.schedule, schedule::last_at(&self.store).await?, now) {
            return Ok(None);
        }
        let folder = settings.folder_in(&self.config.data_dir);
        let vault = self.settings.vault();
        let made =
            crate::backup::create(&self.store, vault, &self.config.data_dir, &folder, KeyChoice::Leave, BackupOrigin::Scheduled).await?;
        schedule::mark_made(&self.store, now).await?;
        let removed = schedule::prune(&folder, settings.keep)?;
        tracing::info!(removed, keep = settings.keep, "scheduled backup made");
        Ok(Some(view(&made)))
    }

    /// Starts the scheduled backups' check (with the other workers).
    pub(super) fn start_scheduled_backups(&self) {
        let hearth = self.clone();
        let stop = self.background.clone();
        tokio::spawn(async move {
            loop {
                if let Err(err) = hearth.backup_run_due(crate::store::now_ms()).await {
                    tracing::warn!(error = %err, "a scheduled backup failed; it is tried again in a minute");
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(CHECK_EVERY) => {}
                }
            }
        });
    }
}

/// Whether `target` is `data_dir` or lies inside it, compared as the file system resolves them
/// (the target may not exist yet: its nearest existing ancestor is resolved, the rest kept).
fn inside(target: &std::path::Path, data_dir: &std::path::Path) -> bool {
    let resolve = |path: &std::path::Path| {
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.file_name().map(std::ffi::OsStr::to_owned), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut resolved = existing.canonicalize().unwrap_or(existing);
        resolved.extend(rest.into_iter().rev());
        resolved
    };
    resolve(target).starts_with(resolve(data_dir))
}
