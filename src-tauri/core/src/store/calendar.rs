//! The local calendar's writes, each applied only to the version that was reviewed, and
//! the local account's address.

use sqlx::Row;

use super::error::Result;
use super::{DEFAULT_LOCAL_ACCOUNT, Store};

/// A calendar event with what a reviewed change binds to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Id.
    pub id: String,
    /// Calendar.
    pub calendar_id: String,
    /// Title.
    pub title: String,
    /// Unix ms.
    pub starts_at: i64,
    /// Unix ms.
    pub ends_at: i64,
    /// Whole days.
    pub all_day: bool,
    /// IANA zone.
    pub time_zone: String,
    /// Where.
    pub location: String,
    /// Notes.
    pub description: String,
    /// Invitees (JSON array text).
    pub attendees: String,
    /// Bumped on every change.
    pub version: i64,
}

const ACCOUNT_KEY: &str = "local_account";

impl Store {
    /// One event.
    pub async fn get_event(&self, id: &str) -> Result<Option<StoredEvent>> {
        let row = sqlx::query(
            "SELECT id, calendar_id, title, starts_at, ends_at, all_day, time_zone, location, description, attendees, version
             FROM calendar_events WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(self.reader())
        .await?;
        row.map(|r| {
            Ok(StoredEvent {
                id: r.try_get(0)?,
                calendar_id: r.try_get(1)?,
                title: r.try_get(2)?,
                starts_at: r.try_get(3)?,
                ends_at: r.try_get(4)?,
                all_day: r.try_get::<i64, _>(5)? != 0,
                time_zone: r.try_get(6)?,
                location: r.try_get(7)?,
                description: r.try_get(8)?,
                attendees: r.try_get(9)?,
                version: r.try_get(10)?,
            })
        })
        .transpose()
    }

    /// Creates an event. `false` when one with that id exists (a create happens once).
    pub async fn insert_event(&self, e: &StoredEvent) -> Result<bool> {
        self.apply_calendar_change(CalendarChange::Insert(e), None).await
    }

    /// Replaces an event if it is still at `version`. `false` when it changed or is gone.
    pub async fn update_event(&self, e: &StoredEvent, version: i64) -> Result<bool> {
        self.apply_calendar_change(CalendarChange::Update(e, version), None).await
    }

    /// Deletes an event if it is still at `version`.
    pub async fn delete_event(&self, id: &str, version: i64) -> Result<bool> {
        self.apply_calendar_change(CalendarChange::Delete(id, version), None).await
    }

    /// Applies one approved calendar change and, with a `claim`, settles that approval as
    /// succeeded with `receipt` in the same transaction (effect and receipt commit together).
    /// `false` when the event changed since review, is gone, or the claim is lost — then
    /// nothing is written.
    pub async fn apply_calendar_change(
        &self,
        change: CalendarChange<'_>,
        claim: Option<(super::proposals::ExecutionClaim<'_>, &str)>,
    ) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        if let Some((claim, receipt)) = claim
            && !super::proposals::settle_claim_in(&mut tx, claim, receipt).await?
        {
            tx.rollback().await?;
            return Ok(false);
        }
        let done = match change {
            CalendarChange::Insert(e) => {
                bind_event(
                    sqlx::query(
                        "INSERT INTO calendar_events (id, calendar_id, title, starts_at, ends_at, all_day, time_zone, location,
                         description, attendees, version)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1) ON CONFLICT (id) DO NOTHING",
                    ),
                    e,
                )
                .execute(&mut *tx)
                .await?
            }
            CalendarChange::Update(e, version) => {
                bind_event(
                    sqlx::query(
                        "UPDATE calendar_events SET calendar_id = ?2, title = ?3, starts_at = ?4, ends_at = ?5, all_day = ?6,
                         time_zone = ?7, location = ?8, description = ?9, attendees = ?10, version = version + 1
                     WHERE id = ?1 AND version = ?11",
                    ),
                    e,
                )
                .bind(version)
                .execute(&mut *tx)
                .await?
            }
            CalendarChange::Delete(id, version) => {
                sqlx::query("DELETE FROM calendar_events WHERE id = ?1 AND version = ?2").bind(id).bind(version).execute(&mut *tx).await?
            }
        };
        if done.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// The local account's address.
    pub async fn local_account(&self) -> Result<String> {
        Ok(self.setting(ACCOUNT_KEY).await?.unwrap_or_else(|| DEFAULT_LOCAL_ACCOUNT.to_owned()))
    }

    /// Changes the local account's address (proposals prepared for the old one are refused).
    pub async fn set_local_account(&self, account: &str) -> Result<()> {
        self.put_setting(ACCOUNT_KEY, account).await
    }
}

/// Binds ?1–?10 in the column order both writes use.
fn bind_event<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    e: &'q StoredEvent,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    query
        .bind(&e.id)
        .bind(&e.calendar_id)
        .bind(&e.title)
        .bind(e.starts_at)
        .bind(e.ends_at)
        .bind(e.all_day)
        .bind(&e.time_zone)
        .bind(&e.location)
        .bind(&e.description)
        .bind(&e.attendees)
}

/// One calendar write an approval carries out.
#[derive(Debug, Clone, Copy)]
pub enum CalendarChange<'a> {
    /// Add this event.
    Insert(&'a StoredEvent),
    /// Replace the event if it is still at this version.
    Update(&'a StoredEvent, i64),
    /// Delete the event (id) if it is still at this version.
    Delete(&'a str, i64),
}
