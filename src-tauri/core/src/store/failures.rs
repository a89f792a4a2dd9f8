//! Failed runs and the model provider's tries (migration 0037): what a failure's timeline is read
//! from, beside the run's own log (`thread_events`, `task_events`) and the journal.

use hearth_protocol::failures::{FailureKind, FailureView, TransportFailure, TryOutcome};
use hearth_protocol::ids::{FailureId, ProposalId, RunId, TaskId, ThreadId};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// One try of a request to the model provider, as stored (never a header, the request or the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTry {
    /// The provider's name.
    pub provider: String,
    /// 1 for a request's first try.
    pub try_number: u32,
    /// Retries before it.
    pub retry: u32,
    /// Its status or transport failure.
    pub outcome: TryOutcome,
    /// When it ended, Unix ms.
    pub at: i64,
}

/// A failure to record.
#[derive(Debug, Clone)]
pub struct NewFailure<'a> {
    /// Its id (derived from the run).
    pub id: &'a FailureId,
    /// The run.
    pub run_id: &'a str,
    /// Chat or task.
    pub kind: FailureKind,
    /// The chat, for a chat run.
    pub thread_id: Option<&'a str>,
    /// The task, for a task run.
    pub task_id: Option<&'a str>,
    /// What the owner saw.
    pub message: &'a str,
}

/// One operation of a run, as a timeline shows it: never its action or receipt, only their kind
/// and sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOperation {
    /// The tool.
    pub tool: String,
    /// Its journal status, as stored.
    pub status: String,
    /// When it was written.
    pub created_at: i64,
    /// When it settled.
    pub settled_at: Option<i64>,
    /// How long its receipt is (its text is never read here: it may hold a mail).
    pub receipt_chars: usize,
}

/// A proposal, as an approved action's timeline shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalHead {
    /// Its kind (`email.send` …).
    pub kind: String,
    /// Its status, as stored.
    pub status: String,
    /// When it was prepared.
    pub created_at: i64,
    /// When the owner (or a standing order) decided.
    pub decided_at: Option<i64>,
    /// How long its receipt is.
    pub receipt_chars: usize,
}

fn run_operation(row: &SqliteRow) -> Result<RunOperation> {
    Ok(RunOperation {
        tool: row.try_get("tool")?,
        status: row.try_get("status")?,
        created_at: row.try_get("created_at")?,
        settled_at: row.try_get("settled_at")?,
        receipt_chars: usize::try_from(row.try_get::<i64, _>("receipt_chars")?).unwrap_or_default(),
    })
}

/// A task run, as a timeline opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRunHead {
    /// Its task.
    pub task_id: String,
    /// When it started.
    pub started_at: i64,
}

const FAILURE_COLUMNS: &str = "id, run_id, kind, thread_id, task_id, message, at";

/// An effect's failure (migration 0040), with its run when its claimant is a chat's or a task's
/// run that is still kept (an approved held call's claimant names the approval, not a run).
const EFFECT_COLUMNS: &str = "bits, subject, scope, proposal_id, proposal_key, task_id, tool, message, at, later,
     CASE WHEN EXISTS (SELECT 1 FROM chat_runs c WHERE c.id = claimant)
            OR EXISTS (SELECT 1 FROM task_runs r WHERE r.id = claimant) THEN claimant END AS run_id";

fn failure(row: &SqliteRow) -> Result<FailureView> {
    let id: String = row.try_get("id")?;
    let kind: String = row.try_get("kind")?;
    let corrupt = |what: &str, v: &str| StoreError::CorruptRow(format!("stored failure has an unknown {what} {v:?}"));
    Ok(FailureView {
        id: FailureId::parse(&id).map_err(|_| corrupt("id", &id))?,
        run_id: Some(RunId::trusted(row.try_get::<String, _>("run_id")?)),
        kind: kind.parse().map_err(|_| corrupt("kind", &kind))?,
        tool: None,
        proposal_id: None,
        later: None,
        thread_id: row.try_get::<Option<String>, _>("thread_id")?.map(ThreadId::trusted),
        task_id: row.try_get::<Option<String>, _>("task_id")?.map(TaskId::trusted),
        message: row.try_get("message")?,
        at: row.try_get("at")?,
    })
}

fn effect_failure(row: &SqliteRow) -> Result<FailureView> {
    let bits: i64 = row.try_get("bits")?;
    let subject: String = row.try_get("subject")?;
    let kind = match subject.as_str() {
        "operation" => FailureKind::Effect,
        "proposal" => FailureKind::Approval,
        other => return Err(StoreError::CorruptRow(format!("stored effect failure has an unknown subject {other:?}"))),
    };
    // A chat's operations are scoped `thread:<id>`; a proposal's key starts `thread:<id>:` or
    // `held:thread:<id>:` (`OperationKey::joined`).
    let thread_id = match kind {
        FailureKind::Effect => {
            row.try_get::<Option<String>, _>("scope")?.and_then(|scope| scope.strip_prefix("thread:").map(str::to_owned))
        }
        _ => row.try_get::<Option<String>, _>("proposal_key")?.and_then(|key| {
            let key = key.strip_prefix("held:").unwrap_or(&key);
            key.strip_prefix("thread:").and_then(|rest| rest.split_once(':')).map(|(thread, _)| thread.to_owned())
        }),
    };
    let later = match row.try_get::<Option<String>, _>("later")? {
        Some(later) => {
            Some(later.parse().map_err(|_| StoreError::CorruptRow(format!("stored effect failure has an unknown outcome {later:?}")))?)
        }
        None => None,
    };
    Ok(FailureView {
        later,
        id: FailureId::from_bits(
            u64::try_from(bits).map_err(|_| StoreError::CorruptRow(format!("stored failure bits {bits} are negative")))?,
        ),
        run_id: row.try_get::<Option<String>, _>("run_id")?.map(RunId::trusted),
        kind,
        tool: Some(row.try_get("tool")?),
        proposal_id: row.try_get::<Option<String>, _>("proposal_id")?.map(ProposalId::trusted),
        thread_id: thread_id.map(ThreadId::trusted),
        task_id: row.try_get::<Option<String>, _>("task_id")?.map(TaskId::trusted),
        message: row.try_get("message")?,
        at: row.try_get("at")?,
    })
}

/// Where a failed effect is kept: the journal's operation, or the approved proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectSubject {
    /// The journal's row (scope, op id), and the claimant that performed it.
    Operation {
        /// The operation's scope.
        scope: String,
        /// Its id.
        op_id: String,
        /// Who performed it.
        claimant: Option<String>,
    },
    /// The proposal.
    Proposal(String),
}

impl Store {
    /// Records a failed run once: a second call for the same run keeps the first.
    pub async fn record_failure(&self, new: &NewFailure<'_>) -> Result<()> {
        let kind: &'static str = new.kind.into();
        sqlx::query(
            "INSERT INTO run_failures (id, run_id, kind, thread_id, task_id, message, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(run_id) DO NOTHING",
        )
        .bind(new.id.as_str())
        .bind(new.run_id)
        .bind(kind)
        .bind(new.thread_id)
        .bind(new.task_id)
        .bind(new.message)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    /// The newest failures of runs and of effects, newest first.
    pub async fn failures(&self, limit: usize) -> Result<Vec<FailureView>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let sql = format!("SELECT {FAILURE_COLUMNS} FROM run_failures ORDER BY at DESC, rowid DESC LIMIT ?1");
        let rows = sqlx::query(&sql).bind(limit).fetch_all(self.reader()).await?;
        let mut all = rows.iter().map(failure).collect::<Result<Vec<_>>>()?;
        let sql = format!("SELECT {EFFECT_COLUMNS} FROM effect_failures ORDER BY at DESC, bits DESC LIMIT ?1");
        for row in sqlx::query(&sql).bind(limit).fetch_all(self.reader()).await? {
            all.push(effect_failure(&row)?);
        }
        // Stable: of two at the same millisecond, a run's failure (read first) stays first.
        all.sort_by_key(|f| std::cmp::Reverse(f.at));
        all.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(all)
    }

    /// The failure with this id: a run's, else an effect's (a run's id is kept first should the
    /// two ever share one, as the 0040 migration explains).
    pub async fn failure(&self, id: &FailureId) -> Result<Option<FailureView>> {
        let sql = format!("SELECT {FAILURE_COLUMNS} FROM run_failures WHERE id = ?1");
        if let Some(found) = sqlx::query(&sql).bind(id.as_str()).fetch_optional(self.reader()).await? {
            return failure(&found).map(Some);
        }
        let bits = i64::try_from(id.bits()).unwrap_or(-1);
        let sql = format!("SELECT {EFFECT_COLUMNS} FROM effect_failures WHERE bits = ?1");
        sqlx::query(&sql).bind(bits).fetch_optional(self.reader()).await?.as_ref().map(effect_failure).transpose()
    }

    /// Where the failed effect `id` is kept, if `id` is an effect's failure.
    pub async fn effect_subject(&self, id: &FailureId) -> Result<Option<EffectSubject>> {
        let bits = i64::try_from(id.bits()).unwrap_or(-1);
        let row = sqlx::query("SELECT scope, op_id, claimant, proposal_id FROM effect_failures WHERE bits = ?1")
            .bind(bits)
            .fetch_optional(self.reader())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let subject =
            match (row.try_get::<Option<String>, _>(0)?, row.try_get::<Option<String>, _>(1)?, row.try_get::<Option<String>, _>(3)?) {
                (Some(scope), Some(op_id), None) => EffectSubject::Operation { scope, op_id, claimant: row.try_get(2)? },
                (None, None, Some(proposal_id)) => EffectSubject::Proposal(proposal_id),
                _ => return Err(StoreError::CorruptRow("stored effect failure names neither one operation nor one proposal".into())),
            };
        Ok(Some(subject))
    }

    /// The failure id of the journal's operation (`scope`, `op_id`), if it failed.
    pub async fn operation_failure_id(&self, scope: &str, op_id: &str) -> Result<Option<FailureId>> {
        let bits: Option<i64> = sqlx::query_scalar("SELECT bits FROM effect_failures WHERE scope = ?1 AND op_id = ?2")
            .bind(scope)
            .bind(op_id)
            .fetch_optional(self.reader())
            .await?;
        Ok(bits.and_then(|b| u64::try_from(b).ok()).map(FailureId::from_bits))
    }

    /// The failure of this run, if it failed.
    pub async fn failure_of_run(&self, run_id: &str) -> Result<Option<FailureView>> {
        let sql = format!("SELECT {FAILURE_COLUMNS} FROM run_failures WHERE run_id = ?1");
        sqlx::query(&sql).bind(run_id).fetch_optional(self.reader()).await?.as_ref().map(failure).transpose()
    }

    /// Records one try of a request to the model provider for `run_id`.
    pub async fn record_provider_try(&self, run_id: &str, tried: &StoredTry) -> Result<()> {
        let (status, transport): (Option<u16>, Option<&'static str>) = match &tried.outcome {
            TryOutcome::Status { code } => (Some(*code), None),
            TryOutcome::Transport { kind } => (None, Some((*kind).into())),
        };
        sqlx::query(
            "INSERT INTO provider_tries (run_id, provider, try_number, retry, status, transport, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(run_id)
        .bind(&tried.provider)
        .bind(tried.try_number)
        .bind(tried.retry)
        .bind(status)
        .bind(transport)
        .bind(tried.at)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    /// The run's tries, oldest first.
    pub async fn provider_tries(&self, run_id: &str) -> Result<Vec<StoredTry>> {
        let rows =
            sqlx::query("SELECT provider, try_number, retry, status, transport, at FROM provider_tries WHERE run_id = ?1 ORDER BY id")
                .bind(run_id)
                .fetch_all(self.reader())
                .await?;
        rows.iter()
            .map(|row| {
                let status: Option<u16> = row.try_get("status")?;
                let transport: Option<String> = row.try_get("transport")?;
                let outcome = match (status, transport) {
                    (Some(code), None) => TryOutcome::Status { code },
                    (None, Some(kind)) => TryOutcome::Transport {
                        kind: kind
                            .parse::<TransportFailure>()
                            .map_err(|_| StoreError::CorruptRow(format!("stored try has an unknown transport failure {kind:?}")))?,
                    },
                    _ => return Err(StoreError::CorruptRow("stored try has both or neither of a status and a transport failure".into())),
                };
                Ok(StoredTry {
                    provider: row.try_get("provider")?,
                    try_number: row.try_get("try_number")?,
                    retry: row.try_get("retry")?,
                    outcome,
                    at: row.try_get("at")?,
                })
            })
            .collect()
    }

    /// The journal's operations claimed by `run_id` within `scope`, oldest first.
    pub async fn operations_of_run(&self, scope: &str, run_id: &str) -> Result<Vec<RunOperation>> {
        let rows = sqlx::query(
            "SELECT tool, status, created_at, settled_at, length(coalesce(receipt, '')) AS receipt_chars FROM operations WHERE scope = ?1 AND claimant = ?2 ORDER BY created_at, rowid",
        )
        .bind(scope)
        .bind(run_id)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(run_operation).collect()
    }

    /// One operation of the journal, as a timeline shows it.
    pub async fn operation_for_timeline(&self, scope: &str, op_id: &str) -> Result<Option<RunOperation>> {
        let row = sqlx::query(
            "SELECT tool, status, created_at, settled_at, length(coalesce(receipt, '')) AS receipt_chars FROM operations WHERE scope = ?1 AND op_id = ?2",
        )
        .bind(scope)
        .bind(op_id)
        .fetch_optional(self.reader())
        .await?;
        row.as_ref().map(run_operation).transpose()
    }

    /// A proposal as a timeline shows it: its kind, status, when it was prepared and decided,
    /// and how long its receipt is (never the draft or the receipt).
    pub async fn proposal_for_timeline(&self, id: &str) -> Result<Option<ProposalHead>> {
        let row = sqlx::query(
            "SELECT kind, status, created_at, decided_at, length(coalesce(receipt, '')) AS receipt_chars FROM proposals WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(self.reader())
        .await?;
        row.map(|row| {
            Ok(ProposalHead {
                kind: row.try_get("kind")?,
                status: row.try_get("status")?,
                created_at: row.try_get("created_at")?,
                decided_at: row.try_get("decided_at")?,
                receipt_chars: usize::try_from(row.try_get::<i64, _>("receipt_chars")?).unwrap_or_default(),
            })
        })
        .transpose()
    }

    /// A chat run's thread, start and end, if it is a chat run.
    pub async fn chat_run(&self, run_id: &str) -> Result<Option<(String, i64, Option<i64>)>> {
        let row = sqlx::query("SELECT thread_id, started_at, finished_at FROM chat_runs WHERE id = ?1")
            .bind(run_id)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))).transpose()
    }

    /// A chat run's stored events (as JSON text), in order.
    pub async fn chat_run_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT event FROM thread_events WHERE thread_id = ?1 AND run_id = ?2 ORDER BY id")
            .bind(thread_id)
            .bind(run_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|row| row.try_get::<String, _>(0).map_err(StoreError::from)).collect()
    }

    /// A task run's task and start, if `run_id` is a task run that is still kept.
    pub async fn task_run_for_timeline(&self, run_id: &str) -> Result<Option<TaskRunHead>> {
        let row = sqlx::query("SELECT task_id, started_at FROM task_runs WHERE id = ?1").bind(run_id).fetch_optional(self.reader()).await?;
        row.map(|row| Ok(TaskRunHead { task_id: row.try_get(0)?, started_at: row.try_get(1)? })).transpose()
    }

    /// A task run's events as (kind, message, at), in order.
    pub async fn task_run_notes(&self, task_id: &str, run_id: &str) -> Result<Vec<(String, String, i64)>> {
        let rows = sqlx::query("SELECT kind, message, at FROM task_events WHERE task_id = ?1 AND run_id = ?2 ORDER BY seq")
            .bind(task_id)
            .bind(run_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))).collect()
    }
}
