//! Opening the data folder: seeding once, clear errors for damaged or locked databases,
//! and runs a crash left open.

use std::time::Duration;

use hearth_core::{CoreError, Hearth};
use hearth_protocol::agui::Event;
use hearth_protocol::agui::verify::verify_all;

use super::support::{collect, fast_config, open, start};

#[tokio::test]
async fn first_start_seeds_mail_calendar_and_the_form_once() {
    let t = open().await;
    let store = t.hearth.store();
    let inbox = store.inbox().await.unwrap();
    assert!(inbox.len() >= 6);
    let threads: std::collections::BTreeSet<_> = inbox.iter().map(|m| m.thread_id.clone()).collect();
    assert!(threads.len() >= 3);
    let attachments = store.attachments().await.unwrap();
    assert_eq!(attachments.len(), 1);
    let pdf = std::fs::read(&attachments[0].path).unwrap();
    assert_eq!(pdf, hearth_core::workspace::seed::PERMISSION_FORM_PDF);
    let week = store.calendar_range(i64::MIN, i64::MAX, 100).await.unwrap();
    assert!(week.len() >= 5);

    let config = fast_config(t.dir.path());
    t.hearth.store().close().await;
    let again = Hearth::open(config).await.unwrap();
    assert_eq!(again.store().inbox().await.unwrap().len(), inbox.len(), "a second start seeds nothing");
    assert_eq!(again.store().calendar_range(i64::MIN, i64::MAX, 100).await.unwrap().len(), week.len());
}

#[tokio::test]
async fn a_damaged_database_is_named_in_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = fast_config(dir.path());
    std::fs::write(config.database_path(), b"this is not a database, just some bytes that fill a header.....").unwrap();
    let err = Hearth::open(config.clone()).await.unwrap_err();
    assert!(matches!(err, CoreError::Store(hearth_core::store::StoreError::DatabaseCorrupt { .. })), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&config.database_path().display().to_string()), "{message}");
    assert!(message.contains("Move the file aside"), "{message}");
    // Nothing was overwritten.
    assert!(std::fs::read(config.database_path()).unwrap().starts_with(b"this is not a database"));
}

#[tokio::test]
async fn a_locked_database_is_named_in_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = fast_config(dir.path()).database_path();
    // Another program holds the file in an exclusive transaction.
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .locking_mode(sqlx::sqlite::SqliteLockingMode::Exclusive);
    let mut holder = sqlx::ConnectOptions::connect(&options).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut holder).await.unwrap();
    sqlx::query("CREATE TABLE held (x)").execute(&mut holder).await.unwrap();
    let mut config = fast_config(dir.path());
    config.busy_timeout = Duration::from_millis(50);
    let err = Hearth::open(config).await.unwrap_err();
    assert!(matches!(err, CoreError::Store(hearth_core::store::StoreError::DatabaseLocked { .. })), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
    assert!(err.to_string().contains("is another Hearth running?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_left_open_by_a_crash_is_closed_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    // A real process streams a reply and is SIGKILLed mid-run: the run row stays `running`
    // and its log has no end.
    let mut child = super::processes::spawn_worker(dir.path(), "chat-run");
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let thread_id = lines.next_line().await.unwrap().unwrap();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("EFFECT_DONE"));
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let reopened = Hearth::open(fast_config(&dir.path().join("data"))).await.unwrap();
    let log = reopened.thread_history(&thread_id).await.unwrap().events;
    assert!(matches!(log.last(), Some(Event::RunError(e)) if e.code.as_deref() == Some("interrupted")), "{log:#?}");
    verify_all(&log).unwrap();
    // The thread is usable again.
    let (_, _, events) = start(&reopened, Some(&thread_id), "hello").await;
    assert!(matches!(collect(events).await.last(), Some(Event::RunFinished(_))));
}

/// Migrations 0013 and 0014 rebuild `files`: a database from before them, with a filled copy pointing at
/// its parent, opens with both rows intact (a reference to the old table would fail the
/// commit for every such copy).
#[tokio::test]
async fn upgrading_keeps_filled_files_and_their_parents() {
    use sqlx::ConnectOptions;
    let dir = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    for entry in std::fs::read_dir(&migrations).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name().to_string_lossy().as_ref() < "0013" {
            std::fs::copy(entry.path(), old.path().join(entry.file_name())).unwrap();
        }
    }
    let db = dir.path().join("hearth.db");
    let mut conn =
        sqlx::sqlite::SqliteConnectOptions::new().filename(&db).create_if_missing(true).foreign_keys(true).connect().await.unwrap();
    sqlx::migrate::Migrator::new(old.path()).await.unwrap().run(&mut conn).await.unwrap();
    for (id, source, parent) in [("parent", "mail_attachment", None), ("child", "filled", Some("parent"))] {
        sqlx::query(
            "INSERT INTO files (id, name, path, size, pages, fields, source, source_ref, parent_id, sha256, created_at)
             VALUES (?1, 'f.pdf', ?1, 1, 1, 0, ?2, NULL, ?3, 'h', 1)",
        )
        .bind(id)
        .bind(source)
        .bind(parent)
        .execute(&mut conn)
        .await
        .unwrap();
    }
    drop(conn);
    let hearth = hearth_core::Hearth::open(super::support::fast_config(dir.path())).await.unwrap();
    let child = hearth.store().get_file("child").await.unwrap().unwrap();
    assert_eq!(child.parent_id.as_deref(), Some("parent"));
    assert!(hearth.store().get_file("parent").await.unwrap().is_some());
}

/// Migration 0017 rebuilds `proposals` (so `kind` may be `web.submit`): a database from before
/// it opens with every column of a stored proposal as it was, and takes a web form after.
#[tokio::test]
async fn upgrading_keeps_every_column_of_a_stored_proposal() {
    use hearth_protocol::approvals::{ProposalDraft, ProposalOrigin, ProposalStatus};
    use sqlx::ConnectOptions;
    let dir = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    for entry in std::fs::read_dir(&migrations).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name().to_string_lossy().as_ref() < "0017" {
            std::fs::copy(entry.path(), old.path().join(entry.file_name())).unwrap();
        }
    }
    let db = dir.path().join("hearth.db");
    let mut conn =
        sqlx::sqlite::SqliteConnectOptions::new().filename(&db).create_if_missing(true).foreign_keys(true).connect().await.unwrap();
    sqlx::migrate::Migrator::new(old.path()).await.unwrap().run(&mut conn).await.unwrap();
    let draft = r#"{"to":["a@b.example"],"subject":"Hi","body":"Hello"}"#;
    sqlx::query(
        "INSERT INTO proposals (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
                                created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash)
         VALUES ('p1', 'k1', NULL, 'email.send', ?1, 'local', 'me@home.example', 'mail:send', '-', 'h1', 'outcome_unknown',
                 10, 20, 15, NULL, 'may have happened', 'agui_endpoint', 'boot:1:2', 'r1')",
    )
    .bind(draft)
    .execute(&mut conn)
    .await
    .unwrap();
    drop(conn);
    let hearth = hearth_core::Hearth::open(super::support::fast_config(dir.path())).await.unwrap();
    let row = hearth.store().get_proposal("p1").await.unwrap().unwrap();
    assert!(matches!(&row.draft, ProposalDraft::EmailSend(email) if email.subject == "Hi" && email.to == ["a@b.example"]));
    assert_eq!(
        (row.key.as_str(), row.connection.account.as_str(), row.target.as_str(), row.hash.as_str()),
        ("k1", "me@home.example", "mail:send", "h1")
    );
    assert_eq!((row.status, row.origin), (ProposalStatus::OutcomeUnknown, ProposalOrigin::AguiEndpoint));
    assert_eq!((row.created_at, row.expires_at), (10, 20));
    assert_eq!(
        (row.error.as_deref(), row.executor.as_deref(), row.request_hash.as_deref()),
        (Some("may have happened"), Some("boot:1:2"), Some("r1"))
    );
}
