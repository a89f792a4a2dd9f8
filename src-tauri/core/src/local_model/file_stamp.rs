//! Which model file, exactly. A probe report and the owner's "let it act untested" are
//! permissions to act given to one file; each carries that file's stamp, and a worker loads
//! the file only while its stamp is still the one its permissions were given to.
//!
//! On Unix the stamp holds the file's device, inode and status-change time (ctime), which no
//! program can set back (`touch`, `cp -p`, `rsync -t` and unzip set the modification time, not
//! it): a file replaced, rewritten or copied over, even to the same size and modification time,
//! is another file. Elsewhere it is the size and modification time. Not a hash: hashing a
//! multi-gigabyte file on every load would take seconds.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A model file's identity at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStamp {
    /// Its size.
    pub bytes: u64,
    /// Its last modification, in nanoseconds since 1970.
    pub modified_ns: u64,
    /// (Unix) the device it is on; 0 elsewhere.
    #[serde(default)]
    pub device: u64,
    /// (Unix) its inode; 0 elsewhere.
    #[serde(default)]
    pub inode: u64,
    /// (Unix) its last status change, in nanoseconds since 1970; 0 elsewhere.
    #[serde(default)]
    pub changed_ns: u64,
}

impl FileStamp {
    /// The stamp of the file at `path` now (none if it cannot be read).
    pub async fn of(path: &Path) -> Option<Self> {
        let meta = tokio::fs::metadata(path).await.ok()?;
        Self::from_metadata(&meta)
    }

    fn from_metadata(meta: &std::fs::Metadata) -> Option<Self> {
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        let modified_ns = u64::try_from(modified.as_nanos()).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let changed = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
            Some(Self { bytes: meta.len(), modified_ns, device: meta.dev(), inode: meta.ino(), changed_ns: u64::try_from(changed).ok()? })
        }
        #[cfg(not(unix))]
        Some(Self { bytes: meta.len(), modified_ns, device: 0, inode: 0, changed_ns: 0 })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_file_rewritten_or_replaced_has_another_stamp_even_with_its_old_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, b"GGUF one").unwrap();
        let first = FileStamp::of(&path).await.unwrap();
        assert_eq!(FileStamp::of(&path).await, Some(first), "the same file reads the same");

        // Replaced by another file of the same size, its modification time set back.
        let other = dir.path().join("other.gguf");
        std::fs::write(&other, b"GGUF two").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let modified = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(first.modified_ns);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
        let replaced = FileStamp::of(&path).await.unwrap();
        assert_eq!((replaced.bytes, replaced.modified_ns), (first.bytes, first.modified_ns));
        assert_ne!(replaced, first, "another file, whatever its size and time say");
        assert_eq!(FileStamp::of(&dir.path().join("gone.gguf")).await, None);
    }
}
