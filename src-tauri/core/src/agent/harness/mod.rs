//! External harness mode: Hearth as an AG-UI *client* of an agent that runs elsewhere.
//!
//! [`HarnessAgent`] POSTs an AG-UI 1.0 [`RunAgentInput`] (with the tools Hearth declares) to
//! the harness's endpoint and reads the `text/event-stream` answer incrementally. Every event
//! is checked by its own [`Verifier`](hearth_protocol::agui::Verifier) (one per harness run)
//! and forwarded into the Hearth run; the harness's own `RUN_STARTED`/`RUN_FINISHED` are
//! replaced by one Hearth `RUN_STARTED` … `RUN_FINISHED` pair, because the run driver
//! (`crate::runs`) expects exactly one run per owner message.
//!
//! When a harness run finishes after calling tools Hearth declared, Hearth runs those calls
//! locally — [`run_serially`](crate::tools::run_serially) over
//! the one registry, so the same dispatch, journal and approval
//! gate as every other agent (prepare tools only propose; nothing here approves) — emits a
//! `TOOL_CALL_RESULT` for each, and POSTs a continuation whose messages carry the assistant
//! turn and the tool results, at most [`MAX_CONTINUATIONS`] times per owner message. Calls to
//! tools Hearth did not declare belong to some other client: they are shown, never run.
//!
//! A harness that breaks the event rules, sends an undecodable frame, closes the stream early
//! or answers with an HTTP error ends the run with a `RUN_ERROR` that says what it did wrong.
//! The bearer token is sent as a header and appears in no log, error or event.
//!
//! Bounds: the endpoint is `https://`, or `http://` only to this computer; a redirect is
//! refused (it would resend the token), never followed; a reply that sends nothing for
//! [`HarnessConfig::read_timeout`] ends the run, and so does one longer than
//! [`HarnessConfig::max_reply_bytes`] (the transcript is rebuilt from it); one round may ask
//! for at most [`MAX_TOOL_CALLS_PER_TURN`] calls of Hearth's tools.

mod remote;
mod state;
mod transcript;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use hearth_protocol::agui::{
    Event, Message, MessageContent, RunAgentInput, RunErrorEvent, RunFinishedEvent, Tool, ToolCallResultEvent, ToolMessage, ToolRole,
};
use tokio_util::sync::CancellationToken;

use super::Agent;
pub use super::ToolContextFactory;
use super::emit::{Emitter, Stopped, event_stream};
use crate::providers::{MAX_TOOL_CALLS_PER_TURN, without_credentials};
pub use crate::secret::BearerToken;
use crate::tools::{ToolCall, run_serially};
use remote::RemoteEnd;

/// How many continuations (POSTs after the first) one owner message may cause.
pub const MAX_CONTINUATIONS: usize = 6;

/// How long a harness may send nothing (no headers, no event, no keep-alive) by default.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The most one harness run's reply may send by default: 32 MiB (an event may be 16 MiB).
pub const DEFAULT_MAX_REPLY_BYTES: usize = 32 * 1024 * 1024;

/// The AG-UI version Hearth speaks to a harness.
pub const PROTOCOL_VERSION: &str = "1.0";

/// Where the harness is and what Hearth offers it.
#[derive(Debug, Clone)]
pub struct HarnessConfig {
    /// The harness's AG-UI endpoint, POSTed to for every run: `https://`, or `http://` only
    /// to this computer (`localhost`, 127.0.0.0/8, `::1`).
    pub endpoint: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub bearer_token: Option<BearerToken>,
    /// The tools Hearth declares (names and JSON Schemas from the tool registry). Only calls
    /// to these are run by Hearth; any other call is left to the harness.
    pub tools: Vec<Tool>,
    /// How long connecting may take before the run fails.
    pub connect_timeout: Duration,
    /// How long the harness may send nothing before the run fails.
    pub read_timeout: Duration,
    /// The most one harness run's reply may send; past it the run fails.
    pub max_reply_bytes: usize,
}

impl HarnessConfig {
    /// A config with no token, a 10 s connect timeout and the default read timeout and
    /// reply bound.
    pub fn new(endpoint: impl Into<String>, tools: Vec<Tool>) -> Self {
        Self {
            endpoint: endpoint.into(),
            bearer_token: None,
            tools,
            connect_timeout: Duration::from_secs(10),
            read_timeout: DEFAULT_READ_TIMEOUT,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        }
    }
}

/// Why a [`HarnessAgent`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The endpoint is not an absolute http(s) URL.
    #[error(
        "The harness endpoint {endpoint:?} is not an http:// or https:// URL. Enter the agent's full address, e.g. http://127.0.0.1:8000/agent."
    )]
    BadEndpoint {
        /// The endpoint as given (credentials in it are not shown).
        endpoint: String,
    },
    /// A plain `http://` endpoint on another computer.
    #[error(
        "The harness endpoint {endpoint} uses plain http:// to another computer, which would send your token and conversations unencrypted. Use https://, or http:// only for an agent on this computer (localhost, 127.0.0.1 or ::1)."
    )]
    PlainHttp {
        /// The endpoint as given (credentials in it are not shown).
        endpoint: String,
    },
    /// The token cannot be sent as a header.
    #[error("The harness token cannot be sent: {0}. Check the harness token in Settings.")]
    BadToken(#[from] crate::secret::InvalidSecretHeader),
    /// The HTTP client could not be built (TLS set-up).
    #[error("Hearth could not set up its HTTP client for the harness ({reason}).")]
    Client {
        /// What failed.
        reason: String,
    },
}

/// An [`Agent`] that runs an external AG-UI agent over HTTP + SSE.
#[derive(Clone)]
pub struct HarnessAgent {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HarnessAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessAgent").field("host", &self.inner.host).field("tools", &self.inner.tools.len()).finish()
    }
}

struct Inner {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    /// `host[:port]`, for messages (never the path, query or credentials).
    host: String,
    token: Option<BearerToken>,
    tools: Vec<Tool>,
    declared: HashSet<String>,
    tool_context: ToolContextFactory,
    read_timeout: Duration,
    max_reply_bytes: usize,
}

impl HarnessAgent {
    /// Checks the endpoint and builds the HTTP client.
    pub fn new(config: HarnessConfig, tool_context: ToolContextFactory) -> Result<Self, HarnessError> {
        let endpoint = reqwest::Url::parse(&config.endpoint)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .ok_or_else(|| HarnessError::BadEndpoint { endpoint: without_credentials(&config.endpoint) })?;
        if endpoint.scheme() == "http" && !crate::providers::is_loopback(&endpoint) {
            return Err(HarnessError::PlainHttp { endpoint: without_credentials(&config.endpoint) });
        }
        let host = match (endpoint.host_str(), endpoint.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => String::new(),
        };
        if let Some(token) = &config.bearer_token {
            token.header()?;
        }
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            // A redirect could carry the request (and its token) elsewhere: refuse it.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| HarnessError::Client { reason: root_cause(&err) })?;
        let declared = config.tools.iter().map(|tool| tool.name.clone()).collect();
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                endpoint,
                host,
                token: config.bearer_token,
                tools: config.tools,
                declared,
                tool_context,
                read_timeout: config.read_timeout,
                max_reply_bytes: config.max_reply_bytes,
            }),
        })
    }

    /// `host[:port]` of the harness, as messages name it.
    pub fn host(&self) -> &str {
        &self.inner.host
    }
}

impl Agent for HarnessAgent {
    fn run(&self, input: RunAgentInput, cancel: CancellationToken) -> BoxStream<'static, Event> {
        let inner = self.inner.clone();
        // Returning (Stop, or nobody reads) drops the HTTP response, so the harness sees the
        // connection close.
        event_stream(cancel.clone(), move |out| async move { inner.respond(&out, input, cancel).await })
    }
}

impl Inner {
    async fn respond(&self, out: &Emitter, input: RunAgentInput, cancel: CancellationToken) -> Result<(), Stopped> {
        let thread_id = input.thread_id.clone();
        let run_id = input.run_id.clone();
        out.run_started(&input).await?;
        let mut request =
            RunAgentInput { protocol_version: Some(PROTOCOL_VERSION.to_owned()), tools: self.tools.clone(), resume: None, ..input };
        for round in 0..=MAX_CONTINUATIONS {
            let (finished, transcript) = match self.remote_run(out, &request, &cancel).await? {
                RemoteEnd::Failed(message) => return self.fail(out, message).await,
                RemoteEnd::Finished(finished) => *finished,
            };
            let calls = transcript.hearth_calls(&self.declared);
            if calls.is_empty() || finished.is_interrupted() {
                let done = RunFinishedEvent {
                    thread_id,
                    run_id,
                    result: finished.result,
                    outcome: finished.outcome,
                    usage: finished.usage,
                    ..Default::default()
                };
                return out.send(Event::RunFinished(done)).await;
            }
            if calls.len() > MAX_TOOL_CALLS_PER_TURN {
                let message = format!(
                    "The agent at {} asked for {} calls of Hearth's tools in one round, more than the {MAX_TOOL_CALLS_PER_TURN} \
                     Hearth runs at once; none were run. Ask again with a narrower request.",
                    self.host,
                    calls.len()
                );
                return self.fail(out, message).await;
            }
            if round == MAX_CONTINUATIONS {
                let message = format!(
                    "The agent at {} kept calling Hearth's tools after {MAX_CONTINUATIONS} rounds of results; \
                     the run was stopped so it cannot loop. Ask again with a narrower request.",
                    self.host
                );
                return self.fail(out, message).await;
            }
            let (results, settled) = self.run_tools(out, (&thread_id, &run_id), &request.run_id, &calls, &cancel).await?;
            if settled {
                // A call in doubt or a proposal awaiting review: the owner acts next, as in
                // Hearth's own chat loop. The results were shown; they are not sent back for
                // another round, so the agent cannot go on past them.
                return out.send(Event::RunFinished(RunFinishedEvent::success(thread_id, run_id, None))).await;
            }
            request.state = transcript.state().clone();
            request.messages.extend(transcript.messages(&self.declared));
            request.messages.extend(results);
            request.parent_run_id = Some(std::mem::replace(&mut request.run_id, uuid::Uuid::new_v4().to_string()));
        }
        Ok(())
    }

    /// Runs Hearth's calls serially, emits their results, and returns them as tool messages,
    /// with whether one of them settles the run (a question, a proposal awaiting review, a
    /// call in doubt: the rest were not run).
    async fn run_tools(
        &self,
        out: &Emitter,
        (thread_id, run_id): (&str, &str),
        remote_run_id: &str,
        calls: &[ToolCall],
        cancel: &CancellationToken,
    ) -> Result<(Vec<Message>, bool), Stopped> {
        if cancel.is_cancelled() {
            return Err(Stopped);
        }
        let ctx = (self.tool_context)(thread_id, run_id, cancel.clone());
        // Harnesses often number calls per run ("call-1"); scoping by the harness run keeps
        // two different calls from sharing a proposal key or journal operation.
        let scoped: Vec<ToolCall> =
            calls.iter().map(|call| ToolCall { id: format!("{remote_run_id}:{}", call.id), ..call.clone() }).collect();
        let outputs = run_serially(&ctx, &scoped, 0).await;
        let settled = outputs.iter().any(|(_, output)| output.outcome.is_some());
        let mut messages = Vec::with_capacity(calls.len());
        for (call, (_, output)) in calls.iter().zip(outputs) {
            let message_id = uuid::Uuid::new_v4().to_string();
            let content = MessageContent::Text(output.content.clone());
            out.send(Event::ToolCallResult(ToolCallResultEvent {
                message_id: message_id.clone(),
                tool_call_id: call.id.clone(),
                content: content.clone(),
                role: Some(ToolRole::Tool),
                ..Default::default()
            }))
            .await?;
            messages.push(Message::Tool(ToolMessage {
                id: message_id,
                content,
                tool_call_id: call.id.clone(),
                error: output.is_error.then(|| output.content.clone()),
                ..Default::default()
            }));
        }
        Ok((messages, settled))
    }

    async fn fail(&self, out: &Emitter, message: String) -> Result<(), Stopped> {
        let message = self.redact(message);
        out.send(Event::RunError(RunErrorEvent { message, ..Default::default() })).await
    }

    /// Removes the token from text that may echo what the harness sent.
    fn redact(&self, text: String) -> String {
        match &self.token {
            Some(token) => token.redact(&text),
            None => text,
        }
    }
}

/// The innermost cause of an error (e.g. "Connection refused (os error 111)"), which names
/// no URL or header.
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn factory() -> ToolContextFactory {
        Arc::new(|_: &str, _: &str, _: CancellationToken| -> crate::tools::ToolContext { unreachable!("no tool runs in these tests") })
    }

    #[test]
    fn endpoints_must_be_http_urls_and_errors_hide_credentials() {
        for bad in ["not a url", "ftp://127.0.0.1/agent", "file:///tmp/agent", "https://user:pw@/x"] {
            let err = HarnessAgent::new(HarnessConfig::new(bad, Vec::new()), factory()).unwrap_err().to_string();
            assert!(err.contains("not an http:// or https:// URL"), "{bad}: {err}");
            assert!(!err.contains("pw"), "{err}");
        }
        for plain in ["http://agent.example.com/agent", "http://user:pw@10.0.0.5:8000/agent", "http://[fe80::1]/agent"] {
            let err = HarnessAgent::new(HarnessConfig::new(plain, Vec::new()), factory()).unwrap_err().to_string();
            assert!(err.contains("plain http:// to another computer") && err.contains("Use https://"), "{plain}: {err}");
            assert!(!err.contains("pw"), "{err}");
        }
        for fine in ["https://agent.example.com/agent", "http://localhost:8000/agent", "http://127.0.0.2/agent", "http://[::1]:9/agent"] {
            assert!(HarnessAgent::new(HarnessConfig::new(fine, Vec::new()), factory()).is_ok(), "{fine}");
        }
        let agent = HarnessAgent::new(HarnessConfig::new("http://user:secret@127.0.0.1:9/agent?key=k", Vec::new()), factory()).unwrap();
        assert_eq!(agent.host(), "127.0.0.1:9");
        assert!(!format!("{agent:?}").contains("secret"));
    }

    #[test]
    fn the_token_is_redacted_from_failure_text_and_debug_output() {
        let config =
            HarnessConfig { bearer_token: Some(BearerToken::new("tok-123")), ..HarnessConfig::new("http://127.0.0.1:9/agent", Vec::new()) };
        assert!(!format!("{config:?}").contains("tok-123"));
        let agent = HarnessAgent::new(config, factory()).unwrap();
        let said = agent.inner.redact("The agent at 127.0.0.1:9 reported an error: bad token tok-123".to_owned());
        assert_eq!(said, "The agent at 127.0.0.1:9 reported an error: bad token [redacted]");
    }
}
