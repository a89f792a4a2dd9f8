//! Reading the local mailbox and writing its Sent folder.

use super::proposals::{ExecutionClaim, settle_claim_in};
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, Row};

use super::Store;
use super::error::Result;
use super::workspace::{ATTACHMENT_COLUMNS, MailAttachment, insert_attachment};

/// A message as the mail tools read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Message id.
    pub id: String,
    /// Conversation.
    pub thread_id: String,
    /// Sender.
    pub from: String,
    /// Recipients, comma-separated.
    pub to: String,
    /// Copy, comma-separated.
    pub cc: String,
    /// Blind copy, comma-separated.
    pub bcc: String,
    /// Subject.
    pub subject: String,
    /// Plain text.
    pub body: String,
    /// Unix ms.
    pub sent_at: i64,
    /// `inbox` or `sent`.
    pub folder: String,
    /// The message it answers.
    pub in_reply_to: Option<String>,
}

impl StoredMessage {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        Ok(Self {
            id: row.try_get("id")?,
            thread_id: row.try_get("thread_id")?,
            from: row.try_get("from_addr")?,
            to: row.try_get("to_addrs")?,
            cc: row.try_get("cc_addrs")?,
            bcc: row.try_get("bcc_addrs")?,
            subject: row.try_get("subject")?,
            body: row.try_get("body")?,
            sent_at: row.try_get("sent_at")?,
            folder: row.try_get("folder")?,
            in_reply_to: row.try_get("in_reply_to")?,
        })
    }
}

const COLUMNS: &str = "id, thread_id, from_addr, to_addrs, cc_addrs, bcc_addrs, subject, body, sent_at, folder, in_reply_to";

/// A message to put in the Sent folder, with copies of its attachments already on disk.
#[derive(Debug, Clone)]
pub struct OutgoingMessage {
    /// The message (folder is forced to `sent`).
    pub message: StoredMessage,
    /// Its attachments.
    pub attachments: Vec<MailAttachment>,
}

impl Store {
    /// Messages whose sender, subject or body contain every term (case-insensitive), newest
    /// first, at most `limit + 1` (so the caller can tell it was truncated).
    pub async fn search_messages(&self, terms: &[String], limit: i64) -> Result<Vec<(StoredMessage, i64)>> {
        let mut sql = format!(
            "SELECT {COLUMNS}, (SELECT count(*) FROM mail_attachments a WHERE a.message_id = m.id) AS attachment_count
             FROM mail_messages m WHERE 1"
        );
        for i in 0..terms.len() {
            let n = i + 2;
            sql.push_str(&format!(
                " AND (instr(lower(from_addr), ?{n}) > 0 OR instr(lower(subject), ?{n}) > 0 OR instr(lower(body), ?{n}) > 0)"
            ));
        }
        sql.push_str(" ORDER BY sent_at DESC, id LIMIT ?1");
        let mut query = sqlx::query(&sql).bind(limit + 1);
        for term in terms {
            query = query.bind(term.to_lowercase());
        }
        let rows = query.fetch_all(self.reader()).await?;
        rows.iter().map(|r| Ok((StoredMessage::from_row(r)?, r.try_get("attachment_count")?))).collect()
    }

    /// A conversation's messages, oldest first.
    pub async fn thread_messages(&self, thread_id: &str) -> Result<Vec<StoredMessage>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM mail_messages WHERE thread_id = ?1 ORDER BY sent_at, id"))
            .bind(thread_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(StoredMessage::from_row).collect()
    }

    /// One message.
    pub async fn get_message(&self, id: &str) -> Result<Option<StoredMessage>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM mail_messages WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(StoredMessage::from_row).transpose()
    }

    /// A message's attachments.
    pub async fn message_attachments(&self, message_id: &str) -> Result<Vec<MailAttachment>> {
        let rows = sqlx::query(&format!("SELECT {ATTACHMENT_COLUMNS} FROM mail_attachments WHERE message_id = ?1 ORDER BY id"))
            .bind(message_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(MailAttachment::from_row).collect()
    }

    /// One attachment.
    pub async fn get_attachment(&self, id: &str) -> Result<Option<MailAttachment>> {
        let row = sqlx::query(&format!("SELECT {ATTACHMENT_COLUMNS} FROM mail_attachments WHERE id = ?1"))
            .bind(id)
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(MailAttachment::from_row).transpose()
    }

    /// Puts a message and its attachments in the Sent folder in one transaction. `false`
    /// when a message with that id is already there (a send happens once).
    pub async fn insert_sent_message(&self, outgoing: &OutgoingMessage) -> Result<bool> {
        self.send_local(outgoing, None).await
    }

    /// Writes `outgoing` to the Sent folder and, with a `claim`, settles that approval as
    /// succeeded with `receipt` in the same transaction: the Sent row and the receipt commit
    /// together or not at all. `false` when the message already exists or the claim is lost
    /// (then nothing is written).
    pub async fn send_local(&self, outgoing: &OutgoingMessage, claim: Option<(ExecutionClaim<'_>, &str)>) -> Result<bool> {
        let m = &outgoing.message;
        let mut writer = self.writer().await;
        let mut tx = writer.begin().await?;
        if let Some((claim, receipt)) = claim
            && !settle_claim_in(&mut tx, claim, receipt).await?
        {
            tx.rollback().await?;
            return Ok(false);
        }
        let done = sqlx::query(
            "INSERT INTO mail_messages (id, thread_id, from_addr, to_addrs, cc_addrs, bcc_addrs, subject, body, sent_at,
                 folder, in_reply_to)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'sent', ?10) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&m.id)
        .bind(&m.thread_id)
        .bind(&m.from)
        .bind(&m.to)
        .bind(&m.cc)
        .bind(&m.bcc)
        .bind(&m.subject)
        .bind(&m.body)
        .bind(m.sent_at)
        .bind(&m.in_reply_to)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        for a in &outgoing.attachments {
            insert_attachment(&mut tx, a).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// The Sent folder, newest first (tests count sends through it).
    pub async fn sent_messages(&self) -> Result<Vec<StoredMessage>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM mail_messages WHERE folder = 'sent' ORDER BY sent_at DESC, id"))
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(StoredMessage::from_row).collect()
    }
}
