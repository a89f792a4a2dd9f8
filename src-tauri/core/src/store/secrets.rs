//! The vault's encrypted secrets: one row per name. Only ciphertext ever reaches this table;
//! encryption and decryption live in `crate::vault`.

use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::Store;
use super::error::StoreError;

/// Result with [`StoreError`]: these rows fail only as queries, and the vault wraps that in its
/// own error.
type Result<T, E = StoreError> = std::result::Result<T, E>;

/// One stored secret, as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRow {
    /// The secret's name (`provider:openai:api_key`).
    pub name: String,
    /// The vault format the row was written with (bound into the associated data).
    pub format: i64,
    /// The 96-bit AES-GCM nonce.
    pub nonce: Vec<u8>,
    /// Ciphertext and tag.
    pub ciphertext: Vec<u8>,
    /// Fingerprint of the data key that wrote it.
    pub key_id: String,
    /// Unix ms.
    pub updated_at: i64,
}

impl SecretRow {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        Ok(Self {
            name: row.try_get("name")?,
            format: row.try_get("format")?,
            nonce: row.try_get("nonce")?,
            ciphertext: row.try_get("ciphertext")?,
            key_id: row.try_get("key_id")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

impl Store {
    /// Inserts or replaces the row for `row.name`.
    pub async fn put_secret_row(&self, row: &SecretRow) -> Result<()> {
        self.insert_secret_row(
            row,
            "ON CONFLICT (name) DO UPDATE SET format = excluded.format, nonce = excluded.nonce,
                 ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at",
        )
        .await
        .map(|_| ())
    }

    /// Inserts the row for `row.name` unless one exists; whether it was inserted.
    pub async fn insert_secret_row_if_absent(&self, row: &SecretRow) -> Result<bool> {
        Ok(self.insert_secret_row(row, "ON CONFLICT (name) DO NOTHING").await? == 1)
    }

    /// The one INSERT of a secret's row, with what a row already there gets (`on_conflict`, a
    /// constant of this file); how many rows it wrote.
    async fn insert_secret_row(&self, row: &SecretRow, on_conflict: &'static str) -> Result<u64> {
        let mut writer = self.writer().await;
        let sql = format!(
            "INSERT INTO secrets (name, format, nonce, ciphertext, key_id, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) {on_conflict}"
        );
        let done = sqlx::query(&sql)
            .bind(&row.name)
            .bind(row.format)
            .bind(&row.nonce)
            .bind(&row.ciphertext)
            .bind(&row.key_id)
            .bind(row.updated_at)
            .execute(&mut *writer)
            .await?;
        Ok(done.rows_affected())
    }

    /// The row for `name`, if any.
    pub async fn secret_row(&self, name: &str) -> Result<Option<SecretRow>> {
        let row = sqlx::query("SELECT name, format, nonce, ciphertext, key_id, updated_at FROM secrets WHERE name = ?1")
            .bind(name)
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(SecretRow::from_row).transpose()
    }

    /// Removes the row for `name`; true if there was one.
    pub async fn delete_secret_row(&self, name: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query("DELETE FROM secrets WHERE name = ?1").bind(name).execute(&mut *writer).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every stored name, sorted (no ciphertext is read).
    pub async fn secret_names(&self) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT name FROM secrets ORDER BY name").fetch_all(self.reader()).await?;
        rows.iter().map(|row| Ok(row.try_get("name")?)).collect()
    }
}
