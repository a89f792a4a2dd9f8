//! Signing in to Google against the loopback fixture (hearth-testkit `google`), which speaks
//! Google's OAuth wire protocol and checks PKCE S256 itself. Oracles: the fixture's counts of
//! token requests, the tokens it revoked, and the database file's bytes.

use std::time::Duration;

use hearth_core::store::Store;
use hearth_core::vault::{KeySource, Vault};
use hearth_core::workspace::google::oauth::{Access, ClientConfig, Endpoints, GoogleAuth, LoopbackRedirect, Revocation};
use hearth_testkit::google::{CLIENT_ID, CLIENT_SECRET, GoogleFixture};
use secrecy::ExposeSecret;
use tokio_util::sync::CancellationToken;

struct Setup {
    auth: GoogleAuth,
    fixture: GoogleFixture,
    dir: tempfile::TempDir,
}

async fn setup(expires_in: u64) -> Setup {
    setup_with(GoogleFixture::start(expires_in).await.unwrap()).await
}

async fn setup_with(fixture: GoogleFixture) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hearth.db"), Duration::from_secs(5)).await.unwrap();
    let vault = Vault::open(store.clone(), KeySource::file_in(dir.path())).await.unwrap();
    let base = fixture.base_url();
    let client = ClientConfig {
        client_id: CLIENT_ID.into(),
        client_secret: Some(CLIENT_SECRET.to_owned().into()),
        endpoints: Endpoints {
            auth_url: format!("{base}/o/oauth2/v2/auth"),
            token_url: format!("{base}/token"),
            revoke_url: format!("{base}/revoke"),
        },
    };
    Setup { auth: GoogleAuth::new(store, vault, client).unwrap(), fixture, dir }
}

/// The owner's browser: opens the consent page, which redirects to Hearth's loopback listener.
async fn consent(url: &str) -> reqwest::StatusCode {
    reqwest::get(url).await.unwrap().status()
}

/// The `state` a consent URL carries.
fn state_of(url: &str) -> String {
    url::Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned()
}

/// One sign-in up to the redirect: what came back.
async fn sign_in(auth: &GoogleAuth, access: Access) -> hearth_core::workspace::google::oauth::Callback {
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let url = auth.begin(access, redirect.uri()).await.unwrap();
    let cancel = CancellationToken::new();
    let state = state_of(&url);
    let (status, callback) = tokio::join!(consent(&url), redirect.next_callback(&state, &cancel));
    assert_eq!(status, reqwest::StatusCode::OK, "the listener thanked the browser");
    callback.unwrap()
}

#[tokio::test]
async fn a_sign_in_exchanges_its_code_once_with_pkce_and_keeps_tokens_only_sealed() {
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    assert_eq!(t.fixture.last_challenge_method().as_deref(), Some("S256"));
    assert_eq!(t.fixture.exchanges(), 1, "the fixture checked the verifier against the challenge and answered once");
    assert!(connection.scopes.iter().any(|s| s.ends_with("gmail.readonly")));
    assert!(!connection.scopes.iter().any(|s| s.ends_with("gmail.send")), "read access asks for no write scope");
    let token = t.auth.access_token(&connection.id).await.unwrap();
    assert!(token.expose_secret().starts_with("ya29."));
    assert_eq!(t.fixture.refreshes(), 0, "an hour left: no refresh");

    // The same redirect again (a replay): refused before anything reaches Google.
    let replay = t.auth.complete(&callback.code, &callback.state).await.unwrap_err();
    assert!(replay.to_string().contains("already used or was never started"), "{replay}");
    assert_eq!(t.fixture.exchanges(), 1);
    let first_code = callback.code.clone();
    let first_state = callback.state.clone();

    // A second connect is a new connection.
    let callback = sign_in(&t.auth, Access::ReadWrite).await;
    let second = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    assert_ne!(second.id, connection.id);
    assert!(second.scopes.iter().any(|s| s.ends_with("gmail.send")));
    assert!(second.missing.is_empty());

    // No token is in the database in the clear (its WAL included).
    let access = token.expose_secret().to_owned();
    for file in ["hearth.db", "hearth.db-wal"] {
        let raw = std::fs::read(t.dir.path().join(file)).unwrap_or_default();
        let verifiers = t.fixture.verifiers();
        let mut secrets = vec![access.as_str(), "1//refresh-", "ya29.access-", CLIENT_SECRET, first_code.as_str(), first_state.as_str()];
        secrets.extend(verifiers.iter().map(String::as_str));
        for secret in secrets {
            assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} is in {file} in the clear");
        }
    }

    // Disconnect revokes the grant at Google and forgets the tokens here.
    assert_eq!(t.auth.disconnect(&connection.id).await.unwrap(), Revocation::Confirmed);
    assert_eq!(t.fixture.revoked().len(), 1);
    assert!(t.fixture.revoked()[0].starts_with("1//refresh-"), "the refresh token is what is revoked");
    let gone = t.auth.access_token(&connection.id).await.unwrap_err();
    assert!(gone.to_string().contains("not connected"), "{gone}");
}

#[tokio::test]
async fn a_late_state_is_refused_and_its_code_never_exchanged() {
    let t = setup(3600).await;
    let late = t.auth.clone().with_state_ttl(Duration::ZERO);
    let callback = sign_in(&late, Access::Read).await;
    let refused = late.complete(&callback.code, &callback.state).await.unwrap_err();
    assert!(refused.to_string().contains("has expired"), "{refused}");
    // A state that was never started here either.
    let unknown = t.auth.complete(&callback.code, "forged-state").await.unwrap_err();
    assert!(unknown.to_string().contains("never started"), "{unknown}");
    assert_eq!(t.fixture.exchanges(), 0, "nothing was sent to Google");
    // The late sign-in's verifier went with its state: the vault holds none.
    let store = Store::open(&t.dir.path().join("hearth.db"), Duration::from_secs(5)).await.unwrap();
    let vault = Vault::open(store, KeySource::file_in(t.dir.path())).await.unwrap();
    assert!(!vault.names().await.unwrap().iter().any(|n| n.starts_with("oauth-verifier:")), "{:?}", vault.names().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_redirects_with_one_state_exchange_one_code() {
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let (a, b) = tokio::join!(t.auth.complete(&callback.code, &callback.state), t.auth.complete(&callback.code, &callback.state));
    assert_eq!(usize::from(a.is_ok()) + usize::from(b.is_ok()), 1, "exactly one completes: {a:?} / {b:?}");
    assert_eq!(t.fixture.exchanges(), 1);
}

#[tokio::test]
async fn the_listener_waits_out_other_states_and_idle_connections_and_reports_a_refusal() {
    let t = setup(3600).await;
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let url = t.auth.begin(Access::Read, redirect.uri()).await.unwrap();
    let state = state_of(&url);
    let cancel = CancellationToken::new();
    let waiting = redirect.next_callback(&state, &cancel);
    let visitor = async {
        // An idle connection first (it never sends a request), then a forged state and a
        // refusal with another state: none ends the wait.
        let _idle =
            tokio::net::TcpStream::connect(redirect.uri().trim_start_matches("http://").trim_end_matches("/callback")).await.unwrap();
        let forged = reqwest::get(format!("{}?code=4/evil&state=forged", redirect.uri())).await.unwrap();
        assert_eq!(forged.status(), reqwest::StatusCode::BAD_REQUEST);
        let other = reqwest::get(format!("{}?error=access_denied&state=other", redirect.uri())).await.unwrap();
        assert_eq!(other.status(), reqwest::StatusCode::BAD_REQUEST);
        // The owner's browser, with the real state.
        consent(&url).await
    };
    let (callback, status) = tokio::join!(waiting, visitor);
    assert_eq!(status, reqwest::StatusCode::OK);
    let callback = callback.unwrap();
    assert!(callback.code.starts_with("4/code-"), "the real code, not the forged one");
    t.auth.complete(&callback.code, &callback.state).await.unwrap();

    // Google's refusal on this sign-in's redirect ends the wait in words, not Google's text.
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let url = t.auth.begin(Access::Read, redirect.uri()).await.unwrap();
    let state = state_of(&url);
    let refusal = format!(
        "{}?error=access_denied&state={}",
        redirect.uri(),
        url::form_urlencoded::byte_serialize(state.as_bytes()).collect::<String>()
    );
    let (said, _) = tokio::join!(redirect.next_callback(&state, &cancel), reqwest::get(refusal));
    let said = said.unwrap_err().to_string();
    assert!(said.contains("You declined"), "{said}");
}

#[tokio::test]
async fn the_fixture_refuses_a_wrong_verifier() {
    // The fixture's own PKCE check, so the tests above lean on a check that exists.
    let t = setup(3600).await;
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let url = t.auth.begin(Access::Read, redirect.uri()).await.unwrap();
    let (state, cancel) = (state_of(&url), CancellationToken::new());
    let (_, callback) = tokio::join!(consent(&url), redirect.next_callback(&state, &cancel));
    let callback = callback.unwrap();
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &callback.code)
        .append_pair("redirect_uri", redirect.uri())
        .append_pair("code_verifier", "not-the-verifier-not-the-verifier-not-the-verifier")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("client_secret", CLIENT_SECRET)
        .finish();
    let answer = reqwest::Client::new()
        .post(format!("{}/token", t.fixture.base_url()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::BAD_REQUEST);
    assert!(answer.text().await.unwrap().contains("code_verifier does not match"));
}

#[tokio::test]
async fn a_grant_revoked_at_google_says_to_connect_again() {
    let t = setup_with(GoogleFixture::start_with_lifetimes(30, 3600).await.unwrap()).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    t.fixture.revoke_everything();
    let said = t.auth.access_token(&connection.id).await.unwrap_err().to_string();
    assert!(said.contains("connect the account again"), "{said}");
    assert_eq!(t.fixture.refreshes(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_callers_of_a_token_about_to_expire_share_one_refresh() {
    // The first token has 30 s left (under the one-minute margin); a refreshed one an hour.
    let t = setup_with(GoogleFixture::start_with_lifetimes(30, 3600).await.unwrap()).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let calls = (0..10).map(|_| {
        let auth = t.auth.clone();
        let id = connection.id.clone();
        tokio::spawn(async move { auth.access_token(&id).await.unwrap().expose_secret().to_owned() })
    });
    let tokens: Vec<String> = futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(t.fixture.refreshes(), 1, "one refresh served all ten");
    assert!(tokens.windows(2).all(|w| w[0] == w[1]), "every caller got the refreshed token: {tokens:?}");
    // And the next caller reads it without asking Google.
    assert_eq!(t.auth.access_token(&connection.id).await.unwrap().expose_secret(), tokens[0]);
    assert_eq!(t.fixture.refreshes(), 1);
}

#[tokio::test]
async fn gmail_search_and_threads_read_what_the_api_holds_and_html_becomes_text_without_fetching() {
    use hearth_core::workspace::google::gmail::Gmail;
    use hearth_testkit::google::FixtureMail;
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let tracker = format!("{}/tracker.png", t.fixture.base_url());
    t.fixture.add_mail(FixtureMail {
        id: "18c1a".into(),
        thread_id: "18c1a".into(),
        from: "Ana Lima <ana@example.com>".into(),
        to: "Owner <owner@example.org>, \"Bo, B.\" <bo@example.net>".into(),
        subject: "Permission form for Friday".into(),
        text: Some("Hi! Please sign the permission form by Friday.".into()),
        sent_at: 1_764_000_000_000,
        labels: vec!["INBOX".into()],
        attachments: vec![
            ("permission-form.pdf".into(), "application/pdf".into(), b"%PDF-1.7 form".to_vec()),
            ("map\u{202E}gpj.exe".into(), "image/jpeg".into(), b"\xff\xd8\xff".to_vec()),
        ],
        ..FixtureMail::default()
    });
    t.fixture.add_mail(FixtureMail {
        id: "18c2b".into(),
        thread_id: "18c1a".into(),
        from: "Owner <owner@example.org>".into(),
        to: "ana@example.com".into(),
        subject: "Re: Permission form for Friday".into(),
        html: Some(format!(
            "<html><body><script>alert('run me')</script><p>Hello <b>Ana</b>, the permission form is signed.</p><img src=\"{tracker}\"></body></html>"
        )),
        sent_at: 1_764_000_600_000,
        labels: vec!["SENT".into()],
        ..FixtureMail::default()
    });
    t.fixture.add_mail(FixtureMail {
        id: "18c3c".into(),
        thread_id: "18c3c".into(),
        from: "news@example.com".into(),
        to: "owner@example.org".into(),
        subject: "Weekly news".into(),
        text: Some("Nothing about forms. Café in München, 5 €?".into()),
        latin1: true,
        sent_at: 1_764_001_000_000,
        labels: vec!["INBOX".into()],
        ..FixtureMail::default()
    });
    // Added after the others but between them in time; and an unsent draft, which is not mail.
    t.fixture.add_mail(FixtureMail {
        id: "18c4d".into(),
        thread_id: "18c1a".into(),
        from: "Bo <bo@example.net>".into(),
        to: "ana@example.com".into(),
        subject: "Re: Permission form for Friday".into(),
        text: Some("I can drive on Friday.".into()),
        sent_at: 1_764_000_300_000,
        labels: vec!["INBOX".into()],
        ..FixtureMail::default()
    });
    t.fixture.add_mail(FixtureMail {
        id: "18c5e".into(),
        thread_id: "18c1a".into(),
        from: "Owner <owner@example.org>".into(),
        to: "ana@example.com".into(),
        subject: "Re: Permission form for Friday".into(),
        text: Some("Unsent draft about the permission form".into()),
        sent_at: 1_764_000_900_000,
        labels: vec!["DRAFT".into()],
        ..FixtureMail::default()
    });
    let gmail = Gmail::new(t.auth.clone(), &connection.id, &t.fixture.base_url()).unwrap();

    let found = gmail.search("permission form").await.unwrap();
    let ids: Vec<&str> = found.matches.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, ["18c2b", "18c4d", "18c1a"], "newest first (the fixture lists them as added), the news and the draft left out");
    assert!(!found.truncated);
    let first = &found.matches[2];
    assert_eq!(
        (first.from.as_str(), first.subject.as_str(), first.attachments),
        ("Ana Lima <ana@example.com>", "Permission form for Friday", 2)
    );
    assert_eq!(first.snippet, "Hi! Please sign the permission form by Friday.");
    assert_eq!(first.sent_at, 1_764_000_000_000);

    let thread = gmail.thread("18c1a").await.unwrap();
    let order: Vec<&str> = thread.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(order, ["18c1a", "18c4d", "18c2b"], "oldest first by date, the draft left out");
    let (asked, answered) = (&thread.messages[0], &thread.messages[2]);
    assert_eq!(asked.to, ["owner@example.org", "bo@example.net"], "a quoted name with a comma is one address");
    assert_eq!(asked.folder, "inbox");
    assert_eq!(asked.attachments.len(), 2);
    assert_eq!((asked.attachments[0].id.as_str(), asked.attachments[0].filename.as_str()), ("18c1a.1", "permission-form.pdf"));
    assert_eq!(asked.attachments[1].filename, "map_gpj.exe", "its own extension, the bidi override gone");
    assert_eq!(answered.folder, "sent");
    assert!(answered.body.contains("Hello") && answered.body.contains("Ana") && answered.body.contains("signed"), "{}", answered.body);
    assert!(!answered.body.contains("run me"), "a script is not text: {}", answered.body);
    assert!(!t.fixture.paths().iter().any(|p| p == "/tracker.png"), "nothing in the mail was fetched");

    // A part in ISO-8859-1 reads as its text (the euro sign has no Latin-1 byte: "?").
    let news = gmail.thread("18c3c").await.unwrap();
    assert_eq!(news.messages[0].body, "Nothing about forms. Café in München, 5 ??");

    // An id that is not Gmail's is refused before any request.
    let before = t.fixture.paths().len();
    assert!(gmail.thread("../messages/18c1a").await.is_err());
    assert_eq!(t.fixture.paths().len(), before);
    // A connection Hearth does not have sends nothing.
    let stranger = Gmail::new(t.auth.clone(), "no-such-connection", &t.fixture.base_url()).unwrap();
    let said = stranger.search("form").await.unwrap_err().to_string();
    assert!(said.contains("not connected"), "{said}");
    assert_eq!(t.fixture.paths().len(), before);
    // Access removed at Google: Gmail answers 401, and the owner is told to connect again.
    t.fixture.revoke_everything();
    let said = gmail.search("form").await.unwrap_err().to_string();
    assert!(said.contains("connect the account again"), "{said}");
    assert_eq!(t.fixture.paths().len(), before + 1, "one refused request");
}

/// Gmail's send has no idempotency key: a send whose answer is lost is uncertain, never
/// "failed", and the message's own Message-ID, read back from the message, finds it in Sent —
/// so it is never sent twice; finding nothing proves nothing. Oracle: the messages the fixture
/// took, by its own ids.
#[tokio::test]
async fn a_send_whose_answer_is_lost_is_uncertain_and_its_message_id_finds_it_in_sent() {
    use hearth_core::workspace::google::gmail::{Gmail, Reconciled, SendError};
    use hearth_core::workspace::google::mime::{Outgoing, build, message_id_for};
    use hearth_testkit::google::{FixtureMail, SendMode};
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::ReadWrite).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let gmail = Gmail::new(t.auth.clone(), &connection.id, &t.fixture.base_url()).unwrap();
    let message = |proposal: &str| {
        let message_id = message_id_for(proposal, "owner@example.org");
        let raw = build(&Outgoing {
            from: "owner@example.org".into(),
            to: vec!["ana@example.com".into()],
            cc: vec![],
            bcc: vec![],
            subject: "Signed form".into(),
            body: "Attached.".into(),
            attachments: vec![],
            in_reply_to: None,
            references: vec![],
            message_id: message_id.clone(),
        })
        .unwrap();
        (message_id, raw)
    };

    // Answered: sent, its Message-ID kept, and found again by it.
    let (first_id, first) = message("p-answered");
    let sent = gmail.send(&first, None).await.unwrap();
    assert!(sent.message_id_kept, "read back from the sent message");
    assert_eq!(t.fixture.sent_ids(), std::slice::from_ref(&sent.id));
    assert_eq!(gmail.find_sent(&first_id, 0).await.unwrap(), Reconciled::Found { id: sent.id.clone(), copies: 1 });

    // Refused before Gmail took it: nothing was sent. So is a send that never connected.
    t.fixture.set_send_mode(SendMode::Refuse);
    let (_, refused) = message("p-refused");
    assert!(matches!(gmail.send(&refused, None).await, Err(SendError::Refused(_))));
    let nowhere = Gmail::new(t.auth.clone(), &connection.id, "http://127.0.0.1:9").unwrap();
    assert!(matches!(nowhere.send(&refused, None).await, Err(SendError::Refused(_))), "a connect that failed sent nothing");
    assert_eq!(t.fixture.sent().len(), 1, "the refused message was not taken");

    // Gmail takes the message and the connection breaks before its answer: uncertain. A 503
    // after taking it: uncertain too.
    t.fixture.set_send_mode(SendMode::DropConnection);
    let (lost_id, lost) = message("p-lost");
    assert!(matches!(gmail.send(&lost, None).await, Err(SendError::Uncertain(_))), "a lost answer is uncertain");
    t.fixture.set_send_mode(SendMode::Unavailable);
    let (busy_id, busy) = message("p-503");
    assert!(matches!(gmail.send(&busy, None).await, Err(SendError::Uncertain(_))));
    let taken = t.fixture.sent_ids();
    assert_eq!(taken.len(), 3, "each message was taken once");

    // Reconciliation finds each uncertain one in Sent — the very message the fixture took.
    assert_eq!(gmail.find_sent(&lost_id, 0).await.unwrap(), Reconciled::Found { id: taken[1].clone(), copies: 1 });
    assert_eq!(gmail.find_sent(&format!("<{busy_id}>"), 0).await.unwrap(), Reconciled::Found { id: taken[2].clone(), copies: 1 });
    // A received message carrying the id is not a sent one; a sent one in the bin still went.
    let never = message_id_for("p-never", "owner@example.org");
    t.fixture.add_mail(FixtureMail {
        id: "19aa".into(),
        thread_id: "19aa".into(),
        labels: vec!["INBOX".into()],
        message_id: never.clone(),
        ..FixtureMail::default()
    });
    assert_eq!(gmail.find_sent(&never, 0).await.unwrap(), Reconciled::NotFound { complete: true });
    let binned = message_id_for("p-binned", "owner@example.org");
    t.fixture.add_mail(FixtureMail {
        id: "19bb".into(),
        thread_id: "19bb".into(),
        labels: vec!["SENT".into(), "TRASH".into()],
        message_id: binned.clone(),
        ..FixtureMail::default()
    });
    assert_eq!(gmail.find_sent(&binned, 0).await.unwrap(), Reconciled::Found { id: "19bb".into(), copies: 1 });
    assert!(gmail.find_sent("x\" OR in:inbox", 0).await.is_err(), "only a Message-ID Hearth made is searched for");

    // Gmail replacing the id is seen at once; the search by Hearth's id finds nothing, but the
    // message still carries Hearth's mark, which Gmail keeps: found by that, read back.
    t.fixture.set_send_mode(SendMode::RewriteMessageId);
    let (rewritten_id, rewritten) = message("p-rewritten");
    let sent = gmail.send(&rewritten, None).await.unwrap();
    assert!(!sent.message_id_kept);
    assert!(sent.mark_kept);
    assert_eq!(gmail.find_sent(&rewritten_id, 0).await.unwrap(), Reconciled::Found { id: sent.id, copies: 1 });
    assert_eq!(t.fixture.sent().len(), 4);
}

/// Google Calendar's events in a window: occurrences in order, all-day days in the calendar's
/// own zone, cancelled occurrences left out, at most 20 with the rest said to be there; a group
/// calendar's address reaches the calendar as one path segment.
#[tokio::test]
async fn calendar_events_come_in_order_with_all_day_days_in_the_calendars_zone() {
    use hearth_core::workspace::google::calendar::Calendar;
    use hearth_testkit::google::FixtureEvent;
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let calendar = Calendar::new(t.auth.clone(), &connection.id, &t.fixture.base_url()).unwrap();
    t.fixture.set_calendar_zone("Europe/Berlin");
    let timed = |id: &str, start: &str, end: &str, status: &str| FixtureEvent {
        id: id.into(),
        calendar_id: "primary".into(),
        summary: format!("event {id}"),
        status: status.into(),
        timed: Some((start.into(), end.into())),
        ..FixtureEvent::default()
    };
    // Added out of order: the client's order is by start.
    t.fixture.add_event(timed("late", "2026-12-02T15:00:00Z", "2026-12-02T16:00:00Z", "confirmed"));
    t.fixture.add_event(timed("early", "2026-12-01T08:00:00Z", "2026-12-01T09:00:00Z", "confirmed"));
    t.fixture.add_event(timed("dropped", "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z", "cancelled"));
    t.fixture.add_event(timed("outside", "2026-12-09T10:00:00Z", "2026-12-09T11:00:00Z", "confirmed"));
    t.fixture.add_event(FixtureEvent {
        id: "holiday".into(),
        calendar_id: "primary".into(),
        summary: "School holiday".into(),
        status: "confirmed".into(),
        all_day: Some(("2026-12-02".into(), "2026-12-03".into())),
        ..FixtureEvent::default()
    });
    let ms = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis();
    let page = calendar.events("primary", ms("2026-12-01T00:00:00Z"), ms("2026-12-08T00:00:00Z")).await.unwrap();
    let ids: Vec<&str> = page.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["early", "holiday", "late"], "by start, the cancelled and the outside one left out");
    assert!(!page.truncated);
    let holiday = &page.events[1];
    assert_eq!(holiday.starts_at, ms("2026-12-01T23:00:00Z"), "midnight in Berlin, not in UTC");
    assert_eq!(holiday.ends_at - holiday.starts_at, 24 * 3_600_000);

    // A busy week: 20 shown, the rest said to be there.
    for n in 0..25 {
        t.fixture.add_event(FixtureEvent {
            id: format!("busy{n:02}"),
            calendar_id: "team@group.calendar.google.com".into(),
            summary: "Stand-up".into(),
            status: "confirmed".into(),
            timed: Some((format!("2026-12-03T{:02}:00:00Z", n % 24), format!("2026-12-03T{:02}:30:00Z", n % 24))),
            ..FixtureEvent::default()
        });
    }
    let busy = calendar.events("team@group.calendar.google.com", ms("2026-12-01T00:00:00Z"), ms("2026-12-08T00:00:00Z")).await.unwrap();
    assert_eq!(busy.events.len(), 20);
    assert!(busy.truncated);
    assert!(busy.events.windows(2).all(|w| w[0].starts_at <= w[1].starts_at));
    assert!(busy.events.iter().all(|e| e.calendar_id == "team@group.calendar.google.com"));

    assert!(
        calendar.events("primary", ms("2026-12-08T00:00:00Z"), ms("2026-12-01T00:00:00Z")).await.is_err(),
        "a window that ends before it starts"
    );
    assert!(calendar.events("primary", 0, ms("2026-12-01T00:00:00Z")).await.is_err(), "more than 366 days");
}

/// A message past the JSON form's size goes through Gmail's multipart upload, whole: the fixture
/// receives exactly the bytes built, in the conversation named, by the upload path.
#[tokio::test]
async fn a_large_message_is_uploaded_whole_into_its_conversation() {
    use hearth_core::workspace::google::gmail::Gmail;
    use hearth_core::workspace::google::mime::{Attachment, Outgoing, build, message_id_for};
    use sha2::{Digest, Sha256};
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::ReadWrite).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let gmail = Gmail::new(t.auth.clone(), &connection.id, &t.fixture.base_url()).unwrap();
    // 6 MiB that is not all one byte, so its base64 cannot collapse into something trivial.
    let scan: Vec<u8> = (0..6 * 1024 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let raw = build(&Outgoing {
        from: "owner@example.org".into(),
        to: vec!["ana@example.com".into()],
        cc: vec![],
        bcc: vec![],
        subject: "The scans".into(),
        body: "All six pages.".into(),
        attachments: vec![Attachment { name: "scans.pdf".into(), content_type: "application/pdf".into(), bytes: scan.clone() }],
        in_reply_to: None,
        references: vec![],
        message_id: message_id_for("p-large", "owner@example.org"),
    })
    .unwrap();
    assert!(raw.len() > 4 * 1024 * 1024);
    let sent = gmail.send(&raw, Some("18aa00")).await.unwrap();
    assert_eq!(sent.thread_id, "18aa00", "the metadata part named the conversation");
    assert!(t.fixture.paths().iter().any(|p| p == "/upload/gmail/v1/users/me/messages/send"), "{:?}", t.fixture.paths());
    assert!(!t.fixture.paths().iter().any(|p| p == "/gmail/v1/users/me/messages/send"));
    assert_eq!(t.fixture.sent(), std::slice::from_ref(&raw), "exactly the bytes built");
    let received = t.fixture.sent().remove(0);
    let parsed = mail_parser::MessageParser::default().parse(&received).unwrap();
    let attached = parsed.attachments().next().unwrap();
    assert_eq!(Sha256::digest(attached.contents()), Sha256::digest(&scan));
}
