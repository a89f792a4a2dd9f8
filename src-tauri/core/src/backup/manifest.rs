//! The manifest: what a backup holds, so a restore can check every byte before it writes one.

use serde::{Deserialize, Serialize};

use super::passphrase::SealedKey;

/// The backup format this Hearth writes and reads.
pub const FORMAT: u32 = 1;

/// The manifest's name in the archive (its last entry: it is written once every entry's hash
/// is known, in the same pass that stores the entry).
pub const MANIFEST_NAME: &str = "manifest.json";

/// Where the database snapshot sits in the archive.
pub const DATABASE_ENTRY: &str = "db/hearth.db";

/// The folder the data folder's files sit under in the archive.
pub const FILES_PREFIX: &str = "files/";

/// The largest manifest a restore reads (a manifest line per file: about 100,000 files).
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// [`FORMAT`] when written.
    pub format: u32,
    /// The newest migration applied to the database copy.
    pub schema_version: i64,
    /// When the backup was made (Unix ms).
    pub created_at: i64,
    /// The Hearth version that made it (for the owner; never checked).
    pub app_version: String,
    /// Every entry but the manifest, in archive order.
    pub entries: Vec<Entry>,
    /// The vault key, sealed under the owner's passphrase, when they asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault_key: Option<SealedKey>,
}

/// One file in the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its path in the archive (`db/hearth.db` or `files/<path in the data folder>`).
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// SHA-256, lowercase hex.
    pub sha256: String,
}
