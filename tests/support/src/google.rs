//! Google's OAuth 2.0 endpoints on loopback, with their real request and response shapes:
//!
//! - `GET /o/oauth2/v2/auth?client_id&redirect_uri&response_type=code&scope&state&code_challenge&code_challenge_method=S256…`
//!   answers as the consent page would once the owner agreed: `302` to `redirect_uri?code=…&state=…`;
//! - `POST /token` (form-encoded): `grant_type=authorization_code` checks the code, the client
//!   and that `SHA-256(code_verifier)` is the challenge the authorization carried (RFC 7636);
//!   `grant_type=refresh_token` mints a new access token; errors are Google's JSON
//!   (`{"error": "invalid_grant", "error_description": …}`, status 400);
//! - `POST /revoke` (form `token=…`);
//! - Gmail: `GET /gmail/v1/users/me/messages?q&maxResults`, `…/messages/{id}?format=full` and
//!   `…/threads/{id}?format=full`, in Gmail's JSON (payload parts, base64url bodies), for the
//!   messages a test adds ([`FixtureMail`]), only with a Bearer token this fixture issued.
//!
//! - Gmail's `POST /gmail/v1/users/me/messages/send` (`{"raw": base64url, "threadId"?}`): the
//!   message lands in the mailbox with the `SENT` label and its `Message-ID`, found again by
//!   `q=rfc822msgid:<id>`; [`SendMode`] can make it accept and then break the connection, or
//!   accept and answer 503, as a lost answer would look.
//!
//! - Calendar: `GET /calendar/v3/calendars/{id}/events?timeMin&timeMax&singleEvents&orderBy&maxResults`
//!   for the events a test adds ([`FixtureEvent`]), refusing `orderBy=startTime` without
//!   `singleEvents=true` as Google does, in the calendar's own `timeZone`.
//!
//! Counts every token request by grant type, and every send it took, so tests assert effects
//! (one exchange, one refresh, one message sent).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use serde_json::json;
use sha2::{Digest, Sha256};

/// What the fixture has seen and handed out.
#[derive(Debug, Default)]
struct State {
    /// code → (challenge, redirect_uri, scope, offline access asked)
    codes: HashMap<String, (String, String, String, bool)>,
    /// The verifiers token requests carried (for tests that look for them where they must not be).
    verifiers: Vec<String>,
    refresh_tokens: Vec<String>,
    exchanges: usize,
    refreshes: usize,
    revoked: Vec<String>,
    next: u64,
    /// Seconds an access token from a code exchange lives.
    expires_in: u64,
    /// Seconds a refreshed access token lives.
    refreshed_expires_in: u64,
    /// The `code_challenge_method` of the last authorization.
    last_method: Option<String>,
    /// Access tokens issued and not revoked.
    access_tokens: Vec<String>,
    /// The mailbox.
    mail: Vec<FixtureMail>,
    /// Every path requested, in order.
    paths: Vec<String>,
    /// How a send is answered.
    send_mode: SendMode,
    /// The raw messages sent, in order.
    sent: Vec<Vec<u8>>,
    /// Their ids.
    sent_ids: Vec<String>,
    /// The calendar's events, in the order added.
    events: Vec<FixtureEvent>,
    /// The calendar's zone (`UTC` unless a test sets one).
    calendar_zone: Option<String>,
    /// How inserts are answered.
    write_mode: WriteMode,
    /// Event writes taken (insert, update, delete), as `(method, event id)`, in order.
    event_writes: Vec<(String, String)>,
    /// The account's address (`users/me/profile`).
    account: String,
    /// The search index lags: messages sent through the fixture are not found by `q=` yet.
    search_lags: bool,
}

/// An event in the fixture's calendar. Times are RFC 3339 in UTC (`Z`), or all-day dates.
#[derive(Debug, Clone, Default)]
pub struct FixtureEvent {
    /// Google's event id.
    pub id: String,
    /// The calendar it is in (`primary`, or an address).
    pub calendar_id: String,
    /// `summary`.
    pub summary: String,
    /// `confirmed`, `tentative` or `cancelled`.
    pub status: String,
    /// A timed event's start and end (`2026-12-01T09:00:00Z`).
    pub timed: Option<(String, String)>,
    /// An all-day event's first day and the day after its last (`2026-12-01`).
    pub all_day: Option<(String, String)>,
    /// `location`.
    pub location: String,
    /// `description`.
    pub description: String,
    /// Invitees' addresses.
    pub attendees: Vec<String>,
    /// The event's zone (`start.timeZone`), empty for none.
    pub time_zone: String,
    /// An occurrence of a recurring event (`recurringEventId` set).
    pub recurring: bool,
    /// `extendedProperties.private`.
    pub private: Vec<(String, String)>,
    /// Its version; the fixture sets a fresh one on every write (empty: one is made up).
    pub etag: String,
    /// `colorId`: a field Hearth never writes, so a change that clears it shows.
    pub color_id: String,
}

/// How the fixture answers an event insert or change once it has made it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WriteMode {
    /// 200 with the event.
    #[default]
    Answer,
    /// The connection is closed with no answer (the event is kept: it was created).
    DropConnection,
}

/// How the fixture answers `messages.send` once it has taken the message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SendMode {
    /// 200 with the message's id.
    #[default]
    Answer,
    /// The connection is closed with no answer (the message is kept: it was sent).
    DropConnection,
    /// 503 (the message is kept).
    Unavailable,
    /// 400, and the message is not kept (Gmail refused it before taking it).
    Refuse,
    /// The connection is closed with no answer and the message is **not** kept: the request was
    /// lost on the way (nothing was sent, though Hearth cannot tell).
    LoseRequest,
    /// 200, but the message is kept under a Message-ID of Gmail's own (as Gmail is reported to
    /// do): a search by Hearth's id finds nothing.
    RewriteMessageId,
    /// [`SendMode::RewriteMessageId`], and the connection is closed with no answer (the message
    /// is kept: it was sent).
    RewriteMessageIdDropConnection,
}

/// A message in the fixture's mailbox.
#[derive(Debug, Clone, Default)]
pub struct FixtureMail {
    /// Gmail's message id (hex).
    pub id: String,
    /// Its thread.
    pub thread_id: String,
    /// `From`.
    pub from: String,
    /// `To`, as the header says it.
    pub to: String,
    /// `Subject`.
    pub subject: String,
    /// A text/plain part.
    pub text: Option<String>,
    /// A text/html part.
    pub html: Option<String>,
    /// Unix ms.
    pub sent_at: i64,
    /// `INBOX`, `SENT`, …
    pub labels: Vec<String>,
    /// (file name, MIME type, bytes).
    pub attachments: Vec<(String, String, Vec<u8>)>,
    /// The text parts go in ISO-8859-1 (as Gmail passes such a part through), not UTF-8.
    pub latin1: bool,
    /// Its `Message-ID` header, without the angle brackets (a sent message's).
    pub message_id: String,
    /// Its `References` header as written (empty: none).
    pub references: String,
    /// Its `In-Reply-To` header as written (empty: none).
    pub in_reply_to: String,
    /// Its `X-Hearth-Operation` header as written (empty: none). Gmail keeps a sent message's
    /// own headers, in [`SendMode::RewriteMessageId`] too.
    pub operation: String,
}

/// The fixture. Dropping it stops it.
pub struct GoogleFixture {
    address: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for GoogleFixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The client the fixture accepts.
pub const CLIENT_ID: &str = "hearth-test.apps.googleusercontent.com";
/// Its secret.
pub const CLIENT_SECRET: &str = "GOCSPX-test-secret";

impl GoogleFixture {
    /// Listens on a free loopback port; access tokens live `expires_in` seconds.
    pub async fn start(expires_in: u64) -> std::io::Result<Self> {
        Self::start_with_lifetimes(expires_in, expires_in).await
    }

    /// Tokens from a code exchange live `exchanged` seconds, refreshed ones `refreshed`.
    pub async fn start_with_lifetimes(exchanged: u64, refreshed: u64) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State { expires_in: exchanged, refreshed_expires_in: refreshed, ..State::default() }));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move {
                            // No answer at all: hyper closes the connection, as a lost answer looks.
                            answer(&state, request).await.ok_or_else(|| std::io::Error::other("the fixture drops this connection"))
                        }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { address, state, task })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Code exchanges received (valid or not).
    pub fn exchanges(&self) -> usize {
        self.lock().exchanges
    }

    /// Refresh requests received.
    pub fn refreshes(&self) -> usize {
        self.lock().refreshes
    }

    /// Tokens revoked.
    pub fn revoked(&self) -> Vec<String> {
        self.lock().revoked.clone()
    }

    /// Puts `mail` in the mailbox.
    pub fn add_mail(&self, mail: FixtureMail) {
        self.lock().mail.push(mail);
    }

    /// Every path requested so far.
    pub fn paths(&self) -> Vec<String> {
        self.lock().paths.clone()
    }

    /// The verifiers code exchanges carried.
    pub fn verifiers(&self) -> Vec<String> {
        self.lock().verifiers.clone()
    }

    /// The owner removes the app's access at Google: every refresh and access token stops working.
    pub fn revoke_everything(&self) {
        let mut s = self.lock();
        s.refresh_tokens.clear();
        s.access_tokens.clear();
    }

    /// The `code_challenge_method` of the last authorization.
    pub fn last_challenge_method(&self) -> Option<String> {
        self.lock().last_method.clone()
    }

    /// Adds an event to the calendar.
    pub fn add_event(&self, mut event: FixtureEvent) {
        let mut s = self.lock();
        if event.etag.is_empty() {
            s.next += 1;
            event.etag = format!("\"{}\"", 1_000_000 + s.next);
        }
        s.events.push(event);
    }

    /// The calendar's time zone (an IANA name).
    pub fn set_calendar_zone(&self, zone: &str) {
        self.lock().calendar_zone = Some(zone.to_owned());
    }

    /// How sends are answered from now on.
    pub fn set_send_mode(&self, mode: SendMode) {
        self.lock().send_mode = mode;
    }

    /// The raw messages `messages.send` took, in order.
    pub fn sent(&self) -> Vec<Vec<u8>> {
        self.lock().sent.clone()
    }

    /// Gmail's ids of the messages `messages.send` took, in order.
    pub fn sent_ids(&self) -> Vec<String> {
        self.lock().sent_ids.clone()
    }

    /// From now on the search index lags behind sends: `q=rfc822msgid:` finds none of the
    /// messages `messages.send` took (listing by label still does), as right after a send.
    pub fn set_search_lag(&self, lags: bool) {
        self.lock().search_lags = lags;
    }

    /// How event inserts and changes are answered from now on.
    pub fn set_write_mode(&self, mode: WriteMode) {
        self.lock().write_mode = mode;
    }

    /// The event writes taken, as `(method, event id)`, in order.
    pub fn event_writes(&self) -> Vec<(String, String)> {
        self.lock().event_writes.clone()
    }

    /// The calendar's events as they are now (a deleted one has status `cancelled`).
    pub fn events(&self) -> Vec<FixtureEvent> {
        self.lock().events.clone()
    }

    /// Someone else renames event `id` in Google Calendar (a new etag; not counted as a write).
    pub fn rename_event(&self, id: &str, summary: &str) {
        let mut s = self.lock();
        s.next += 1;
        let etag = format!("\"{}\"", 2_000_000 + s.next);
        if let Some(event) = s.events.iter_mut().find(|e| e.id == id) {
            event.summary = summary.to_owned();
            event.etag = etag;
        }
    }

    /// The address `users/me/profile` answers (`owner@example.com` unless set).
    pub fn set_account(&self, account: &str) {
        self.lock().account = account.to_owned();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn text(status: StatusCode, body: String, content_type: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert("content-type", value);
    }
    response
}

fn error(description: &str) -> Response<Full<Bytes>> {
    text(StatusCode::BAD_REQUEST, json!({ "error": "invalid_grant", "error_description": description }).to_string(), "application/json")
}

fn form(raw: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(raw).into_owned().collect()
}

async fn answer(state: &Mutex<State>, request: Request<hyper::body::Incoming>) -> Option<Response<Full<Bytes>>> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if method == hyper::Method::POST && (path == "/gmail/v1/users/me/messages/send" || path == "/upload/gmail/v1/users/me/messages/send") {
        return send(state, request).await;
    }
    if path.starts_with("/calendar/v3/calendars/") && (method != hyper::Method::GET || path.matches('/').count() > 5) {
        return event_request(state, request).await;
    }
    Some(answer_request(state, request).await)
}

/// `messages.send`: takes the message (counted, kept with `SENT`), then answers as
/// [`SendMode`] says.
async fn send(state: &Mutex<State>, request: Request<hyper::body::Incoming>) -> Option<Response<Full<Bytes>>> {
    let lock = || state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    lock().paths.push(request.uri().path().to_owned());
    let bearer =
        request.headers().get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_owned);
    if !bearer.as_ref().is_some_and(|b| lock().access_tokens.contains(b)) {
        return Some(text(
            StatusCode::UNAUTHORIZED,
            json!({ "error": { "code": 401, "status": "UNAUTHENTICATED" } }).to_string(),
            "application/json",
        ));
    }
    let upload = request.uri().path().starts_with("/upload/");
    let multipart = request.uri().query().is_some_and(|q| q.split('&').any(|p| p == "uploadType=multipart"));
    let content_type = request.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let invalid = || {
        Some(text(StatusCode::BAD_REQUEST, json!({ "error": { "code": 400, "message": "Invalid raw" } }).to_string(), "application/json"))
    };
    // The JSON form (`raw`, base64url) or Gmail's multipart upload (metadata, then the message).
    let (parsed, raw): (serde_json::Value, Vec<u8>) = if upload {
        let Some(boundary) = content_type.strip_prefix("multipart/related; boundary=").filter(|_| multipart) else { return invalid() };
        let Some((metadata, raw)) = related_parts(&body, boundary) else { return invalid() };
        (serde_json::from_slice(&metadata).unwrap_or_default(), raw)
    } else {
        let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let Some(raw) = parsed["raw"].as_str().and_then(|r| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(r).ok()) else {
            return invalid();
        };
        (parsed, raw)
    };
    let header = |name: &str| -> String {
        let head = raw.split(|b| *b == b'\n').take_while(|l| !l.is_empty() && *l != b"\r");
        head.filter_map(|l| std::str::from_utf8(l).ok())
            .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim().to_owned()))
            .unwrap_or_default()
    };
    let mut s = lock();
    if s.send_mode == SendMode::LoseRequest {
        return None;
    }
    if s.send_mode == SendMode::Refuse {
        return Some(text(
            StatusCode::BAD_REQUEST,
            json!({ "error": { "code": 400, "message": "Invalid To header", "status": "INVALID_ARGUMENT", "errors": [{ "reason": "invalidArgument" }] } }).to_string(),
            "application/json",
        ));
    }
    s.next += 1;
    let id = format!("{:016x}", 0x5e00 + s.next);
    let kept_id = if matches!(s.send_mode, SendMode::RewriteMessageId | SendMode::RewriteMessageIdDropConnection) {
        format!("CAG{}@mail.gmail.com", s.next)
    } else {
        header("Message-ID").trim_start_matches('<').trim_end_matches('>').to_owned()
    };
    let thread_id = parsed["threadId"].as_str().map_or_else(|| id.clone(), str::to_owned);
    s.mail.push(FixtureMail {
        id: id.clone(),
        thread_id: thread_id.clone(),
        from: header("From"),
        to: header("To"),
        subject: header("Subject"),
        labels: vec!["SENT".into()],
        message_id: kept_id,
        references: header("References"),
        in_reply_to: header("In-Reply-To"),
        operation: header("X-Hearth-Operation"),
        // Gmail dates a sent message when it takes it.
        sent_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        ..FixtureMail::default()
    });
    s.sent.push(raw);
    s.sent_ids.push(id.clone());
    match s.send_mode {
        SendMode::Answer | SendMode::RewriteMessageId | SendMode::Refuse | SendMode::LoseRequest => {
            Some(text(StatusCode::OK, json!({ "id": id, "threadId": thread_id, "labelIds": ["SENT"] }).to_string(), "application/json"))
        }
        SendMode::DropConnection | SendMode::RewriteMessageIdDropConnection => None,
        SendMode::Unavailable => Some(text(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "error": { "code": 503, "message": "Backend Error" } }).to_string(),
            "application/json",
        )),
    }
}

/// The two parts of a `multipart/related` upload: the JSON metadata and the message.
fn related_parts(body: &[u8], boundary: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let delimiter = format!("--{boundary}");
    let find = |from: usize, needle: &[u8]| body[from..].windows(needle.len()).position(|w| w == needle).map(|p| p + from);
    let mut parts = Vec::new();
    let mut at = find(0, delimiter.as_bytes())? + delimiter.len();
    loop {
        if body[at..].starts_with(b"--") {
            break;
        }
        let start = find(at, b"\r\n\r\n")? + 4;
        let end = find(start, format!("\r\n{delimiter}").as_bytes())?;
        parts.push(body[start..end].to_vec());
        at = end + 2 + delimiter.len();
    }
    let mut parts = parts.into_iter();
    Some((parts.next()?, parts.next()?))
}

async fn answer_request(state: &Mutex<State>, request: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let lock = || state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = request.uri().path().to_owned();
    lock().paths.push(path.clone());
    let bearer =
        request.headers().get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_owned);
    let query = form(request.uri().query().unwrap_or_default().as_bytes());
    let basic = request.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body = form(&body);
    match path.as_str() {
        "/o/oauth2/v2/auth" => {
            let (Some(redirect), Some(challenge), Some(state_param)) =
                (query.get("redirect_uri"), query.get("code_challenge"), query.get("state"))
            else {
                return text(StatusCode::BAD_REQUEST, "missing redirect_uri, code_challenge or state".into(), "text/plain");
            };
            if query.get("client_id").map(String::as_str) != Some(CLIENT_ID)
                || query.get("response_type").map(String::as_str) != Some("code")
            {
                return text(StatusCode::BAD_REQUEST, "unknown client or response type".into(), "text/plain");
            }
            let mut s = lock();
            s.next += 1;
            let code = format!("4/code-{}", s.next);
            s.last_method = query.get("code_challenge_method").cloned();
            let offline = query.get("access_type").map(String::as_str) == Some("offline");
            s.codes.insert(code.clone(), (challenge.clone(), redirect.clone(), query.get("scope").cloned().unwrap_or_default(), offline));
            let mut to = url::Url::parse(redirect).map_or_else(|_| redirect.clone(), |u| u.to_string());
            to.push_str(if to.contains('?') { "&" } else { "?" });
            to.push_str(
                &url::form_urlencoded::Serializer::new(String::new()).append_pair("code", &code).append_pair("state", state_param).finish(),
            );
            let mut response = text(StatusCode::FOUND, String::new(), "text/plain");
            if let Ok(value) = to.parse() {
                response.headers_mut().insert("location", value);
            }
            response
        }
        "/token" => {
            // The client authenticates with HTTP Basic (the oauth2 crate's default) or in the body.
            let basic_ok = basic.as_deref().is_some_and(|b| {
                b.strip_prefix("Basic ")
                    .and_then(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
                    .is_some_and(|d| d == format!("{CLIENT_ID}:{CLIENT_SECRET}").into_bytes())
            });
            let body_ok = body.get("client_id").map(String::as_str) == Some(CLIENT_ID)
                && body.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET);
            if !basic_ok && !body_ok {
                return text(StatusCode::UNAUTHORIZED, json!({ "error": "invalid_client" }).to_string(), "application/json");
            }
            let mut s = lock();
            match body.get("grant_type").map(String::as_str) {
                Some("authorization_code") => {
                    s.exchanges += 1;
                    let Some(code) = body.get("code") else { return error("no code") };
                    let Some((challenge, redirect, scope, offline)) = s.codes.remove(code) else {
                        return error("the code is unknown or used");
                    };
                    if body.get("redirect_uri") != Some(&redirect) {
                        return error("redirect_uri mismatch");
                    }
                    let Some(verifier) = body.get("code_verifier") else { return error("no code_verifier") };
                    s.verifiers.push(verifier.clone());
                    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                    if computed != challenge {
                        return error("code_verifier does not match the code_challenge");
                    }
                    s.next += 1;
                    let access = format!("ya29.access-{}", s.next);
                    s.access_tokens.push(access.clone());
                    let mut body = json!({
                        "access_token": access,
                        "expires_in": s.expires_in,
                        "scope": scope,
                        "token_type": "Bearer",
                    });
                    // As Google does: a refresh token only for offline access.
                    if offline {
                        let refresh = format!("1//refresh-{}", s.next);
                        s.refresh_tokens.push(refresh.clone());
                        body["refresh_token"] = json!(refresh);
                    }
                    text(StatusCode::OK, body.to_string(), "application/json")
                }
                Some("refresh_token") => {
                    s.refreshes += 1;
                    if !body.get("refresh_token").is_some_and(|t| s.refresh_tokens.contains(t)) {
                        return error("the refresh token is unknown or revoked");
                    }
                    s.next += 1;
                    let access = format!("ya29.access-{}", s.next);
                    s.access_tokens.push(access.clone());
                    let body = json!({ "access_token": access, "expires_in": s.refreshed_expires_in, "token_type": "Bearer" });
                    text(StatusCode::OK, body.to_string(), "application/json")
                }
                _ => error("unsupported grant_type"),
            }
        }
        "/revoke" => {
            let mut s = lock();
            let Some(token) = body.get("token").cloned() else { return error("no token") };
            if !s.refresh_tokens.contains(&token) && !token.starts_with("ya29.") {
                return text(StatusCode::BAD_REQUEST, json!({ "error": "invalid_token" }).to_string(), "application/json");
            }
            s.refresh_tokens.retain(|t| *t != token);
            s.revoked.push(token);
            text(StatusCode::OK, String::new(), "text/plain")
        }
        gmail if gmail.starts_with("/gmail/v1/users/me/") => {
            let s = lock();
            if !bearer.as_ref().is_some_and(|b| s.access_tokens.contains(b)) {
                return text(
                    StatusCode::UNAUTHORIZED,
                    json!({ "error": { "code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED" } }).to_string(),
                    "application/json",
                );
            }
            let rest = &gmail["/gmail/v1/users/me/".len()..];
            let found = |body: serde_json::Value| text(StatusCode::OK, body.to_string(), "application/json");
            let missing = || {
                text(
                    StatusCode::NOT_FOUND,
                    json!({ "error": { "code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND" } }).to_string(),
                    "application/json",
                )
            };
            if rest == "messages"
                && let Some(wanted) = query
                    .get("q")
                    .and_then(|q| q.strip_prefix("rfc822msgid:"))
                    .map(|q| q.split_whitespace().next().unwrap_or_default().to_owned())
            {
                let sent_only = query.get("q").is_some_and(|q| q.split_whitespace().any(|w| w == "in:sent"));
                // As Gmail: the bin and spam only when asked for.
                let with_trash = query.get("includeSpamTrash").map(String::as_str) == Some("true");
                let has = |m: &FixtureMail, label: &str| m.labels.iter().any(|l| l == label);
                let hits: Vec<serde_json::Value> = s
                    .mail
                    .iter()
                    .filter(|m| {
                        m.message_id == wanted && (!sent_only || has(m, "SENT")) && (with_trash || !(has(m, "TRASH") || has(m, "SPAM")))
                    })
                    .filter(|m| !(s.search_lags && s.sent_ids.contains(&m.id)))
                    .map(|m| json!({ "id": m.id, "threadId": m.thread_id }))
                    .collect();
                let mut body = json!({ "resultSizeEstimate": hits.len() });
                if !hits.is_empty() {
                    body["messages"] = json!(hits);
                }
                found(body)
            } else if rest == "messages" && query.contains_key("labelIds") {
                // Listed by label, newest first (by the order taken: the fixture's mailbox only
                // grows), as Gmail lists a label without searching.
                let label = query.get("labelIds").cloned().unwrap_or_default();
                let max: usize = query.get("maxResults").and_then(|m| m.parse().ok()).unwrap_or(100);
                // Pages as Gmail's: an opaque token (here, where the next page starts).
                let skip: usize = query.get("pageToken").and_then(|t| t.strip_prefix("page-")).and_then(|t| t.parse().ok()).unwrap_or(0);
                let labelled: Vec<&FixtureMail> = s.mail.iter().rev().filter(|m| m.labels.contains(&label)).collect();
                let listed: Vec<serde_json::Value> =
                    labelled.iter().skip(skip).take(max).map(|m| json!({ "id": m.id, "threadId": m.thread_id })).collect();
                let mut body = json!({ "resultSizeEstimate": labelled.len() });
                if !listed.is_empty() {
                    body["messages"] = json!(listed);
                }
                if labelled.len() > skip + max {
                    body["nextPageToken"] = json!(format!("page-{}", skip + max));
                }
                found(body)
            } else if rest == "messages" {
                let words: Vec<String> =
                    query.get("q").map(|q| q.to_lowercase().split_whitespace().map(str::to_owned).collect()).unwrap_or_default();
                let max: usize = query.get("maxResults").and_then(|m| m.parse().ok()).unwrap_or(100);
                let hits: Vec<&FixtureMail> = s
                    .mail
                    .iter()
                    .filter(|m| {
                        let hay = format!(
                            "{} {} {} {}",
                            m.from,
                            m.subject,
                            m.text.clone().unwrap_or_default(),
                            m.html.clone().unwrap_or_default()
                        )
                        .to_lowercase();
                        words.iter().all(|w| hay.contains(w))
                    })
                    .collect();
                // Gmail lists newest first by its own date; the fixture lists in the order added
                // (the reader sorts what it shows).
                let more = hits.len() > max;
                let listed: Vec<serde_json::Value> =
                    hits.iter().take(max).map(|m| json!({ "id": m.id, "threadId": m.thread_id })).collect();
                let mut body = json!({ "resultSizeEstimate": hits.len() });
                if !listed.is_empty() {
                    body["messages"] = json!(listed);
                }
                if more {
                    body["nextPageToken"] = json!("next-page");
                }
                found(body)
            } else if rest == "profile" {
                let account = if s.account.is_empty() { "owner@example.com" } else { s.account.as_str() };
                found(json!({ "emailAddress": account, "messagesTotal": s.mail.len(), "threadsTotal": s.mail.len(), "historyId": "1" }))
            } else if let Some((id, attachment)) = rest.strip_prefix("messages/").and_then(|r| r.split_once("/attachments/")) {
                // Attachment ids as `gmail_message` makes them: ANGjdJ<message>x<n>.
                let bytes = s.mail.iter().find(|m| m.id == id).and_then(|m| {
                    let n: usize = attachment.strip_prefix(&format!("ANGjdJ{}x", m.id))?.parse().ok()?;
                    m.attachments.get(n.checked_sub(1)?).map(|a| a.2.clone())
                });
                bytes.map_or_else(missing, |b| found(json!({ "size": b.len(), "data": b64url(&b) })))
            } else if let Some(id) = rest.strip_prefix("messages/") {
                s.mail.iter().find(|m| m.id == id).map_or_else(missing, |m| found(gmail_message(m)))
            } else if let Some(id) = rest.strip_prefix("threads/") {
                // In the order they were added, not by date: the reader must sort.
                let messages: Vec<serde_json::Value> = s.mail.iter().filter(|m| m.thread_id == id).map(gmail_message).collect();
                if messages.is_empty() { missing() } else { found(json!({ "id": id, "messages": messages })) }
            } else {
                missing()
            }
        }
        calendar if calendar.starts_with("/calendar/v3/calendars/") => {
            let s = lock();
            if !bearer.as_ref().is_some_and(|b| s.access_tokens.contains(b)) {
                return text(
                    StatusCode::UNAUTHORIZED,
                    json!({ "error": { "code": 401, "status": "UNAUTHENTICATED" } }).to_string(),
                    "application/json",
                );
            }
            let Some(id) = calendar["/calendar/v3/calendars/".len()..].strip_suffix("/events") else {
                return text(
                    StatusCode::NOT_FOUND,
                    json!({ "error": { "code": 404, "message": "Not Found" } }).to_string(),
                    "application/json",
                );
            };
            // One escaped path segment (an address's '@' arrives as %40).
            let id: String =
                url::form_urlencoded::parse(format!("id={id}").as_bytes()).map(|(_, v)| v.into_owned()).next().unwrap_or_default();
            if query.get("orderBy").map(String::as_str) == Some("startTime")
                && query.get("singleEvents").map(String::as_str) != Some("true")
            {
                return text(
                    StatusCode::BAD_REQUEST,
                    json!({ "error": { "code": 400, "message": "The requested ordering is not available for the particular query." } })
                        .to_string(),
                    "application/json",
                );
            }
            let (Some(min), Some(max)) = (query.get("timeMin"), query.get("timeMax")) else {
                return text(
                    StatusCode::BAD_REQUEST,
                    json!({ "error": { "code": 400, "message": "Missing time bounds" } }).to_string(),
                    "application/json",
                );
            };
            let bounds = |e: &FixtureEvent| -> (String, String) {
                match (&e.timed, &e.all_day) {
                    (Some((start, end)), _) => (start.clone(), end.clone()),
                    (None, Some((start, end))) => (format!("{start}T00:00:00Z"), format!("{end}T00:00:00Z")),
                    (None, None) => (String::new(), String::new()),
                }
            };
            let mut hits: Vec<&FixtureEvent> = s
                .events
                .iter()
                .filter(|e| e.calendar_id == id)
                .filter(|e| {
                    let (start, end) = bounds(e);
                    end > *min && start < *max
                })
                .collect();
            if query.get("orderBy").map(String::as_str) == Some("startTime") {
                hits.sort_by_key(|e| bounds(e).0);
            }
            let max_results: usize = query.get("maxResults").and_then(|m| m.parse().ok()).unwrap_or(250);
            let more = hits.len() > max_results;
            let items: Vec<serde_json::Value> = hits.iter().take(max_results).map(|e| event_json(e)).collect();
            let mut body = json!({ "kind": "calendar#events", "summary": id, "timeZone": s.calendar_zone.clone().unwrap_or_else(|| "UTC".into()), "items": items });
            if more {
                body["nextPageToken"] = json!("next-page");
            }
            text(StatusCode::OK, body.to_string(), "application/json")
        }
        _ => text(StatusCode::NOT_FOUND, "not found".into(), "text/plain"),
    }
}

/// An event as Calendar's API returns it.
fn event_json(e: &FixtureEvent) -> serde_json::Value {
    let when = |timed: Option<&String>, day: Option<&String>| {
        let mut value = match (timed, day) {
            (Some(t), _) => json!({ "dateTime": t }),
            (None, Some(d)) => json!({ "date": d }),
            (None, None) => json!({}),
        };
        if !e.time_zone.is_empty() {
            value["timeZone"] = json!(e.time_zone);
        }
        value
    };
    let mut body = json!({
        "kind": "calendar#event",
        "etag": e.etag,
        "id": e.id,
        "status": e.status,
        "summary": e.summary,
        "location": e.location,
        "description": e.description,
        "start": when(e.timed.as_ref().map(|t| &t.0), e.all_day.as_ref().map(|d| &d.0)),
        "end": when(e.timed.as_ref().map(|t| &t.1), e.all_day.as_ref().map(|d| &d.1)),
    });
    if !e.attendees.is_empty() {
        body["attendees"] = json!(e.attendees.iter().map(|a| json!({ "email": a })).collect::<Vec<_>>());
    }
    if e.recurring {
        body["recurringEventId"] = json!(format!("{}_base", e.id));
    }
    if !e.color_id.is_empty() {
        body["colorId"] = json!(e.color_id);
    }
    if !e.private.is_empty() {
        let private: serde_json::Map<String, serde_json::Value> = e.private.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        body["extendedProperties"] = json!({ "private": private });
    }
    body
}

/// An event's fields from a request body (insert or update).
fn event_from(body: &serde_json::Value, id: &str, calendar_id: &str) -> Option<FixtureEvent> {
    let side = |name: &str| -> Option<(Option<String>, Option<String>)> {
        let when = body.get(name)?;
        Some((when["dateTime"].as_str().map(str::to_owned), when["date"].as_str().map(str::to_owned)))
    };
    let (start, end) = (side("start")?, side("end")?);
    // Stored in UTC, as the list filter compares strings.
    let utc = |t: &str| utc_time(t);
    let (timed, all_day) = match (start, end) {
        ((Some(s), _), (Some(e), _)) => (Some((utc(&s)?, utc(&e)?)), None),
        ((None, Some(s)), (None, Some(e))) => (None, Some((s, e))),
        _ => return None,
    };
    Some(FixtureEvent {
        id: id.to_owned(),
        calendar_id: calendar_id.to_owned(),
        summary: body["summary"].as_str().unwrap_or_default().to_owned(),
        status: "confirmed".into(),
        timed,
        all_day,
        location: body["location"].as_str().unwrap_or_default().to_owned(),
        description: body["description"].as_str().unwrap_or_default().to_owned(),
        attendees: body["attendees"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x["email"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default(),
        time_zone: body["start"]["timeZone"].as_str().unwrap_or_default().to_owned(),
        recurring: false,
        private: body["extendedProperties"]["private"]
            .as_object()
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect())
            .unwrap_or_default(),
        etag: String::new(),
        color_id: body["colorId"].as_str().unwrap_or_default().to_owned(),
    })
}

/// An RFC 3339 time as `…Z` (the fixture keeps times in UTC).
fn utc_time(time: &str) -> Option<String> {
    let parsed = chrono::DateTime::parse_from_rfc3339(time).ok()?;
    Some(parsed.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// Calendar writes and reads of one event: `GET|PUT|DELETE …/events/{id}` (with `If-Match`
/// checked against the event's etag: 412 when it differs) and `POST …/events` (a client-chosen
/// `id` that exists is 409, as Google answers). Each write taken is counted.
async fn event_request(state: &Mutex<State>, request: Request<hyper::body::Incoming>) -> Option<Response<Full<Bytes>>> {
    let lock = || state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    lock().paths.push(path.clone());
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_owned));
    let if_match = header("if-match");
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let json_answer = |status: StatusCode, body: serde_json::Value| text(status, body.to_string(), "application/json");
    let google_error = |status: StatusCode, message: &str| {
        json_answer(status, json!({ "error": { "code": status.as_u16(), "message": message, "errors": [{ "reason": message }] } }))
    };
    let mut s = lock();
    if !bearer.as_ref().is_some_and(|b| s.access_tokens.contains(b)) {
        return Some(google_error(StatusCode::UNAUTHORIZED, "authError"));
    }
    let rest = &path["/calendar/v3/calendars/".len()..];
    let mut segments = rest.split('/');
    let calendar: String = segments
        .next()
        .map(|c| url::form_urlencoded::parse(format!("c={c}").as_bytes()).map(|(_, v)| v.into_owned()).next().unwrap_or_default())
        .unwrap_or_default();
    if segments.next() != Some("events") {
        return Some(google_error(StatusCode::NOT_FOUND, "notFound"));
    }
    let event_id = segments.next().map(str::to_owned);
    let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    s.next += 1;
    let fresh_etag = format!("\"{}\"", 3_000_000 + s.next);
    let index = event_id.as_ref().and_then(|id| s.events.iter().position(|e| e.id == *id && e.calendar_id == calendar));
    match (method.as_str(), event_id) {
        ("POST", None) => {
            let id = match parsed["id"].as_str() {
                Some(id) => id.to_owned(),
                None => format!("evt{:08x}", s.next),
            };
            // Google's rule for a client's id: 5–1024 characters of base32hex (a–v, 0–9).
            if !(5..=1024).contains(&id.len()) || !id.chars().all(|c| matches!(c, 'a'..='v' | '0'..='9')) {
                return Some(google_error(StatusCode::BAD_REQUEST, "invalidResourceId"));
            }
            if s.events.iter().any(|e| e.id == id) {
                return Some(google_error(StatusCode::CONFLICT, "duplicate"));
            }
            let Some(mut event) = event_from(&parsed, &id, &calendar) else {
                return Some(google_error(StatusCode::BAD_REQUEST, "invalid"));
            };
            event.etag = fresh_etag;
            let answer = event_json(&event);
            s.events.push(event);
            s.event_writes.push(("insert".into(), id));
            match s.write_mode {
                WriteMode::Answer => Some(json_answer(StatusCode::OK, answer)),
                WriteMode::DropConnection => None,
            }
        }
        ("GET", Some(_)) => Some(
            index
                .map_or_else(|| google_error(StatusCode::NOT_FOUND, "notFound"), |i| json_answer(StatusCode::OK, event_json(&s.events[i]))),
        ),
        ("PUT", Some(id)) => {
            let Some(i) = index.filter(|i| s.events[*i].status != "cancelled") else {
                return Some(google_error(StatusCode::NOT_FOUND, "notFound"));
            };
            if if_match.as_ref().is_some_and(|m| *m != s.events[i].etag) {
                return Some(google_error(StatusCode::PRECONDITION_FAILED, "conditionNotMet"));
            }
            let Some(mut event) = event_from(&parsed, &id, &calendar) else {
                return Some(google_error(StatusCode::BAD_REQUEST, "invalid"));
            };
            event.etag = fresh_etag;
            event.private = s.events[i].private.clone();
            s.events[i] = event;
            s.event_writes.push(("update".into(), id));
            Some(json_answer(StatusCode::OK, event_json(&s.events[i])))
        }
        ("PATCH", Some(id)) => {
            let Some(i) = index.filter(|i| s.events[*i].status != "cancelled") else {
                return Some(google_error(StatusCode::NOT_FOUND, "notFound"));
            };
            if if_match.as_ref().is_some_and(|m| *m != s.events[i].etag) {
                return Some(google_error(StatusCode::PRECONDITION_FAILED, "conditionNotMet"));
            }
            // Only the fields sent change.
            let mut merged = event_json(&s.events[i]);
            if let (Some(target), Some(fields)) = (merged.as_object_mut(), parsed.as_object()) {
                for (key, value) in fields {
                    target.insert(key.clone(), value.clone());
                }
            }
            let Some(mut event) = event_from(&merged, &id, &calendar) else {
                return Some(google_error(StatusCode::BAD_REQUEST, "invalid"));
            };
            event.etag = fresh_etag;
            event.recurring = s.events[i].recurring;
            s.events[i] = event;
            s.event_writes.push(("update".into(), id));
            let answer = event_json(&s.events[i]);
            match s.write_mode {
                WriteMode::Answer => Some(json_answer(StatusCode::OK, answer)),
                WriteMode::DropConnection => None,
            }
        }
        ("DELETE", Some(id)) => {
            let Some(i) = index else { return Some(google_error(StatusCode::NOT_FOUND, "notFound")) };
            if s.events[i].status == "cancelled" {
                return Some(google_error(StatusCode::GONE, "deleted"));
            }
            if if_match.as_ref().is_some_and(|m| *m != s.events[i].etag) {
                return Some(google_error(StatusCode::PRECONDITION_FAILED, "conditionNotMet"));
            }
            // Google keeps a deleted event, cancelled, for a while.
            s.events[i].status = "cancelled".into();
            s.events[i].etag = fresh_etag;
            s.event_writes.push(("delete".into(), id));
            Some(text(StatusCode::NO_CONTENT, String::new(), "text/plain"))
        }
        _ => Some(google_error(StatusCode::NOT_FOUND, "notFound")),
    }
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A message as `messages.get?format=full` returns it.
fn gmail_message(m: &FixtureMail) -> serde_json::Value {
    let (charset, encode): (&str, fn(&str) -> Vec<u8>) = if m.latin1 {
        ("ISO-8859-1", |t| t.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect())
    } else {
        ("UTF-8", |t| t.as_bytes().to_vec())
    };
    let part = |id: &str, mime: &str, text: &str| {
        let bytes = encode(text);
        json!({
            "partId": id,
            "mimeType": mime,
            "filename": "",
            "headers": [{ "name": "Content-Type", "value": format!("{mime}; charset=\"{charset}\"") }],
            "body": { "size": bytes.len(), "data": b64url(&bytes) },
        })
    };
    let mut alternatives = Vec::new();
    if let Some(text) = &m.text {
        alternatives.push(part("0.0", "text/plain", text));
    }
    if let Some(html) = &m.html {
        alternatives.push(part("0.1", "text/html", html));
    }
    let mut parts = vec![
        json!({ "partId": "0", "mimeType": "multipart/alternative", "filename": "", "headers": [], "body": { "size": 0 }, "parts": alternatives }),
    ];
    for (i, (name, mime, bytes)) in m.attachments.iter().enumerate() {
        parts.push(json!({
            "partId": (i + 1).to_string(),
            "mimeType": mime,
            "filename": name,
            "headers": [{ "name": "Content-Disposition", "value": format!("attachment; filename=\"{name}\"") }],
            "body": { "size": bytes.len(), "attachmentId": format!("ANGjdJ{}x{}", m.id, i + 1) },
        }));
    }
    json!({
        "id": m.id,
        "threadId": m.thread_id,
        "labelIds": m.labels,
        "snippet": m.text.clone().unwrap_or_default().chars().take(100).collect::<String>(),
        "internalDate": m.sent_at.to_string(),
        "payload": {
            "partId": "",
            "mimeType": "multipart/mixed",
            "filename": "",
            "headers": [
                { "name": "From", "value": m.from },
                { "name": "To", "value": m.to },
                { "name": "Subject", "value": m.subject },
                { "name": "Message-ID", "value": format!("<{}>", m.message_id) },
                { "name": "References", "value": m.references },
                { "name": "In-Reply-To", "value": m.in_reply_to },
                { "name": "X-Hearth-Operation", "value": m.operation },
            ],
            "body": { "size": 0 },
            "parts": parts,
        },
    })
}
