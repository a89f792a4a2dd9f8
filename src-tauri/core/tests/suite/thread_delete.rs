//! Deleting a chat, counted in rows of the database and folders on disk: its messages and its
//! own browser profile go, a profile the owner kept stays, and nothing goes while a reply, an
//! action or a proposal of it is in flight or waits for the owner.

use std::path::PathBuf;

use hearth_core::Hearth;
use hearth_core::browser::profiles::ProfileId;
use hearth_core::store::journal::OpKey;
use hearth_core::store::threads::RunOrigin;
use hearth_core::tools::{RunOutcome, ToolCall, run_serially};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalOrigin};
use hearth_protocol::browser::{ProfileTarget, UseProfileParams};
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::{RunStartParams, ThreadDeleteParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{TestHearth, collect, open, settled, start};

/// A second connection to Hearth's database file, to count rows the way the owner's disk holds them.
async fn sqlite(hearth: &Hearth) -> sqlx::SqlitePool {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(hearth.store().path()).read_only(true);
    // No idle reaping or lifetime limit, so no sqlx maintenance task (sqlx#3645).
    sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).idle_timeout(None).max_lifetime(None).connect_with(options).await.unwrap()
}

async fn count(db: &sqlx::SqlitePool, sql: &str, thread_id: &str) -> i64 {
    sqlx::query_scalar(sql).bind(thread_id).fetch_one(db).await.unwrap()
}

async fn events(db: &sqlx::SqlitePool, thread_id: &str) -> i64 {
    count(db, "SELECT count(*) FROM thread_events WHERE thread_id = ?1", thread_id).await
}

async fn listed(hearth: &Hearth, thread_id: &str) -> bool {
    hearth.thread_list().await.unwrap().threads.iter().any(|t| t.id == thread_id)
}

/// A chat with one finished exchange.
async fn chat(hearth: &Hearth, text: &str) -> String {
    let (thread_id, _, stream) = start(hearth, None, text).await;
    collect(stream).await;
    settled(hearth).await;
    thread_id
}

/// The chat's own browser profile folder, made as a browse would leave it (with a cookie file),
/// without launching Chromium.
fn used_profile(t: &TestHearth, thread_id: &str) -> PathBuf {
    let folder = t.hearth.config().browser.profiles_dir.join(ProfileId::for_thread(thread_id).as_str());
    std::fs::create_dir_all(folder.join("Default")).unwrap();
    std::fs::write(folder.join("Default").join("Cookies"), b"session=1").unwrap();
    folder
}

fn delete(thread_id: &str) -> ThreadDeleteParams {
    ThreadDeleteParams { thread_id: ThreadId::parse(thread_id).unwrap(), acknowledge_uncertain: false }
}

#[tokio::test]
async fn deleting_a_chat_removes_its_messages_and_its_profile_and_keeps_a_profile_the_owner_kept() {
    let t = open().await;
    let hearth = &t.hearth;
    let db = sqlite(hearth).await;
    let a = chat(hearth, "hello").await;
    let b = chat(hearth, "what is on today").await;
    let (folder_a, folder_b) = (used_profile(&t, &a), used_profile(&t, &b));
    // The owner points chat a at chat b's profile (its logins): b's profile is kept from now on.
    let pick = UseProfileParams {
        target: ProfileTarget::Thread(ThreadId::parse(a.clone()).unwrap()),
        profile: Some(ProfileId::for_thread(&b).as_str().to_owned()),
    };
    hearth.browser_use_profile(&pick).await.unwrap();
    assert!(events(&db, &a).await > 0 && events(&db, &b).await > 0);
    let runs_of_a = count(&db, "SELECT count(*) FROM chat_runs WHERE thread_id = ?1", &a).await;
    assert_eq!(runs_of_a, 1);

    let deleted = hearth.thread_delete(&delete(&a)).await.unwrap();
    assert!(deleted.profile_deleted);
    assert_eq!(events(&db, &a).await, 0, "chat a's messages are gone");
    assert!(!folder_a.exists(), "chat a's profile folder is gone");
    assert!(!listed(hearth, &a).await);
    assert_eq!(count(&db, "SELECT count(*) FROM threads WHERE id = ?1 AND deleted_at IS NOT NULL AND title = ''", &a).await, 1);
    assert_eq!(count(&db, "SELECT count(*) FROM browser_profile_choices WHERE scope = 'thread:' || ?1", &a).await, 0);
    // Its runs stay (no content): the fence of any late write of theirs.
    assert_eq!(count(&db, "SELECT count(*) FROM chat_runs WHERE thread_id = ?1", &a).await, runs_of_a);
    // Chat b is untouched.
    assert!(events(&db, &b).await > 0 && listed(hearth, &b).await && folder_b.join("Default/Cookies").exists());

    // Chat b goes, but the profile the owner kept stays, cookie and all.
    let deleted = hearth.thread_delete(&delete(&b)).await.unwrap();
    assert!(!deleted.profile_deleted);
    assert_eq!(events(&db, &b).await, 0);
    assert!(folder_b.join("Default/Cookies").exists(), "the kept profile stays");

    // Again, or a chat that never was: NotFound, and nothing changes.
    let again = hearth.thread_delete(&delete(&a)).await.unwrap_err().to_ipc();
    assert_eq!(again.code, ErrorCode::NotFound, "{}", again.message);
    let unknown = hearth.thread_delete(&delete("no-such-chat")).await.unwrap_err().to_ipc();
    assert_eq!(unknown.code, ErrorCode::NotFound, "{}", unknown.message);
    assert!(ThreadId::parse("../etc").is_err(), "a path is not a chat id; it never reaches the core");

    // A deleted chat takes no new run: its id is not reused, and no run row is written.
    let resumed =
        hearth.start_run(RunStartParams { thread_id: Some(ThreadId::parse(a.clone()).unwrap()), text: "still there?".into() }).await;
    assert_eq!(resumed.err().map(|e| e.to_ipc().code), Some(ErrorCode::NotFound));
    let opened = hearth.store().open_run(&a, "run-late", "late", "test", RunOrigin::Window).await.unwrap();
    assert_eq!(opened, hearth_core::store::threads::RunAdmission::Deleted);
    assert_eq!(count(&db, "SELECT count(*) FROM chat_runs WHERE thread_id = ?1", &a).await, runs_of_a);
    assert_eq!(events(&db, &a).await, 0);
}

#[tokio::test]
async fn a_chat_is_not_deleted_while_its_reply_runs_or_its_proposal_waits_and_is_once_it_is_decided() {
    let t = open().await;
    let hearth = &t.hearth;
    let db = sqlite(hearth).await;
    let thread = chat(hearth, "hello").await;
    let folder = used_profile(&t, &thread);
    // A run of the chat recorded running (as another process's would be): it prepares an email.
    hearth.store().open_run(&thread, "run-mail", "mail", "test", RunOrigin::Window).await.unwrap();
    let tools = hearth.toolbox().for_chat(&thread, "run-mail", ProposalOrigin::OwnerChat, CancellationToken::new()).for_workflow();
    let args = json!({ "to": ["sam@example.com"], "subject": "Lunch", "body": "Noon?" });
    let calls = [ToolCall { id: "call-1".into(), name: "prepare_email".into(), arguments: args.to_string() }];
    let outputs = run_serially(&tools, &calls, 0).await;
    let Some(RunOutcome::WaitingApproval(proposal_id)) = outputs.into_iter().find_map(|(_, o)| o.outcome) else {
        panic!("prepare_email did not wait for the owner");
    };
    let before = events(&db, &thread).await;
    assert!(before > 0);

    let refused = hearth.thread_delete(&delete(&thread)).await.unwrap_err().to_ipc();
    assert_eq!(refused.code, ErrorCode::Conflict, "{}", refused.message);
    assert!(refused.message.contains("reply"), "{}", refused.message);

    hearth.store().end_run("run-mail", hearth_core::store::threads::RunEnd::Finished).await.unwrap();
    let refused = hearth.thread_delete(&delete(&thread)).await.unwrap_err().to_ipc();
    assert_eq!(refused.code, ErrorCode::Conflict, "{}", refused.message);
    assert!(refused.message.contains("Approvals"), "{}", refused.message);
    // Nothing went: the messages, the listing, the profile, the proposal.
    assert_eq!(events(&db, &thread).await, before);
    assert!(listed(hearth, &thread).await && folder.exists());
    assert_eq!(count(&db, "SELECT count(*) FROM proposals WHERE id = ?1 AND status = 'awaiting_review'", &proposal_id).await, 1);

    // Denied, it no longer waits: the chat goes, the proposal stays as its record.
    let proposal = hearth.store().get_proposal(&proposal_id).await.unwrap().unwrap().view();
    let deny = ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Deny };
    hearth.approval_decide(&deny).await.unwrap();
    hearth.thread_delete(&delete(&thread)).await.unwrap();
    assert_eq!(events(&db, &thread).await, 0);
    assert!(!folder.exists() && !listed(hearth, &thread).await);
    assert_eq!(count(&db, "SELECT count(*) FROM proposals WHERE id = ?1", &proposal_id).await, 1);
}

#[tokio::test]
async fn an_action_of_the_chat_in_flight_refuses_and_one_in_doubt_needs_the_owners_acknowledgement() {
    let t = open().await;
    let hearth = &t.hearth;
    let db = sqlite(hearth).await;
    let thread = chat(hearth, "hello").await;
    let scope = format!("thread:{thread}");
    let key = OpKey { scope: &scope, op_id: "run-x:call-1" };
    assert!(hearth.store().insert_operation(key, "send_mail", "{}", "hash", "run-x", None).await.unwrap());

    let refused = hearth.thread_delete(&delete(&thread)).await.unwrap_err().to_ipc();
    assert_eq!(refused.code, ErrorCode::Conflict, "{}", refused.message);

    // The run ended with it in flight: it may or may not have happened.
    assert_eq!(hearth.store().strand_claimed_operations(&scope, "run-x").await.unwrap(), 1);
    let refused = hearth.thread_delete(&delete(&thread)).await.unwrap_err().to_ipc();
    assert_eq!(refused.code, ErrorCode::NeedsReview, "{}", refused.message);
    assert!(events(&db, &thread).await > 0 && listed(hearth, &thread).await);

    // The owner saw it and deletes anyway: the chat goes, the journal row stays as its record.
    let acknowledged = ThreadDeleteParams { thread_id: ThreadId::parse(thread.clone()).unwrap(), acknowledge_uncertain: true };
    hearth.thread_delete(&acknowledged).await.unwrap();
    assert_eq!(events(&db, &thread).await, 0);
    assert_eq!(
        count(&db, "SELECT count(*) FROM operations WHERE scope = 'thread:' || ?1 AND status = 'outcome_unknown'", &thread).await,
        1
    );
}

#[tokio::test]
async fn a_call_held_for_the_owner_keeps_its_chat_until_it_is_decided() {
    use hearth_core::tools::{StepId, dispatch};

    let t = open().await;
    let hearth = &t.hearth;
    let db = sqlite(hearth).await;
    let thread = chat(hearth, "hello").await;
    // An endpoint client's run in this chat asks to remember a fact: outside content, so the
    // call is held on a card (keyed `held:thread:<id>:…`), not run.
    let ctx = hearth.toolbox().for_chat(&thread, "run-held", ProposalOrigin::AguiEndpoint, CancellationToken::new());
    let out = dispatch(&ctx, "remember_fact", r#"{"text":"the owner likes tea"}"#, StepId::Call("c1".into())).await;
    let Some(RunOutcome::WaitingApproval(proposal_id)) = out.outcome else { panic!("the call was not held: {}", out.content) };
    assert_eq!(count(&db, "SELECT count(*) FROM proposals WHERE key LIKE 'held:thread:' || ?1 || ':%'", &thread).await, 1);
    let before = events(&db, &thread).await;

    // Deleting now would leave a card that, approved, acts for a chat that is gone: refused.
    let refused = hearth.thread_delete(&delete(&thread)).await.unwrap_err().to_ipc();
    assert_eq!(refused.code, ErrorCode::Conflict, "{}", refused.message);
    assert!(refused.message.contains("Approvals"), "{}", refused.message);
    assert_eq!(events(&db, &thread).await, before);
    assert!(listed(hearth, &thread).await);

    // Denied, nothing was remembered and the chat can go.
    let proposal = hearth.store().get_proposal(&proposal_id).await.unwrap().unwrap().view();
    let deny = ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Deny };
    hearth.approval_decide(&deny).await.unwrap();
    hearth.thread_delete(&delete(&thread)).await.unwrap();
    assert_eq!(events(&db, &thread).await, 0);
    assert!(hearth.store().memories().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_deleted_chats_words_are_not_left_readable_in_the_database_file() {
    let t = open().await;
    let hearth = &t.hearth;
    let secret = "quokka-zanzibar-7731";
    // A choice (the sample agent makes no task or fact of it, so the words live only in the
    // chat), long enough that its events fill whole pages: pages a delete frees whole keep their
    // bytes in the file unless they are overwritten.
    let thread = chat(hearth, &format!("help me choose: {} or tea", secret.repeat(400))).await;
    let file = hearth.store().path().to_owned();
    // Everything in the main file, so the bytes read below are all the database holds.
    checkpoint(&file).await;
    let holds = |bytes: &[u8]| bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(holds(&std::fs::read(&file).unwrap()), "the message is in the file before the delete (the oracle can see it)");

    hearth.thread_delete(&delete(&thread)).await.unwrap();
    // Read as they are on disk right after the deletion: the database file and its log.
    let wal = file.with_extension("db-wal");
    assert!(!holds(&std::fs::read(&file).unwrap()), "the deleted chat's words are still in the database file");
    assert!(!holds(&std::fs::read(&wal).unwrap_or_default()), "the deleted chat's words are still in the write-ahead log");
}

/// Moves everything in the write-ahead log into the database file and empties the log.
async fn checkpoint(file: &std::path::Path) {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(file);
    let mut db = sqlx::ConnectOptions::connect(&options).await.unwrap();
    let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(&mut db).await.unwrap();
    assert_eq!(busy, 0, "the checkpoint was blocked by a reader");
}
