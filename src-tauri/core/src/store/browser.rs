//! The browser profiles the owner picked for threads and tasks.

use super::error::Result;
use super::{Store, now_ms};

impl Store {
    /// The profile the owner picked for `scope` (`thread:<id>`, `task:<id>`), if any.
    pub async fn chosen_browser_profile(&self, scope: &str) -> Result<Option<String>> {
        let row: Option<(String,)> = sqlx::query_as("SELECT profile FROM browser_profile_choices WHERE scope = ?1")
            .bind(scope)
            .fetch_optional(self.reader())
            .await?;
        Ok(row.map(|(profile,)| profile))
    }

    /// Picks `profile` for `scope`, or (`None`) returns it to a profile of its own.
    pub async fn choose_browser_profile(&self, scope: &str, profile: Option<&str>) -> Result<()> {
        let mut writer = self.writer().await;
        match profile {
            Some(profile) => {
                sqlx::query(
                    "INSERT INTO browser_profile_choices (scope, profile, chosen_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(scope) DO UPDATE SET profile = excluded.profile, chosen_at = excluded.chosen_at",
                )
                .bind(scope)
                .bind(profile)
                .bind(now_ms())
                .execute(&mut *writer)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM browser_profile_choices WHERE scope = ?1").bind(scope).execute(&mut *writer).await?;
            }
        }
        Ok(())
    }

    /// Forgets every pick of `profile` (it was deleted: those threads and tasks browse in their
    /// own again).
    pub async fn forget_browser_profile(&self, profile: &str) -> Result<()> {
        let mut writer = self.writer().await;
        sqlx::query("DELETE FROM browser_profile_choices WHERE profile = ?1").bind(profile).execute(&mut *writer).await?;
        Ok(())
    }

    /// Every profile picked for a chat or a task.
    pub async fn chosen_browser_profiles(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = sqlx::query_as("SELECT DISTINCT profile FROM browser_profile_choices").fetch_all(self.reader()).await?;
        Ok(rows.into_iter().map(|(profile,)| profile).collect())
    }
}
