//! A connected Google account as Hearth's workspace, through the approval gate, against the
//! loopback fixture (hearth-testkit `google`) speaking Gmail's and Calendar's wire protocol.
//! Oracles: the messages the fixture took (`sent()`, parsed back with mail-parser), the event
//! writes it took (`event_writes()`) and its events as they are — never a status string alone.

use std::sync::Arc;

use hearth_core::Hearth;
use hearth_core::vault::Vault;
use hearth_core::workspace::GoogleWorkspace;
use hearth_core::workspace::google::GoogleApis;
use hearth_core::workspace::google::mime::message_id_for;
use hearth_core::workspace::google::oauth::{Access, ClientConfig, Endpoints, GoogleAuth};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{
    ApprovalDecideParams, ApprovalRecheckParams, Decision, DraftAttachment, EmailDraft, ProposalDraft, ProposalOrigin, ProposalStatus,
    ProposalView, Recheck,
};
use hearth_protocol::ids::{FileId, TaskId};
use hearth_testkit::google::{CLIENT_ID, CLIENT_SECRET, FixtureEvent, FixtureMail, GoogleFixture, SendMode, WriteMode};
use mail_parser::{MessageParser, MimeHeaders};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::support::{TestHearth, fast_config};

struct Connected {
    t: TestHearth,
    fixture: GoogleFixture,
    /// The first connection's workspace, for tests that call it directly.
    ws: GoogleWorkspace,
}

/// A Hearth whose chosen account is a Google account connected (with `access`) through
/// Settings → Accounts, against the fixture.
async fn connected(access: Access) -> Connected {
    let fixture = GoogleFixture::start(3600).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = fast_config(dir.path());
    config.google = hearth_core::config::GoogleEndpoints::all_at(&fixture.base_url());
    let hearth = Hearth::open(config).await.unwrap();
    let client = hearth_protocol::accounts::GoogleClientParams { client_id: CLIENT_ID.into(), client_secret: Some(CLIENT_SECRET.into()) };
    hearth.accounts_client_set(&client).await.unwrap();
    let t = TestHearth { hearth, dir };
    let ws = connect(&t, &fixture, access).await;
    Connected { t, fixture, ws }
}

/// Signs in through Settings → Accounts (a new connection each time; the test plays the
/// owner's browser) and answers a workspace of that connection.
async fn connect(t: &TestHearth, fixture: &GoogleFixture, access: Access) -> GoogleWorkspace {
    let access = match access {
        Access::Read => hearth_protocol::accounts::AccountAccess::Read,
        Access::ReadWrite => hearth_protocol::accounts::AccountAccess::ReadWrite,
    };
    let begun = t.hearth.account_connect_begin(access).await.unwrap();
    let (answer, view) = tokio::join!(reqwest::get(&begun.consent_url), t.hearth.account_connect_finish(&begun.attempt_id));
    assert!(answer.unwrap().status().is_success());
    let view = view.unwrap();
    let account = view.accounts.iter().find(|a| a.connection_id == view.chosen).unwrap().account.clone();
    let base = fixture.base_url();
    let vault = Vault::open_in(t.hearth.store().clone(), t.dir.path()).await.unwrap();
    let client = ClientConfig {
        client_id: CLIENT_ID.into(),
        client_secret: Some(CLIENT_SECRET.to_owned().into()),
        endpoints: Endpoints {
            auth_url: format!("{base}/o/oauth2/v2/auth"),
            token_url: format!("{base}/token"),
            revoke_url: format!("{base}/revoke"),
        },
    };
    let auth = GoogleAuth::new(t.hearth.store().clone(), vault, client).unwrap();
    let apis = GoogleApis { gmail: base.clone(), calendar: base };
    GoogleWorkspace::restore(t.hearth.store().clone(), auth, &view.chosen, &account, &apis).unwrap()
}

impl Connected {
    fn hearth(&self) -> &Hearth {
        &self.t.hearth
    }

    async fn connect(&self, access: Access) -> GoogleWorkspace {
        connect(&self.t, &self.fixture, access).await
    }

    async fn prepare(&self, key: &str, draft: ProposalDraft) -> hearth_core::Result<ProposalView> {
        let row = self.hearth().approvals().proposer().prepare(key, None, None, ProposalOrigin::OwnerChat, Vec::new(), draft).await?;
        Ok(row.view())
    }

    async fn approve(&self, proposal: &ProposalView) -> hearth_core::Result<ProposalView> {
        let params = ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Approve };
        self.hearth().approval_decide(&params).await
    }

    async fn recheck(&self, proposal: &ProposalView, action: Recheck) -> hearth_core::Result<ProposalView> {
        let params = ApprovalRecheckParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), action };
        self.hearth().approval_recheck(&params).await
    }
}

fn email(to: &str, subject: &str, body: &str) -> EmailDraft {
    EmailDraft {
        to: vec![to.into()],
        cc: vec![],
        bcc: vec![],
        subject: subject.into(),
        body: body.into(),
        attachments: vec![],
        thread_id: None,
        in_reply_to: None,
        reply_to: None,
    }
}

fn header(raw: &[u8], name: &str) -> String {
    let message = MessageParser::default().parse(raw).unwrap();
    message.header_raw(name).map(|v| v.trim().to_owned()).unwrap_or_default()
}

#[tokio::test]
async fn an_uncertain_send_is_found_in_sent_and_a_retry_sends_nothing() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::DropConnection);
    let proposal =
        c.prepare("chat:lost-answer", ProposalDraft::EmailSend(email("ana@example.com", "Dinner", "Seven works."))).await.unwrap();
    assert_eq!(proposal.connection.account, "owner@example.com", "the account Gmail named");
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    assert_eq!(c.fixture.sent().len(), 1, "Gmail took the message; its answer was lost");
    // Exactly the reviewed message, under the Message-ID made from the proposal.
    let raw = &c.fixture.sent()[0];
    assert_eq!(header(raw, "Message-ID"), format!("<{}>", message_id_for(&proposal.id, "owner@example.com")));
    let parsed = MessageParser::default().parse(raw.as_slice()).unwrap();
    assert_eq!(parsed.subject(), Some("Dinner"));
    assert_eq!(parsed.body_text(0).unwrap().trim_end(), "Seven works.");

    // The owner presses Retry: Hearth looks in Sent first, finds it, and sends nothing.
    c.fixture.set_send_mode(SendMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert!(retried.receipt.as_deref().unwrap().contains("Found in Gmail's Sent: it was sent once"), "{:?}", retried.receipt);
    assert_eq!(c.fixture.sent().len(), 1, "the retry sent nothing");
    // Again, and an approval of the same proposal: nothing either.
    assert_eq!(c.recheck(&after, Recheck::Retry).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.approve(&proposal).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.sent().len(), 1);
}

#[tokio::test]
async fn a_send_that_never_arrived_goes_again_only_when_the_owner_retries_and_keeps_its_message_id() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let proposal =
        c.prepare("chat:lost-request", ProposalDraft::EmailSend(email("bo@example.net", "Keys", "Under the mat."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    assert_eq!(c.fixture.sent().len(), 0);

    // A check looks and says so; it never sends.
    let checked = c.recheck(&after, Recheck::Check).await.unwrap();
    assert_eq!(checked.status, ProposalStatus::OutcomeUnknown);
    assert!(checked.error.as_deref().unwrap().contains("did not find it"), "{:?}", checked.error);
    assert_eq!(c.fixture.sent().len(), 0);

    // Retry: still not in Sent, so it goes — once, as the same message.
    c.fixture.set_send_mode(SendMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert_eq!(c.fixture.sent().len(), 1);
    assert_eq!(header(&c.fixture.sent()[0], "Message-ID"), format!("<{}>", message_id_for(&proposal.id, "owner@example.com")));
    assert_eq!(c.recheck(&after, Recheck::Retry).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.sent().len(), 1, "a retry of a succeeded proposal does nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_retries_of_an_unknown_send_send_it_at_most_once() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let proposal = c.prepare("chat:race", ProposalDraft::EmailSend(email("cy@example.com", "Race", "Once."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown);
    c.fixture.set_send_mode(SendMode::Answer);
    let c = Arc::new(c);
    let mut retries = Vec::new();
    for _ in 0..10 {
        let c = c.clone();
        let after = after.clone();
        retries.push(tokio::spawn(async move { c.recheck(&after, Recheck::Retry).await }));
    }
    for retry in retries {
        let view = retry.await.unwrap().unwrap();
        assert!(matches!(view.status, ProposalStatus::Executing | ProposalStatus::Succeeded), "{:?}", view.status);
    }
    assert_eq!(c.fixture.sent().len(), 1, "one retry claimed it; the rest saw it taken or found it in Sent");
}

#[tokio::test]
async fn a_reply_threads_and_carries_exactly_the_reviewed_attachment() {
    let c = connected(Access::ReadWrite).await;
    // A real PDF for Files, and the message answered, in Gmail.
    let pdf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/choices.pdf")).unwrap();
    c.fixture.add_mail(FixtureMail {
        id: "18f0a1".into(),
        thread_id: "18f0a0".into(),
        from: "Ms. Alvarez <alvarez@school.example>".into(),
        to: "owner@example.com".into(),
        subject: "Permission form".into(),
        text: Some("Please fill in the attached form.".into()),
        sent_at: 1_764_000_000_000,
        labels: vec!["INBOX".into()],
        attachments: vec![("permission.pdf".into(), "application/pdf".into(), pdf.clone())],
        message_id: "CAF=abc@mail.gmail.com".into(),
        references: "<CAF=root@mail.gmail.com>".into(),
        ..FixtureMail::default()
    });
    // Attachment import reads Gmail's attachment endpoint, whole and exact.
    let (info, bytes) = c.hearth().mail().fetch_attachment("18f0a1.1").await.unwrap();
    assert_eq!((info.filename.as_str(), bytes.len()), ("permission.pdf", pdf.len()));
    assert_eq!(bytes, pdf);
    let file = c.hearth().files().import("file-g1", bytes, &info.filename, &info.id).await.unwrap();
    let mut draft = email("alvarez@school.example", "Re: Permission form", "Filled in, attached.");
    draft.in_reply_to = Some("18f0a1".into());
    draft.attachments = vec![DraftAttachment {
        file_id: FileId::trusted(file.id.as_str()),
        name: file.name.clone(),
        size: file.size,
        sha256: file.sha256.clone(),
    }];
    let proposal = c.prepare("chat:reply", ProposalDraft::EmailSend(draft)).await.unwrap();
    let ProposalDraft::EmailSend(shown) = &proposal.draft else { panic!("an email") };
    let reply_to = shown.reply_to.as_ref().unwrap();
    assert_eq!(
        (reply_to.subject.as_str(), shown.thread_id.as_deref()),
        ("Permission form", Some("18f0a0")),
        "the card names the message as Gmail holds it"
    );

    let done = c.approve(&proposal).await.unwrap();
    assert_eq!(done.status, ProposalStatus::Succeeded, "{:?}", done.error);
    assert_eq!(c.fixture.sent().len(), 1);
    let raw = c.fixture.sent()[0].clone();
    let parsed = MessageParser::default().parse(raw.as_slice()).unwrap();
    assert_eq!(header(&raw, "In-Reply-To"), "<CAF=abc@mail.gmail.com>");
    let references = header(&raw, "References");
    let references: Vec<&str> = references.split_whitespace().map(|r| r.trim_matches(|c| c == '<' || c == '>')).collect();
    assert_eq!(references, ["CAF=root@mail.gmail.com", "CAF=abc@mail.gmail.com"]);
    let attachments: Vec<_> = parsed.attachments().collect();
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0].attachment_name(), Some(file.name.as_str()));
    assert_eq!(hex::encode(Sha256::digest(attachments[0].contents())), file.sha256, "the bytes reviewed, exactly");
    // The message went into the conversation it answers.
    let thread = c.hearth().mail().read_thread("18f0a0").await.unwrap();
    assert_eq!(thread.messages.len(), 2, "{thread:?}");
}

#[tokio::test]
async fn a_read_only_connection_sends_and_changes_nothing() {
    let c = connected(Access::Read).await;
    let proposal = c.prepare("chat:read-only", ProposalDraft::EmailSend(email("ana@example.com", "Hi", "Hello."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Failed);
    assert!(after.error.as_deref().unwrap().contains("grant write access"), "{:?}", after.error);
    assert!(c.fixture.sent().is_empty());
    assert!(!c.fixture.paths().iter().any(|p| p.ends_with("/messages/send")), "the send was never attempted");
}

#[tokio::test]
async fn reconnecting_as_another_account_invalidates_a_pending_proposal() {
    let c = connected(Access::ReadWrite).await;
    let proposal = c.prepare("chat:old-account", ProposalDraft::EmailSend(email("ana@example.com", "Hi", "Hello."))).await.unwrap();
    c.fixture.set_account("someone-else@example.com");
    c.connect(Access::ReadWrite).await;
    let refused = c.approve(&proposal).await.unwrap_err();
    assert_eq!(refused.to_ipc().code, ErrorCode::Conflict, "{refused}");
    assert!(refused.to_string().contains("someone-else@example.com"), "{refused}");
    assert_eq!(c.hearth().approval_get(&proposal.id).await.unwrap().status, ProposalStatus::AwaitingReview);
    assert!(c.fixture.sent().is_empty());

    // The same account connected again is a new connection: refused as well.
    c.fixture.set_account("owner@example.com");
    c.connect(Access::ReadWrite).await;
    assert_eq!(c.approve(&proposal).await.unwrap_err().to_ipc().code, ErrorCode::Conflict);
    assert!(c.fixture.sent().is_empty());
}

fn meeting(start: &str, end: &str) -> serde_json::Value {
    serde_json::json!({ "action": "create", "title": "Dentist", "start": start, "end": end, "timeZone": "Europe/Paris" })
}

async fn prepare_event(c: &Connected, key: &str, args: serde_json::Value) -> hearth_core::Result<ProposalView> {
    use hearth_core::approvals::normalize::EventAction;
    let (action, request) = hearth_core::approvals::event_draft(serde_json::from_value(args).unwrap())?;
    let draft = match action {
        EventAction::Create => ProposalDraft::CalendarCreate(request),
        EventAction::Update => ProposalDraft::CalendarUpdate(request),
        EventAction::Delete => ProposalDraft::CalendarDelete(request),
    };
    c.prepare(key, draft).await
}

#[tokio::test]
async fn an_uncertain_event_create_is_found_and_a_retry_creates_nothing() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_write_mode(WriteMode::DropConnection);
    let proposal = prepare_event(&c, "chat:event", meeting("2026-12-10T09:00:00+01:00", "2026-12-10T10:00:00+01:00")).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    assert_eq!(c.fixture.event_writes().len(), 1);
    let created = c.fixture.events();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].private, [("hearthProposal".to_owned(), proposal.id.to_string())], "marked with its proposal");
    assert_eq!(created[0].timed, Some(("2026-12-10T08:00:00Z".into(), "2026-12-10T09:00:00Z".into())));

    c.fixture.set_write_mode(WriteMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert!(retried.receipt.as_deref().unwrap().contains("Found in Google Calendar"), "{:?}", retried.receipt);
    assert_eq!(c.fixture.event_writes().len(), 1, "the retry created nothing");
    assert_eq!(c.fixture.events().len(), 1);
}

#[tokio::test]
async fn an_event_create_retried_after_its_check_missed_it_is_still_created_once() {
    // Even past reconciliation, the event id made from the proposal stops a second event:
    // Calendar answers 409 and the receipt says it was already there.
    let c = connected(Access::ReadWrite).await;
    let proposal = prepare_event(&c, "chat:event-twice", meeting("2026-12-11T09:00:00+01:00", "2026-12-11T10:00:00+01:00")).await.unwrap();
    let ws = &c.ws;
    // Executed directly twice, as two attempts that each lost track would be.
    use hearth_core::workspace::Workspace;
    let row = c.hearth().store().get_proposal(&proposal.id).await.unwrap().unwrap();
    let claim = hearth_core::store::proposals::ExecutionClaim { proposal_id: &row.id, executor: "test" };
    let first = ws.execute(&row, claim, &CancellationToken::new()).await.unwrap();
    let second = ws.execute(&row, claim, &CancellationToken::new()).await.unwrap();
    assert!(first.receipt.starts_with("Added to Google Calendar"), "{}", first.receipt);
    assert!(second.receipt.starts_with("Already in Google Calendar"), "{}", second.receipt);
    assert_eq!(c.fixture.events().len(), 1, "one event");
    assert_eq!(c.fixture.event_writes().len(), 1, "one insert taken");
}

#[tokio::test]
async fn an_update_against_a_stale_etag_changes_nothing() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.add_event(FixtureEvent {
        id: "evtdentist1".into(),
        calendar_id: "primary".into(),
        summary: "Dentist".into(),
        status: "confirmed".into(),
        timed: Some(("2026-12-12T08:00:00Z".into(), "2026-12-12T09:00:00Z".into())),
        time_zone: "Europe/Paris".into(),
        ..FixtureEvent::default()
    });
    let args = serde_json::json!({ "action": "update", "eventId": "evtdentist1", "title": "Dentist (moved)" });
    let proposal = prepare_event(&c, "chat:update", args).await.unwrap();
    let ProposalDraft::CalendarUpdate(update) = &proposal.draft else { panic!("an update") };
    assert_eq!(update.before.as_ref().unwrap().title, "Dentist", "the card shows the event as Calendar holds it");
    // Someone changes the event in Google Calendar after the owner saw the card.
    c.fixture.rename_event("evtdentist1", "Dentist — bring card");
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::Failed, "{:?}", after.error);
    assert!(after.error.as_deref().unwrap().contains("changed after you reviewed"), "{:?}", after.error);
    assert!(c.fixture.event_writes().is_empty(), "no write was taken");
    assert_eq!(c.fixture.events()[0].summary, "Dentist — bring card", "their change stands");

    // Against the current version it goes through, once; a repeat meets the new etag.
    let fresh =
        prepare_event(&c, "chat:update-2", serde_json::json!({ "action": "update", "eventId": "evtdentist1", "title": "Dentist (moved)" }))
            .await
            .unwrap();
    assert_eq!(c.approve(&fresh).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.event_writes(), [("update".to_owned(), "evtdentist1".to_owned())]);
    assert_eq!(c.fixture.events()[0].summary, "Dentist (moved)");
}

#[tokio::test]
async fn a_repeating_event_is_never_changed_or_deleted() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.add_event(FixtureEvent {
        id: "evtweekly_20261214".into(),
        calendar_id: "primary".into(),
        summary: "Choir".into(),
        status: "confirmed".into(),
        timed: Some(("2026-12-14T18:00:00Z".into(), "2026-12-14T19:00:00Z".into())),
        recurring: true,
        ..FixtureEvent::default()
    });
    for args in [
        serde_json::json!({ "action": "update", "eventId": "evtweekly_20261214", "title": "Choir (moved)" }),
        serde_json::json!({ "action": "delete", "eventId": "evtweekly_20261214" }),
    ] {
        let refused = prepare_event(&c, &format!("chat:{}", args["action"]), args).await.unwrap_err();
        assert!(refused.to_string().contains("repeating event"), "{refused}");
    }
    assert!(c.fixture.event_writes().is_empty());
}

#[tokio::test]
async fn a_google_send_cut_off_by_a_crash_is_outcome_unknown_even_with_the_sample_mailbox_chosen() {
    let c = connected(Access::ReadWrite).await;
    let connection = c.ws.connection_now().id.clone();
    let proposal = c.prepare("chat:crash", ProposalDraft::EmailSend(email("ana@example.com", "Hi", "Hello."))).await.unwrap();
    // What a crash after the claim leaves (its claimant a process now gone); and the owner had
    // switched to the sample mailbox, which is what the restarted Hearth opens on.
    let row = c.hearth().store().get_proposal(&proposal.id).await.unwrap().unwrap();
    assert!(
        c.hearth().store().claim_proposal(&row.id, hearth_core::store::now_ms(), &row.connection, "other-boot:1:1", None).await.unwrap()
    );
    c.hearth().account_choose(hearth_protocol::accounts::SAMPLE_ACCOUNT).await.unwrap();
    let mut config = fast_config(c.t.dir.path());
    config.google = hearth_core::config::GoogleEndpoints::all_at(&c.fixture.base_url());
    let hearth = Hearth::open(config).await.unwrap();
    let after = hearth.approval_get(&proposal.id).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "a Google send may have gone: never 'failed' ({:?})", after.error);
    // Not through another account.
    let retry = ApprovalRecheckParams { proposal_id: after.id.clone(), hash: after.hash.clone(), action: Recheck::Retry };
    let refused = hearth.approval_recheck(&retry).await.unwrap_err();
    assert_eq!(refused.to_ipc().code, ErrorCode::Conflict, "{refused}");
    assert!(refused.to_string().contains("owner@example.com"), "{refused}");
    // Back on the account: the retry looks (it never went) and sends it, once.
    hearth.account_choose(&connection).await.unwrap();
    let retried = hearth.approval_recheck(&retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert_eq!(c.fixture.sent().len(), 1);
    assert_eq!(hearth.approval_recheck(&retry).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.sent().len(), 1);
}

// Settings → Accounts, through the same calls the window makes.

#[tokio::test]
async fn settings_connects_an_account_uses_it_after_a_restart_and_disconnects_it() {
    use hearth_protocol::accounts::{AccountAccess, AccountProvider, GoogleClientParams, SAMPLE_ACCOUNT};
    let fixture = GoogleFixture::start(3600).await.unwrap();
    fixture.add_mail(FixtureMail {
        id: "18f0b1".into(),
        thread_id: "18f0b0".into(),
        from: "Bakery <hello@bakery.example>".into(),
        to: "owner@example.com".into(),
        subject: "Your sourdough order".into(),
        text: Some("Ready on Friday.".into()),
        sent_at: 1_764_000_000_000,
        labels: vec!["INBOX".into()],
        message_id: "bakery-1@bakery.example".into(),
        ..FixtureMail::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let config = || {
        let mut config = fast_config(dir.path());
        config.google = hearth_core::config::GoogleEndpoints::all_at(&fixture.base_url());
        config
    };
    let hearth = Hearth::open(config()).await.unwrap();
    let unset = hearth.account_connect_begin(AccountAccess::Read).await.unwrap_err();
    assert!(unset.to_string().contains("Google OAuth client"), "{unset}");
    let client = GoogleClientParams { client_id: CLIENT_ID.into(), client_secret: Some(CLIENT_SECRET.into()) };
    let view = hearth.accounts_client_set(&client).await.unwrap();
    assert_eq!((view.client.client_id.as_deref(), view.client.has_secret), (Some(CLIENT_ID), true));

    // The owner's browser goes to the consent page while the window waits for it to come back.
    let sign_in = |hearth: Hearth, access: AccountAccess| async move {
        let begun = hearth.account_connect_begin(access).await.unwrap();
        let (answer, view) = tokio::join!(reqwest::get(&begun.consent_url), hearth.account_connect_finish(&begun.attempt_id));
        assert!(answer.unwrap().status().is_success());
        view.unwrap()
    };
    let view = sign_in(hearth.clone(), AccountAccess::Read).await;
    assert_eq!(view.accounts.len(), 2, "{view:?}");
    let google = &view.accounts[1];
    assert_eq!(
        (google.provider, google.account.as_str(), google.access),
        (AccountProvider::Google, "owner@example.com", AccountAccess::Read)
    );
    assert_eq!(view.chosen, google.connection_id, "a new connection is the one the tools use");
    let shown = serde_json::to_string(&view).unwrap();
    assert!(!shown.contains("ya29.") && !shown.contains("1//refresh") && !shown.contains(CLIENT_SECRET), "no secret crosses IPC: {shown}");
    let found = hearth.mail().search_mail("sourdough").await.unwrap();
    assert_eq!(found.matches.len(), 1, "the tools read Gmail now");
    assert!(hearth.accounts_get().await.unwrap().accounts[1].last_sync.is_some());

    // Granting write access signs in again: a new connection replaces the old one.
    let first = google.connection_id.clone();
    let view = sign_in(hearth.clone(), AccountAccess::ReadWrite).await;
    assert_eq!(view.accounts.len(), 2, "still one Google account: {view:?}");
    assert_ne!(view.accounts[1].connection_id, first);
    assert_eq!(view.accounts[1].access, AccountAccess::ReadWrite);
    let second = view.accounts[1].connection_id.clone();
    drop(hearth);

    // After a restart the same account is in use, with no sign-in and no network at start.
    let paths_before = fixture.paths().len();
    let hearth = Hearth::open(config()).await.unwrap();
    assert_eq!(fixture.paths().len(), paths_before, "opening asked Google nothing");
    assert_eq!(hearth.accounts_get().await.unwrap().chosen, second);
    assert_eq!(hearth.mail().search_mail("sourdough").await.unwrap().matches.len(), 1);

    // Back to the sample mailbox, and again to Google.
    assert_eq!(hearth.account_choose(SAMPLE_ACCOUNT).await.unwrap().chosen, SAMPLE_ACCOUNT);
    assert!(hearth.mail().search_mail("sourdough").await.unwrap().matches.is_empty(), "the sample mailbox has no such mail");
    assert_eq!(hearth.account_choose(&second).await.unwrap().chosen, second);

    // Disconnect: revoked at Google, tokens gone, the sample mailbox in use.
    let view = hearth.account_disconnect(&second).await.unwrap();
    assert_eq!((view.accounts.len(), view.chosen.as_str(), view.notice.as_deref()), (1, SAMPLE_ACCOUNT, None));
    assert_eq!(fixture.revoked().len(), 1);
    assert!(hearth.account_choose(&second).await.is_err(), "a disconnected account cannot be chosen");
    assert!(hearth.account_disconnect(SAMPLE_ACCOUNT).await.is_err());
}

// What the cold review found (each test fails on the code before its fix).

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_retries_whose_answers_are_lost_still_send_once() {
    // Every retry that sends loses its answer again: only the claim taken before the look keeps
    // a second retry from looking, finding nothing, and sending a second copy. (Whether the old
    // order failed here depended on scheduling; the claim-first order holds in every one.)
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let proposal = c.prepare("chat:race-lost", ProposalDraft::EmailSend(email("cy@example.com", "Race", "Once."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown);
    c.fixture.set_send_mode(SendMode::DropConnection);
    let c = Arc::new(c);
    let mut retries = Vec::new();
    for _ in 0..10 {
        let c = c.clone();
        let after = after.clone();
        retries.push(tokio::spawn(async move { c.recheck(&after, Recheck::Retry).await.unwrap() }));
    }
    for retry in retries {
        retry.await.unwrap();
    }
    assert_eq!(c.fixture.sent().len(), 1, "one send; every later retry found it in Sent or saw it taken");
    // And a retry now finds it.
    c.fixture.set_send_mode(SendMode::Answer);
    assert_eq!(c.recheck(&after, Recheck::Retry).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.sent().len(), 1);
}

#[tokio::test]
async fn a_send_the_search_index_has_not_seen_yet_is_found_among_the_newest_sent() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::DropConnection);
    let proposal = c.prepare("chat:lag", ProposalDraft::EmailSend(email("ana@example.com", "Fresh", "Just now."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown);
    c.fixture.set_search_lag(true);
    c.fixture.set_send_mode(SendMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert_eq!(c.fixture.sent().len(), 1, "found by listing Sent, not sent again");
}

#[tokio::test]
async fn a_send_gmail_gave_its_own_message_id_and_whose_answer_was_lost_is_found_by_its_mark_and_a_retry_sends_nothing() {
    let c = connected(Access::ReadWrite).await;
    // Gmail takes the message, files it under a Message-ID of its own, and the answer is lost.
    c.fixture.set_send_mode(SendMode::RewriteMessageIdDropConnection);
    let proposal = c.prepare("chat:rewritten", ProposalDraft::EmailSend(email("ana@example.com", "Tickets", "Two, row F."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    assert_eq!(c.fixture.sent().len(), 1, "Gmail took the message; its answer was lost");
    let ours = message_id_for(&proposal.id, "owner@example.com");
    assert_eq!(header(&c.fixture.sent()[0], "X-Hearth-Operation"), ours, "the message carries Hearth's mark");

    // The owner presses Retry: the search by Hearth's Message-ID finds nothing (Gmail replaced
    // it), but the message in Sent carries the mark: found, and nothing is sent again.
    c.fixture.set_send_mode(SendMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert!(retried.receipt.as_deref().unwrap().contains("Found in Gmail's Sent: it was sent once"), "{:?}", retried.receipt);
    assert_eq!(c.fixture.sent().len(), 1, "the retry sent nothing");
    assert_eq!(c.recheck(&after, Recheck::Retry).await.unwrap().status, ProposalStatus::Succeeded);
    assert_eq!(c.fixture.sent().len(), 1);
}

#[tokio::test]
async fn a_check_that_cannot_read_back_everything_sent_since_says_so_and_a_retry_sends_nothing() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let proposal =
        c.prepare("chat:busy-outbox", ProposalDraft::EmailSend(email("bo@example.net", "Notes", "Attached soon."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    // More mail sent since than Hearth reads back (another client of the same account).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    for n in 0..=hearth_core::workspace::google::gmail::MAX_SENT_CHECKED {
        c.fixture.add_mail(FixtureMail {
            id: format!("1a{n:04x}"),
            thread_id: format!("1a{n:04x}"),
            labels: vec!["SENT".into()],
            message_id: format!("other-{n}@example.com"),
            sent_at: now,
            ..FixtureMail::default()
        });
    }

    // A check says plainly that it could not be sure.
    let checked = c.recheck(&after, Recheck::Check).await.unwrap();
    assert_eq!(checked.status, ProposalStatus::OutcomeUnknown);
    let error = checked.error.as_deref().unwrap();
    assert!(error.contains("Hearth could not be sure") && error.contains("Look in Sent in Gmail yourself"), "{error}");
    assert!(!error.contains("did not find it"), "{error}");

    // Retry does not send on a check that was not sure: refused, and the card says why.
    c.fixture.set_send_mode(SendMode::Answer);
    let refused = c.recheck(&after, Recheck::Retry).await.unwrap_err();
    assert_eq!(refused.to_ipc().code, ErrorCode::Conflict);
    assert!(refused.to_string().contains("Not sent again"), "{refused}");
    assert_eq!(c.fixture.sent().len(), 0, "nothing was sent");
    let row = c.hearth().store().get_proposal(&after.id).await.unwrap().unwrap();
    assert_eq!(row.status, ProposalStatus::OutcomeUnknown);
    assert!(row.error.as_deref().unwrap().contains("Hearth could not be sure"), "{:?}", row.error);
}

#[tokio::test]
async fn a_retry_google_refuses_leaves_the_outcome_unknown_never_failed() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.add_event(FixtureEvent {
        id: "evtpiano01".into(),
        calendar_id: "primary".into(),
        summary: "Piano".into(),
        status: "confirmed".into(),
        timed: Some(("2026-12-15T16:00:00Z".into(), "2026-12-15T17:00:00Z".into())),
        ..FixtureEvent::default()
    });
    let proposal =
        prepare_event(&c, "chat:piano", serde_json::json!({ "action": "update", "eventId": "evtpiano01", "title": "Piano (Ms. Ito)" }))
            .await
            .unwrap();
    c.fixture.set_write_mode(WriteMode::DropConnection);
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown, "{:?}", after.error);
    assert_eq!(c.fixture.event_writes().len(), 1, "the change was made; its answer lost");
    // Someone edits the event before the owner retries: the look does not match, and the retry
    // meets a newer version (412).
    c.fixture.rename_event("evtpiano01", "Piano — moved to 5pm");
    c.fixture.set_write_mode(WriteMode::Answer);
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::OutcomeUnknown, "the first attempt did happen: never 'failed' ({:?})", retried.error);
    assert!(retried.error.as_deref().unwrap().contains("retry was refused"), "{:?}", retried.error);
    assert_eq!(c.fixture.event_writes().len(), 1, "the retry wrote nothing");
}

#[tokio::test]
async fn an_update_changes_only_what_the_owner_reviewed() {
    let c = connected(Access::ReadWrite).await;
    let notes = "Bring the referral letter. ".repeat(200);
    c.fixture.add_event(FixtureEvent {
        id: "evtclinic01".into(),
        calendar_id: "primary".into(),
        summary: "Clinic".into(),
        status: "confirmed".into(),
        timed: Some(("2026-12-16T09:00:00Z".into(), "2026-12-16T10:00:00Z".into())),
        description: notes.clone(),
        color_id: "5".into(),
        ..FixtureEvent::default()
    });
    let proposal =
        prepare_event(&c, "chat:clinic", serde_json::json!({ "action": "update", "eventId": "evtclinic01", "title": "Clinic (room 4)" }))
            .await
            .unwrap();
    assert_eq!(c.approve(&proposal).await.unwrap().status, ProposalStatus::Succeeded);
    let event = c.fixture.events().into_iter().find(|e| e.id == "evtclinic01").unwrap();
    assert_eq!(event.summary, "Clinic (room 4)");
    assert_eq!(event.color_id, "5", "a field Hearth does not manage stays");
    assert_eq!(event.description, notes, "the long description stays whole (Hearth reads only 4,000 characters of it)");
}

#[tokio::test]
async fn a_retry_after_the_same_account_reconnects_goes_through_the_new_connection_once() {
    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let proposal =
        c.prepare("chat:reconnected", ProposalDraft::EmailSend(email("bo@example.net", "Tickets", "Two, please."))).await.unwrap();
    let after = c.approve(&proposal).await.unwrap();
    assert_eq!(after.status, ProposalStatus::OutcomeUnknown);
    // Grant write access again (a new sign-in of the same account: a new connection).
    c.connect(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::Answer);
    let checked = c.recheck(&after, Recheck::Check).await.unwrap();
    assert_eq!(checked.status, ProposalStatus::OutcomeUnknown, "checked, through the new connection");
    let retried = c.recheck(&after, Recheck::Retry).await.unwrap();
    assert_eq!(retried.status, ProposalStatus::Succeeded, "{:?}", retried.error);
    assert_eq!(c.fixture.sent().len(), 1);
    assert_eq!(header(&c.fixture.sent()[0], "Message-ID"), format!("<{}>", message_id_for(&proposal.id, "owner@example.com")));
}

#[tokio::test]
async fn a_disconnected_account_cannot_approve_or_retry_anything() {
    let c = connected(Access::ReadWrite).await;
    let pending = c.prepare("chat:pending", ProposalDraft::EmailSend(email("ana@example.com", "Hi", "Hello."))).await.unwrap();
    c.fixture.set_send_mode(SendMode::LoseRequest);
    let unknown = c.prepare("chat:unknown", ProposalDraft::EmailSend(email("bo@example.net", "Hi", "Hello."))).await.unwrap();
    let unknown = c.approve(&unknown).await.unwrap();
    assert_eq!(unknown.status, ProposalStatus::OutcomeUnknown);
    c.fixture.set_send_mode(SendMode::Answer);
    let connection = c.ws.connection_now().id.clone();
    c.hearth().account_disconnect(&connection).await.unwrap();
    // The sample mailbox is in use now: both are refused, nothing is sent.
    assert_eq!(c.approve(&pending).await.unwrap_err().to_ipc().code, ErrorCode::Conflict);
    assert_eq!(c.recheck(&unknown, Recheck::Retry).await.unwrap_err().to_ipc().code, ErrorCode::Conflict);
    // Even a claim written straight to the database is refused: the connection is gone.
    let row = c.hearth().store().get_proposal(&pending.id).await.unwrap().unwrap();
    assert!(!c.hearth().store().claim_proposal(&row.id, hearth_core::store::now_ms(), &row.connection, "someone", None).await.unwrap());
    let stranded = c.hearth().store().get_proposal(&unknown.id).await.unwrap().unwrap();
    assert!(
        c.hearth().store().reclaim_unknown_proposal(&stranded.id, &stranded.connection, "someone").await.unwrap()
            != hearth_core::store::proposals::Reclaim::Claimed,
        "a retry's claim too"
    );
    assert!(c.fixture.sent().is_empty());
}

#[tokio::test]
async fn a_send_a_standing_order_approved_whose_answer_was_lost_ends_the_run_in_doubt_and_is_never_sent_twice() {
    // A task's standing order lets it send to a friend; Gmail takes the first message but its
    // answer is lost. Nothing may send it again unseen: the run ends in doubt, the task waits
    // for "Retry after review", the retried step finds the same send, and a later send under
    // the order waits on a card. Oracle: the messages the fixture took.
    use hearth_core::tasks::{TaskContext, TaskOutcome};
    use hearth_core::tools::{RunOutcome, StepId, dispatch};
    use hearth_protocol::mandates::{MandateGrant, MandateGrantParams, MandateHolder, MandateWindow};
    use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskStatus};

    let c = connected(Access::ReadWrite).await;
    c.fixture.set_send_mode(SendMode::DropConnection);
    let tool_hearth = c.hearth().clone();
    c.hearth().tasks().register(hearth_protocol::tasks::TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.toolbox().for_task(ctx);
        async move {
            for step in 1..=2_u64 {
                let args = serde_json::json!({ "to": ["friend@example.com"], "subject": format!("Numbers {step}"), "body": "x" });
                let out = dispatch(&tools, "prepare_email", &args.to_string(), StepId::Step(step)).await;
                match out.outcome {
                    Some(RunOutcome::InDoubt(why)) => return TaskOutcome::Interrupted(why),
                    Some(RunOutcome::WaitingApproval(id)) => return TaskOutcome::WaitingApproval(id),
                    Some(_) | None => {}
                }
            }
            TaskOutcome::Succeeded("sent both".into())
        }
    });
    let task = c.hearth().tasks().create(super::support::new_task("mandated-send", &serde_json::json!({}))).await.unwrap();
    c.hearth()
        .mandate_grant(&MandateGrantParams {
            holder: MandateHolder::Task { task_id: TaskId::trusted(task.id.as_str()) },
            grant: MandateGrant::SendMail { recipients: vec!["friend@example.com".into()] },
            limit: 5,
            window: MandateWindow::Day,
            lasts_ms: 60 * 60 * 1000,
        })
        .await
        .unwrap();
    let engine = c.hearth().tasks().clone();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    super::support::engine_idle(&engine, &mut changes).await;

    assert_eq!(c.fixture.sent().len(), 1, "the first send reached Gmail, and nothing after it");
    let stopped = c.hearth().store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(stopped.status, TaskStatus::Interrupted, "{:?}", stopped.error);
    assert!(stopped.outcome_uncertain, "the task waits for the owner's review");
    let cards = c.hearth().approval_list().await.unwrap();
    assert_eq!(cards.len(), 1);
    assert_eq!(cards[0].status, ProposalStatus::OutcomeUnknown);
    assert!(cards[0].mandate_id.is_some());

    // The owner retries after review: the same step finds the same send in doubt and ends again.
    let retry = TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: stopped.status,
        expected_attempts: stopped.attempts,
        control: TaskControl::Retry { acknowledge_uncertain: true },
    };
    c.hearth().task_control(&retry).await.unwrap();
    engine.tick().await.unwrap();
    super::support::engine_idle(&engine, &mut changes).await;
    assert_eq!(c.fixture.sent().len(), 1, "the retried step sent nothing again");
    assert_eq!(c.hearth().store().get_task(&task.id).await.unwrap().unwrap().status, TaskStatus::Interrupted);
}

// Ideas read the chosen mailbox (issue 36, point 6).

#[tokio::test]
async fn ideas_come_from_the_chosen_google_inbox_and_accepting_one_makes_one_task() {
    use hearth_protocol::accounts::SAMPLE_ACCOUNT;
    use hearth_protocol::ideas::{IdeaAccepted, IdeaKind, IdeaParams};
    let c = connected(Access::Read).await;
    let hearth = c.hearth();
    let mail = |id: &str, subject: &str, text: &str, labels: &[&str], attachments| FixtureMail {
        id: id.into(),
        thread_id: format!("thr-{id}"),
        from: "Sam <sam@example.com>".into(),
        to: "owner@example.com".into(),
        subject: subject.into(),
        text: Some(text.into()),
        sent_at: 1_764_000_000_000,
        labels: labels.iter().map(|l| (*l).to_owned()).collect(),
        message_id: format!("{id}@example.com"),
        attachments,
        ..FixtureMail::default()
    };
    c.fixture.add_mail(mail("19a001", "Lunch?", "Are you free on Thursday for lunch?", &["INBOX"], Vec::new()));
    let form = ("trip-form.pdf".to_owned(), "application/pdf".to_owned(), hearth_core::workspace::seed::PERMISSION_FORM_PDF.to_vec());
    c.fixture.add_mail(mail("19a002", "Trip form", "Please fill the attached form.", &["INBOX"], vec![form]));
    // Archived (no INBOX label): read by nobody's idea.
    c.fixture.add_mail(mail("19a003", "Coffee?", "Shall we meet for coffee?", &["CATEGORY_PERSONAL"], Vec::new()));

    let ideas = hearth.idea_list().await.unwrap().ideas;
    let about = |kind: IdeaKind, id: &str| hearth_core::ideas::idea_id(kind, id);
    let ids: Vec<&str> = ideas.iter().map(|i| i.id.as_str()).collect();
    assert!(ids.contains(&about(IdeaKind::AnswerMeeting, "19a001").as_str()), "{ideas:?}");
    assert!(ids.contains(&about(IdeaKind::FillForm, "19a002").as_str()), "{ideas:?}");
    assert!(!ids.contains(&about(IdeaKind::AnswerMeeting, "19a003").as_str()), "an archived mail is no idea: {ideas:?}");
    assert!(!ideas.iter().any(|i| i.title.contains("Alvarez")), "the sample mailbox is not read while Google is chosen: {ideas:?}");
    // Listed by Gmail's INBOX label: the archived message was never even read.
    let paths = c.fixture.paths();
    let read = |id: &str| paths.iter().filter(|p| p.ends_with(&format!("/messages/{id}"))).count();
    assert_eq!((read("19a001"), read("19a002"), read("19a003")), (1, 1, 0), "{paths:?}");

    // Accepting the form idea twice makes one task, for the agent (the document workflow reads
    // only the sample mailbox), and its instructions name the message by id alone.
    let idea = IdeaParams { idea_id: about(IdeaKind::FillForm, "19a002") };
    let IdeaAccepted::Task(task_id) = hearth.idea_accept(&idea).await.unwrap() else { panic!("a task") };
    assert!(hearth.idea_accept(&idea).await.is_err(), "decided already");
    let tasks = hearth.store().list_tasks(50).await.unwrap();
    let made: Vec<_> = tasks.iter().filter(|t| t.id == task_id.as_str()).collect();
    assert_eq!((made.len(), made[0].kind), (1, hearth_protocol::tasks::TaskKind::Agent));
    let instructions = made[0].input["instructions"].as_str().unwrap();
    assert!(instructions.contains("19a002") && !instructions.contains("Trip form"), "{instructions}");

    // Back on the sample mailbox, its own ideas return and Gmail's are gone.
    hearth.account_choose(SAMPLE_ACCOUNT).await.unwrap();
    let ideas = hearth.idea_list().await.unwrap().ideas;
    assert!(ideas.iter().any(|i| i.kind == IdeaKind::FillForm && i.title.contains("Alvarez")), "{ideas:?}");
    assert!(!ideas.iter().any(|i| i.id == about(IdeaKind::AnswerMeeting, "19a001")), "{ideas:?}");
}
