//! What the three providers share: the HTTP client, retries before anything streams, the
//! status → [`ProviderError`] mapping, and the stream driver that feeds SSE events to a
//! wire-format decoder while racing the cancellation token.

use std::collections::VecDeque;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{MAX_TOOL_CALLS_PER_TURN, ModelEvent, ProviderConfig, ProviderError, ProviderTry, TryReport, without_credentials};
use crate::secret::{ExposeSecret, SecretString, redact, secret_header};
use hearth_protocol::failures::{TransportFailure, TryOutcome};
use hearth_protocol::sse::{End, EventTooLarge, Frame, Framer};

/// The largest event the providers accept: 4 MiB (its data and the line being read). The
/// biggest legitimate one is OpenAI Responses' `response.completed`, which repeats the whole
/// answer; a long answer with its tool arguments stays well under this.
pub(crate) const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One event as the wire decoders take it, owned (decoded from the shared framing,
/// [`hearth_protocol::sse`]; invalid UTF-8 becomes U+FFFD).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
}

impl From<Frame<'_>> for SseEvent {
    fn from(frame: Frame<'_>) -> Self {
        SseEvent { event: frame.event_lossy(), data: frame.data_lossy() }
    }
}

/// Whether a decoder has seen its format's end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Done,
}

/// Turns one wire format's SSE events into [`ModelEvent`]s.
pub(crate) trait WireDecoder: Send {
    /// Handles one event, pushing what it yields.
    fn feed(&mut self, event: SseEvent, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ProviderError>;
    /// The body ended without the format's end marker: the events to close with, or an error.
    fn eof(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError>;
}

/// How a provider sends its API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI and compatible servers).
    Bearer,
    /// The key alone in the named header (`x-api-key` for Anthropic).
    Named(&'static str),
}

impl KeyHeader {
    fn name_and_prefix(self) -> (HeaderName, &'static str) {
        match self {
            KeyHeader::Bearer => (AUTHORIZATION, "Bearer "),
            KeyHeader::Named(name) => (HeaderName::from_static(name), ""),
        }
    }
}

/// A configured endpoint: client, URL, headers, the key (a secret until each request's
/// header is built, marked sensitive), retries.
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: String,
    /// The base URL as messages show it (no credentials).
    base: String,
    /// What `url` adds to the base (`messages`, `chat/completions`).
    path: String,
    headers: HeaderMap,
    pub provider: String,
    /// Where the key goes, and the key.
    key: Option<(HeaderName, &'static str, SecretString)>,
    retry: super::RetryPolicy,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the headers or the secret: they hold the API key.
        f.debug_struct("Endpoint").field("url", &self.url).field("provider", &self.provider).finish_non_exhaustive()
    }
}

impl Endpoint {
    pub fn new(
        config: &ProviderConfig,
        path: &str,
        key_header: KeyHeader,
        extra: &[(&'static str, &'static str)],
    ) -> Result<Self, ProviderError> {
        let provider = config.name.clone();
        config.check_base_url()?;
        let bad = |detail: String| ProviderError::Config { provider: provider.clone(), detail };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(reqwest::header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        for (name, value) in extra {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let key = match config.api_key.clone().filter(|k| !k.expose_secret().is_empty()) {
            Some(key) => {
                let (name, prefix) = key_header.name_and_prefix();
                // Checked now, so Settings refuses a key that cannot be sent before storing it.
                secret_header(prefix, &key).map_err(|err| bad(format!("the API key cannot be sent: {err}")))?;
                Some((name, prefix, key))
            }
            None => None,
        };
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(300))
            // A redirect would resend the key and the whole conversation to wherever it
            // points: a 3xx is answered with an error that names the target instead.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| bad(format!("the HTTP client could not start ({})", chain(&e))))?;
        Ok(Self {
            client,
            url: config.url(path),
            base: without_credentials(config.base_url.trim()),
            path: path.to_owned(),
            headers,
            provider,
            key,
            retry: config.retry,
        })
    }

    /// Removes the API key from text that came from the provider.
    pub fn scrub(&self, text: &str) -> String {
        // Redacted before it is shortened: a cut through the key would leave its start.
        let text = match &self.key {
            Some((_, _, key)) => redact(text, key),
            None => text.to_owned(),
        };
        text.chars().take(300).collect()
    }

    /// Scrubs the key out of an error whose words came from the provider.
    pub fn scrub_error(&self, err: ProviderError) -> ProviderError {
        match err {
            ProviderError::StreamFailed { provider, detail } => ProviderError::StreamFailed { provider, detail: self.scrub(&detail) },
            ProviderError::Protocol { provider, detail } => ProviderError::Protocol { provider, detail: self.scrub(&detail) },
            other => other,
        }
    }

    async fn send_once(&self, body: &str) -> Result<reqwest::Response, ProviderError> {
        let mut post = self.client.post(&self.url).headers(self.headers.clone());
        if let Some((name, prefix, key)) = &self.key {
            // Checked in `new`; the header is made here, per request, marked sensitive.
            let value = secret_header(prefix, key).map_err(|err| ProviderError::Config {
                provider: self.provider.clone(),
                detail: format!("the API key cannot be sent: {err}"),
            })?;
            post = post.header(name.clone(), value);
        }
        let response = post.body(body.to_owned()).send().await.map_err(|e| ProviderError::Unreachable {
            provider: self.provider.clone(),
            url: self.url.clone(),
            detail: chain(&e),
            transport: if e.is_timeout() {
                TransportFailure::Timeout
            } else if e.is_connect() {
                TransportFailure::Connect
            } else {
                TransportFailure::Other
            },
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let code = status.as_u16();
        let provider = self.provider.clone();
        if status.is_redirection() {
            return Err(self.redirected(code, response.headers().get(LOCATION)));
        }
        Err(match code {
            401 | 403 => ProviderError::Unauthorized { provider, status: code },
            429 => ProviderError::RateLimited { provider, retry_after },
            500..=599 => ProviderError::ServerFailed { provider, status: code },
            _ => {
                let text = response.text().await.unwrap_or_default();
                let message = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_else(|| status.canonical_reason().unwrap_or("no explanation").to_owned());
                ProviderError::Rejected { provider, status: code, message: self.scrub(&message) }
            }
        })
    }

    /// The error for a 3xx: where it pointed, and the base URL that reaches it directly.
    fn redirected(&self, status: u16, location: Option<&HeaderValue>) -> ProviderError {
        let Some(location) = location.and_then(|v| v.to_str().ok()).filter(|v| !v.trim().is_empty()) else {
            return ProviderError::Protocol {
                provider: self.provider.clone(),
                detail: format!("it answered with a redirect (HTTP {status}) that names no address"),
            };
        };
        // A relative Location is resolved against the request, as a browser would.
        let resolved = reqwest::Url::parse(&self.url).and_then(|url| url.join(location.trim()));
        let (location, suggested) = match resolved {
            Ok(target) => {
                let shown = without_credentials(target.as_str());
                let suffix = format!("/{}", self.path);
                let plain = target.query().is_none() && target.fragment().is_none();
                let suggested = match shown.strip_suffix(&suffix) {
                    Some(base) if plain => base.to_owned(),
                    _ => shown.clone(),
                };
                (shown, suggested)
            }
            Err(_) => {
                let shown = without_credentials(location);
                (shown.clone(), shown)
            }
        };
        ProviderError::Redirected {
            provider: self.provider.clone(),
            status,
            base: self.base.clone(),
            location: self.scrub(&location),
            suggested: self.scrub(&suggested),
        }
    }

    /// What a try's result says about it, for the timeline (the error itself stays the
    /// caller's).
    fn outcome_of(result: &Result<reqwest::Response, ProviderError>) -> TryOutcome {
        match result {
            Ok(response) => TryOutcome::Status { code: response.status().as_u16() },
            Err(err) => err.try_outcome(),
        }
    }

    /// Streams the answer to `body` through `decoder`, reporting each try to `tries`.
    pub fn stream<'a, D: WireDecoder + 'a>(
        &'a self,
        body: Value,
        decoder: D,
        cancel: &'a CancellationToken,
        tries: TryReport,
    ) -> BoxStream<'a, Result<ModelEvent, ProviderError>> {
        let body = body.to_string();
        let state = Drive {
            endpoint: self,
            body,
            decoder,
            cancel,
            phase: Phase::Connect { retry: 0 },
            tries,
            sse: Framer::with_max_event_bytes(MAX_EVENT_BYTES),
            queue: VecDeque::new(),
            tool_calls: 0,
            ended: false,
        };
        futures::stream::unfold(state, Drive::next).boxed()
    }
}

enum Phase {
    /// Send the request; `retry` tries came before (each retried 429, 5xx or unreachable).
    Connect {
        retry: u32,
    },
    /// Wait out a retry's backoff, then send again.
    Backoff {
        retry: u32,
        delay: Duration,
    },
    Body(BoxStream<'static, reqwest::Result<bytes::Bytes>>),
    Done,
}

struct Drive<'a, D> {
    endpoint: &'a Endpoint,
    body: String,
    decoder: D,
    cancel: &'a CancellationToken,
    phase: Phase,
    /// Where each try is reported (the run's timeline).
    tries: TryReport,
    sse: Framer,
    queue: VecDeque<Result<ModelEvent, ProviderError>>,
    /// Tool calls this answer has started.
    tool_calls: usize,
    /// An error has been yielded: nothing follows.
    ended: bool,
}

impl<D: WireDecoder> Drive<'_, D> {
    async fn next(mut self) -> Option<(Result<ModelEvent, ProviderError>, Self)> {
        loop {
            if self.ended {
                return None;
            }
            // A cancel wins over events already decoded: the caller asked to stop now.
            if self.cancel.is_cancelled() {
                self.phase = Phase::Done;
                self.queue.clear();
                self.ended = true;
                return Some((Err(ProviderError::Cancelled), self));
            }
            if let Some(item) = self.queue.pop_front() {
                // After `Finished` the body is still read to the format's end, so the
                // connection ends cleanly; after an error nothing follows.
                self.ended = item.is_err();
                if self.ended {
                    self.phase = Phase::Done;
                }
                return Some((item, self));
            }
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Connect { retry } => {
                    let sent = tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => Err(ProviderError::Cancelled),
                        sent = self.endpoint.send_once(&self.body) => sent,
                    };
                    if !matches!(sent, Err(ProviderError::Cancelled)) {
                        self.tries.report(ProviderTry {
                            provider: self.endpoint.provider.clone(),
                            retry,
                            outcome: Endpoint::outcome_of(&sent),
                            at: crate::store::now_ms(),
                        });
                    }
                    match sent {
                        Ok(response) => self.phase = Phase::Body(response.bytes_stream().boxed()),
                        Err(err) if err.is_retryable() && retry < self.endpoint.retry.max_retries => {
                            let delay = self.endpoint.retry.delay(retry, err.retry_after());
                            tracing::debug!(provider = %self.endpoint.provider, retry, ?delay, "retrying model request");
                            self.phase = Phase::Backoff { retry: retry + 1, delay };
                        }
                        Err(err) => self.queue.push_back(Err(err)),
                    }
                }
                Phase::Backoff { retry, delay } => {
                    tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => self.queue.push_back(Err(ProviderError::Cancelled)),
                        () = tokio::time::sleep(delay) => self.phase = Phase::Connect { retry },
                    }
                }
                Phase::Body(mut body) => {
                    let chunk = tokio::select! {
                        biased;
                        // Returning without the body drops it: the connection closes.
                        () = self.cancel.cancelled() => {
                            drop(body);
                            self.queue.push_back(Err(ProviderError::Cancelled));
                            continue;
                        }
                        chunk = body.next() => chunk,
                    };
                    match chunk {
                        Some(Ok(bytes)) => {
                            // The events before an over-long one are decoded, then it ends the
                            // stream; dropping `body` closes the connection.
                            let (events, too_large) = frames(&mut self.sse, &bytes);
                            if self.feed(events) == Flow::Continue {
                                match too_large {
                                    Some(err) => self.queue.push_back(Err(self.too_large(err))),
                                    None => self.phase = Phase::Body(body),
                                }
                            }
                        }
                        Some(Err(e)) => self.queue.push_back(Err(ProviderError::StreamFailed {
                            provider: self.endpoint.provider.clone(),
                            detail: format!("the connection broke ({})", chain(&e)),
                        })),
                        None => {
                            // A last event without its blank line is taken as it stands
                            // (servers that close right after `data: [DONE]`).
                            let events: Vec<SseEvent> = last_event(&mut self.sse).into_iter().collect();
                            if self.feed(events) == Flow::Continue {
                                let mut out = VecDeque::new();
                                let end = self.decoder.eof(&mut out);
                                self.queue.extend(out.into_iter().map(Ok));
                                if let Err(err) = end {
                                    self.queue.push_back(Err(err));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn too_large(&self, EventTooLarge { limit }: EventTooLarge) -> ProviderError {
        ProviderError::Protocol {
            provider: self.endpoint.provider.clone(),
            detail: format!("one event of its stream was longer than {} MiB, so Hearth stopped reading", limit / (1024 * 1024)),
        }
    }

    /// Decodes events into the queue, counting tool calls; `Done` once the format ended or
    /// anything failed (a decoder error, one call too many).
    fn feed(&mut self, events: Vec<SseEvent>) -> Flow {
        for event in events {
            let mut out = VecDeque::new();
            let flow = self.decoder.feed(event, &mut out);
            for event in out {
                if matches!(event, ModelEvent::ToolCallStart { .. }) {
                    self.tool_calls += 1;
                    if self.tool_calls > MAX_TOOL_CALLS_PER_TURN {
                        self.queue.push_back(Err(ProviderError::TooManyToolCalls {
                            provider: self.endpoint.provider.clone(),
                            limit: MAX_TOOL_CALLS_PER_TURN,
                        }));
                        return Flow::Done;
                    }
                }
                self.queue.push_back(Ok(event));
            }
            match flow {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => return Flow::Done,
                Err(err) => {
                    self.queue.push_back(Err(self.endpoint.scrub_error(err)));
                    return Flow::Done;
                }
            }
        }
        Flow::Continue
    }
}

/// An error and its sources, joined (reqwest's own text hides the cause).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Parses one event's JSON.
/// The events one chunk completes, up to the first that went past the framer's limit (which
/// ends the stream: what follows it is dropped).
pub(crate) fn frames(framer: &mut Framer, chunk: &[u8]) -> (Vec<SseEvent>, Option<EventTooLarge>) {
    let (mut events, mut too_large) = (Vec::new(), None);
    framer.feed_with(chunk, |frame| match frame {
        Ok(frame) if too_large.is_none() => events.push(SseEvent::from(frame)),
        Ok(_) => {}
        Err(err) => {
            too_large.get_or_insert(err);
        }
    });
    (events, too_large)
}

/// At the end of the body, a last event without its blank line, taken as it stands (servers
/// that close right after `data: [DONE]`).
pub(crate) fn last_event(framer: &mut Framer) -> Option<SseEvent> {
    match framer.finish() {
        End::Unterminated { frame: Some(frame), .. } => Some(SseEvent::from(frame)),
        End::Unterminated { frame: None, .. } | End::Clean => None,
    }
}

pub(crate) fn json(provider: &str, event: &SseEvent) -> Result<Value, ProviderError> {
    serde_json::from_str(&event.data)
        .map_err(|e| ProviderError::Protocol { provider: provider.to_owned(), detail: format!("an event was not JSON: {e}") })
}

/// The message of an error object (`{"error": {"message": …}}` or `{"message": …}`).
pub(crate) fn error_message(value: &Value) -> String {
    value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the provider reported an error")
        .to_owned()
}

#[cfg(test)]
mod scrub_tests {
    use super::*;

    /// The key is taken out before the text is shortened: a cut at 300 characters through the
    /// key would otherwise leave its start in the message.
    #[test]
    fn a_key_at_the_cut_leaves_no_prefix() {
        let key = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz";
        let config = ProviderConfig::new("Scripted", "http://127.0.0.1:9", Some(SecretString::from(key.to_owned())));
        let Ok(endpoint) = Endpoint::new(&config, "chat/completions", KeyHeader::Bearer, &[]) else {
            panic!("a loopback endpoint builds");
        };
        let text = format!("{} {key} and more", "x".repeat(280));
        let scrubbed = endpoint.scrub(&text);
        assert!(scrubbed.chars().count() <= 300);
        assert!(!scrubbed.contains("sk-live"), "{scrubbed}");
        assert!(scrubbed.contains("[redacted]"), "{scrubbed}");
    }
}
