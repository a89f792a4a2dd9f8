//! Restoring a backup into a new data folder.
//!
//! Two passes over the file. The first writes nothing: it hashes every entry, reads the
//! manifest (the last entry), and refuses a backup from a newer format or schema, one whose
//! entries differ in any byte from the manifest, or a passphrase that does not open the vault
//! key. The second writes into a hidden folder beside the target, checks each hash again (the
//! file could change between passes), and renames the folder into place only when everything
//! is there: a failure at any point leaves the target as it was.
//!
//! Restore never replaces data: the target must be new or empty. The window restores into a
//! new folder and tells the owner how to start Hearth on it (`HEARTH_DATA_DIR`), rather than
//! switching the running app's folder under its open database; the current data stays where it
//! is until the owner chooses.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use hearth_protocol::backup::BackupRestoredView;
use secrecy::SecretString;
use sha2::{Digest, Sha256};

use super::error::BackupError;
use super::manifest::{DATABASE_ENTRY, Entry, FILES_PREFIX, FORMAT, MANIFEST_NAME, MAX_MANIFEST_BYTES, Manifest};
use super::passphrase;
use crate::store::Store;
use crate::vault::{KEY_FILE_NAME, KEY_LEN, LOCK_FILE_NAME};

/// The most entries a backup may hold.
const MAX_ENTRIES: usize = 1_000_000;

/// The longest path inside a backup.
const MAX_PATH: usize = 4096;

/// What [`restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The data folder now holding the backup.
    pub target: PathBuf,
    /// Entries written (the database and each file).
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The backup's schema version (Hearth migrates it forward when it opens the folder).
    pub schema_version: i64,
    /// When the backup was made.
    pub created_at: i64,
    /// Whether the backup held the vault key.
    pub key_in_backup: bool,
    /// Whether the key was restored (it was in the backup and the passphrase opened it): the
    /// secrets open in the new folder. Without it they must be entered again in Settings.
    pub key_restored: bool,
}

/// Restores the backup `file` into `target` (new, or an empty folder). `passphrase` opens the
/// vault key if the backup holds one; without it the key is left out.
pub fn restore(file: &Path, target: &Path, passphrase: Option<&SecretString>) -> Result<Restored, BackupError> {
    ensure_empty(target)?;
    let manifest = verify(file)?;
    let key = match (&manifest.vault_key, passphrase) {
        (Some(sealed), Some(passphrase)) => match passphrase::open(sealed, passphrase) {
            Ok(Some(key)) => Some(key),
            Ok(None) => return Err(BackupError::WrongPassphrase { path: file.to_owned() }),
            Err(why) => return Err(damaged(file, why)),
        },
        (Some(_), None) | (None, Some(_) | None) => None,
    };
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        Some(_) | None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|source| BackupError::Io { doing: "create the folder", path: parent.clone(), source })?;
    let staging = parent.join(format!(
        ".{}.restoring-{}",
        target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        uuid::Uuid::new_v4().simple()
    ));
    let written = write(file, &staging, &manifest, key.as_deref()).and_then(|()| {
        ensure_empty(target)?;
        if target.exists() {
            std::fs::remove_dir(target).map_err(|source| BackupError::Io {
                doing: "replace the empty folder",
                path: target.to_owned(),
                source,
            })?;
        }
        std::fs::rename(&staging, target).map_err(|source| BackupError::Io {
            doing: "move the restored data to",
            path: target.to_owned(),
            source,
        })
    });
    if let Err(err) = written {
        if let Err(clean) = std::fs::remove_dir_all(&staging)
            && clean.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %staging.display(), error = %clean, "a half-restored folder could not be removed; delete it");
        }
        return Err(err);
    }
    tracing::info!(target = %target.display(), entries = manifest.entries.len(), "backup restored");
    Ok(Restored {
        target: target.to_owned(),
        entries: manifest.entries.len(),
        bytes: manifest.entries.iter().map(|e| e.size).sum(),
        schema_version: manifest.schema_version,
        created_at: manifest.created_at,
        key_in_backup: manifest.vault_key.is_some(),
        key_restored: key.is_some(),
    })
}

impl Restored {
    /// The answer to a restore, from the window or the command line.
    pub fn view(&self) -> BackupRestoredView {
        let restored = self;
        let target = restored.target.to_string_lossy().into_owned();
        let secrets = if restored.key_restored {
            ""
        } else if restored.key_in_backup {
            " The vault key was left out (no passphrase given): enter your secrets again in Settings."
        } else {
            " This backup holds no vault key: enter your secrets again in Settings unless this computer's keychain has the key."
        };
        BackupRestoredView {
            target: target.clone(),
            entries: restored.entries as u64,
            bytes: restored.bytes,
            vault_key_restored: restored.key_restored,
            start_hint: format!("Quit Hearth and start it with HEARTH_DATA_DIR={target} to use the restored data.{secrets}"),
        }
    }
}

/// `target` is missing, or an empty folder.
fn ensure_empty(target: &Path) -> Result<(), BackupError> {
    match std::fs::read_dir(target) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(BackupError::TargetNotEmpty { path: target.to_owned() }),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => {
            if target.is_file() {
                return Err(BackupError::TargetNotEmpty { path: target.to_owned() });
            }
            Err(BackupError::Io { doing: "read the folder", path: target.to_owned(), source })
        }
    }
}

fn damaged(file: &Path, why: impl Into<String>) -> BackupError {
    BackupError::Damaged { path: file.to_owned(), why: why.into() }
}

fn open(file: &Path) -> Result<tar::Archive<std::io::BufReader<File>>, BackupError> {
    let reader = File::open(file).map_err(|source| BackupError::Io { doing: "read the backup", path: file.to_owned(), source })?;
    Ok(tar::Archive::new(std::io::BufReader::new(reader)))
}

/// The first pass: every entry hashed, the manifest read and checked against them. Writes
/// nothing.
fn verify(file: &Path) -> Result<Manifest, BackupError> {
    let mut archive = open(file)?;
    let mut seen: Vec<Entry> = Vec::new();
    let mut manifest: Option<Manifest> = None;
    let entries = archive.entries().map_err(|err| damaged(file, format!("it is not a tar file ({err})")))?;
    for entry in entries {
        let mut entry = entry.map_err(|err| damaged(file, format!("it is cut short or not a tar file ({err})")))?;
        if manifest.is_some() {
            return Err(damaged(file, "it holds entries after its manifest"));
        }
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(damaged(file, "it holds something other than plain files"));
        }
        let path = entry_path(file, &entry)?;
        if path == MANIFEST_NAME {
            if entry.size() > MAX_MANIFEST_BYTES {
                return Err(damaged(file, "its manifest is too large"));
            }
            let mut text = Vec::new();
            entry.read_to_end(&mut text).map_err(|err| damaged(file, format!("its manifest cannot be read ({err})")))?;
            manifest = Some(serde_json::from_slice(&text).map_err(|err| damaged(file, format!("its manifest cannot be read ({err})")))?);
            continue;
        }
        if seen.len() >= MAX_ENTRIES {
            return Err(damaged(file, "it holds too many entries"));
        }
        let mut hasher = Sha256::new();
        let size = std::io::copy(&mut entry, &mut HashWriter(&mut hasher))
            .map_err(|err| damaged(file, format!("{path} cannot be read ({err})")))?;
        seen.push(Entry { path, size, sha256: hex::encode(hasher.finalize()) });
    }
    let Some(manifest) = manifest else {
        return Err(damaged(file, "it has no manifest (it may be cut short)"));
    };
    if manifest.format > FORMAT {
        return Err(damaged(
            file,
            format!("it is in backup format {}, newer than this Hearth's {FORMAT}; restore it with a newer Hearth", manifest.format),
        ));
    }
    let known = Store::newest_known_schema();
    if manifest.schema_version > known {
        return Err(BackupError::TooNew { path: file.to_owned(), found: manifest.schema_version, known });
    }
    if manifest.entries != seen {
        let differs = manifest.entries.iter().zip(&seen).find(|(a, b)| a != b).map(|(a, _)| a.path.clone());
        return Err(damaged(
            file,
            match differs {
                Some(path) => format!("{path} differs from what its manifest records (altered or damaged)"),
                None => "its entries and its manifest list different files".to_owned(),
            },
        ));
    }
    if manifest.entries.iter().filter(|e| e.path == DATABASE_ENTRY).count() != 1 {
        return Err(damaged(file, "it holds no database"));
    }
    Ok(manifest)
}

/// An entry's path, checked: plain components only (no `..`, no root), under a known prefix,
/// and not a name Hearth reserves in a data folder.
fn entry_path<R: Read>(file: &Path, entry: &tar::Entry<'_, R>) -> Result<String, BackupError> {
    let path = entry.path().map_err(|_| damaged(file, "an entry's name is not readable"))?;
    let Some(text) = path.to_str() else {
        return Err(damaged(file, "an entry's name is not UTF-8"));
    };
    if text.len() > MAX_PATH || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(damaged(file, format!("the entry {text:?} would be written outside the data folder")));
    }
    let text = text.to_owned();
    if text == MANIFEST_NAME || text == DATABASE_ENTRY {
        return Ok(text);
    }
    let Some(relative) = text.strip_prefix(FILES_PREFIX) else {
        return Err(damaged(file, format!("it holds an unknown entry {text:?}")));
    };
    let top = relative.split('/').next().unwrap_or_default();
    if top.starts_with("hearth.db") || top == KEY_FILE_NAME || top == LOCK_FILE_NAME || relative.is_empty() {
        return Err(damaged(file, format!("it holds a file named {relative:?}, which Hearth keeps only in its own way")));
    }
    Ok(text)
}

/// Where an entry goes in the new data folder.
fn destination(staging: &Path, path: &str) -> PathBuf {
    match path.strip_prefix(FILES_PREFIX) {
        Some(relative) => relative.split('/').fold(staging.to_owned(), |dir, part| dir.join(part)),
        None => staging.join("hearth.db"),
    }
}

/// The second pass: every entry written under `staging` and checked again; the vault key last.
fn write(file: &Path, staging: &Path, manifest: &Manifest, key: Option<&[u8; KEY_LEN]>) -> Result<(), BackupError> {
    Store::create_private_dir(staging)?;
    let mut archive = open(file)?;
    let entries = archive.entries().map_err(|err| damaged(file, format!("it is not a tar file ({err})")))?;
    let mut expected = manifest.entries.iter();
    for entry in entries {
        let mut entry = entry.map_err(|err| damaged(file, format!("it changed while it was restored ({err})")))?;
        let path = entry_path(file, &entry)?;
        if path == MANIFEST_NAME {
            break;
        }
        let Some(want) = expected.next().filter(|want| want.path == path) else {
            return Err(damaged(file, "it changed while it was restored"));
        };
        let dest = destination(staging, &path);
        if let Some(dir) = dest.parent() {
            Store::create_private_dir(dir)?;
        }
        let io = |source| BackupError::Io { doing: "write", path: dest.clone(), source };
        let mut out = Store::create_new_private(&dest).map_err(io)?;
        let mut hasher = Sha256::new();
        let size = std::io::copy(&mut entry, &mut Tee { file: &mut out, hasher: &mut hasher }).map_err(io)?;
        out.sync_all().map_err(io)?;
        if size != want.size || hex::encode(hasher.finalize()) != want.sha256 {
            return Err(damaged(file, format!("{path} changed while it was restored")));
        }
    }
    if expected.next().is_some() {
        return Err(damaged(file, "it changed while it was restored"));
    }
    if let Some(key) = key {
        let dest = staging.join(KEY_FILE_NAME);
        let io = |source| BackupError::Io { doing: "write the vault key to", path: dest.clone(), source };
        let mut out = Store::create_new_private(&dest).map_err(io)?;
        out.write_all(key).map_err(io)?;
        out.sync_all().map_err(io)?;
    }
    Ok(())
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Tee<'a> {
    file: &'a mut File,
    hasher: &'a mut Sha256,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}
