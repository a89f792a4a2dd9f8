//! The operation journal, counted in real effects (rows in a separate database).
//! Invariants (../shared/notes/controls.md): 1, 2, 3, 4, 6, 12, 13.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hearth_core::journal::{EffectError, Journal, JournalError, Operation, Receipt, ReceiptStatus};
use hearth_core::store::journal::{OpKey, OpStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::effects::Effects;
use super::support::open;

/// One journal call under `claimant`, without a lease fence.
async fn perform<F, Fut>(
    journal: &Journal,
    (scope, op_id, claimant): (&str, &str, &str),
    action: &Value,
    cancel: &CancellationToken,
    effect: F,
) -> Result<Receipt, JournalError>
where
    F: FnOnce(CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Value, EffectError>> + Send + 'static,
{
    let op = Operation { key: OpKey { scope, op_id }, tool: "test_send", action, claimant, fence: None, cancel };
    journal.perform(&op, effect).await
}

fn key<'a>(scope: &'a str, op_id: &'a str) -> OpKey<'a> {
    OpKey { scope, op_id }
}

#[tokio::test]
async fn identical_retries_perform_the_effect_once() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let action = json!({ "to": ["sam@example.com"], "subject": "Hi", "body": "See you Saturday" });
    let cancel = CancellationToken::new();
    let mut receipts = Vec::new();
    for run in 0..5 {
        let effects = effects.clone();
        let claimant = format!("run-{run}");
        let receipt = perform(&journal, ("task:t1", "op-1", &claimant), &action, &cancel, |_| async move {
            effects.record("op-1", "x").await;
            Ok(json!({ "messageId": "m-1" }))
        })
        .await
        .unwrap();
        receipts.push(receipt);
    }
    assert_eq!(effects.count().await, 1);
    assert!(!receipts[0].replayed);
    assert!(receipts[1..].iter().all(|r| r.replayed && r.value == json!({ "messageId": "m-1" })));
    assert!(receipts.iter().all(|r| r.status == ReceiptStatus::Succeeded));
}

/// Invariant 1 under concurrency: N calls with one key at once → one effect; every other call
/// gets "in flight" or the same receipt.
#[tokio::test]
async fn concurrent_calls_with_one_key_perform_one_effect() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let mut calls = Vec::new();
    for run in 0..12 {
        let (journal, effects, mut release) = (journal.clone(), effects.clone(), release_rx.clone());
        calls.push(tokio::spawn(async move {
            let cancel = CancellationToken::new();
            let claimant = format!("run-{run}");
            perform(&journal, ("task:t1", "op-1", &claimant), &json!({ "n": 1 }), &cancel, |_| async move {
                effects.record("op-1", "x").await;
                // Hold the effect open until every call has reached the journal.
                let _ = release.wait_for(|go| *go).await;
                Ok(json!({ "messageId": "m-1" }))
            })
            .await
        }));
    }
    // Every call but the one dispatching has answered once the effect row exists; wait for it.
    while effects.count().await == 0 {
        tokio::task::yield_now().await;
    }
    release_tx.send(true).unwrap();
    let mut receipts = 0;
    for call in calls {
        match call.await.unwrap() {
            Ok(receipt) => {
                assert_eq!(receipt.value, json!({ "messageId": "m-1" }));
                receipts += 1;
            }
            Err(JournalError::InFlight { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert!(receipts >= 1);
    assert_eq!(effects.count().await, 1, "one effect for one key");
}

#[tokio::test]
async fn a_changed_action_under_the_same_id_is_a_conflict() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let body = "b".repeat(199);
    let send = |text: String| {
        let (journal, effects, cancel) = (journal.clone(), effects.clone(), cancel.clone());
        async move {
            perform(&journal, ("task:t1", "op-1", "run-1"), &json!({ "body": text }), &cancel, |_| async move {
                effects.record("op-1", "x").await;
                Ok(json!({}))
            })
            .await
        }
    };
    send(format!("{body}a")).await.unwrap();
    let changed = send(format!("{body}b")).await.unwrap_err();
    assert!(matches!(changed, JournalError::Conflict { .. }), "{changed:?}");
    assert!(changed.to_string().contains("new review"));
    assert_eq!(effects.count().await, 1);
    // The same id in another scope is another operation.
    perform(&journal, ("task:t2", "op-1", "run-1"), &json!({}), &cancel, |_| async { Ok(json!({})) }).await.unwrap();
}

#[tokio::test]
async fn the_journal_row_is_committed_before_the_effect_runs() {
    let t = open().await;
    let journal = t.hearth.tasks().journal().clone();
    let db = t.dir.path().join("hearth.db");
    let cancel = CancellationToken::new();
    let seen = perform(&journal, ("task:t1", "op-1", "run-1"), &json!({ "n": 1 }), &cancel, |_| async move {
        // A second connection, as another process would see the database.
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&db);
        let mut other = sqlx::ConnectOptions::connect(&options).await.unwrap();
        let row: (String, String, String) =
            sqlx::query_as("SELECT status, action, claimant FROM operations WHERE scope = 'task:t1' AND op_id = 'op-1'")
                .fetch_one(&mut other)
                .await
                .unwrap();
        Ok(json!({ "status": row.0, "action": row.1, "claimant": row.2 }))
    })
    .await
    .unwrap();
    assert_eq!(seen.value, json!({ "status": "dispatching", "action": "{\"n\":1}", "claimant": "run-1" }));
}

/// Spawns a caller performing `op-long` of `task:t1` (run-1), an effect that records that it
/// started, says so on the returned channel, waits for its Stop, notes that it saw it in
/// `observed`, and then reports `exit`.
fn spawn_long_effect(
    journal: &Journal,
    effects: &Effects,
    cancel: &CancellationToken,
    observed: &Arc<AtomicBool>,
    exit: i64,
) -> (tokio::task::JoinHandle<Result<Receipt, JournalError>>, tokio::sync::oneshot::Receiver<()>) {
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (journal, effects, cancel, observed) = (journal.clone(), effects.clone(), cancel.clone(), observed.clone());
    let caller = tokio::spawn(async move {
        perform(&journal, ("task:t1", "op-long", "run-1"), &json!({ "cmd": "sleep 3600" }), &cancel, move |token| async move {
            effects.record("op-long", "started").await;
            let _ = started_tx.send(());
            token.cancelled().await;
            observed.store(true, Ordering::SeqCst);
            Ok(json!({ "exit": exit }))
        })
        .await
    });
    (caller, started_rx)
}

/// Invariant 13 and issue 9 defect 3:/// Invariant 13 and issue 9 defect 3: Stop during a running effect leaves `outcome_unknown`
/// at once, the effect sees the token, its late success is recorded (never discarded), a
/// repeat dispatches nothing, and nothing further starts after Stop.
#[tokio::test]
async fn stop_during_an_effect_is_uncertain_and_its_late_success_is_kept() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let observed = Arc::new(AtomicBool::new(false));
    // It finishes anyway once stopped (exit 0): the receipt must say so.
    let (long, started) = spawn_long_effect(&journal, &effects, &cancel, &observed, 0);
    started.await.unwrap();
    cancel.cancel();
    let stopped = long.await.unwrap().unwrap_err();
    assert!(matches!(stopped, JournalError::Stopped { .. }), "{stopped:?}");
    assert!(observed.load(Ordering::SeqCst), "the effect saw the cancellation");
    let stored = t.hearth.store().get_operation(key("task:t1", "op-long")).await.unwrap().unwrap();
    assert_eq!(stored.status, OpStatus::OutcomeUnknown);
    let late: Value = serde_json::from_str(stored.late_receipt.as_deref().unwrap()).unwrap();
    assert_eq!((late["status"].as_str(), &late["value"]), (Some("succeeded"), &json!({ "exit": 0 })));

    // A repeat with the same key dispatches nothing.
    let fresh = CancellationToken::new();
    let again = perform(&journal, ("task:t1", "op-long", "run-2"), &json!({ "cmd": "sleep 3600" }), &fresh, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-long", "again").await;
            Ok(json!({}))
        }
    })
    .await
    .unwrap_err();
    assert!(matches!(again, JournalError::OutcomeUnknown { .. }), "{again:?}");

    // After Stop, nothing new starts.
    let next = perform(&journal, ("task:t1", "op-next", "run-1"), &json!({ "cmd": "echo" }), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-next", "x").await;
            Ok(json!({}))
        }
    })
    .await
    .unwrap_err();
    assert!(matches!(next, JournalError::Cancelled { .. }));
    assert!(next.to_string().starts_with("interrupted before execution"));
    assert_eq!(effects.count().await, 1, "only the long effect ever started");
    assert!(t.hearth.store().get_operation(key("task:t1", "op-next")).await.unwrap().is_none());
}

/// Issue 31, finding 9: an effect outlives a caller that goes away mid-effect (a run's time
/// limit, a panic elsewhere in the run): it still sees the run's Stop, and what it reports
/// is kept beside its uncertain receipt. Counted in effect rows and the journal's row.
#[tokio::test]
async fn a_caller_that_goes_away_cannot_cut_its_effect_off() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let observed = Arc::new(AtomicBool::new(false));
    let (caller, started) = spawn_long_effect(&journal, &effects, &cancel, &observed, 143);
    started.await.unwrap();
    // The caller's future is dropped mid-effect.
    caller.abort();
    assert!(caller.await.unwrap_err().is_cancelled());
    cancel.cancel();
    let reported = async {
        loop {
            let row = t.hearth.store().get_operation(key("task:t1", "op-long")).await.unwrap().unwrap();
            if let Some(late) = row.late_receipt {
                assert_eq!(row.status, OpStatus::OutcomeUnknown);
                break serde_json::from_str::<Value>(&late).unwrap();
            }
            tokio::task::yield_now().await;
        }
    };
    // A bound on a regression that would drop the effect with its caller (it never reports).
    let late = tokio::time::timeout(std::time::Duration::from_secs(30), reported).await.expect("the effect never reported");
    assert!(observed.load(Ordering::SeqCst), "the effect saw the Stop");
    assert_eq!((late["status"].as_str(), &late["value"]), (Some("succeeded"), &json!({ "exit": 143 })));
    assert!(t.hearth.store().stopping_owners("task:t1").await.unwrap().is_empty(), "its report cleared the mark");
    assert_eq!(effects.count().await, 1);
}

/// An effect that panics stopped somewhere in the middle: `outcome_unknown`, never retried
/// without review. Counted in effect rows.
#[tokio::test]
async fn an_effect_that_panics_is_outcome_unknown() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let err = perform(&journal, ("task:t1", "op-1", "run-1"), &json!({}), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-1", "x").await;
            if effects.count().await > 0 {
                panic!("a bug in an effect, injected by the test");
            }
            Ok(json!({}))
        }
    })
    .await
    .unwrap_err();
    assert!(matches!(err, JournalError::OutcomeUnknown { .. }), "{err:?}");
    let row = t.hearth.store().get_operation(key("task:t1", "op-1")).await.unwrap().unwrap();
    assert_eq!(row.status, OpStatus::OutcomeUnknown);
    assert!(row.receipt.as_deref().unwrap().contains("bug in Hearth"), "{:?}", row.receipt);
    let again = perform(&journal, ("task:t1", "op-1", "run-2"), &json!({}), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-1", "again").await;
            Ok(json!({}))
        }
    })
    .await
    .unwrap_err();
    assert!(matches!(again, JournalError::OutcomeUnknown { .. }), "{again:?}");
    assert_eq!(effects.count().await, 1, "the uncertain effect was not performed again");
}

/// Invariant 12, and the check-to-poll window of defect 3: a Stop that fires after the
/// intent is written but before the effect is first polled never starts the effect, and the
/// intent is withdrawn so a later retry may perform it.
#[tokio::test]
async fn stop_between_the_intent_and_the_first_poll_starts_nothing() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    // Stop fires exactly in the window: the intent is committed, the effect not yet polled.
    let stop = cancel.clone();
    journal.set_intent_hook(Some(Arc::new(move |_tool: &str| {
        stop.cancel();
        Box::pin(async {})
    })));
    let err = perform(&journal, ("task:t1", "op-1", "run-1"), &json!({}), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-1", "x").await;
            Ok(json!({}))
        }
    })
    .await
    .unwrap_err();
    journal.set_intent_hook(None);
    assert!(matches!(err, JournalError::Cancelled { .. }), "{err:?}");
    assert_eq!(effects.count().await, 0, "the effect never ran");
    assert!(t.hearth.store().get_operation(key("task:t1", "op-1")).await.unwrap().is_none(), "the intent was withdrawn");
    // A later run performs it.
    let fresh = CancellationToken::new();
    let effects2 = effects.clone();
    perform(&journal, ("task:t1", "op-1", "run-2"), &json!({}), &fresh, |_| async move {
        effects2.record("op-1", "x").await;
        Ok(json!({}))
    })
    .await
    .unwrap();
    assert_eq!(effects.count().await, 1);
}

#[tokio::test]
async fn an_uncertain_outcome_is_never_retried_automatically() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    for run in 0..3 {
        let effects = effects.clone();
        let claimant = format!("run-{run}");
        let err = perform(&journal, ("task:t1", "op-1", &claimant), &json!({}), &cancel, |_| async move {
            effects.record("op-1", "x").await;
            Err(EffectError::Uncertain("the connection dropped after the request was sent".into()))
        })
        .await
        .unwrap_err();
        assert!(matches!(err, JournalError::OutcomeUnknown { .. }), "{err:?}");
    }
    assert_eq!(effects.count().await, 1);
}

/// Defect 2: a definite failure replays to the run that failed it, and a later run (the
/// owner's Retry) may perform it again — it is not permanent.
#[tokio::test]
async fn a_failure_replays_to_its_run_and_a_later_run_may_retry_it() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let first = perform(&journal, ("task:t1", "op-1", "run-1"), &json!({}), &cancel, |_| async {
        Err(EffectError::Failed("550 mailbox unavailable".into()))
    })
    .await
    .unwrap();
    assert_eq!(first.status, ReceiptStatus::Failed);
    let same_run = perform(&journal, ("task:t1", "op-1", "run-1"), &json!({}), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-1", "x").await;
            Ok(json!({}))
        }
    })
    .await
    .unwrap();
    assert_eq!((same_run.status, same_run.replayed), (ReceiptStatus::Failed, true));
    assert_eq!(effects.count().await, 0);
    let later = perform(&journal, ("task:t1", "op-1", "run-2"), &json!({}), &cancel, {
        let effects = effects.clone();
        move |_| async move {
            effects.record("op-1", "x").await;
            Ok(json!({ "sent": true }))
        }
    })
    .await
    .unwrap();
    assert_eq!((later.status, later.replayed), (ReceiptStatus::Succeeded, false));
    assert_eq!(effects.count().await, 1);
}

/// Defect 8: the settle compares the claimant. A stale holder (another process whose row was
/// taken over) cannot settle a newer claim's row.
#[tokio::test]
async fn a_stale_claimant_cannot_settle_a_newer_claim() {
    let t = open().await;
    let store = t.hearth.store();
    let k = key("task:t1", "op-1");
    assert!(store.insert_operation(k, "test_send", "{}", "h", "run-new", None).await.unwrap());
    let before = store.get_operation(k).await.unwrap().unwrap();
    assert!(!store.settle_operation(k, "run-old", OpStatus::Succeeded, Some("{}")).await.unwrap());
    assert_eq!(store.get_operation(k).await.unwrap().unwrap(), before, "the row is unchanged");
    assert!(store.settle_operation(k, "run-new", OpStatus::Succeeded, Some("{}")).await.unwrap());
}

#[tokio::test]
async fn a_run_whose_lease_lapsed_cannot_start_an_effect() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let input = json!({});
    let task = t.hearth.tasks().create(super::support::new_task("lapsed", &input)).await.unwrap();
    // The lease lapses at once; nobody has swept it, so the task still says `running`.
    let claim = t.hearth.store().claim_next("this-run", 0).await.unwrap().unwrap();
    let scope = format!("task:{}", task.id);
    let cancel = CancellationToken::new();
    let op = Operation {
        key: key(&scope, "op-1"),
        tool: "test_send",
        action: &json!({}),
        claimant: &claim.run_id,
        fence: Some((&task.id, &claim.lease_id)),
        cancel: &cancel,
    };
    let recorder = effects.clone();
    let err = journal
        .perform(&op, move |_| async move {
            recorder.record("op-1", "x").await;
            Ok(json!({}))
        })
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::Fenced { .. }), "{err:?}");
    assert_eq!(effects.count().await, 0);
    assert!(t.hearth.store().get_operation(key(&scope, "op-1")).await.unwrap().is_none(), "no intent was written");
}
