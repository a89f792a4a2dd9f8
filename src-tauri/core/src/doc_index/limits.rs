//! How much one pass may read: a file larger than the size limit is skipped with a note, the
//! text kept per file is bounded, and a pass stops at its time budget (the next one goes on
//! where it stopped, since what it indexed is already unchanged).

use std::time::Duration;

/// The bounds of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLimits {
    /// Larger files are skipped (too large).
    pub max_file_bytes: u64,
    /// At most this many bytes of text are kept per file (the rest is not searchable).
    pub max_text_bytes: usize,
    /// A pass ends after this long; files not reached wait for the next.
    pub pass_time: Duration,
    /// At most this many files are looked at per folder (a folder of a million files is not a
    /// document folder).
    pub max_files: usize,
}

impl IndexLimits {
    /// 20 MB per file, 2 MB of text per file, two minutes per pass, 50,000 files per folder.
    pub const STANDARD: Self =
        Self { max_file_bytes: 20 * 1024 * 1024, max_text_bytes: 2 * 1024 * 1024, pass_time: Duration::from_secs(120), max_files: 50_000 };
}

impl Default for IndexLimits {
    fn default() -> Self {
        Self::STANDARD
    }
}
