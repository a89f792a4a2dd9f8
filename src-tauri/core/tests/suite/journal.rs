//! The operation journal, counted in real effects (rows in a separate database).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hearth_core::journal::{EffectError, JournalError, ReceiptStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::effects::Effects;
use super::support::open;

#[tokio::test]
async fn identical_retries_perform_the_effect_once() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let action = json!({ "to": ["sam@example.com"], "subject": "Hi", "body": "See you Saturday" });
    let cancel = CancellationToken::new();
    let mut receipts = Vec::new();
    for _ in 0..5 {
        let effects = effects.clone();
        let receipt = journal
            .perform("task:t1", "op-1", "test_send", &action, &cancel, None, |_| async move {
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
            journal
                .perform("task:t1", "op-1", "test_send", &json!({ "body": text }), &cancel, None, |_| async move {
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
    journal.perform("task:t2", "op-1", "test_send", &json!({}), &cancel, None, |_| async { Ok(json!({})) }).await.unwrap();
}

#[tokio::test]
async fn the_journal_row_is_committed_before_the_effect_runs() {
    let t = open().await;
    let journal = t.hearth.tasks().journal().clone();
    let db = t.dir.path().join("hearth.db");
    let cancel = CancellationToken::new();
    let seen = journal
        .perform("task:t1", "op-1", "test_send", &json!({ "n": 1 }), &cancel, None, |_| async move {
            // A second connection, as another process would see the database.
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&db);
            let mut other = sqlx::ConnectOptions::connect(&options).await.unwrap();
            let row: (String, String) =
                sqlx::query_as("SELECT status, action FROM operations WHERE scope = 'task:t1' AND op_id = 'op-1'")
                    .fetch_one(&mut other)
                    .await
                    .unwrap();
            Ok(json!({ "status": row.0, "action": row.1 }))
        })
        .await
        .unwrap();
    assert_eq!(seen.value, json!({ "status": "dispatching", "action": "{\"n\":1}" }));
}

#[tokio::test]
async fn stop_during_a_long_effect_interrupts_it_and_nothing_further_starts() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let observed = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let long = {
        let (journal, effects, cancel, observed) = (journal.clone(), effects.clone(), cancel.clone(), observed.clone());
        tokio::spawn(async move {
            journal
                .perform("task:t1", "op-long", "test_exec", &json!({ "cmd": "sleep 3600" }), &cancel, None, |token| async move {
                    effects.record("op-long", "started").await;
                    let _ = started_tx.send(());
                    token.cancelled().await;
                    observed.store(true, Ordering::SeqCst);
                    // A late "success" after Stop must not overwrite the interrupted receipt.
                    Ok(json!({ "exit": 0 }))
                })
                .await
        })
    };
    started_rx.await.unwrap();
    cancel.cancel();
    let receipt = long.await.unwrap().unwrap();
    assert_eq!(receipt.status, ReceiptStatus::Interrupted);
    assert!(observed.load(Ordering::SeqCst), "the effect saw the cancellation");
    let stored = t.hearth.store().get_operation("task:t1", "op-long").await.unwrap().unwrap();
    assert_eq!(stored.status, "interrupted");

    let next = journal
        .perform("task:t1", "op-next", "test_exec", &json!({ "cmd": "echo" }), &cancel, None, |_| {
            let effects = effects.clone();
            async move {
                effects.record("op-next", "x").await;
                Ok(json!({}))
            }
        })
        .await
        .unwrap_err();
    assert!(matches!(next, JournalError::Cancelled { .. }));
    assert!(next.to_string().starts_with("interrupted before execution"));
    assert_eq!(effects.count().await, 1, "only the long effect ever started");
    assert!(t.hearth.store().get_operation("task:t1", "op-next").await.unwrap().is_none());
}

#[tokio::test]
async fn an_uncertain_outcome_is_never_retried_automatically() {
    let t = open().await;
    let effects = Effects::open(&t.dir.path().join("effects.db")).await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    for _ in 0..3 {
        let effects = effects.clone();
        let err = journal
            .perform("task:t1", "op-1", "test_send", &json!({}), &cancel, None, |_| async move {
                effects.record("op-1", "x").await;
                Err(EffectError::Uncertain("the connection dropped after the request was sent".into()))
            })
            .await
            .unwrap_err();
        assert!(matches!(err, JournalError::OutcomeUnknown { .. }), "{err:?}");
    }
    assert_eq!(effects.count().await, 1);
}

#[tokio::test]
async fn a_definite_failure_is_a_receipt_too() {
    let t = open().await;
    let journal = t.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let first = journal
        .perform("task:t1", "op-1", "test_send", &json!({}), &cancel, None, |_| async {
            Err(EffectError::Failed("550 mailbox unavailable".into()))
        })
        .await
        .unwrap();
    assert_eq!(first.status, ReceiptStatus::Failed);
    let again = journal
        .perform("task:t1", "op-1", "test_send", &json!({}), &cancel, None, |_| async { Ok(json!({})) })
        .await
        .unwrap();
    assert_eq!((again.status, again.replayed), (ReceiptStatus::Failed, true));
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
    let err = journal
        .perform(&scope, "op-1", "test_send", &json!({}), &cancel, Some((&task.id, &claim.lease_id)), |_| {
            let effects = effects.clone();
            async move {
                effects.record("op-1", "x").await;
                Ok(json!({}))
            }
        })
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::Fenced { .. }), "{err:?}");
    assert_eq!(effects.count().await, 0);
    assert!(t.hearth.store().get_operation(&scope, "op-1").await.unwrap().is_none(), "no intent was written");
}
