//! Reading the owner's Gmail through its REST API (`gmail/v1`): search (`messages.list` then
//! `messages.get` for each hit) and a thread (`threads.get`), within the same bounds as the
//! local mailbox (20 hits, the newest 20 messages, 12,000 characters of text each).
//!
//! Message text is untrusted: an HTML-only message becomes text with `html2text` (parsed by
//! html5ever; nothing is fetched, no script runs, images are not loaded), and the tools mark all
//! of it as data written by others.

use base64::Engine;
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread, ThreadMessage};
use mail_parser::MimeHeaders;
use serde::Deserialize;

use super::mime::OPERATION_HEADER;
use super::oauth::GoogleAuth;
use crate::error::{CoreError, Result};
use crate::secret::ExposeSecret;
use crate::workspace::{MAX_BODY_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_RESULTS, MAX_THREAD_MESSAGES, SNIPPET_CHARS, truncate_chars};

/// Gmail's API.
pub const GMAIL_BASE_URL: &str = "https://gmail.googleapis.com";

/// How deep a message's MIME tree is walked (real mail nests 3–5 levels).
const MAX_PART_DEPTH: usize = 16;
/// The most HTML turned into text per message: well past 12,000 characters of text, and a
/// bound on what html5ever builds from it.
const MAX_HTML_BYTES: usize = 512 * 1024;
/// Attachments listed per message.
const MAX_ATTACHMENTS_LISTED: usize = 50;
/// Characters kept of a header shown (From, Subject).
const MAX_HEADER_CHARS: usize = 300;

/// One connection's Gmail.
#[derive(Clone)]
pub struct Gmail {
    http: reqwest::Client,
    base_url: String,
    auth: GoogleAuth,
    connection_id: String,
}

impl std::fmt::Debug for Gmail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gmail").field("base_url", &self.base_url).field("connection_id", &self.connection_id).finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageList {
    #[serde(default)]
    messages: Vec<MessageRef>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct MessageRef {
    id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    id: String,
    thread_id: String,
    #[serde(default)]
    label_ids: Vec<String>,
    /// Unix ms, as a decimal string.
    #[serde(default)]
    internal_date: String,
    #[serde(default)]
    payload: Part,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    part_id: String,
    #[serde(default)]
    mime_type: String,
    #[serde(default)]
    filename: String,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    body: Body,
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Body {
    #[serde(default)]
    size: i64,
    /// base64url.
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    attachment_id: Option<String>,
}

/// `messages.send`'s answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SentRef {
    id: String,
    #[serde(default)]
    thread_id: String,
}

/// A message Gmail accepted for sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// Gmail's id of the sent message.
    pub id: String,
    /// Its conversation.
    pub thread_id: String,
    /// Whether Gmail kept the Message-ID Hearth gave it (read back after the send).
    pub message_id_kept: bool,
    /// Whether the sent message carries Hearth's Message-ID or its mark
    /// ([`super::mime::OPERATION_HEADER`]), read back after the send: `false` means
    /// [`Gmail::find_sent`] cannot recognise this account's uncertain sends.
    pub mark_kept: bool,
}

/// What a search of Sent for a Message-ID found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// Gmail holds a sent message with exactly that Message-ID (read back from the message
    /// itself, not only from the search): it was sent. `copies` above 1 means it already went
    /// more than once.
    Found {
        /// The first copy's id.
        id: String,
        /// How many sent messages carry it.
        copies: usize,
    },
    /// None was found. That is **not** proof it was not sent (the owner may have deleted it):
    /// an uncertain send stays uncertain for the owner to acknowledge, never sent again on this
    /// alone.
    NotFound {
        /// Every message in Sent since the send was read back (the listing reached an older
        /// one, or its end). `false`: more were sent since than Hearth reads
        /// ([`MAX_SENT_CHECKED`]), and the send may be among those it did not read.
        complete: bool,
    },
}

/// Why a send did not plainly succeed. Gmail's send has no idempotency key, so the line between
/// the two matters: only [`SendError::Refused`] may ever be sent again as it is; after
/// [`SendError::Uncertain`], [`Gmail::find_sent`] must look for the message first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Gmail answered before taking the message (a 4xx but 408, or the request never left):
    /// nothing was sent.
    #[error("{0}")]
    Refused(String),
    /// The request may have reached Gmail (the connection broke, a 5xx or 408, or a success
    /// Hearth could not read): the message may have been sent.
    #[error("{0}")]
    Uncertain(String),
}

/// What a reply needs of the message it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyHeaders {
    /// Its conversation.
    pub thread_id: String,
    /// Its subject, as shown.
    pub subject: String,
    /// Its sender, as shown.
    pub from: String,
    /// Its `Message-ID`, without `<>` (a message without one cannot be threaded to).
    pub message_id: Option<String>,
    /// Its `References`, oldest first, without `<>`.
    pub references: Vec<String>,
}

/// `messages.get?format=metadata`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    label_ids: Vec<String>,
    /// Unix ms, as a decimal string.
    #[serde(default)]
    internal_date: String,
    #[serde(default)]
    payload: Part,
}

/// The largest message sent as JSON (`raw`, base64url: a third larger again); a larger one goes
/// through Gmail's upload endpoint, which takes messages up to 35 MB (a 20 MiB attachment
/// allowance is about 27 MB of message).
const MAX_JSON_SEND_BYTES: usize = 4 * 1024 * 1024;

/// A `multipart/related` upload of `raw` with its metadata (Gmail's "multipart upload"): the
/// JSON part names the conversation, the second part is the message as it is. Written here:
/// reqwest's multipart writes `multipart/form-data` only, and this is two parts with a boundary
/// checked not to occur in the message.
fn multipart_related(raw: &[u8], thread_id: Option<&str>) -> (String, Vec<u8>) {
    let mut boundary = format!("hearth-{}", uuid::Uuid::new_v4().simple());
    while raw.windows(boundary.len()).any(|w| w == boundary.as_bytes()) {
        boundary = format!("hearth-{}", uuid::Uuid::new_v4().simple());
    }
    let metadata = match thread_id {
        Some(thread) => serde_json::json!({ "threadId": thread }),
        None => serde_json::json!({}),
    };
    let mut body = Vec::with_capacity(raw.len() + 512);
    body.extend_from_slice(format!("--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{metadata}\r\n").as_bytes());
    body.extend_from_slice(format!("--{boundary}\r\nContent-Type: message/rfc822\r\n\r\n").as_bytes());
    body.extend_from_slice(raw);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/related; boundary={boundary}"), body)
}

/// How many Sent messages are listed at a time when an uncertain send is looked for by label.
const SENT_PAGE: &str = "25";

/// The most Sent messages an uncertain send is looked for among (newest first, by label, not by
/// search, each read back): four pages. More sent since the send than this, and a check that
/// finds nothing cannot be sure ([`Reconciled::NotFound`]).
pub const MAX_SENT_CHECKED: usize = 100;

/// How much older than the proposal the oldest message read must be for the listing to count
/// as covering everything sent since (Gmail's clock and this machine's may differ).
const CLOCK_MARGIN_MS: i64 = 10 * 60 * 1000;

/// The most of a send's answer read (its JSON is a few hundred bytes).
const MAX_SEND_ANSWER_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
struct Thread {
    id: String,
    #[serde(default)]
    messages: Vec<Message>,
}

impl Gmail {
    /// `connection_id`'s Gmail at `base_url` ([`GMAIL_BASE_URL`]; tests give the fixture's).
    pub fn new(auth: GoogleAuth, connection_id: &str, base_url: &str) -> Result<Self> {
        // The access token goes there.
        super::check_endpoint(base_url, "Gmail's")?;
        let http = super::http_client("Gmail")?;
        Ok(Self { http, base_url: base_url.trim_end_matches('/').to_owned(), auth, connection_id: connection_id.to_owned() })
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str, query: &[(&str, &str)]) -> Result<T> {
        let token = self.auth.access_token(&self.connection_id).await?;
        let url = reqwest::Url::parse_with_params(&format!("{}/gmail/v1/users/me/{path}", self.base_url), query)
            .map_err(|_| CoreError::InvalidInput("That Gmail address does not parse.".into()))?;
        let api =
            super::Api { name: "Gmail", not_found: "Gmail has no such message or conversation; use search_mail to find the current ones." };
        super::get_json(&self.http, url, &token, &api).await
    }

    /// Sends `raw` (an RFC 5322 message, as [`super::mime::build`] makes it) with
    /// `messages.send`, in `thread_id` when it replies. Never retried here: a send that may have
    /// reached Gmail is [`SendError::Uncertain`], for [`Gmail::find_sent`] to settle.
    pub async fn send(&self, raw: &[u8], thread_id: Option<&str>) -> std::result::Result<Sent, SendError> {
        let token = self.auth.access_token(&self.connection_id).await.map_err(|e| SendError::Refused(e.to_string()))?;
        if let Some(thread) = thread_id {
            path_segment(thread).map_err(|e| SendError::Refused(e.to_string()))?;
        }
        // 30 s, and a second more per 256 KiB: a large message on a slow uplink is not a lost
        // answer.
        let limit = std::time::Duration::from_secs(30 + u64::try_from(raw.len() / (256 * 1024)).unwrap_or(u64::MAX / 2));
        let request = if raw.len() <= MAX_JSON_SEND_BYTES {
            let mut body = serde_json::json!({ "raw": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw) });
            if let Some(thread) = thread_id {
                body["threadId"] = serde_json::json!(thread);
            }
            self.http
                .post(format!("{}/gmail/v1/users/me/messages/send", self.base_url))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string())
        } else {
            let (content_type, body) = multipart_related(raw, thread_id);
            self.http
                .post(format!("{}/upload/gmail/v1/users/me/messages/send?uploadType=multipart", self.base_url))
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body)
        };
        let request = request.bearer_auth(token.expose_secret()).timeout(limit);
        let response = match request.send().await {
            Ok(response) => response,
            // Connecting failed: the request never left, nothing was sent.
            Err(err) if err.is_connect() => {
                return Err(SendError::Refused(format!("Gmail could not be reached, so nothing was sent: {}", err.without_url())));
            }
            Err(err) => {
                return Err(SendError::Uncertain(format!(
                    "the connection to Gmail broke after the message was handed over ({}); it may have been sent",
                    err.without_url()
                )));
            }
        };
        let status = response.status();
        let read = read_bounded(response, MAX_SEND_ANSWER_BYTES).await;
        let check = "check Sent in Gmail before sending it again";
        match status.as_u16() {
            200 => {}
            // Answers Gmail gives before taking a message: nothing was sent.
            401 => {
                return Err(SendError::Refused(
                    "Gmail refused Hearth's access, so nothing was sent; connect the account again (with write access) in Settings → Accounts."
                        .into(),
                ));
            }
            403 | 429 if status.as_u16() == 429 || read.as_deref().is_ok_and(super::is_rate_limit) => {
                return Err(SendError::Refused(
                    "Gmail asks Hearth to slow down (a sending limit), so nothing was sent; try again later.".into(),
                ));
            }
            403 => {
                return Err(SendError::Refused(
                    "Gmail does not let Hearth send with the access it has, so nothing was sent; grant write access in Settings → Accounts."
                        .into(),
                ));
            }
            400 | 404 | 413 => return Err(SendError::Refused(format!("Gmail refused the message ({status}), so nothing was sent."))),
            // Anything else (a 5xx, 408, a redirect — 303 means a POST was processed —, another
            // 2xx) may have come after Gmail took the message.
            _ => return Err(SendError::Uncertain(format!("Gmail answered {status} to the send; it may have been sent — {check}"))),
        }
        let bytes =
            read.map_err(|why| SendError::Uncertain(format!("Gmail's answer to the send {why}; it may have been sent — {check}")))?;
        let sent: SentRef = serde_json::from_slice(&bytes)
            .map_err(|_| SendError::Uncertain(format!("Gmail's answer to the send did not read; it may have been sent — {check}")))?;
        // Whether what Hearth reconciles by survived: read it back from the sent message.
        let wanted = header_in(raw, "Message-ID");
        let (message_id_kept, mark_kept) = match self.metadata(&sent.id).await {
            Ok(meta) => {
                let id_kept = !wanted.is_empty() && header(&meta.payload, "Message-ID") == wanted;
                let bare = wanted.trim_start_matches('<').trim_end_matches('>');
                (id_kept, id_kept || (!bare.is_empty() && header(&meta.payload, OPERATION_HEADER).trim() == bare))
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not read back a sent message's Message-ID");
                (false, false)
            }
        };
        Ok(Sent { id: sent.id, thread_id: sent.thread_id, message_id_kept, mark_kept })
    }

    /// The account's address (`users/me/profile`).
    pub async fn profile(&self) -> Result<String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Profile {
            email_address: String,
        }
        let profile: Profile = self.get("profile", &[]).await?;
        if profile.email_address.is_empty() || profile.email_address.chars().any(char::is_control) {
            return Err(CoreError::Unavailable("Gmail did not say which account this is.".into()));
        }
        Ok(profile.email_address.to_lowercase())
    }

    /// What a reply to message `id` needs: its conversation, how the card names it, and the
    /// threading headers (its `Message-ID` and `References`).
    pub async fn reply_headers(&self, id: &str) -> Result<ReplyHeaders> {
        let message: Message = self
            .get(
                &format!("messages/{}", path_segment(id)?),
                &[
                    ("format", "metadata"),
                    ("metadataHeaders", "Subject"),
                    ("metadataHeaders", "From"),
                    ("metadataHeaders", "Message-ID"),
                    ("metadataHeaders", "References"),
                ],
            )
            .await?;
        let bare = |v: &str| v.trim().trim_start_matches('<').trim_end_matches('>').to_owned();
        let message_id = bare(header(&message.payload, "Message-ID"));
        let references = header(&message.payload, "References").split_whitespace().map(bare).filter(|r| !r.is_empty()).collect();
        Ok(ReplyHeaders {
            thread_id: message.thread_id.clone(),
            subject: shown_header(&message.payload, "Subject"),
            from: shown_header(&message.payload, "From"),
            message_id: (!message_id.is_empty()).then_some(message_id),
            references,
        })
    }

    /// An attachment (`<message id>.<part id>`, as search and threads list them), at most
    /// `max` bytes: its summary and bytes.
    pub async fn attachment(&self, id: &str, max: usize) -> Result<(AttachmentInfo, Vec<u8>)> {
        let unknown = || CoreError::NotFound(format!("There is no attachment {id}. Read the mail thread to see its attachments' ids."));
        let (message_id, part_id) = id.split_once('.').ok_or_else(unknown)?;
        let message: Message = self.get(&format!("messages/{}", path_segment(message_id)?), &[("format", "full")]).await?;
        let info = attachments_of(&message).into_iter().find(|a| a.id == id).ok_or_else(unknown)?;
        let part = parts(&message.payload)
            .into_iter()
            .find(|p| is_attachment(p) && (if p.part_id.is_empty() { "0" } else { p.part_id.as_str() }) == part_id)
            .ok_or_else(unknown)?;
        let too_large =
            || CoreError::InvalidInput(format!("{} is larger than Hearth imports ({} MiB).", info.filename, max / (1024 * 1024)));
        if usize::try_from(part.body.size).unwrap_or(usize::MAX) > max {
            return Err(too_large());
        }
        let attachment_id = part.body.attachment_id.as_deref().ok_or_else(unknown)?;
        #[derive(Deserialize)]
        struct Data {
            data: String,
        }
        // Gmail's attachment ids are long (hundreds of base64url characters): their own check.
        if attachment_id.len() > 4096 || !attachment_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) {
            return Err(unknown());
        }
        let data: Data = self.get(&format!("messages/{message_id}/attachments/{attachment_id}"), &[]).await?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(data.data.trim_end_matches('='))
            .map_err(|_| CoreError::Unavailable("Gmail sent an attachment Hearth cannot decode.".into()))?;
        if bytes.len() > max {
            return Err(too_large());
        }
        Ok((AttachmentInfo { size: i64::try_from(bytes.len()).unwrap_or(i64::MAX), ..info }, bytes))
    }

    /// A message's labels, date, its Message-ID header and Hearth's mark.
    async fn metadata(&self, id: &str) -> Result<Metadata> {
        self.get(
            &format!("messages/{}", path_segment(id)?),
            &[("format", "metadata"), ("metadataHeaders", "Message-ID"), ("metadataHeaders", OPERATION_HEADER)],
        )
        .await
    }

    /// The sent message Hearth made as `message_id` (`<…>` or bare), if Gmail has one: how an
    /// uncertain send is settled before anything is sent again. A message counts when it is in
    /// Sent and carries that id as its `Message-ID` or as Hearth's mark
    /// ([`super::mime::OPERATION_HEADER`]): Gmail is reported to replace the Message-ID of a
    /// message sent through its API, but keeps the message's own headers. `since` (Unix ms,
    /// the proposal's creation) bounds what must be read for a check that finds nothing to be
    /// sure.
    pub async fn find_sent(&self, message_id: &str, since: i64) -> Result<Reconciled> {
        let bare = message_id.trim().strip_prefix('<').and_then(|m| m.strip_suffix('>')).unwrap_or(message_id.trim());
        if !is_hearth_message_id(bare) {
            return Err(CoreError::InvalidInput("That is not a Message-ID Hearth made (hearth-<id>@<domain>).".into()));
        }
        // Sent mail in the bin still counts: it went. The search finds a kept Message-ID only.
        let query = format!("rfc822msgid:{bare} in:sent");
        let list: MessageList = self.get("messages", &[("q", &query), ("maxResults", "10"), ("includeSpamTrash", "true")]).await?;
        let mut found = Vec::new();
        let mut read = Vec::new();
        for hit in list.messages {
            if let Some(meta) = self.read_back(&hit.id, &mut read).await?
                && carries(&meta, bare)
            {
                found.push(hit.id);
            }
        }
        // The search is an index, which can lag a message sent seconds ago, and it cannot find
        // the mark: Sent is also listed by label (newest first, not searched) and each message
        // read back, until one older than the proposal or the end of Sent.
        let mut complete = false;
        let mut page_token: Option<String> = None;
        while read.len() < MAX_SENT_CHECKED {
            let mut query = vec![("labelIds", "SENT"), ("maxResults", SENT_PAGE), ("includeSpamTrash", "true")];
            if let Some(token) = &page_token {
                query.push(("pageToken", token.as_str()));
            }
            let page: MessageList = self.get("messages", &query).await?;
            let mut older = false;
            for message in page.messages {
                let Some(meta) = self.read_back(&message.id, &mut read).await? else { continue };
                if carries(&meta, bare) && !found.contains(&message.id) {
                    found.push(message.id);
                }
                older |= meta.internal_date.parse::<i64>().is_ok_and(|date| date < since - CLOCK_MARGIN_MS);
            }
            page_token = page.next_page_token.filter(|t| !t.is_empty());
            if older || page_token.is_none() {
                complete = true;
                break;
            }
        }
        let copies = found.len();
        Ok(match found.into_iter().next() {
            Some(id) => Reconciled::Found { id, copies },
            None => Reconciled::NotFound { complete },
        })
    }

    /// Message `id`'s metadata, once per check (`read` holds the ids read so far): `None`
    /// when it was read already or is gone.
    async fn read_back(&self, id: &str, read: &mut Vec<String>) -> Result<Option<Metadata>> {
        if read.iter().any(|r| r == id) {
            return Ok(None);
        }
        read.push(id.to_owned());
        match self.metadata(id).await {
            Ok(meta) => Ok(Some(meta)),
            Err(CoreError::NotFound(_)) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Messages matching `query` (Gmail's own search syntax), newest first, at most 20.
    pub async fn search(&self, query: &str) -> Result<MailSearchResult> {
        let query = query.trim();
        if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
            return Err(CoreError::InvalidInput(format!("Search for 1 to {MAX_QUERY_CHARS} characters.")));
        }
        let limit = (MAX_SEARCH_RESULTS + 1).to_string();
        let list: MessageList = self.get("messages", &[("q", query), ("maxResults", &limit)]).await?;
        let truncated = list.messages.len() > MAX_SEARCH_RESULTS || list.next_page_token.is_some();
        let matches = self.summaries(&list).await?;
        Ok(MailSearchResult { query: query.to_owned(), matches, truncated })
    }

    /// The first 20 messages of a list, read in full and summarised, newest first.
    async fn summaries(&self, list: &MessageList) -> Result<Vec<MailMatch>> {
        let mut matches = Vec::new();
        for hit in list.messages.iter().take(MAX_SEARCH_RESULTS) {
            let message: Message = match self.get(&format!("messages/{}", path_segment(&hit.id)?), &[("format", "full")]).await {
                Ok(message) => message,
                // Gone between the list and now (deleted meanwhile): not a hit.
                Err(CoreError::NotFound(_)) => continue,
                Err(err) => return Err(err),
            };
            if is_shown(&message) {
                matches.push(off_the_runtime(move || summary(&message)).await?);
            }
        }
        matches.sort_by_key(|m| std::cmp::Reverse(m.sent_at));
        Ok(matches)
    }

    /// The newest 20 messages in the inbox, newest first: listed by the `INBOX` label (Gmail
    /// lists a label newest first without searching, so a message that arrived a moment ago
    /// is there before the search index has it).
    pub async fn inbox(&self) -> Result<Vec<MailMatch>> {
        let limit = MAX_SEARCH_RESULTS.to_string();
        let list: MessageList = self.get("messages", &[("labelIds", "INBOX"), ("maxResults", &limit)]).await?;
        self.summaries(&list).await
    }

    /// The newest 20 messages of a conversation, oldest first.
    pub async fn thread(&self, thread_id: &str) -> Result<MailThread> {
        let thread: Thread = self.get(&format!("threads/{}", path_segment(thread_id)?), &[("format", "full")]).await?;
        let Thread { id, messages } = thread;
        let mut messages: Vec<Message> = messages.into_iter().filter(is_shown).collect();
        messages.sort_by_key(sent_at);
        let truncated = messages.len() > MAX_THREAD_MESSAGES;
        let newest = messages.split_off(messages.len().saturating_sub(MAX_THREAD_MESSAGES));
        let messages = off_the_runtime(move || newest.iter().map(thread_message).collect()).await?;
        Ok(MailThread { thread_id: id, messages, truncated })
    }
}

/// Decoding and turning HTML into text is CPU work on what others wrote: it runs on the blocking
/// pool, not on a runtime worker (two cores: one long message would stall every other task).
async fn off_the_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|_| CoreError::Unavailable("Reading the message as text failed; try again.".into()))
}

/// Reads at most `max` bytes of an answer; more, or a broken body, says why.
pub(super) async fn read_bounded(mut response: reqwest::Response, max: usize) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if bytes.len() + chunk.len() <= max => bytes.extend_from_slice(&chunk),
            Ok(Some(_)) => return Err(format!("was longer than Hearth reads ({} KiB)", max / 1024)),
            Ok(None) => return Ok(bytes),
            Err(err) => return Err(format!("was cut off ({})", err.without_url())),
        }
    }
}

/// Whether a message read back is in Sent and carries `bare` (a Message-ID Hearth made) as its
/// Message-ID or as Hearth's mark.
fn carries(meta: &Metadata, bare: &str) -> bool {
    let strip = |v: &str| v.trim().trim_start_matches('<').trim_end_matches('>').to_owned();
    meta.label_ids.iter().any(|l| l == "SENT")
        && (strip(header(&meta.payload, "Message-ID")) == bare || strip(header(&meta.payload, OPERATION_HEADER)) == bare)
}

/// A Message-ID as `mime::message_id_for` makes them: `hearth-<letters, digits, ->@<domain>`.
fn is_hearth_message_id(id: &str) -> bool {
    let Some((local, domain)) = id.split_once('@') else { return false };
    let Some(tail) = local.strip_prefix("hearth-") else { return false };
    (1..=80).contains(&tail.len())
        && tail.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !domain.is_empty()
        && domain.len() <= 253
        && domain.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
}

/// The value of header `name` in a raw message's header block (unfolded), or empty.
fn header_in(raw: &[u8], name: &str) -> String {
    let parsed = mail_parser::MessageParser::default().parse_headers(raw);
    parsed.and_then(|m| m.header_raw(name).map(|v| v.trim().to_owned())).unwrap_or_default()
}

/// Drafts, the bin and spam are not mail the owner received or sent.
fn is_shown(message: &Message) -> bool {
    !message.label_ids.iter().any(|l| matches!(l.as_str(), "DRAFT" | "TRASH" | "SPAM"))
}

/// An id from outside as one path segment: Gmail's ids are hex and URL-safe; anything else is
/// refused rather than escaped into another path.
fn path_segment(id: &str) -> Result<&str> {
    if !id.is_empty() && id.len() <= 200 && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) {
        Ok(id)
    } else {
        Err(CoreError::InvalidInput("That is not a Gmail message or conversation id.".into()))
    }
}

fn header<'m>(part: &'m Part, name: &str) -> &'m str {
    part.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map_or("", |h| h.value.as_str())
}

/// A header as shown: control and format characters out, at most [`MAX_HEADER_CHARS`].
fn shown_header(part: &Part, name: &str) -> String {
    header(part, name).chars().filter(|c| !c.is_control() && !crate::files::is_format_char(*c)).take(MAX_HEADER_CHARS).collect()
}

/// Addresses of an address header, read by `mail-parser` (quoted names with commas and all).
fn addresses(value: &str) -> Vec<String> {
    if value.is_empty() {
        return Vec::new();
    }
    let raw = format!("To: {value}\r\n\r\n");
    let Some(parsed) = mail_parser::MessageParser::default().parse_headers(raw.as_bytes()) else { return Vec::new() };
    parsed.to().map(|list| list.iter().filter_map(|a| a.address.as_deref().map(str::to_owned)).collect()).unwrap_or_default()
}

fn sent_at(message: &Message) -> i64 {
    message.internal_date.parse().unwrap_or(0)
}

fn folder(message: &Message) -> &'static str {
    if message.label_ids.iter().any(|l| l == "SENT") { "sent" } else { "inbox" }
}

/// A part's text: base64url (Gmail pads sometimes and sometimes not), in the charset its
/// `Content-Type` names — Gmail passes the part's bytes through unconverted — read by
/// mail-parser's decoders (UTF-8 when none is named or it is unknown).
fn decode(part: &Part, data: &str) -> String {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(data.trim_end_matches('=')).unwrap_or_default();
    let content_type = header(part, "Content-Type");
    let charset = (!content_type.is_empty())
        .then(|| {
            let raw = format!("Content-Type: {content_type}\r\n\r\n");
            let parsed = mail_parser::MessageParser::default().parse_headers(raw.as_bytes())?;
            parsed.content_type().and_then(|t| t.attribute("charset")).map(str::to_ascii_lowercase)
        })
        .flatten();
    match charset
        .as_deref()
        .filter(|c| !matches!(*c, "utf-8" | "utf8" | "us-ascii"))
        .and_then(|c| mail_parser::decoders::charsets::map::charset_decoder(c.as_bytes()))
    {
        Some(decoder) => decoder(&bytes),
        None => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Every part of the tree, depth-first, to [`MAX_PART_DEPTH`].
fn parts(root: &Part) -> Vec<&Part> {
    let mut out = Vec::new();
    let mut stack = vec![(root, 0usize)];
    while let Some((part, depth)) = stack.pop() {
        out.push(part);
        if depth < MAX_PART_DEPTH {
            stack.extend(part.parts.iter().rev().map(|p| (p, depth + 1)));
        }
    }
    out
}

fn is_attachment(part: &Part) -> bool {
    !part.filename.is_empty() && part.body.attachment_id.is_some()
}

/// The message's text: its first text/plain part, else its first text/html as text.
/// The second is whether HTML was cut before it became text.
fn text_of(message: &Message) -> (String, bool) {
    let all = parts(&message.payload);
    let inline = |mime: &str| {
        all.iter().find_map(|p| {
            (p.mime_type.eq_ignore_ascii_case(mime) && !is_attachment(p)).then_some(p.body.data.as_deref().map(|d| (*p, d))).flatten()
        })
    };
    if let Some((part, plain)) = inline("text/plain") {
        return (decode(part, plain), false);
    }
    if let Some((part, html)) = inline("text/html") {
        let mut html = decode(part, html);
        let cut = html.len() > MAX_HTML_BYTES;
        if cut {
            let mut end = MAX_HTML_BYTES;
            while !html.is_char_boundary(end) {
                end -= 1;
            }
            html.truncate(end);
        }
        // A wide wrap, and deep quoting allowed past it: the text is for reading.
        let text = html2text::config::plain()
            .allow_width_overflow()
            .string_from_read(html.as_bytes(), 100)
            .unwrap_or_else(|_| "(the HTML of this message could not be read as text)".to_owned());
        return (text, cut);
    }
    (String::new(), false)
}

fn attachments_of(message: &Message) -> Vec<AttachmentInfo> {
    parts(&message.payload)
        .into_iter()
        .filter(|p| is_attachment(p))
        .take(MAX_ATTACHMENTS_LISTED)
        .map(|p| AttachmentInfo {
            // The part's id, not Gmail's long attachment id: short, and stable for the message.
            id: format!("{}.{}", message.id, if p.part_id.is_empty() { "0" } else { p.part_id.as_str() }),
            filename: crate::files::safe_display_name(&p.filename),
            mime_type: p.mime_type.clone(),
            size: p.body.size,
        })
        .collect()
}

fn summary(message: &Message) -> MailMatch {
    let (text, _) = text_of(message);
    MailMatch {
        message_id: message.id.clone(),
        thread_id: message.thread_id.clone(),
        from: shown_header(&message.payload, "From"),
        subject: shown_header(&message.payload, "Subject"),
        snippet: truncate_chars(&text.split_whitespace().collect::<Vec<_>>().join(" "), SNIPPET_CHARS).0,
        sent_at: sent_at(message),
        attachments: u16::try_from(attachments_of(message).len()).unwrap_or(u16::MAX),
    }
}

fn thread_message(message: &Message) -> ThreadMessage {
    let (text, html_cut) = text_of(message);
    let (body, body_truncated) = truncate_chars(&text, MAX_BODY_CHARS);
    ThreadMessage {
        id: message.id.clone(),
        from: shown_header(&message.payload, "From"),
        to: addresses(header(&message.payload, "To")),
        cc: addresses(header(&message.payload, "Cc")),
        subject: shown_header(&message.payload, "Subject"),
        body,
        body_truncated: body_truncated || html_cut,
        sent_at: sent_at(message),
        folder: folder(message).to_owned(),
        attachments: attachments_of(message),
    }
}
