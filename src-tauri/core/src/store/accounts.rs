//! Connected Google accounts (their tokens are in the vault, not here).

use sqlx::Row;

use super::Store;
use super::error::Result;

/// One connected account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleAccountRow {
    /// New for every sign-in.
    pub connection_id: String,
    /// The address Gmail named.
    pub account: String,
    /// What this sign-in holds.
    pub scopes: Vec<String>,
    /// Unix ms.
    pub connected_at: i64,
}

impl Store {
    /// Records `row`, replacing any earlier connection of the same account; answers the
    /// connection ids it replaced (their tokens are for the caller to forget).
    pub async fn put_google_account(&self, row: &GoogleAccountRow) -> Result<Vec<String>> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let replaced: Vec<(String,)> = sqlx::query_as("DELETE FROM google_accounts WHERE account = ?1 RETURNING connection_id")
            .bind(&row.account)
            .fetch_all(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO google_accounts (connection_id, account, scopes, connected_at) VALUES (?1, ?2, ?3, ?4)")
            .bind(&row.connection_id)
            .bind(&row.account)
            .bind(row.scopes.join(" "))
            .bind(row.connected_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(replaced.into_iter().map(|(id,)| id).collect())
    }

    /// Every connected account, oldest first.
    pub async fn google_accounts(&self) -> Result<Vec<GoogleAccountRow>> {
        let rows =
            sqlx::query("SELECT connection_id, account, scopes, connected_at FROM google_accounts ORDER BY connected_at, connection_id")
                .fetch_all(self.reader())
                .await?;
        rows.iter()
            .map(|r| {
                let scopes: String = r.try_get(2)?;
                Ok(GoogleAccountRow {
                    connection_id: r.try_get(0)?,
                    account: r.try_get(1)?,
                    scopes: scopes.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect(),
                    connected_at: r.try_get(3)?,
                })
            })
            .collect()
    }

    /// Forgets a connection; whether it was there.
    pub async fn delete_google_account(&self, connection_id: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query("DELETE FROM google_accounts WHERE connection_id = ?1").bind(connection_id).execute(&mut *writer).await?;
        Ok(done.rows_affected() == 1)
    }
}
