//! Threads, chat runs and the per-thread AG-UI event log.

use futures::TryStreamExt;
use hearth_protocol::agui::Event;
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::ThreadSummary;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// How a chat run ended, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum RunEnd {
    /// RUN_FINISHED.
    Finished,
    /// RUN_FINISHED after Stop.
    Cancelled,
    /// RUN_ERROR.
    Failed,
}

impl RunEnd {
    fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Who started a chat run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum RunOrigin {
    /// The owner, in the app window.
    Window,
    /// A client of Hearth's AG-UI endpoint.
    AguiEndpoint,
    /// One of the owner's paired devices (`pairing`): its chat's effects wait for a card. Only
    /// in memory (the run registry, which decides its calls' origin); stored as `Window`
    /// ([`RunOrigin::stored`]): the conversation is the owner's own.
    PairedDevice,
}

impl RunOrigin {
    /// The origin written to the store: a paired device's run is the owner's conversation there.
    pub const fn stored(self) -> Self {
        match self {
            Self::Window | Self::PairedDevice => Self::Window,
            Self::AguiEndpoint => Self::AguiEndpoint,
        }
    }

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling; anything else is a row Hearth cannot trust.
    pub fn parse(stored: &str) -> Result<Self> {
        stored.parse().map_err(|_| StoreError::CorruptRow(format!("a chat run has the unknown origin {stored:?}")))
    }
}

/// Whether [`Store::open_run`] recorded the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAdmission {
    /// The thread (created if new) and the run are recorded.
    Opened,
    /// Nothing was written: an endpoint client named a thread whose recorded origin is not the
    /// endpoint (the owner's, started in the window, or one recorded without a run).
    NotTheEndpoints,
    /// Nothing was written: the owner deleted that thread.
    Deleted,
}

/// Who started a thread (written once, when its row is created: migration 0012): no row when
/// the thread does not exist, a NULL for one created without a run.
const THREAD_ORIGIN: &str = "SELECT origin FROM threads WHERE id = ?1";

/// The endpoint's rule on [`THREAD_ORIGIN`]'s answer: a new thread, or one the endpoint
/// started.
fn endpoint_may_continue(first: Option<Option<String>>) -> Result<bool> {
    match first {
        None => Ok(true),
        Some(None) => Ok(false),
        Some(Some(origin)) => Ok(RunOrigin::parse(&origin)? == RunOrigin::AguiEndpoint),
    }
}

/// What still goes on in a thread, counted when its deletion is asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadWork {
    /// Chat runs recorded `running` (in this process or another).
    pub running_runs: i64,
    /// Journal rows of the thread `dispatching`: an effect may be happening now.
    pub dispatching: i64,
    /// Proposals of the thread waiting for the owner's decision.
    pub awaiting_review: i64,
    /// Proposals of the thread being carried out.
    pub executing: i64,
    /// Journal rows and proposals of the thread whose outcome is unknown: they may have happened.
    pub uncertain: i64,
}

impl ThreadWork {
    /// Whether something of the thread is still in flight or waits for the owner's decision
    /// (what the owner cannot wave through by deleting).
    pub fn in_flight(&self) -> bool {
        self.running_runs > 0 || self.dispatching > 0 || self.awaiting_review > 0 || self.executing > 0
    }
}

/// How [`Store::delete_thread`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadDeletion {
    /// The thread is marked deleted and its log is gone (this many events).
    Deleted {
        /// The `thread_events` rows removed.
        events: u64,
    },
    /// There is no such thread, or it was deleted already: nothing changed.
    NotFound,
    /// Refused, nothing changed: what of the thread is still going on.
    Refused(ThreadWork),
}

/// A thread's title: the start of its first message, on one line.
fn title_of(first_text: &str) -> String {
    first_text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect()
}

/// A run left `running` by a process that died.
#[derive(Debug, Clone)]
pub struct OrphanRun {
    /// The run.
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
}

impl Store {
    /// Creates the thread if it does not exist yet; the title is the first message's start.
    pub async fn ensure_thread(&self, thread_id: &str, first_text: &str) -> Result<()> {
        let now = now_ms();
        let title = title_of(first_text);
        sqlx::query(
            "INSERT INTO threads (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
        )
        .bind(thread_id)
        .bind(title)
        .bind(now)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    /// Whether an endpoint client started `thread_id` (its messages there are the client's,
    /// not the owner's, even when the owner goes on with it in the window).
    pub async fn thread_started_by_endpoint(&self, thread_id: &str) -> Result<bool> {
        let first: Option<Option<String>> = sqlx::query_scalar(THREAD_ORIGIN).bind(thread_id).fetch_optional(self.reader()).await?;
        match first.flatten() {
            Some(origin) => Ok(RunOrigin::parse(&origin)? == RunOrigin::AguiEndpoint),
            None => Ok(false),
        }
    }

    /// Whether an endpoint client may add a run to `thread_id` (a new thread, or one whose
    /// recorded origin is the endpoint): the same rule [`Store::open_run`] applies inside
    /// its transaction, read first so a refused request loads nothing else.
    pub async fn endpoint_may_continue(&self, thread_id: &str) -> Result<bool> {
        let first: Option<Option<String>> = sqlx::query_scalar(THREAD_ORIGIN).bind(thread_id).fetch_optional(self.reader()).await?;
        endpoint_may_continue(first)
    }

    /// Whether the thread exists (and was not deleted).
    pub async fn thread_exists(&self, thread_id: &str) -> Result<bool> {
        let row =
            sqlx::query("SELECT 1 FROM threads WHERE id = ?1 AND deleted_at IS NULL").bind(thread_id).fetch_optional(self.reader()).await?;
        Ok(row.is_some())
    }

    /// Whether a chat run with this id was ever started.
    pub async fn run_exists(&self, run_id: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM chat_runs WHERE id = ?1").bind(run_id).fetch_optional(self.reader()).await?;
        Ok(row.is_some())
    }

    /// Threads, most recently active first.
    pub async fn list_threads(&self) -> Result<Vec<ThreadSummary>> {
        let rows = sqlx::query("SELECT id, title, updated_at FROM threads WHERE deleted_at IS NULL ORDER BY updated_at DESC, id LIMIT 200")
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(ThreadSummary {
                    id: ThreadId::trusted(row.try_get::<String, _>(0)?),
                    title: row.try_get(1)?,
                    updated_at: row.try_get(2)?,
                })
            })
            .collect()
    }

    /// Records a new chat run and its thread (created if new, its `updated_at` moved if not),
    /// in one `BEGIN IMMEDIATE` transaction. A run from the AG-UI endpoint is refused, with
    /// nothing written, on a thread that exists but whose recorded origin (`threads.origin`) is
    /// not the endpoint: an endpoint client may continue only its own threads.
    pub async fn open_run(&self, thread_id: &str, run_id: &str, first_text: &str, owner: &str, origin: RunOrigin) -> Result<RunAdmission> {
        let now = now_ms();
        let title = title_of(first_text);
        let mut writer = self.writer().await;
        // IMMEDIATE: the ownership read and the inserts see the same database, across processes too.
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        // A deleted thread takes no new run, from the window or the endpoint: its id is not reused.
        let deleted: Option<Option<i64>> =
            sqlx::query_scalar("SELECT deleted_at FROM threads WHERE id = ?1").bind(thread_id).fetch_optional(&mut *tx).await?;
        if deleted.flatten().is_some() {
            tx.rollback().await?;
            return Ok(RunAdmission::Deleted);
        }
        if origin == RunOrigin::AguiEndpoint {
            let first: Option<Option<String>> = sqlx::query_scalar(THREAD_ORIGIN).bind(thread_id).fetch_optional(&mut *tx).await?;
            if !endpoint_may_continue(first)? {
                tx.rollback().await?;
                return Ok(RunAdmission::NotTheEndpoints);
            }
        }
        sqlx::query(
            "INSERT INTO threads (id, title, created_at, updated_at, origin) VALUES (?1, ?2, ?3, ?3, ?4)
             ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
        )
        .bind(thread_id)
        .bind(title)
        .bind(now)
        .bind(origin.as_str())
        .execute(&mut *tx)
        .await?;
        sqlx::query("INSERT INTO chat_runs (id, thread_id, status, started_at, owner, origin) VALUES (?1, ?2, 'running', ?3, ?4, ?5)")
            .bind(run_id)
            .bind(thread_id)
            .bind(now)
            .bind(owner)
            .bind(origin.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(RunAdmission::Opened)
    }

    /// Records a new chat run.
    pub async fn begin_run(&self, thread_id: &str, run_id: &str, owner: &str, origin: RunOrigin) -> Result<()> {
        sqlx::query("INSERT INTO chat_runs (id, thread_id, status, started_at, owner, origin) VALUES (?1, ?2, 'running', ?3, ?4, ?5)")
            .bind(run_id)
            .bind(thread_id)
            .bind(now_ms())
            .bind(owner)
            .bind(origin.as_str())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Whether chat run `run_id` has ended (the fence of its writes: an ended run writes nothing).
    pub async fn run_has_ended(&self, run_id: &str) -> Result<bool> {
        Ok(sqlx::query("SELECT 1 FROM chat_runs WHERE id = ?1 AND status <> 'running'")
            .bind(run_id)
            .fetch_optional(self.reader())
            .await?
            .is_some())
    }

    /// Records how a chat run ended.
    pub async fn end_run(&self, run_id: &str, end: RunEnd) -> Result<()> {
        sqlx::query("UPDATE chat_runs SET status = ?2, finished_at = ?3 WHERE id = ?1 AND status = 'running'")
            .bind(run_id)
            .bind(end.as_str())
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Chat runs left `running` whose owner is `dead` (a process that is gone), marked
    /// `interrupted`; runs a live second process holds are left alone.
    pub async fn take_orphan_runs(&self, dead: impl Fn(Option<&str>) -> bool) -> Result<Vec<OrphanRun>> {
        let rows = sqlx::query("SELECT id, thread_id, owner FROM chat_runs WHERE status = 'running'").fetch_all(self.reader()).await?;
        let mut orphans = Vec::new();
        for row in &rows {
            let owner: Option<String> = row.try_get(2)?;
            if !dead(owner.as_deref()) {
                continue;
            }
            let run_id: String = row.try_get(0)?;
            let done = sqlx::query(
                "UPDATE chat_runs SET status = 'interrupted', finished_at = ?2 WHERE id = ?1 AND status = 'running' AND owner IS ?3",
            )
            .bind(&run_id)
            .bind(now_ms())
            .bind(&owner)
            .execute(&mut *self.writer().await)
            .await?;
            if done.rows_affected() == 1 {
                orphans.push(OrphanRun { run_id, thread_id: row.try_get(1)? });
            }
        }
        Ok(orphans)
    }

    /// Deletes the owner's chat `thread_id`, in one `BEGIN IMMEDIATE` transaction (a run cannot
    /// open on it, nor a proposal or journal row of it change, between the checks and the
    /// deletion): refused, with nothing changed, while a run of it is recorded `running`, a
    /// journal row of it is `dispatching`, or a proposal of it is `awaiting_review` or
    /// `executing` — and while something of it has an unknown outcome, unless the owner
    /// `acknowledge_uncertain` (saw that it may have happened).
    ///
    /// What goes: the thread's log (`thread_events`, every message and card) and the browser
    /// profile picked for it. What stays, and why: the thread row, marked `deleted_at` with its
    /// title blanked, since `chat_runs` references it; the `chat_runs` rows (no content), since
    /// every late write of a run is fenced by its row (`NOT EXISTS … status <> 'running'`, so a
    /// missing row would read as a live run); the journal rows and proposals of its runs, which
    /// are receipts of what was done (a receipt outlives its artifact) and keep an operation key
    /// from being performed twice; the tasks it delegated, which go on as the owner's.
    ///
    /// A proposal belongs to the thread when its key starts with `thread:<id>:` (a prepared
    /// draft; keys are `OperationKey::joined`) or `held:thread:<id>:` (a call the trust policy
    /// held for the owner): a held card left waiting would otherwise run, once approved, for a
    /// chat that is gone. An id containing `:` may also count a proposal of another thread
    /// whose id extends it, which can only refuse more, never delete more.
    pub async fn delete_thread(&self, thread_id: &str, acknowledge_uncertain: bool) -> Result<ThreadDeletion> {
        let scope = format!("thread:{thread_id}");
        let key_prefix = format!("{scope}:");
        let held_prefix = format!("held:{scope}:");
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let live: Option<Option<i64>> =
            sqlx::query_scalar("SELECT deleted_at FROM threads WHERE id = ?1").bind(thread_id).fetch_optional(&mut *tx).await?;
        if !matches!(live, Some(None)) {
            tx.rollback().await?;
            return Ok(ThreadDeletion::NotFound);
        }
        let row = sqlx::query(
            "WITH own AS (SELECT status FROM proposals
                          WHERE substr(key, 1, length(?3)) = ?3 OR substr(key, 1, length(?4)) = ?4)
             SELECT
                (SELECT count(*) FROM chat_runs WHERE thread_id = ?1 AND status = 'running'),
                (SELECT count(*) FROM operations WHERE scope = ?2 AND status = 'dispatching'),
                (SELECT count(*) FROM own WHERE status = 'awaiting_review'),
                (SELECT count(*) FROM own WHERE status IN ('leaving', 'executing')),
                (SELECT count(*) FROM operations WHERE scope = ?2 AND status = 'outcome_unknown')
                  + (SELECT count(*) FROM own WHERE status = 'outcome_unknown')",
        )
        .bind(thread_id)
        .bind(&scope)
        .bind(&key_prefix)
        .bind(&held_prefix)
        .fetch_one(&mut *tx)
        .await?;
        let work = ThreadWork {
            running_runs: row.try_get(0)?,
            dispatching: row.try_get(1)?,
            awaiting_review: row.try_get(2)?,
            executing: row.try_get(3)?,
            uncertain: row.try_get(4)?,
        };
        if work.in_flight() || (work.uncertain > 0 && !acknowledge_uncertain) {
            tx.rollback().await?;
            return Ok(ThreadDeletion::Refused(work));
        }
        let events = sqlx::query("DELETE FROM thread_events WHERE thread_id = ?1").bind(thread_id).execute(&mut *tx).await?.rows_affected();
        sqlx::query("DELETE FROM browser_profile_choices WHERE scope = ?1").bind(&scope).execute(&mut *tx).await?;
        // Its failures (its runs' and its effects') and its provider tries go with it: their
        // messages are the chat's, and a failure id must not open a deleted chat's timeline (nor
        // show it to a paired device).
        sqlx::query(
            "DELETE FROM provider_tries WHERE run_id IN (SELECT id FROM chat_runs WHERE thread_id = ?1)
                OR run_id IN (SELECT run_id FROM run_failures WHERE thread_id = ?1)",
        )
        .bind(thread_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM run_failures WHERE thread_id = ?1").bind(thread_id).execute(&mut *tx).await?;
        sqlx::query(
            "DELETE FROM effect_failures
             WHERE scope = ?1 OR substr(proposal_key, 1, length(?2)) = ?2 OR substr(proposal_key, 1, length(?3)) = ?3",
        )
        .bind(&scope)
        .bind(&key_prefix)
        .bind(&held_prefix)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE threads SET deleted_at = ?2, updated_at = ?2, title = '' WHERE id = ?1")
            .bind(thread_id)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        // The log's old copies of those pages go too, as far as no reader holds them now: best
        // effort (a busy checkpoint leaves them for the next one; the chat is deleted either way).
        if let Err(err) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *writer).await {
            tracing::debug!(error = %err, "the checkpoint after a chat's deletion did not run");
        }
        Ok(ThreadDeletion::Deleted { events })
    }

    /// Appends one event to the thread's log.
    pub async fn append_event(&self, thread_id: &str, run_id: &str, event: &Event) -> Result<()> {
        let json = serde_json::to_string(event)?;
        sqlx::query("INSERT INTO thread_events (thread_id, run_id, event) VALUES (?1, ?2, ?3)")
            .bind(thread_id)
            .bind(run_id)
            .bind(json)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// The thread's events after the one numbered `after` (0: from the start), in order, with
    /// their numbers. The log is append-only and numbered in commit order (one writer), so a
    /// reader that remembers the last number it saw misses nothing by asking from there.
    pub async fn thread_events_after(&self, thread_id: &str, after: i64) -> Result<Vec<(i64, Event)>> {
        let rows = sqlx::query("SELECT id, event FROM thread_events WHERE thread_id = ?1 AND id > ?2 ORDER BY id")
            .bind(thread_id)
            .bind(after)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(numbered_event).collect()
    }

    /// One page of the thread's log: the last `limit` events numbered below `before` (none:
    /// the newest), reaching back up to `run_limit` more so that the page begins where its
    /// oldest run began (a `RUN_STARTED`); in order, with their numbers. Read newest first
    /// through the (thread_id, id) index and only as far as the page goes, so a page costs the
    /// same in a thread of any length.
    pub async fn thread_events_page(&self, thread_id: &str, before: Option<i64>, limit: u32, run_limit: u32) -> Result<EventPage> {
        let mut rows = sqlx::query("SELECT id, event FROM thread_events WHERE thread_id = ?1 AND id < ?2 ORDER BY id DESC")
            .bind(thread_id)
            .bind(before.unwrap_or(i64::MAX))
            .fetch(self.reader());
        let (limit, most) = (limit as usize, limit as usize + run_limit as usize);
        let mut page = EventPage { events: Vec::new(), more: false, starts_inside_run: false };
        while let Some(row) = rows.try_next().await? {
            if page.events.len() >= limit {
                let at_run_start = matches!(page.events.last(), Some((_, Event::RunStarted(_))));
                if at_run_start || page.events.len() >= most {
                    page.more = true;
                    page.starts_inside_run = !at_run_start;
                    break;
                }
            }
            page.events.push(numbered_event(&row)?);
        }
        page.events.reverse();
        Ok(page)
    }

    /// The thread's whole event log, in order.
    pub async fn thread_events(&self, thread_id: &str) -> Result<Vec<Event>> {
        Ok(self.thread_events_after(thread_id, 0).await?.into_iter().map(|(_, event)| event).collect())
    }
}

/// One page of a thread's log, as the chat reads it ([`Store::thread_events_page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// The events, oldest first, with their numbers.
    pub events: Vec<(i64, Event)>,
    /// The log holds events before these.
    pub more: bool,
    /// The page begins inside a run whose start is further back than the page could reach.
    pub starts_inside_run: bool,
}

/// A `thread_events` row read as (id, event): its number and its decoded event.
fn numbered_event(row: &SqliteRow) -> Result<(i64, Event)> {
    let json: String = row.try_get(1)?;
    Ok((row.try_get(0)?, serde_json::from_str(&json)?))
}
