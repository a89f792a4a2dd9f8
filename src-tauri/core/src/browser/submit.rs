//! A task's form submissions. In a task, a page action that would send a form off the page
//! (a click on its submit button, Enter in one of its fields) is refused until the owner has
//! reviewed exactly that submission: the page, the element, the method, the destination and
//! every field it carries. The gate sends an approved one through `FormSender` (which `Browsers` implements), once, and
//! only while the form still hashes to what was reviewed.
//!
//! What counts as a submission is read from the page in the same round trip that finds the
//! element (`hearthSubmission` in [`super::page`]): the browser's own `FormData` of the form
//! and its submitter, so the fields are what the site would receive.

use hearth_protocol::approvals::{FormField, SubmitGesture};
use hearth_protocol::browser::PageAction;

use super::error::BrowserError;

/// Most fields a form may send to be reviewed.
pub const MAX_FORM_FIELDS: usize = 100;
/// Longest value, in characters, of one field a reviewed form sends (the card shows all of it).
pub const MAX_FIELD_CHARS: usize = 20_000;

/// What a page action may send off the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitPolicy<'a> {
    /// The owner's own chat or screen: the owner is there to instruct it.
    Free,
    /// A task: a form's submission needs the owner's review first.
    NeedsReview,
    /// The one submission the owner approved, while the form still has this version.
    Reviewed {
        /// [`Submission::version`] as reviewed.
        version: &'a str,
    },
}

/// One field as the page reported it: name, label, value, secret, file.
pub(super) type RawField = (String, String, String, bool, bool);
/// A submission as the page reported it: method, action, enctype, fields, and whether the
/// submitter is an image button (whose click position goes too, as its last two fields).
pub(super) type RawSubmission = (String, String, String, Vec<RawField>, bool);

/// What a reviewed submission's request must carry ([`Submission::expected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Carries {
    /// The query (GET) or body (POST), exactly: urlencoded, or a `text/plain` body.
    Exact(String),
    /// A `multipart/form-data` body's parts, in order: name, value (a file's name, for a
    /// file), and whether it is a file. A file's bytes are not compared: the review shows its
    /// name, and Chromium does not hand a paused request's file contents over.
    Parts(Vec<(String, String, bool)>),
    /// An image button's urlencoded form: the reviewed fields exactly, plus the one thing no
    /// review can know — where the button is clicked, as the pair `<x>=<digits>&<y>=<digits>`
    /// (the button's name with `.x` and `.y`, encoded) wherever the button stands among them.
    ExactWithClick {
        /// The reviewed fields, urlencoded.
        fields: String,
        /// The click's horizontal field name, encoded.
        x: String,
        /// The click's vertical field name, encoded.
        y: String,
    },
}

/// What the page said a gesture would send.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
pub(super) enum Sends {
    /// A form's submission.
    Form(RawSubmission),
    /// Anything else (the script threw and answered `'unknown'`, or an answer of another
    /// shape): in a task, not done.
    Unknown(serde::de::IgnoredAny),
}

/// What a gesture on an element would send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// `GET` or `POST`.
    pub method: String,
    /// The form's action, resolved by the page.
    pub destination: String,
    /// How the fields are encoded (bound, not shown: it changes the bytes, not what they say).
    enctype: String,
    /// Every field, with its real value (passwords too: see [`Submission::shown_fields`]).
    fields: Vec<FormField>,
    /// The submitter is an image button: the position of the click goes too, which no review
    /// can know beforehand (told by the page's script apart from the fields, so no field's
    /// value can claim it).
    image_click: bool,
}

impl Submission {
    /// Checks what the page reported against the limits a review can show.
    pub(super) fn from_page((method, destination, enctype, raw, image_click): RawSubmission) -> Result<Self, BrowserError> {
        if raw.len() > MAX_FORM_FIELDS {
            return Err(BrowserError::FormUnreviewable(format!(
                "it sends {} fields; at most {MAX_FORM_FIELDS} can be reviewed",
                raw.len()
            )));
        }
        let mut fields = Vec::with_capacity(raw.len());
        for (name, label, value, hidden, file) in raw {
            if value.chars().count() > MAX_FIELD_CHARS || name.chars().count() > MAX_FIELD_CHARS {
                return Err(BrowserError::FormUnreviewable(format!(
                    "its field {:?} holds more than {MAX_FIELD_CHARS} characters",
                    name.chars().take(60).collect::<String>()
                )));
            }
            fields.push(FormField { name, label, value, hidden, file });
        }
        if image_click && !is_urlencoded(&method, &enctype) {
            // Its request could not be compared with what the owner saw (see `expected`).
            return Err(BrowserError::FormUnreviewable(
                "its button is an image, whose click position Hearth can only tell apart from the fields in a urlencoded form; \
                 send it yourself in Take control"
                    .into(),
            ));
        }
        let method = match method.as_str() {
            "GET" | "POST" => method,
            other => return Err(BrowserError::Cdp(format!("the form names a method Hearth does not send ({other:?})"))),
        };
        Ok(Self { method, destination, enctype, fields, image_click })
    }

    /// The version a review binds: an HMAC-SHA256, under `key`, of the page state the element
    /// was listed in, the gesture, the method, the destination, the encoding and every field's
    /// name, value and kind — secrets included, though the card never shows them. Keyed, not a
    /// plain hash: everything else in it is stored beside it, so a plain hash of a short PIN
    /// could be searched for offline. The key lives only in this process, with the browser
    /// (approving needs the live page anyway).
    pub fn version(&self, key: &[u8; 32], state: &str, gesture: SubmitGesture) -> String {
        use hmac::Mac;
        let fields: Vec<(&str, &str, bool)> = self.fields.iter().map(|f| (f.name.as_str(), f.value.as_str(), f.file)).collect();
        let bound = serde_json::json!([state, gesture, self.method, self.destination, self.enctype, fields, self.image_click]);
        match <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(key) {
            Ok(mut mac) => {
                mac.update(bound.to_string().as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
            // HMAC takes a key of any length, so this is never reached; were it, a hash over the
            // key and the form is still keyed.
            Err(_) => {
                use sha2::Digest;
                let mut hash = sha2::Sha256::new();
                hash.update(key);
                hash.update(bound.to_string().as_bytes());
                hex::encode(hash.finalize())
            }
        }
    }

    /// What the request of this submission must carry, when Hearth can tell: the fields as
    /// `application/x-www-form-urlencoded` (a GET's query, or a POST's body in that encoding)
    /// or as `text/plain`, a file as its name, or as the parts of a `multipart/form-data` body;
    /// line breaks made CRLF as the browser makes them. An image button's click adds its
    /// position, which no review can know, and which is the only addition allowed
    /// ([`Carries::ExactWithClick`]; `from_page` refuses such a form in the other encodings).
    /// `None` for an encoding Chromium would not report, which then matches no request.
    pub(super) fn expected(&self) -> Option<Carries> {
        let crlf = |text: &str| text.replace("\r\n", "\n").replace('\r', "\n").replace('\n', "\r\n");
        // A file's name goes as it is (the standard makes only strings' line breaks CRLF).
        let value = |f: &FormField| if f.file { f.value.clone() } else { crlf(&f.value) };
        if is_urlencoded(&self.method, &self.enctype) {
            // The page lists an image button's click as the last two fields, values unknown.
            let (fields, click) =
                if self.image_click { self.fields.split_at(self.fields.len().saturating_sub(2)) } else { (&self.fields[..], &[][..]) };
            let mut encoded = url::form_urlencoded::Serializer::new(String::new());
            for field in fields {
                encoded.append_pair(&crlf(&field.name), &value(field));
            }
            let fields = encoded.finish();
            return Some(match click {
                [x, y] => Carries::ExactWithClick {
                    fields,
                    x: url::form_urlencoded::byte_serialize(crlf(&x.name).as_bytes()).collect(),
                    y: url::form_urlencoded::byte_serialize(crlf(&y.name).as_bytes()).collect(),
                },
                _ => Carries::Exact(fields),
            });
        }
        if self.enctype.eq_ignore_ascii_case("text/plain") {
            let body: String = self.fields.iter().map(|f| format!("{}={}\r\n", crlf(&f.name), value(f))).collect();
            return Some(Carries::Exact(body));
        }
        if self.enctype.eq_ignore_ascii_case("multipart/form-data") {
            // The HTML standard's multipart encoding escapes a name's (and a file name's) line
            // breaks and quotes; a text value goes as it is, its line breaks CRLF.
            let escape = |text: &str| text.replace('\n', "%0A").replace('\r', "%0D").replace('"', "%22");
            let parts = self
                .fields
                .iter()
                .map(|f| (escape(&crlf(&f.name)), if f.file { escape(&f.value) } else { crlf(&f.value) }, f.file))
                .collect();
            return Some(Carries::Parts(parts));
        }
        None
    }

    /// A fresh key for [`Submission::version`], from the operating system's generator.
    pub fn new_version_key() -> [u8; 32] {
        use aes_gcm::aead::rand_core::RngCore;
        use sha2::Digest;
        let mut key = [0u8; 32];
        if aes_gcm::aead::OsRng.try_fill_bytes(&mut key).is_err() {
            // No generator answered: this process's id, the time and an address still differ
            // per process (weaker, never a panic), and approving needs this process's page anyway.
            tracing::warn!("the system's random generator did not answer; form versions are keyed with a weaker key");
            let mut hash = sha2::Sha256::new();
            hash.update(std::process::id().to_le_bytes());
            hash.update(format!("{:?}{:p}", std::time::SystemTime::now(), &key).as_bytes());
            key.copy_from_slice(&hash.finalize());
        }
        key
    }

    /// The fields as the owner reviews them and the proposal stores them: a password's value is
    /// left out (its version still binds it).
    pub fn shown_fields(&self) -> Vec<FormField> {
        self.fields.iter().map(|f| FormField { value: if f.hidden { String::new() } else { f.value.clone() }, ..f.clone() }).collect()
    }
}

/// The gesture a page action makes, when it is one that can send a form (as the page script
/// spells it): a click, Enter or Space pressed, or text typed with a line break in it (a
/// single-line field takes that as Enter).
pub(super) fn gesture_of(action: PageAction, value: Option<&str>) -> Option<&'static str> {
    match action {
        PageAction::Click => Some("click"),
        PageAction::Press => match value {
            Some("Enter") => Some("enter"),
            Some("Space") => Some("space"),
            Some(_) | None => None,
        },
        PageAction::Type if value.is_some_and(|v| v.contains(['\n', '\r'])) => Some("enter"),
        PageAction::Type | PageAction::Select | PageAction::Scroll => None,
    }
}

/// The page action that makes a reviewed gesture.
pub(super) fn action_of(gesture: SubmitGesture) -> (PageAction, Option<&'static str>) {
    match gesture {
        SubmitGesture::Click => (PageAction::Click, None),
        SubmitGesture::PressEnter => (PageAction::Press, Some("Enter")),
    }
}

/// The same gesture, as a review names it.
pub(super) fn reviewed_gesture(gesture: &str) -> Option<SubmitGesture> {
    match gesture {
        "click" | "space" => Some(SubmitGesture::Click),
        "enter" => Some(SubmitGesture::PressEnter),
        _ => None,
    }
}

/// What answered the released request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// The site: the form arrived.
    Site,
    /// A network error, no site's answer (an https destination the proxy refused ends this way).
    NetworkError,
    /// A page of Hearth's egress proxy itself ([`super::proxy::EGRESS_HEADER`], plain http).
    Proxy,
    /// A 307 or 308: the same POST is to go again elsewhere, where the guard holds it.
    SentElsewhere,
}

impl Answer {
    /// How the released request's paused answer reads: by its error, the proxy's header (on
    /// plain http only: through a tunnel the headers are the site's, unchecked, and the proxy's
    /// own refusal of a tunnel is a network error there), or a status that sends it again.
    fn of(event: &chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused) -> Self {
        let plain = event.request.url.starts_with("http:");
        if event.response_error_reason.is_some() {
            Answer::NetworkError
        } else if plain && event.response_headers.iter().flatten().any(|h| h.name.eq_ignore_ascii_case(super::proxy::EGRESS_HEADER)) {
            Answer::Proxy
        } else if matches!(event.response_status_code, Some(307 | 308)) {
            Answer::SentElsewhere
        } else {
            Answer::Site
        }
    }
}

/// What the guard does with one paused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Aborted inside Chromium: it never leaves.
    Held,
    /// Let through: a read (GET, HEAD), or anything while the owner holds control.
    Through,
    /// Let through as the reviewed request; its answer is paused too, to be read.
    Released,
}

/// A document request a guarded page tried to send and Hearth held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBack {
    /// `POST`, `PUT`, …
    pub method: String,
    /// Where it was going.
    pub url: String,
}

/// The guard behind a browser a task drives. The static check in `act` catches a form's own
/// submit button and Enter; this catches the rest of "sending data off the page by
/// navigation": while the browser is guarded, every document request of any of its tabs,
/// windows or frames (and each redirect) that is not a GET or HEAD — a form posted by a
/// script, a POST navigation started from a plain button, one sent from a new tab the page
/// opened — is aborted inside Chromium before it leaves, unless it is the one the owner
/// approved. Nothing is held back while the owner holds Take control.
#[derive(Debug, Default)]
pub struct SendGuard {
    /// The one request the owner approved, while the gate sends it.
    allowed: tokio::sync::watch::Sender<Allowance>,
    /// What was held back, oldest first (the newest 20).
    held: tokio::sync::watch::Sender<Vec<HeldBack>>,
}

/// Where the approved request is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Allowance {
    /// None is allowed.
    #[default]
    Closed,
    /// Waiting for it: its method, its address as [`comparable`] makes it, and the query or body
    /// it must carry when Hearth can tell ([`Submission::expected`]).
    Open {
        /// `GET`, `POST`.
        method: String,
        /// The address.
        url: String,
        /// What its query or body must be.
        carries: Option<Carries>,
    },
    /// The guard released it to the network.
    Went,
    /// Its answer came back to Chromium.
    Answered(Answer),
    /// A request of that method to that address carried something else (the page changed the
    /// form after the check): held back.
    Differed,
}

/// How many held-back requests a guard remembers.
const HELD_KEPT: usize = 20;

impl SendGuard {
    /// Lets exactly one `method` request to `url` through (the reviewed form), until it has
    /// gone or [`SendGuard::disallow`].
    pub(super) fn allow_once(&self, method: &str, url: &str, carries: Option<Carries>) {
        self.allowed.send_replace(Allowance::Open { method: method.to_ascii_uppercase(), url: comparable(method, url), carries });
    }

    /// Closes the allowance and answers where it ended: the one place an approval learns
    /// whether its request went, read once.
    pub(super) fn finish(&self) -> Allowance {
        self.allowed.send_replace(Allowance::Closed)
    }

    /// Records the released request's answer (its follower matches it to the request).
    fn answered(&self, answer: Answer) {
        self.allowed.send_if_modified(|allowed| {
            let released = *allowed == Allowance::Went;
            if released {
                *allowed = Allowance::Answered(answer);
            }
            released
        });
    }

    /// Waits until a released request's answer came back (at once when none is released;
    /// Stop-free: the caller bounds it).
    pub(super) async fn until_answered(&self) {
        let mut watch = self.allowed.subscribe();
        if watch.wait_for(|a| *a != Allowance::Went).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Waits until the allowed request went or was held back (Stop-free: the caller bounds it).
    pub(super) async fn until_settled(&self) {
        let mut watch = self.allowed.subscribe();
        if watch.wait_for(|a| !matches!(a, Allowance::Open { .. })).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Whether a document request may leave: the approved one (used up by it, which is how
    /// the gate knows it went), any other GET or HEAD — except one to the approved address
    /// carrying other fields while the approval waits (the page changed the form: `Differed`)
    /// — and nothing else. Records what it holds back.
    #[cfg(test)]
    fn admits(&self, method: &str, url: &str, body: Option<&[u8]>, content_type: Option<&str>) -> bool {
        self.judge(method, url, body, content_type) != Verdict::Held
    }

    /// [`SendGuard::admits`], telling the reviewed request apart from any other let through.
    fn judge(&self, method: &str, url: &str, body: Option<&[u8]>, content_type: Option<&str>) -> Verdict {
        // Judged on a copy, outside the channel's lock (a body can be megabytes); the verdict
        // stands only if the allowance is still the one judged.
        let judged = self.allowed.borrow().clone();
        let same = match &judged {
            Allowance::Open { method: m, url: u, carries } if m.eq_ignore_ascii_case(method) && *u == comparable(method, url) => {
                let get = method.eq_ignore_ascii_case("GET");
                Some(match carries {
                    // Nothing Hearth can compare: no request is the reviewed one.
                    None => false,
                    Some(Carries::Exact(expected)) => {
                        (if get { Some(query_of(url).as_bytes()) } else { body }) == Some(expected.as_bytes())
                    }
                    Some(Carries::ExactWithClick { fields, x, y }) => {
                        let sent = if get { Some(query_of(url)) } else { body.and_then(|b| std::str::from_utf8(b).ok()) };
                        sent.is_some_and(|sent| is_fields_and_click(sent, fields, x, y))
                    }
                    Some(Carries::Parts(expected)) => {
                        !get && content_type.zip(body).is_some_and(|(kind, body)| multipart_matches(kind, body, expected))
                    }
                })
            }
            _ => None,
        };
        let mut verdict = None;
        self.allowed.send_if_modified(|allowed| {
            let Some(same) = same else { return false };
            if *allowed != judged {
                return false;
            }
            *allowed = if same { Allowance::Went } else { Allowance::Differed };
            verdict = Some(same);
            true
        });
        if verdict == Some(true) {
            return Verdict::Released;
        }
        if verdict.is_none() && (method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD")) {
            return Verdict::Through;
        }
        self.held.send_modify(|held| {
            held.push(HeldBack { method: method.to_ascii_uppercase(), url: url.to_owned() });
            if held.len() > HELD_KEPT {
                held.remove(0);
            }
        });
        Verdict::Held
    }

    /// What was held back so far, oldest first.
    pub fn held(&self) -> Vec<HeldBack> {
        self.held.borrow().clone()
    }

    /// Waits until something was held back beyond the first `seen` (Stop-free: the caller
    /// bounds it).
    pub async fn until_held(&self, seen: usize) -> Vec<HeldBack> {
        let mut watch = self.held.subscribe();
        loop {
            let held = watch.borrow_and_update().clone();
            if held.len() > seen {
                return held;
            }
            if watch.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// The largest body the guard compares: a reviewable form is at most 100 fields whose names
/// and values are at most 20,000 characters each (about 20 MB encoded at worst: 4 bytes a
/// character, 6 for an escaped line break in a name) plus the bytes of files a page made
/// itself. A larger one is not the reviewed form.
const MAX_COMPARED_BODY: usize = 32 * 1024 * 1024;

/// Whether `body` is exactly the `multipart/form-data` body Chromium writes for `parts` under
/// `content_type`, byte for byte, as the site will read it: each part's header and text value
/// as reviewed, in order. A file part's type may be any bare `type/subtype` and its bytes
/// anything (absent when Chromium does not hand a file's contents over) up to the next
/// delimiter, whose boundary Chromium draws at random as the form is sent, so a page cannot
/// have written it into a file beforehand.
///
/// Compared, not parsed with a MIME reader: a reader's leniencies (encoded words in a name,
/// backslashes dropped, a file whose type claims to be multipart swallowing the parts after
/// it) would let a body the site reads differently pass as the reviewed one.
fn multipart_matches(content_type: &str, body: &[u8], parts: &[(String, String, bool)]) -> bool {
    let Some(boundary) = content_type.strip_prefix("multipart/form-data; boundary=") else { return false };
    let drawn = boundary
        .strip_prefix("----WebKitFormBoundary")
        .is_some_and(|tail| tail.len() == 16 && tail.bytes().all(|b| b.is_ascii_alphanumeric()));
    if !drawn || body.len() > MAX_COMPARED_BODY {
        return false;
    }
    let next_part = format!("\r\n--{boundary}");
    let mut rest = body;
    for (name, value, file) in parts {
        let head = if *file {
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{value}\"\r\nContent-Type: ")
        } else {
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
        };
        let Some(after) = rest.strip_prefix(head.as_bytes()) else { return false };
        rest = after;
        if *file {
            let Some(end) = memchr::memmem::find(rest, b"\r\n\r\n") else { return false };
            if !bare_media_type(&rest[..end]) {
                return false;
            }
            rest = &rest[end + 4..];
            let Some(at) = memchr::memmem::find(rest, next_part.as_bytes()) else { return false };
            rest = &rest[at + 2..];
        }
    }
    rest == format!("--{boundary}--\r\n").as_bytes()
}

/// `type/subtype` of token characters and nothing else (no parameters, no multipart type),
/// as a file part's `Content-Type` must be for the body to be compared.
fn bare_media_type(value: &[u8]) -> bool {
    let token = |part: &[u8]| !part.is_empty() && part.iter().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(b));
    let mut halves = value.splitn(2, |b| *b == b'/');
    let (Some(kind), Some(sub)) = (halves.next(), halves.next()) else { return false };
    token(kind) && token(sub) && !kind.eq_ignore_ascii_case(b"multipart")
}

/// Whether the urlencoded `sent` is `fields` exactly with one click pair `x=<digits>&y=<digits>`
/// added among them — at any place, since the button's own place among the fields decides
/// where the browser puts it; every such pair is tried, so a field that looks like a click
/// cannot hide the real one. Only a body of exactly two pairs more than the fields is looked
/// at, so a page cannot make the guard try a pair per megabyte.
fn is_fields_and_click(sent: &str, fields: &str, x: &str, y: &str) -> bool {
    let pairs: Vec<&str> = if sent.is_empty() { Vec::new() } else { sent.split('&').collect() };
    let field_pairs = if fields.is_empty() { 0 } else { fields.split('&').count() };
    if pairs.len() != field_pairs + 2 {
        return false;
    }
    // A position in CSS pixels: a few digits.
    let coordinate = |pair: &str, name: &str| {
        pair.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
            .is_some_and(|v| (1..=MAX_CLICK_DIGITS).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()))
    };
    (0..pairs.len().saturating_sub(1)).any(|at| {
        coordinate(pairs[at], x) && coordinate(pairs[at + 1], y) && {
            let rest: Vec<&str> = pairs[..at].iter().chain(&pairs[at + 2..]).copied().collect();
            rest.join("&") == fields
        }
    })
}

/// Whether a form with this method and encoding sends its fields urlencoded (a GET's query, or
/// a POST's body in that encoding).
fn is_urlencoded(method: &str, enctype: &str) -> bool {
    method.eq_ignore_ascii_case("GET") || enctype.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// The most digits a click's coordinate is given.
const MAX_CLICK_DIGITS: usize = 6;

/// The query of `url` (empty when it has none), without its fragment.
fn query_of(url: &str) -> &str {
    let url = url.split_once('#').map_or(url, |(before, _)| before);
    url.split_once('?').map_or("", |(_, query)| query)
}

/// `url` as an allowance compares it: without its fragment, and for a GET without its query
/// (a GET form replaces the action's query with its fields; the query is compared apart).
fn comparable(method: &str, url: &str) -> String {
    let url = url.split_once('#').map_or(url, |(before, _)| before);
    if method.eq_ignore_ascii_case("GET") { url.split_once('?').map_or(url, |(before, _)| before).to_owned() } else { url.to_owned() }
}

/// Answers every document request the guarded `browser` pauses (`Fetch.requestPaused`, on the
/// browser's own session, so every tab, window and frame) until its stream ends: continued when
/// `guard` admits it or the owner holds control, else aborted (the page stays where it was). A
/// paused request left unanswered would hang the page, so this runs for as long as the guard is
/// armed.
pub(super) async fn hold_back(
    browser: std::sync::Arc<tokio::sync::Mutex<chromiumoxide::Browser>>,
    mut paused: chromiumoxide::listeners::EventStream<chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused>,
    guard: std::sync::Arc<SendGuard>,
    owner_controls: impl Fn() -> bool + Send + 'static,
) {
    use chromiumoxide::cdp::browser_protocol::fetch::{ContinueRequestParams, FailRequestParams};
    use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
    use futures::StreamExt;
    // The request released as the reviewed one, until its answer comes: an answer is matched to
    // it by id, so a slow earlier one's cannot stand in for a later approval's.
    let mut released: Option<chromiumoxide::cdp::browser_protocol::fetch::RequestId> = None;
    while let Some(event) = paused.next().await {
        // An answer (only a released request is paused again, at its answer): whether it failed
        // is read, and it goes on to the page as it is.
        if event.response_status_code.is_some() || event.response_error_reason.is_some() {
            if released.as_ref() == Some(&event.request_id) {
                released = None;
                guard.answered(Answer::of(&event));
            }
            if let Err(err) = browser.lock().await.execute(ContinueRequestParams::new(event.request_id.clone())).await {
                tracing::debug!(error = %err, "a paused answer could not be passed on (its page is going)");
            }
            continue;
        }
        let request = &event.request;
        // The body as sent, a disk file's contents left out (CDP does not hand them over, nor
        // a body it finds too long: then it cannot match a review). An entry that is not
        // base64 leaves no body to compare (so it matches no review).
        let body = request.post_data_entries.as_ref().and_then(|entries| {
            use base64::Engine;
            let mut bytes = Vec::new();
            for encoded in entries.iter().filter_map(|e| e.bytes.as_ref()) {
                base64::engine::general_purpose::STANDARD.decode_vec(AsRef::<str>::as_ref(encoded), &mut bytes).ok()?;
                if bytes.len() > MAX_COMPARED_BODY {
                    break;
                }
            }
            Some(bytes)
        });
        let content_type = request.headers.inner().as_object().and_then(|headers| {
            headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("content-type")).and_then(|(_, value)| value.as_str())
        });
        let verdict =
            if owner_controls() { Verdict::Through } else { guard.judge(&request.method, &request.url, body.as_deref(), content_type) };
        let answered = if let Verdict::Through | Verdict::Released = verdict {
            let reviewed = verdict == Verdict::Released;
            let mut params = ContinueRequestParams::new(event.request_id.clone());
            // Released is not arrived: the reviewed request's answer is paused too, to learn
            // whether the site answered it.
            params.intercept_response = Some(reviewed);
            if reviewed {
                released = Some(event.request_id.clone());
            }
            let continued = browser.lock().await.execute(params).await.map(|_| ());
            if continued.is_err() && reviewed {
                // Its answer will not come: the send must not wait for it as if it might.
                released = None;
                guard.answered(Answer::NetworkError);
            }
            continued
        } else {
            let host = url::Url::parse(&request.url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
            tracing::info!(method = %request.method, host, "held back a request a task's page would have sent without the owner's review");
            browser.lock().await.execute(FailRequestParams::new(event.request_id.clone(), ErrorReason::Aborted)).await.map(|_| ())
        };
        if let Err(err) = answered {
            tracing::debug!(error = %err, "a paused request could not be answered (its page is going)");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn raw(value: &str) -> RawSubmission {
        (
            "POST".into(),
            "https://shop.example/pay".into(),
            "application/x-www-form-urlencoded".into(),
            vec![("name".into(), "Name".into(), value.into(), false, false), ("pin".into(), "PIN".into(), "1234".into(), true, false)],
            false,
        )
    }

    #[test]
    fn the_version_binds_every_value_and_a_password_is_never_shown() {
        let key = Submission::new_version_key();
        let sub = Submission::from_page(raw("Ada")).unwrap();
        let v = sub.version(&key, "0123456789ab", SubmitGesture::Click);
        assert_eq!(v.len(), 64);
        assert_eq!(sub.version(&key, "0123456789ab", SubmitGesture::Click), v, "the same form hashes the same");
        assert_ne!(Submission::from_page(raw("Adb")).unwrap().version(&key, "0123456789ab", SubmitGesture::Click), v);
        assert_ne!(sub.version(&key, "0123456789ac", SubmitGesture::Click), v, "another page state");
        assert_ne!(sub.version(&key, "0123456789ab", SubmitGesture::PressEnter), v, "another gesture");
        let mut other_pin = raw("Ada");
        other_pin.3[1].2 = "9999".into();
        assert_ne!(
            Submission::from_page(other_pin).unwrap().version(&key, "0123456789ab", SubmitGesture::Click),
            v,
            "the password is bound"
        );
        let mut multipart = raw("Ada");
        multipart.2 = "multipart/form-data".into();
        assert_ne!(
            Submission::from_page(multipart).unwrap().version(&key, "0123456789ab", SubmitGesture::Click),
            v,
            "the encoding is bound"
        );
        let mut image = raw("Ada");
        image.4 = true;
        assert_ne!(
            Submission::from_page(image).unwrap().version(&key, "0123456789ab", SubmitGesture::Click),
            v,
            "an image button's click is bound"
        );
        assert_ne!(sub.version(&Submission::new_version_key(), "0123456789ab", SubmitGesture::Click), v, "another process's key");
        let shown = sub.shown_fields();
        assert_eq!(shown[0].value, "Ada");
        assert_eq!((shown[1].value.as_str(), shown[1].hidden), ("", true));
    }

    #[test]
    fn a_form_too_large_to_review_or_with_another_method_is_refused() {
        let long = "x".repeat(MAX_FIELD_CHARS + 1);
        assert!(matches!(Submission::from_page(raw(&long)), Err(BrowserError::FormUnreviewable(_))));
        let many = (
            "GET".to_owned(),
            "https://a.example/".to_owned(),
            String::new(),
            vec![(String::new(), String::new(), String::new(), false, false); MAX_FORM_FIELDS + 1],
            false,
        );
        assert!(matches!(Submission::from_page(many), Err(BrowserError::FormUnreviewable(_))));
        let mut put = raw("Ada");
        put.0 = "PUT".into();
        assert!(Submission::from_page(put).is_err());
    }

    #[test]
    fn the_guard_lets_reads_through_and_the_approved_send_once() {
        let guard = SendGuard::default();
        let body = Some(Carries::Exact("name=Ada".to_owned()));
        assert!(guard.admits("GET", "https://a.example/next", None, None) && guard.admits("head", "https://a.example/", None, None));
        assert!(!guard.admits("POST", "https://a.example/order", Some("name=Ada".as_bytes()), None), "an unreviewed POST is held back");
        guard.allow_once("post", "https://a.example/order#top", body.clone());
        assert!(!guard.admits("POST", "https://a.example/other", Some("name=Ada".as_bytes()), None), "only the reviewed destination");
        assert!(!guard.admits("PUT", "https://a.example/order", Some("name=Ada".as_bytes()), None), "only the reviewed method");
        assert!(guard.admits("POST", "https://a.example/order", Some("name=Ada".as_bytes()), None), "the approved one goes");
        assert!(!guard.admits("POST", "https://a.example/order", Some("name=Ada".as_bytes()), None), "once");
        assert_eq!(guard.finish(), Allowance::Went);
        let held: Vec<(String, String)> = guard.held().into_iter().map(|h| (h.method, h.url)).collect();
        assert_eq!(held.len(), 4, "{held:?}");
        assert_eq!(held[0], ("POST".to_owned(), "https://a.example/order".to_owned()));
        // A body the page changed after the check is held back, and says so.
        guard.allow_once("POST", "https://a.example/order", body.clone());
        assert!(!guard.admits("POST", "https://a.example/order", Some("name=Eve".as_bytes()), None));
        assert_eq!(guard.finish(), Allowance::Differed);
        guard.allow_once("GET", "https://a.example/search?old=1", Some(Carries::Exact("q=shoes".into())));
        assert!(
            !guard.admits("GET", "https://a.example/search?q=boots", None, None),
            "while the approval waits, the reviewed address with other fields is held back, even as a GET"
        );
        assert_eq!(guard.finish(), Allowance::Differed);
        assert!(guard.admits("GET", "https://a.example/search?q=boots", None, None), "with no approval waiting, a GET goes");
        guard.allow_once("GET", "https://a.example/search?old=1", Some(Carries::Exact("q=shoes".into())));
        assert!(guard.admits("GET", "https://a.example/search?q=shoes", None, None), "a GET form replaces the query");
        assert_eq!(guard.finish(), Allowance::Went);
        guard.allow_once("POST", "https://a.example/order", None);
        assert!(matches!(guard.finish(), Allowance::Open { .. }), "withdrawn unused");
        // The released request's answer is read: the egress proxy's refusal is told apart.
        guard.allow_once("POST", "https://a.example/order", body);
        assert_eq!(guard.judge("POST", "https://a.example/order", Some("name=Ada".as_bytes()), None), Verdict::Released);
        assert_eq!(guard.judge("GET", "https://a.example/done", None, None), Verdict::Through, "a read goes, not as the reviewed one");
        guard.answered(Answer::Proxy);
        guard.answered(Answer::Site);
        assert_eq!(guard.finish(), Allowance::Answered(Answer::Proxy), "the first answer is the released request's");
        guard.answered(Answer::Site);
        assert_eq!(guard.finish(), Allowance::Closed, "an answer with nothing released changes nothing");
        assert!(!guard.admits("POST", "https://a.example/order", None, None), "a withdrawn allowance lets nothing through");
    }

    /// An image button's form goes only with the reviewed fields: its click position is the one
    /// addition, wherever the button stands, and nothing else may change.
    #[test]
    fn an_image_buttons_form_goes_only_with_the_reviewed_fields_and_its_click() {
        let carries = || Some(Carries::ExactWithClick { fields: "amount=10&to=ada".into(), x: "go.x".into(), y: "go.y".into() });
        let guard = SendGuard::default();
        for (sent, goes) in [
            ("amount=10&to=ada&go.x=12&go.y=7", true),
            ("go.x=0&go.y=0&amount=10&to=ada", true),
            ("amount=10&go.x=3&go.y=4&to=ada", true),
            ("amount=9999&to=ada&go.x=12&go.y=7", false),
            ("amount=10&to=ada", false),
            ("amount=10&to=ada&go.x=12&go.y=7&more=1", false),
            ("amount=10&to=ada&go.x=-1&go.y=7", false),
            ("amount=10&to=ada&go.y=7&go.x=12", false),
            ("amount=10&to=ada&go.x=1&go.y=2&go.x=3&go.y=4", false),
            ("amount=10&to=ada&go.x=1234567&go.y=2", false),
        ] {
            guard.allow_once("POST", "https://a.example/pay", carries());
            assert_eq!(guard.admits("POST", "https://a.example/pay", Some(sent.as_bytes()), None), goes, "{sent}");
            assert_eq!(guard.finish(), if goes { Allowance::Went } else { Allowance::Differed }, "{sent}");
        }
        guard.allow_once("GET", "https://a.example/find", carries());
        assert!(guard.admits("GET", "https://a.example/find?amount=10&to=ada&go.x=1&go.y=1", None, None), "a GET's query alike");
        assert_eq!(guard.finish(), Allowance::Went);
        // A field of the form that reads like a click does not stand in for the real one.
        let tricky = || Some(Carries::ExactWithClick { fields: "go.x=5&go.y=6".into(), x: "go.x".into(), y: "go.y".into() });
        guard.allow_once("POST", "https://a.example/pay", tricky());
        assert!(guard.admits("POST", "https://a.example/pay", Some(b"go.x=5&go.y=6&go.x=1&go.y=2"), None));
        guard.allow_once("POST", "https://a.example/pay", tricky());
        assert!(!guard.admits("POST", "https://a.example/pay", Some(b"go.x=1&go.y=2"), None), "a reviewed field is missing");
        assert_eq!(guard.finish(), Allowance::Differed);
        // Nothing to compare with matches nothing.
        guard.allow_once("POST", "https://a.example/pay", None);
        assert!(!guard.admits("POST", "https://a.example/pay", Some(b"amount=10"), None));
        assert_eq!(guard.finish(), Allowance::Differed);
    }

    #[test]
    fn the_expected_request_is_the_fields_urlencoded_with_crlf_line_breaks() {
        let mut form = raw("Ada Lovelace");
        form.3.push(("note".into(), "Note".into(), "one\ntwo & more".into(), false, false));
        let sub = Submission::from_page(form.clone()).unwrap();
        assert_eq!(sub.expected(), Some(Carries::Exact("name=Ada+Lovelace&pin=1234&note=one%0D%0Atwo+%26+more".into())));
        // A file goes as its name; a value that reads like an image button's click is only a
        // value (the page's script tells an image click apart from the fields).
        form.3.push(("scan".into(), "Scan".into(), "slip.pdf".into(), false, true));
        form.3.push(("x".into(), String::new(), "(where it is clicked)".into(), true, false));
        assert_eq!(
            Submission::from_page(form.clone()).unwrap().expected(),
            Some(Carries::Exact("name=Ada+Lovelace&pin=1234&note=one%0D%0Atwo+%26+more&scan=slip.pdf&x=%28where+it+is+clicked%29".into()))
        );
        let mut image = form.clone();
        image.4 = true;
        image.3.push(("go.x".into(), "Go".into(), "(where it is clicked)".into(), false, false));
        image.3.push(("go.y".into(), "Go".into(), "(where it is clicked)".into(), false, false));
        assert_eq!(
            Submission::from_page(image.clone()).unwrap().expected(),
            Some(Carries::ExactWithClick {
                fields: "name=Ada+Lovelace&pin=1234&note=one%0D%0Atwo+%26+more&scan=slip.pdf&x=%28where+it+is+clicked%29".into(),
                x: "go.x".into(),
                y: "go.y".into(),
            }),
            "an image button's click position is the one thing not known beforehand"
        );
        image.2 = "multipart/form-data".into();
        assert!(matches!(Submission::from_page(image), Err(BrowserError::FormUnreviewable(_))), "nor comparable in another encoding");
        form.2 = "text/plain".into();
        assert_eq!(
            Submission::from_page(form).unwrap().expected(),
            Some(Carries::Exact(
                "name=Ada Lovelace\r\npin=1234\r\nnote=one\r\ntwo & more\r\nscan=slip.pdf\r\nx=(where it is clicked)\r\n".into()
            )),
            "a plain-text body, exactly"
        );
    }

    /// A multipart body is compared byte for byte with the one Chromium writes for the
    /// reviewed fields (a disk file's bytes absent, as a paused request hands them over): any
    /// part changed, added, missing or reordered, a name spelled another way a lenient MIME
    /// reader would accept, a file type that claims to be multipart, or a boundary Chromium
    /// would not draw, is not the reviewed body.
    #[test]
    fn a_multipart_body_is_compared_byte_for_byte() {
        let mut form = raw("Ada \"Lovelace\"");
        form.2 = "multipart/form-data".into();
        form.3.push(("note".into(), "Note".into(), "one\ntwo".into(), false, false));
        form.3.push(("a\"b".into(), String::new(), "x\\y".into(), false, false));
        form.3.push(("scan".into(), "Scan".into(), "slip.pdf".into(), false, true));
        form.3.push(("extra".into(), "Extra".into(), String::new(), false, true));
        form.3.push(("c\rd".into(), "Copy".into(), "e\rf.txt".into(), false, true));
        let sub = Submission::from_page(form).unwrap();
        let Some(Carries::Parts(parts)) = sub.expected() else { panic!("{:?}", sub.expected()) };
        const B: &str = "----WebKitFormBoundaryQ1w2E3r4T5y6U7i8";
        let kind = format!("multipart/form-data; boundary={B}");
        // (name as sent, value, Some((file name, type, bytes)) for a file)
        type Sent<'a> = (&'a str, &'a str, Option<(&'a str, &'a str, &'a str)>);
        let body = |parts: &[Sent<'_>]| {
            let mut body = String::new();
            for (name, value, file) in parts {
                match file {
                    Some((file, kind, bytes)) => body.push_str(&format!(
                        "--{B}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\nContent-Type: {kind}\r\n\r\n{bytes}\r\n"
                    )),
                    None => body.push_str(&format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")),
                }
            }
            body.push_str(&format!("--{B}--\r\n"));
            body.into_bytes()
        };
        let sent: [Sent<'_>; 7] = [
            ("name", "Ada \"Lovelace\"", None),
            ("pin", "1234", None),
            ("note", "one\r\ntwo", None),
            ("a%22b", "x\\y", None),
            ("scan", "", Some(("slip.pdf", "application/pdf", ""))),
            ("extra", "", Some(("", "application/octet-stream", ""))),
            // A name's line break is made CRLF before it is escaped; a file name's is not.
            ("c%0D%0Ad", "", Some(("e%0Df.txt", "text/plain", ""))),
        ];
        let guard = SendGuard::default();
        let allow = || guard.allow_once("POST", "https://a.example/order", Some(Carries::Parts(parts.clone())));
        let admits = |body: &[u8], kind: &str| guard.admits("POST", "https://a.example/order", Some(body), Some(kind));

        let mut changed = sent;
        changed[1].1 = "9999";
        let mut renamed = sent;
        renamed[1].0 = "=?utf-8?q?pin?=";
        let mut escaped = sent;
        escaped[3].0 = "a\\\"b";
        let mut nested = sent;
        nested[4].2 = Some(("slip.pdf", "multipart/mixed; boundary=----", ""));
        let mut bare_multipart = sent;
        bare_multipart[4].2 = Some(("slip.pdf", "multipart/mixed", ""));
        let mut other_file = sent;
        other_file[4].2 = Some(("other.pdf", "application/pdf", ""));
        let mut added = sent.to_vec();
        added.push(("pin", "9999", None));
        for (what, other) in [
            ("a changed value", body(&changed)),
            ("an encoded-word name", body(&renamed)),
            ("a backslash-escaped name", body(&escaped)),
            ("a file typed as multipart, with a boundary", body(&nested)),
            ("a file typed as multipart", body(&bare_multipart)),
            ("another file name", body(&other_file)),
            ("a part added", body(&added)),
            ("a part missing", body(&sent[..6])),
            ("parts reordered", body(&[sent[1], sent[0], sent[2], sent[3], sent[4], sent[5], sent[6]])),
        ] {
            allow();
            assert!(!admits(&other, &kind), "{what}");
            assert_eq!(guard.finish(), Allowance::Differed, "{what}");
        }
        allow();
        assert!(!admits(&body(&sent), "application/x-www-form-urlencoded"), "another encoding");
        // A boundary Chromium would not draw, the body written under it all the same.
        for boundary in ["----WebKitFormBoundaryQ1w2E3r4T5y6U7i", "x", "----WebKitFormBoundaryQ1w2E3r4T5y6U7i-"] {
            let under = String::from_utf8(body(&sent)).unwrap().replace(B, boundary);
            allow();
            assert!(!admits(under.as_bytes(), &format!("multipart/form-data; boundary={boundary}")), "{boundary}");
        }

        allow();
        assert!(admits(&body(&sent), &kind), "the reviewed body goes");
        assert_eq!(guard.finish(), Allowance::Went);
        // A file the page made itself comes with its bytes, of any type a file can have.
        let mut with_bytes = sent;
        with_bytes[4].2 = Some(("slip.pdf", "application/pdf", "%PDF-1.7 --not-the-boundary"));
        allow();
        assert!(admits(&body(&with_bytes), &kind), "a file's bytes are not compared");
    }

    #[test]
    fn only_clicks_and_enter_or_space_can_send() {
        assert_eq!(gesture_of(PageAction::Click, None), Some("click"));
        assert_eq!(gesture_of(PageAction::Press, Some("Enter")), Some("enter"));
        assert_eq!(gesture_of(PageAction::Press, Some("Space")), Some("space"));
        assert_eq!(gesture_of(PageAction::Press, Some("Tab")), None);
        assert_eq!(gesture_of(PageAction::Type, Some("x")), None);
        assert_eq!(gesture_of(PageAction::Type, Some("ada\n")), Some("enter"), "a line break typed is Enter");
        assert_eq!(reviewed_gesture("space"), Some(SubmitGesture::Click));
        assert_eq!(action_of(SubmitGesture::PressEnter), (PageAction::Press, Some("Enter")));
    }
}
