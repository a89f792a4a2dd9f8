//! Settings rows in `meta` (plain JSON; secrets live in the vault, never here).

use sqlx::Row;

use super::Store;
use super::error::Result;

impl Store {
    /// A stored setting.
    pub async fn setting(&self, key: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT value FROM meta WHERE key = ?1").bind(key).fetch_optional(self.reader()).await?;
        Ok(row.map(|r| r.try_get::<String, _>(0)).transpose()?)
    }

    /// Stores a setting, replacing the previous value.
    pub async fn put_setting(&self, key: &str, value: &str) -> Result<()> {
        let mut writer = self.writer().await;
        sqlx::query("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(key)
            .bind(value)
            .execute(&mut *writer)
            .await?;
        Ok(())
    }
}
