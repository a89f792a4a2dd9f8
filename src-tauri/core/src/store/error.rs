//! The store's own failure, apart from the core's error: `CoreError` wraps it (`Store`), and the
//! vault, whose rows are read and written through [`super::secrets`], wraps it in its own.

/// A query failed after start-up (SQLite's own words; never row contents).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct StoreError(#[from] sqlx::Error);
