//! Making a backup file: the database snapshot, the data folder's files, then the manifest.
//!
//! The database is copied first (a consistent snapshot while the app writes), then the files.
//! A file added after the snapshot is carried without a row pointing at it (harmless); one
//! deleted meanwhile is missing for its row, as a deletion a moment later would leave it. Each
//! file is read once, hashed as it is stored, so the manifest (the last entry) describes exactly
//! the bytes in the archive. The archive is written under a hidden temporary name and renamed
//! when complete: a backup file that exists is whole.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use secrecy::SecretString;
use sha2::{Digest, Sha256};

use super::error::BackupError;
use super::manifest::{DATABASE_ENTRY, Entry, FILES_PREFIX, FORMAT, MANIFEST_NAME, Manifest};
use super::passphrase;
use crate::store::Store;
use crate::vault::{KEY_FILE_NAME, LOCK_FILE_NAME, Vault};

/// A backup file's name starts with this and ends with [`SUFFIX`].
pub const PREFIX: &str = "hearth-backup-";

/// A scheduled backup's name starts with this (it starts with [`PREFIX`] too). Pruning deletes
/// only these: a backup the owner made with "Back up now" is theirs to delete.
pub const SCHEDULED_PREFIX: &str = "hearth-backup-auto-";

/// Who asked for a backup, which its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupOrigin {
    /// The owner ("Back up now"): never pruned.
    Owner,
    /// The schedule: pruned to the kept count.
    Scheduled,
}

impl BackupOrigin {
    fn prefix(self) -> &'static str {
        match self {
            BackupOrigin::Owner => PREFIX,
            BackupOrigin::Scheduled => SCHEDULED_PREFIX,
        }
    }
}

/// A backup file's extension.
pub const SUFFIX: &str = ".tar";

/// Whether the vault's key goes into the backup.
pub enum KeyChoice {
    /// Secrets stay sealed and the key stays out: restoring on another machine needs the
    /// secrets entered again (or the same keychain).
    Leave,
    /// The key goes in, sealed under this passphrase.
    Include(SecretString),
}

/// What [`create`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupMade {
    /// The backup file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256 (lowercase hex), for the owner to compare copies.
    pub sha256: String,
    /// When it was made (Unix ms, also in its name).
    pub created_at: i64,
    /// The database's schema version in it.
    pub schema_version: i64,
    /// How many entries (the database and each file).
    pub entries: usize,
    /// Whether it holds the vault key.
    pub holds_vault_key: bool,
}

/// Names in the data folder's top level that a backup never carries: the live database (it
/// goes in as a snapshot), the copy an upgrade keeps, the vault key (only on request, sealed)
/// and its lock, Hearth's own backups folder, and the browser profiles — Chromium keeps their
/// cookies and saved logins under a key stored beside them (`--password-store=basic`), so
/// copying them would carry the owner's logins out unsealed, and torn while Chromium writes.
fn excluded_top_level(name: &str) -> bool {
    name.starts_with("hearth.db") || name == KEY_FILE_NAME || name == LOCK_FILE_NAME || name == "backups" || name == "browser"
}

/// Names never carried at any depth: a database or vault key a restore left inside the folder
/// (a restored Hearth inside this one) must not ride along unsealed.
fn excluded_anywhere(name: &str) -> bool {
    name.starts_with("hearth.db") || name == KEY_FILE_NAME
}

/// Makes a backup of `data_dir` (whose database `store` has open) in `folder`.
pub async fn create(
    store: &Store,
    vault: &Vault,
    data_dir: &Path,
    folder: &Path,
    key: KeyChoice,
    origin: BackupOrigin,
) -> Result<BackupMade, BackupError> {
    // A folder Hearth makes is the owner's only; one the owner chose is left as it is (each
    // backup file in it is 0600).
    if !folder.exists() {
        Store::create_private_dir(folder)?;
    }
    let created_at = crate::store::now_ms();
    let name = unique_name(folder, created_at, origin);
    let path = folder.join(&name);
    let partial = folder.join(format!(".{name}.partial"));
    let db_copy = folder.join(format!(".{name}.db.partial"));
    let vault_key = match key {
        KeyChoice::Leave => None,
        KeyChoice::Include(passphrase) => {
            let data_key = zeroize::Zeroizing::new(*vault.data_key());
            // Argon2id takes a moment of CPU and 64 MiB: off the async threads.
            Some(
                tokio::task::spawn_blocking(move || passphrase::seal(&data_key, &passphrase))
                    .await
                    .map_err(|err| BackupError::Internal(err.to_string()))??,
            )
        }
    };
    let schema_version = store.schema_version().await?;
    let job = Job {
        data_dir: data_dir.to_owned(),
        folder: folder.to_owned(),
        db_copy: db_copy.clone(),
        partial: partial.clone(),
        manifest: Manifest {
            format: FORMAT,
            schema_version,
            created_at,
            app_version: env!("CARGO_PKG_VERSION").to_owned(),
            entries: Vec::new(),
            vault_key,
        },
    };
    let written = job.run(store).await;
    remove_quietly(&db_copy);
    let (bytes, sha256, manifest) = match written {
        Ok(done) => done,
        Err(err) => {
            remove_quietly(&partial);
            return Err(err);
        }
    };
    std::fs::rename(&partial, &path).map_err(|source| {
        remove_quietly(&partial);
        BackupError::Io { doing: "name the backup", path: path.clone(), source }
    })?;
    tracing::info!(path = %path.display(), bytes, entries = manifest.entries.len(), "backup made");
    Ok(BackupMade {
        path,
        bytes,
        sha256,
        created_at,
        schema_version,
        entries: manifest.entries.len(),
        holds_vault_key: manifest.vault_key.is_some(),
    })
}

/// `hearth-backup-[auto-]<UTC time to the millisecond>-<n>.tar`, `n` counting backups made in the
/// same millisecond from 000. Names of one origin sort by time, which pruning relies on.
fn unique_name(folder: &Path, created_at: i64, origin: BackupOrigin) -> String {
    let stamp = chrono::DateTime::from_timestamp_millis(created_at)
        .map(|t| t.format("%Y%m%dT%H%M%S%3fZ").to_string())
        .unwrap_or_else(|| created_at.to_string());
    let mut n = 0;
    loop {
        let name = format!("{}{stamp}-{n:03}{SUFFIX}", origin.prefix());
        if !folder.join(&name).exists() {
            return name;
        }
        n += 1;
    }
}

fn remove_quietly(path: &Path) {
    if let Err(err) = std::fs::remove_file(path)
        && err.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %err, "a temporary backup file could not be removed");
    }
}

/// The blocking part: everything that reads and writes files.
struct Job {
    data_dir: PathBuf,
    folder: PathBuf,
    db_copy: PathBuf,
    partial: PathBuf,
    manifest: Manifest,
}

/// Turns an I/O error into one naming what Hearth was doing and where.
fn io(doing: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BackupError {
    let path = path.to_owned();
    move |source| BackupError::Io { doing, path, source }
}

impl Job {
    /// The snapshot, then the archive (on a blocking thread).
    async fn run(self, store: &Store) -> Result<(u64, String, Manifest), BackupError> {
        store.snapshot_to(&self.db_copy).await?;
        tokio::task::spawn_blocking(move || self.write()).await.map_err(|err| BackupError::Internal(err.to_string()))?
    }

    fn write(mut self) -> Result<(u64, String, Manifest), BackupError> {
        let file = Store::create_new_private(&self.partial).map_err(io("write the backup", &self.partial))?;
        let mut tar = tar::Builder::new(Hashing::new(BufWriter::new(file)));
        let db = File::open(&self.db_copy).map_err(io("read the database copy", &self.db_copy))?;
        let size = db.metadata().map_err(io("read the database copy", &self.db_copy))?.len();
        let entry = append(&mut tar, DATABASE_ENTRY, size, db).map_err(io("write the backup", &self.partial))?;
        self.manifest.entries.push(entry);
        // The backup folder itself is skipped when it sits in the data folder.
        let skip = self.folder.canonicalize().ok();
        let walk = walkdir::WalkDir::new(&self.data_dir).follow_links(false).sort_by_file_name().into_iter().filter_entry(|e| {
            let name = e.file_name().to_str();
            let top = e.depth() == 1 && name.is_some_and(excluded_top_level);
            let anywhere = e.depth() > 1 && name.is_some_and(excluded_anywhere);
            let backups = e.file_type().is_dir() && skip.as_deref().is_some_and(|s| e.path().canonicalize().is_ok_and(|p| p == s));
            !(top || anywhere || backups)
        });
        for item in walk {
            let item = item.map_err(|err| {
                let path = err.path().map(Path::to_owned).unwrap_or_else(|| self.data_dir.clone());
                BackupError::Io { doing: "read", path, source: err.into() }
            })?;
            // Regular files only: links are not followed out of the folder, and sockets or
            // lock links a running browser keeps mean nothing in another folder.
            if !item.file_type().is_file() {
                continue;
            }
            let Ok(relative) = item.path().strip_prefix(&self.data_dir) else { continue };
            let Some(relative) = relative.to_str() else {
                tracing::warn!(path = %item.path().display(), "a file whose name is not UTF-8 was left out of the backup");
                continue;
            };
            let file = match File::open(item.path()) {
                Ok(file) => file,
                // Deleted since the walk saw it: as if the backup had started a moment later.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(BackupError::Io { doing: "read", path: item.path().to_owned(), source }),
            };
            let size = file.metadata().map_err(io("read", item.path()))?.len();
            let name = format!("{FILES_PREFIX}{}", relative.replace(std::path::MAIN_SEPARATOR, "/"));
            let entry = append(&mut tar, &name, size, file).map_err(io("back up", item.path()))?;
            self.manifest.entries.push(entry);
        }
        let manifest = serde_json::to_vec_pretty(&self.manifest).map_err(|err| BackupError::Internal(err.to_string()))?;
        let mut header = header(manifest.len() as u64);
        tar.append_data(&mut header, MANIFEST_NAME, manifest.as_slice()).map_err(io("write the backup", &self.partial))?;
        let hashing = tar.into_inner().map_err(io("write the backup", &self.partial))?;
        let (writer, bytes, sha256) = hashing.finish();
        let file = writer.into_inner().map_err(|err| BackupError::Io {
            doing: "write the backup",
            path: self.partial.clone(),
            source: err.into_error(),
        })?;
        file.sync_all().map_err(io("write the backup", &self.partial))?;
        Ok((bytes, sha256, self.manifest))
    }
}

/// Appends `size` bytes of `source` as `name`, hashing them on the way; a file that shrank
/// while it was read fails (its entry would not match its header).
fn append<W: Write>(tar: &mut tar::Builder<W>, name: &str, size: u64, source: File) -> std::io::Result<Entry> {
    let mut reader = HashingReader { inner: source.take(size), hasher: Sha256::new(), read: 0 };
    let mut header = header(size);
    tar.append_data(&mut header, name, &mut reader)?;
    if reader.read != size {
        return Err(std::io::Error::other(format!("{name} changed while it was backed up; make the backup again")));
    }
    Ok(Entry { path: name.to_owned(), size, sha256: hex::encode(reader.hasher.finalize()) })
}

fn header(size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o600);
    header.set_entry_type(tar::EntryType::Regular);
    header
}

/// Hashes what passes through a reader.
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    read: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// Hashes and counts what passes through a writer (the whole backup file).
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Self {
        Self { inner, hasher: Sha256::new(), written: 0 }
    }

    fn finish(self) -> (W, u64, String) {
        (self.inner, self.written, hex::encode(self.hasher.finalize()))
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
