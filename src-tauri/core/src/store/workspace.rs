//! The local sample workspace's tables: mail, attachments, calendar, and the seed marker.

use serde::{Deserialize, Serialize};
use sqlx::{Connection, Row};

use super::Store;
use super::error::Result;

/// A stored mail message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailMessage {
    /// Message id.
    pub id: String,
    /// Conversation id.
    pub thread_id: String,
    /// Sender address.
    pub from: String,
    /// Recipients, comma-separated.
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
    /// Unix ms.
    pub sent_at: i64,
}

/// A stored attachment (the bytes live in a file under the data directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailAttachment {
    /// Attachment id.
    pub id: String,
    /// The message carrying it.
    pub message_id: String,
    /// Original file name.
    pub filename: String,
    /// MIME type.
    pub mime_type: String,
    /// Bytes.
    pub size: i64,
    /// Absolute path of the stored copy.
    pub path: String,
}

/// A calendar event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarEvent {
    /// Event id.
    pub id: String,
    /// Which calendar.
    pub calendar_id: String,
    /// Title.
    pub title: String,
    /// Start, Unix ms.
    pub starts_at: i64,
    /// End, Unix ms.
    pub ends_at: i64,
    /// Where.
    pub location: String,
    /// Notes.
    pub description: String,
}

const SEEDED_KEY: &str = "workspace_seeded_at";

/// The columns [`MailAttachment::from_row`] reads, in its order.
pub(super) const ATTACHMENT_COLUMNS: &str = "id, message_id, filename, mime_type, size, path";

impl MailAttachment {
    pub(super) fn from_row(r: &sqlx::sqlite::SqliteRow) -> Result<Self> {
        Ok(Self {
            id: r.try_get(0)?,
            message_id: r.try_get(1)?,
            filename: r.try_get(2)?,
            mime_type: r.try_get(3)?,
            size: r.try_get(4)?,
            path: r.try_get(5)?,
        })
    }
}

/// One attachment row, inside the caller's transaction (seeding, sending).
pub(super) async fn insert_attachment(conn: &mut sqlx::SqliteConnection, a: &MailAttachment) -> Result<()> {
    sqlx::query(&format!("INSERT INTO mail_attachments ({ATTACHMENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"))
        .bind(&a.id)
        .bind(&a.message_id)
        .bind(&a.filename)
        .bind(&a.mime_type)
        .bind(a.size)
        .bind(&a.path)
        .execute(conn)
        .await?;
    Ok(())
}

/// One message into the local inbox; whether it was new (an id already there is left alone).
async fn insert_inbox_message(conn: &mut sqlx::SqliteConnection, m: &MailMessage) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO mail_messages (id, thread_id, from_addr, to_addrs, subject, body, sent_at, folder)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'inbox') ON CONFLICT (id) DO NOTHING",
    )
    .bind(&m.id)
    .bind(&m.thread_id)
    .bind(&m.from)
    .bind(&m.to)
    .bind(&m.subject)
    .bind(&m.body)
    .bind(m.sent_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

impl Store {
    /// When the sample workspace was seeded, if it was.
    pub async fn workspace_seeded_at(&self) -> Result<Option<i64>> {
        let row = sqlx::query("SELECT value FROM meta WHERE key = ?1").bind(SEEDED_KEY).fetch_optional(self.reader()).await?;
        Ok(row.and_then(|r| r.try_get::<String, _>(0).ok()).and_then(|v| v.parse().ok()))
    }

    /// Writes the whole sample workspace in one transaction, so a crash mid-seed seeds again.
    pub async fn seed_workspace(
        &self,
        messages: &[MailMessage],
        attachments: &[MailAttachment],
        events: &[CalendarEvent],
        seeded_at: i64,
    ) -> Result<()> {
        let mut writer = self.writer().await;
        let mut tx = writer.begin().await?;
        for m in messages {
            insert_inbox_message(&mut tx, m).await?;
        }
        for a in attachments {
            insert_attachment(&mut tx, a).await?;
        }
        for e in events {
            sqlx::query(
                "INSERT INTO calendar_events (id, calendar_id, title, starts_at, ends_at, location, description)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .bind(&e.id)
            .bind(&e.calendar_id)
            .bind(&e.title)
            .bind(e.starts_at)
            .bind(e.ends_at)
            .bind(&e.location)
            .bind(&e.description)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("INSERT INTO meta (key, value) VALUES (?1, ?2)").bind(SEEDED_KEY).bind(seeded_at.to_string()).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A message arriving in the local sample mailbox's inbox (the sample workspace has no
    /// server; tests deliver mail written by others through this). `false` when a message
    /// with this id is already there.
    pub async fn deliver_local_mail(&self, m: &MailMessage) -> Result<bool> {
        let mut writer = self.writer().await;
        Ok(insert_inbox_message(&mut writer, m).await?)
    }

    /// Calendar events overlapping `[from, to)`, by start time, at most `limit`.
    pub async fn calendar_range(&self, from: i64, to: i64, limit: i64) -> Result<Vec<CalendarEvent>> {
        let rows = sqlx::query(
            "SELECT id, calendar_id, title, starts_at, ends_at, location, description FROM calendar_events
             WHERE starts_at < ?2 AND ends_at > ?1 ORDER BY starts_at, id LIMIT ?3",
        )
        .bind(from)
        .bind(to)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(CalendarEvent {
                    id: r.try_get(0)?,
                    calendar_id: r.try_get(1)?,
                    title: r.try_get(2)?,
                    starts_at: r.try_get(3)?,
                    ends_at: r.try_get(4)?,
                    location: r.try_get(5)?,
                    description: r.try_get(6)?,
                })
            })
            .collect()
    }

    /// Inbox messages, newest first.
    pub async fn inbox(&self) -> Result<Vec<MailMessage>> {
        let rows = sqlx::query(
            "SELECT id, thread_id, from_addr, to_addrs, subject, body, sent_at FROM mail_messages
             WHERE folder = 'inbox' ORDER BY sent_at DESC, id",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(MailMessage {
                    id: r.try_get(0)?,
                    thread_id: r.try_get(1)?,
                    from: r.try_get(2)?,
                    to: r.try_get(3)?,
                    subject: r.try_get(4)?,
                    body: r.try_get(5)?,
                    sent_at: r.try_get(6)?,
                })
            })
            .collect()
    }

    /// Every attachment.
    pub async fn attachments(&self) -> Result<Vec<MailAttachment>> {
        let rows = sqlx::query(&format!("SELECT {ATTACHMENT_COLUMNS} FROM mail_attachments ORDER BY id")).fetch_all(self.reader()).await?;
        rows.iter().map(MailAttachment::from_row).collect()
    }
}
