//! The approval gate, counted in sent-message rows: races, expiry, stale hashes, a changed
//! account, deny-then-approve, changed drafts, and what a crash mid-execution leaves.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::approvals::CHANGED_MESSAGE;
use hearth_core::tools::{ToolCall, run_serially};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{
    ApprovalDecideParams, Decision, DraftAttachment, EmailDraft, ProposalDraft, ProposalStatus, ProposalView,
};
use hearth_protocol::ids::{FileId, ProposalId, TaskId};
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskStatus};
use serde_json::json;

use super::support::{TestHearth, email_awaiting_review, fast_config};

async fn open_with(ttl: Duration) -> TestHearth {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.approval_ttl = ttl;
    TestHearth { hearth: Hearth::open(config).await.unwrap(), dir }
}

fn decide(proposal: &ProposalView, decision: Decision) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision }
}

async fn sent(hearth: &Hearth) -> usize {
    hearth.store().sent_messages().await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_approvals_send_exactly_once() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    assert_eq!(proposal.status, ProposalStatus::AwaitingReview);
    assert_eq!(proposal.connection.account, "owner@hearth.local");
    let ProposalDraft::EmailSend(draft) = &proposal.draft else { panic!("not an email") };
    assert_eq!(draft.to, ["alvarez@riverside-school.example"], "the address is normalized for review");
    let barrier = Arc::new(tokio::sync::Barrier::new(20));
    let mut racers = Vec::new();
    for _ in 0..20 {
        let (hearth, params, barrier) = (t.hearth.clone(), decide(&proposal, Decision::Approve), barrier.clone());
        racers.push(tokio::spawn(async move {
            barrier.wait().await;
            hearth.approval_decide(&params).await
        }));
    }
    let mut succeeded = 0;
    for racer in racers {
        let view = racer.await.unwrap().unwrap();
        if view.status == ProposalStatus::Succeeded {
            succeeded += 1;
        }
    }
    assert!(succeeded >= 1);
    assert_eq!(sent(&t.hearth).await, 1, "twenty approvals, one message in Sent");
    let after = t.hearth.approval_get(&proposal.id).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Succeeded);
    assert_eq!(after.receipt.as_deref(), Some(format!("Saved to local sent mail · sent-{}", proposal.id).as_str()));
}

#[tokio::test]
async fn an_approval_after_expiry_sends_nothing() {
    let t = open_with(Duration::ZERO).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let err = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::ApprovalExpired, "{err}");
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::Expired);
    let again = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Expired, "an expired proposal comes back unchanged");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_stale_hash_is_a_conflict_and_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    let mut stale = decide(&proposal, Decision::Approve);
    stale.hash = "0".repeat(64);
    let err = t.hearth.approval_decide(&stale).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert_eq!(err.to_string(), CHANGED_MESSAGE);
    assert_eq!(t.hearth.approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_changed_account_is_refused_and_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (_, proposal) = email_awaiting_review(&t).await;
    t.hearth.store().set_local_account("someone-else@hearth.local").await.unwrap();
    let err = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert!(err.to_string().contains("someone-else@hearth.local"), "{err}");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn deny_then_approve_sends_nothing() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    let denied = t.hearth.approval_decide(&decide(&proposal, Decision::Deny)).await.unwrap();
    assert_eq!(denied.status, ProposalStatus::Denied);
    let again = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Denied, "a decided proposal comes back unchanged");
    assert_eq!(sent(&t.hearth).await, 0);
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Queued, "the task goes on to see the decision");
}

#[tokio::test]
async fn a_cancelled_task_cannot_be_approved() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    let cancel = TaskControlParams {
        task_id: TaskId::trusted(task_id.as_str()),
        expected_status: task.status,
        expected_attempts: task.attempts,
        control: TaskControl::Cancel,
    };
    t.hearth.task_control(&cancel).await.unwrap();
    let after = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Denied, "Cancel withdrew the proposal before it returned");
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn a_proposal_whose_task_stopped_waiting_cannot_be_approved() {
    let t = open_with(Duration::from_secs(1800)).await;
    let (task_id, proposal) = email_awaiting_review(&t).await;
    // The store's own Cancel (no engine around it) withdraws the proposal in the same
    // transaction, and the claim re-checks the task in its own statement anyway.
    let task = t.hearth.store().get_task(&task_id).await.unwrap().unwrap();
    t.hearth.store().apply_control(&task_id, task.status, task.attempts, &TaskControl::Cancel).await.unwrap();
    assert!(
        !t.hearth.store().claim_proposal(&proposal.id, hearth_core::store::now_ms(), &proposal.connection, "test", None).await.unwrap(),
        "the claim checks the task too"
    );
    let after = t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Denied);
    assert!(after.error.as_deref().unwrap_or_default().contains("cancelled"), "{:?}", after.error);
    assert_eq!(sent(&t.hearth).await, 0);
}

fn draft_with(body: &str, attachment: Option<DraftAttachment>) -> ProposalDraft {
    ProposalDraft::EmailSend(EmailDraft {
        to: vec!["alvarez@riverside-school.example".into()],
        cc: vec![],
        bcc: vec![],
        subject: "Re: Community visit".into(),
        body: body.into(),
        attachments: attachment.into_iter().collect(),
        thread_id: Some("thr-school".into()),
        in_reply_to: Some("msg-school-1".into()),
        reply_to: None,
    })
}

#[tokio::test]
async fn a_changed_draft_conflicts_and_an_identical_retry_returns_the_receipt_even_after_its_file_is_deleted() {
    let t = open_with(Duration::from_secs(1800)).await;
    let gate = t.hearth.approvals();
    // A real file to attach: the seeded form, imported.
    let (info, bytes) = t.hearth.mail().fetch_attachment("att-permission-form").await.unwrap();
    let file = t.hearth.files().import("file-1", bytes, &info.filename, &info.id).await.unwrap();
    let attachment = DraftAttachment {
        file_id: FileId::trusted(file.id.as_str()),
        name: file.name.clone(),
        size: file.size,
        sha256: file.sha256.clone(),
    };
    let body = "x".repeat(199) + "a";
    let first = gate
        .proposer()
        .prepare(
            "chat:reply-1",
            None,
            None,
            hearth_protocol::approvals::ProposalOrigin::OwnerChat,
            Vec::new(),
            draft_with(&body, Some(attachment.clone())),
        )
        .await
        .unwrap();
    let approved = gate.decide(&decide(&first.view(), Decision::Approve)).await.unwrap();
    assert_eq!(approved.status, ProposalStatus::Succeeded, "{:?}", approved.error);
    assert_eq!(sent(&t.hearth).await, 1);

    t.hearth.files().delete(&file.id).await.unwrap();
    let retry = gate
        .proposer()
        .prepare(
            "chat:reply-1",
            None,
            None,
            hearth_protocol::approvals::ProposalOrigin::OwnerChat,
            Vec::new(),
            draft_with(&body, Some(attachment.clone())),
        )
        .await
        .unwrap();
    assert_eq!((retry.id.as_str(), retry.status), (first.id.as_str(), ProposalStatus::Succeeded));
    assert_eq!(retry.receipt, approved.receipt, "the receipt outlives the deleted file");

    let changed = "x".repeat(199) + "b";
    let err = gate
        .proposer()
        .prepare(
            "chat:reply-1",
            None,
            None,
            hearth_protocol::approvals::ProposalOrigin::OwnerChat,
            Vec::new(),
            draft_with(&changed, Some(attachment)),
        )
        .await
        .unwrap_err();
    assert_eq!(err.to_ipc().code, ErrorCode::Conflict);
    assert!(err.to_string().contains("new review"), "{err}");
    assert_eq!(sent(&t.hearth).await, 1, "neither retry sent anything");
}

#[tokio::test]
async fn an_attachment_changed_after_review_is_not_sent() {
    let t = open_with(Duration::from_secs(1800)).await;
    let gate = t.hearth.approvals();
    let (info, bytes) = t.hearth.mail().fetch_attachment("att-permission-form").await.unwrap();
    let file = t.hearth.files().import("file-2", bytes, &info.filename, &info.id).await.unwrap();
    let attachment = DraftAttachment {
        file_id: FileId::trusted(file.id.as_str()),
        name: file.name.clone(),
        size: file.size,
        sha256: file.sha256.clone(),
    };
    let proposal = gate
        .proposer()
        .prepare(
            "chat:reply-2",
            None,
            None,
            hearth_protocol::approvals::ProposalOrigin::OwnerChat,
            Vec::new(),
            draft_with("See attached.", Some(attachment)),
        )
        .await
        .unwrap();
    std::fs::write(&file.path, b"%PDF-1.7 something else").unwrap();
    let view = gate.decide(&decide(&proposal.view(), Decision::Approve)).await.unwrap();
    assert_eq!(view.status, ProposalStatus::Failed);
    assert!(view.error.unwrap().contains("changed after you reviewed it"));
    assert_eq!(sent(&t.hearth).await, 0);
}

#[tokio::test]
async fn an_execution_cut_off_by_a_crash_is_known_not_to_have_happened_locally() {
    let dir = tempfile::tempdir().unwrap();
    let proposal = {
        let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
        let proposal = hearth
            .approvals()
            .proposer()
            .prepare("chat:crash", None, None, hearth_protocol::approvals::ProposalOrigin::OwnerChat, Vec::new(), draft_with("Hello", None))
            .await
            .unwrap();
        // What a crash between the claim and the send leaves behind (the claimant is a process
        // that no longer exists).
        let dead = "other-boot:1:1";
        assert!(hearth.store().claim_proposal(&proposal.id, hearth_core::store::now_ms(), &proposal.connection, dead, None).await.unwrap());
        proposal
    };
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    // The local workspace commits the Sent row with the receipt: no receipt, nothing sent.
    let after = hearth.approval_get(&proposal.id).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Failed, "{:?}", after.error);
    assert!(after.error.as_deref().unwrap().contains("nothing was sent"), "{:?}", after.error);
    let again = hearth.approval_decide(&decide(&proposal.view(), Decision::Approve)).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Failed, "never retried automatically");
    assert_eq!(sent(&hearth).await, 0);
}

// Issue 9, defects 4 and 13: the card shows the event that will change and the message a
// reply answers, read from the workspace — never the model's words — and the hash binds it.

/// Every calendar row, with its version, by id.
async fn calendar_rows(hearth: &Hearth) -> Vec<hearth_core::store::calendar::StoredEvent> {
    let mut rows = Vec::new();
    for event in hearth.store().calendar_range(i64::MIN, i64::MAX, 1000).await.unwrap() {
        rows.push(hearth.store().get_event(&event.id).await.unwrap().unwrap());
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    rows
}

/// `prepare_event` through the real tool path, in the owner's chat.
async fn prepare_event_tool(hearth: &Hearth, call_id: &str, args: serde_json::Value) -> hearth_core::tools::ToolOutput {
    let ctx = hearth.toolbox().for_chat(
        "thread-issue9",
        "run-issue9",
        hearth_protocol::approvals::ProposalOrigin::OwnerChat,
        tokio_util::sync::CancellationToken::new(),
    );
    let calls = [ToolCall { id: call_id.into(), name: "prepare_event".into(), arguments: args.to_string() }];
    run_serially(&ctx, &calls, 0).await.remove(0).1
}

fn proposal_id_of(output: &hearth_core::tools::ToolOutput) -> String {
    assert!(!output.is_error, "{}", output.content);
    serde_json::from_str::<serde_json::Value>(&output.content).unwrap()["proposalId"].as_str().unwrap().to_owned()
}

/// A calendar change prepared straight at the gate, as the prepare tool hands it over.
async fn prepare_calendar(hearth: &Hearth, key: &str, args: serde_json::Value) -> hearth_core::Result<ProposalView> {
    use hearth_core::approvals::normalize::EventAction;
    let (action, request) = hearth_core::approvals::event_draft(serde_json::from_value(args).unwrap())?;
    let draft = match action {
        EventAction::Create => ProposalDraft::CalendarCreate(request),
        EventAction::Update => ProposalDraft::CalendarUpdate(request),
        EventAction::Delete => ProposalDraft::CalendarDelete(request),
    };
    let row = hearth
        .approvals()
        .proposer()
        .prepare(key, None, None, hearth_protocol::approvals::ProposalOrigin::OwnerChat, Vec::new(), draft)
        .await?;
    Ok(row.view())
}

#[tokio::test]
async fn issue9_delete_card_shows_the_real_event() {
    let t = open_with(Duration::from_secs(1800)).await;
    let before = calendar_rows(&t.hearth).await;
    let dentist = t.hearth.store().get_event("evt-dentist").await.unwrap().unwrap();
    let made_up = json!({
        "action": "delete", "eventId": "evt-dentist", "title": "Old reminder",
        "start": "2030-01-01T09:00:00Z", "end": "2030-01-01T09:15:00Z", "timeZone": "UTC", "location": "Nowhere"
    });
    let output = prepare_event_tool(&t.hearth, "call-delete", made_up).await;
    let proposal = t.hearth.approval_get(&proposal_id_of(&output)).await.unwrap();

    // What the card shows is the event the id names, as it is now.
    let ProposalDraft::CalendarDelete(shown) = &proposal.draft else { panic!("not a delete: {:?}", proposal.draft) };
    assert_eq!(shown.event_id.as_deref(), Some("evt-dentist"));
    assert_eq!((shown.title.as_str(), shown.location.as_str()), (dentist.title.as_str(), dentist.location.as_str()));
    let bounds = hearth_core::workspace::event::timing_bounds(&shown.timing, &shown.time_zone).unwrap();
    assert_eq!(bounds, (dentist.starts_at, dentist.ends_at), "the real event's times, not the model's");
    assert_eq!(shown.time_zone, dentist.time_zone);

    // The hash is over that draft; the made-up one would hash differently.
    let row = t.hearth.store().get_proposal(&proposal.id).await.unwrap().unwrap();
    let target = hearth_core::workspace::Target { target: row.target.clone(), version: row.target_version.clone() };
    assert_eq!(hearth_core::approvals::proposal_hash(&proposal.draft, &proposal.connection, &target), proposal.hash);
    let model_said = hearth_protocol::approvals::EventDraft {
        title: "Old reminder".into(),
        timing: hearth_protocol::approvals::EventTiming::Timed { start: "2030-01-01T09:00:00Z".into(), end: "2030-01-01T09:15:00Z".into() },
        time_zone: "UTC".into(),
        location: "Nowhere".into(),
        ..shown.clone()
    };
    let made_up_hash = hearth_core::approvals::proposal_hash(&ProposalDraft::CalendarDelete(model_said), &proposal.connection, &target);
    assert_ne!(made_up_hash, proposal.hash);

    // Approving deletes exactly that event, and nothing else.
    t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    let after = calendar_rows(&t.hearth).await;
    assert_eq!(after.len(), before.len() - 1, "one row fewer");
    assert!(t.hearth.store().get_event("evt-dentist").await.unwrap().is_none(), "the dentist appointment is the one deleted");
    let others: Vec<_> = before.into_iter().filter(|e| e.id != "evt-dentist").collect();
    assert_eq!(after, others, "every other event is untouched, version and all");
}

#[tokio::test]
async fn issue9_update_card_shows_before_and_after_and_changes_only_that_event() {
    let t = open_with(Duration::from_secs(1800)).await;
    let before = calendar_rows(&t.hearth).await;
    let yoga = t.hearth.store().get_event("evt-yoga").await.unwrap().unwrap();
    let (new_start, new_end) = (yoga.starts_at + 30 * 60_000, yoga.ends_at + 30 * 60_000);
    let rfc3339 = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap().to_rfc3339();
    let change = json!({
        "action": "update", "eventId": "evt-yoga", "title": "Yoga (later)", "start": rfc3339(new_start), "end": rfc3339(new_end)
    });
    let output = prepare_event_tool(&t.hearth, "call-update", change).await;
    let proposal = t.hearth.approval_get(&proposal_id_of(&output)).await.unwrap();

    let ProposalDraft::CalendarUpdate(shown) = &proposal.draft else { panic!("not an update: {:?}", proposal.draft) };
    let was = shown.before.as_ref().expect("an update carries the event as it is now");
    assert_eq!((was.title.as_str(), was.location.as_str()), ("Yoga class", "Studio 4"));
    assert_eq!(hearth_core::workspace::event::timing_bounds(&was.timing, &was.time_zone).unwrap(), (yoga.starts_at, yoga.ends_at));
    assert_eq!(shown.title, "Yoga (later)");
    assert_eq!(hearth_core::workspace::event::timing_bounds(&shown.timing, &shown.time_zone).unwrap(), (new_start, new_end));
    assert_eq!((shown.location.as_str(), shown.time_zone.as_str()), ("Studio 4", yoga.time_zone.as_str()), "unchanged fields are kept");
    assert_eq!(shown.changes, None, "the model's request is not what is stored");

    t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    let after = calendar_rows(&t.hearth).await;
    assert_eq!(after.len(), before.len(), "an update adds and removes no rows");
    let changed = after.iter().find(|e| e.id == "evt-yoga").unwrap();
    assert_eq!((changed.title.as_str(), changed.starts_at, changed.ends_at), ("Yoga (later)", new_start, new_end));
    assert_eq!((changed.location.as_str(), changed.version), ("Studio 4", yoga.version + 1));
    let untouched =
        |rows: &[hearth_core::store::calendar::StoredEvent]| rows.iter().filter(|e| e.id != "evt-yoga").cloned().collect::<Vec<_>>();
    assert_eq!(untouched(&after), untouched(&before), "no other event changed");
}

#[tokio::test]
async fn issue9_an_event_changed_after_review_is_refused_and_left_as_it_is() {
    let t = open_with(Duration::from_secs(1800)).await;
    let update =
        prepare_calendar(&t.hearth, "thread:issue9:update", json!({ "action": "update", "eventId": "evt-lunch", "location": "Elsewhere" }))
            .await
            .unwrap();
    let delete = prepare_calendar(&t.hearth, "thread:issue9:delete", json!({ "action": "delete", "eventId": "evt-lunch" })).await.unwrap();

    // The owner moves lunch in their calendar after both were prepared.
    let mut lunch = t.hearth.store().get_event("evt-lunch").await.unwrap().unwrap();
    lunch.title = "Lunch with Priya (moved)".into();
    lunch.starts_at += 3_600_000;
    lunch.ends_at += 3_600_000;
    assert!(t.hearth.store().update_event(&lunch, lunch.version).await.unwrap());
    let moved = calendar_rows(&t.hearth).await;

    for proposal in [&update, &delete] {
        let decided = t.hearth.approval_decide(&decide(proposal, Decision::Approve)).await.unwrap();
        assert!(decided.error.unwrap_or_default().contains("changed after you reviewed"), "{:?}", proposal.draft.kind());
        assert_eq!(calendar_rows(&t.hearth).await, moved, "{:?} wrote nothing", proposal.draft.kind());
    }
    assert_eq!(
        t.hearth.store().get_event("evt-lunch").await.unwrap().unwrap(),
        hearth_core::store::calendar::StoredEvent { version: 2, ..lunch }
    );
}

#[tokio::test]
async fn issue9_a_reply_card_names_the_message_it_answers() {
    let t = open_with(Duration::from_secs(1800)).await;
    let store = t.hearth.store();
    let proposer = t.hearth.approvals().proposer();
    let origin = hearth_protocol::approvals::ProposalOrigin::OwnerChat;
    let args = |reply_to: &str| hearth_core::approvals::EmailArgs {
        to: vec!["alvarez@riverside-school.example".into()],
        subject: "Re: Community visit".into(),
        body: "The form is attached.".into(),
        reply_to_message_id: Some(reply_to.into()),
        ..Default::default()
    };

    // A reply to a message the mailbox does not hold is refused when the gate resolves it
    // (the workspace that would send the reply reads the message), and nothing is stored.
    let nope = hearth_core::approvals::email_draft(store, args("msg-nope")).await.unwrap();
    assert_eq!(nope.reply_to, None, "the tool names no message itself");
    let err = proposer.prepare("thread:issue9:unknown", None, None, origin, Vec::new(), ProposalDraft::EmailSend(nope)).await.unwrap_err();
    assert!(err.to_string().contains("no message msg-nope"), "{err}");
    assert!(err.to_string().contains("search_mail"), "it says where to find a real id: {err}");
    assert_eq!(store.list_proposals(100).await.unwrap().len(), 0, "no proposal was created");

    // A reply to a stored message carries its subject and sender, read from the mailbox.
    let message = store.get_message("msg-school-1").await.unwrap().unwrap();
    let expected = hearth_protocol::approvals::ReplyContext {
        message_id: message.id.clone(),
        subject: message.subject.clone(),
        from: message.from.clone(),
    };
    let draft = hearth_core::approvals::email_draft(store, args("msg-school-1")).await.unwrap();
    // Whatever a caller claims the message is, the gate stores what the mailbox holds.
    let forged = hearth_protocol::approvals::EmailDraft {
        reply_to: Some(hearth_protocol::approvals::ReplyContext { subject: "Something harmless".into(), ..expected.clone() }),
        ..draft
    };
    let proposal =
        proposer.prepare("thread:issue9:reply", None, None, origin, Vec::new(), ProposalDraft::EmailSend(forged)).await.unwrap().view();
    let ProposalDraft::EmailSend(shown) = &proposal.draft else { panic!("not an email") };
    assert_eq!(shown.reply_to.as_ref(), Some(&expected));
    assert_eq!(shown.in_reply_to.as_deref(), Some("msg-school-1"));
    assert_eq!(store.list_proposals(100).await.unwrap().len(), 1);
    t.hearth.approval_decide(&decide(&proposal, Decision::Approve)).await.unwrap();
    let sent_rows = store.sent_messages().await.unwrap();
    assert_eq!(sent_rows.len(), 1);
    assert_eq!(sent_rows[0].in_reply_to.as_deref(), Some("msg-school-1"));
}

/// A form the browser was sending when its process died may have reached the site: restart
/// makes it outcome_unknown (the local workspace's own sends, which commit with their receipt,
/// become failed instead), and approving it again sends nothing.
#[tokio::test]
async fn a_form_cut_off_while_being_sent_is_outcome_unknown_never_failed() {
    use hearth_core::store::proposals::ProposalRow;
    use hearth_protocol::approvals::{FormField, ProposalOrigin, SubmitGesture, WebSubmitDraft};
    let t = super::support::open().await;
    let store = t.hearth.store();
    let form = WebSubmitDraft {
        profile: "task-gone".into(),
        page_url: "https://shop.example/checkout".into(),
        page_title: "Checkout".into(),
        reference: "0123456789ab:3".into(),
        gesture: SubmitGesture::Click,
        element: "button \"Place order\"".into(),
        method: "POST".into(),
        destination: "https://shop.example/order".into(),
        fields: vec![FormField { name: "name".into(), label: "Name".into(), value: "Ada".into(), hidden: false, file: false }],
        form_version: "a".repeat(64),
    };
    let connection = hearth_core::approvals::web::connection(&form);
    let target = hearth_core::approvals::web::target(&form);
    let draft = ProposalDraft::WebSubmit(form);
    let now = hearth_core::store::now_ms();
    let row = ProposalRow {
        id: "p-form".into(),
        key: "test:p-form".into(),
        task_id: None,
        hash: hearth_core::approvals::proposal_hash(&draft, &connection, &target),
        draft,
        connection: connection.clone(),
        target: target.target,
        target_version: target.version,
        status: ProposalStatus::AwaitingReview,
        created_at: now,
        expires_at: now + 60_000,
        receipt: None,
        error: None,
        origin: ProposalOrigin::Task,
        executor: None,
        request_hash: None,
        sources: Vec::new(),
        mandate_id: None,
        leaves_at: None,
        failure_id: None,
    };
    store.insert_proposal(&row, None, None, None).await.unwrap().unwrap();
    // Claimed by a process that is gone (another boot), as a kill mid-send leaves it.
    assert!(store.claim_proposal("p-form", now, &connection, "another-boot:4242:1", None).await.unwrap());

    assert_eq!(t.hearth.approvals().recover().await.unwrap(), 1);
    let stranded = store.get_proposal("p-form").await.unwrap().unwrap();
    assert_eq!(stranded.status, ProposalStatus::OutcomeUnknown, "{:?}", stranded.error);
    assert!(stranded.error.as_deref().unwrap().contains("may or may not have happened"), "{:?}", stranded.error);
    let again = t
        .hearth
        .approval_decide(&ApprovalDecideParams {
            proposal_id: ProposalId::parse("p-form").unwrap(),
            hash: row.hash.clone(),
            decision: Decision::Approve,
        })
        .await
        .unwrap();
    assert_eq!(again.status, ProposalStatus::OutcomeUnknown, "never carried out again");
    assert_eq!(t.hearth.browsers().running().await, 0, "no browser was started to send it");
}
