//! One harness run: POST the input, decode the SSE answer, verify and forward its events.

use hearth_protocol::agui::{Event, RunAgentInput, RunFinishedEvent, SseDecoder, SseError, Verifier, VerifyError};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use tokio_util::sync::CancellationToken;

use super::transcript::Transcript;
use super::{Inner, root_cause};
use crate::agent::emit::{Emitter, Stopped};
use crate::providers::without_credentials;

/// How a harness run ended (Stop is `Err(Stopped)` instead).
pub(super) enum RemoteEnd {
    /// `RUN_FINISHED`, with what the run said and did.
    Finished(Box<(RunFinishedEvent, Transcript)>),
    /// The run failed; the message is for the owner.
    Failed(String),
}

impl Inner {
    /// Runs `request` on the harness, forwarding its events (all but its run framing) to `out`.
    pub(super) async fn remote_run(
        &self,
        out: &Emitter,
        request: &RunAgentInput,
        cancel: &CancellationToken,
    ) -> Result<RemoteEnd, Stopped> {
        let body = match serde_json::to_vec(request) {
            Ok(body) => body,
            Err(err) => return Ok(RemoteEnd::Failed(format!("Hearth could not encode the run for the agent at {} ({err}).", self.host))),
        };
        let mut post =
            self.client.post(self.endpoint.clone()).header(ACCEPT, "text/event-stream").header(CONTENT_TYPE, "application/json").body(body);
        if let Some(token) = &self.token {
            // Checked when the agent was built; the header is made here, marked sensitive.
            match token.header() {
                Ok(value) => post = post.header(AUTHORIZATION, value),
                Err(err) => return Ok(RemoteEnd::Failed(format!("The harness token cannot be sent: {err}."))),
            }
        }
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Stopped),
            sent = post.send() => sent,
        };
        let mut response = match sent {
            Ok(response) => response,
            Err(err) => return Ok(RemoteEnd::Failed(self.send_failed(&err))),
        };
        if let Some(message) = self.refused(&response) {
            return Ok(RemoteEnd::Failed(message));
        }
        let mut decoder = SseDecoder::new();
        let mut verifier = Verifier::new();
        let mut transcript = Transcript::new(request.state.clone());
        let mut decoded = Vec::new();
        // The whole reply is bounded, so the transcript rebuilt from it is too.
        let mut received = 0usize;
        loop {
            // Dropping `response` on Stop closes the connection: the harness sees it go.
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Stopped),
                chunk = response.chunk() => chunk,
            };
            let chunk = match chunk {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(err) if err.is_timeout() => {
                    return Ok(RemoteEnd::Failed(format!(
                        "The agent at {} sent nothing for {} s in the middle of its reply; the run was stopped. \
                         Check that it is still running, then try again.",
                        self.host,
                        self.read_timeout.as_secs_f64()
                    )));
                }
                Err(err) => {
                    return Ok(RemoteEnd::Failed(format!(
                        "The connection to the agent at {} broke mid-reply ({}); the run was stopped.",
                        self.host,
                        root_cause(&err)
                    )));
                }
            };
            received = received.saturating_add(chunk.len());
            if received > self.max_reply_bytes {
                return Ok(RemoteEnd::Failed(format!(
                    "The agent at {} sent more than {} in one run; the run was stopped so its reply cannot fill memory. \
                     Ask again with a narrower request.",
                    self.host,
                    size(self.max_reply_bytes)
                )));
            }
            decoder.feed_into(&chunk, &mut decoded);
            for result in decoded.drain(..) {
                let event = match result {
                    Ok(event) => event,
                    Err(err) => return Ok(RemoteEnd::Failed(self.undecodable(&err))),
                };
                if let Err(err) = verifier.check(&event) {
                    return Ok(RemoteEnd::Failed(self.out_of_order(&err)));
                }
                match event {
                    // Hearth frames the whole owner turn with its own RUN_STARTED/RUN_FINISHED.
                    Event::RunStarted(_) => {}
                    Event::RunFinished(finished) => return Ok(RemoteEnd::Finished(Box::new((finished, transcript)))),
                    Event::RunError(error) => {
                        return Ok(RemoteEnd::Failed(format!("The agent at {} reported an error: {}", self.host, error.message.trim())));
                    }
                    event => {
                        transcript.observe(&event);
                        out.send(event).await?;
                    }
                }
            }
        }
        let message = match decoder.finish() {
            Err(err) => self.undecodable(&err),
            Ok(()) => format!(
                "The agent at {} closed the stream without finishing its run (no RUN_FINISHED or RUN_ERROR); \
                 the run was stopped.",
                self.host
            ),
        };
        Ok(RemoteEnd::Failed(message))
    }

    /// A request that never got an answer: connection refused, timeout, TLS.
    fn send_failed(&self, err: &reqwest::Error) -> String {
        let cause = root_cause(err);
        if err.is_connect() {
            format!(
                "Hearth could not connect to the agent at {} ({cause}). Check that it is running and that the address is right.",
                self.host
            )
        } else if err.is_timeout() {
            format!("The agent at {} did not answer in time. Check that it is running, then try again.", self.host)
        } else {
            format!("Hearth could not send the request to the agent at {} ({cause}).", self.host)
        }
    }

    /// An answer that is not an event stream: an HTTP error status or another content type.
    fn refused(&self, response: &reqwest::Response) -> Option<String> {
        let status = response.status();
        let host = &self.host;
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Some(format!(
                "The agent at {host} refused Hearth's credentials (HTTP {}). Check the harness token in Settings.",
                status.as_u16()
            ));
        }
        if status == StatusCode::NOT_FOUND {
            return Some(format!(
                "The agent at {host} has nothing at {} (HTTP 404). Check the harness endpoint's path.",
                self.endpoint.path()
            ));
        }
        if status.is_redirection() {
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.trim().is_empty())
                .map(|v| self.endpoint.join(v.trim()).map_or_else(|_| without_credentials(v), |url| without_credentials(url.as_str())));
            return Some(match target {
                Some(target) => format!(
                    "The agent at {host} answered with a redirect to {target} (HTTP {}); Hearth does not follow redirects, \
                     because they would resend your token. Set the harness endpoint to {target} if you trust it.",
                    status.as_u16()
                ),
                None => format!(
                    "The agent at {host} answered with a redirect (HTTP {}) that names no address; Hearth does not follow \
                     redirects. Enter the agent's final address as the harness endpoint.",
                    status.as_u16()
                ),
            });
        }
        if status.is_server_error() {
            return Some(format!("The agent at {host} failed (HTTP {}). Try again later.", status.as_u16()));
        }
        if !status.is_success() {
            return Some(format!("The agent at {host} rejected the run (HTTP {}).", status.as_u16()));
        }
        let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if !content_type.trim_start().to_ascii_lowercase().starts_with("text/event-stream") {
            let shown = if content_type.is_empty() { "no content type" } else { content_type };
            return Some(format!(
                "The agent at {host} answered with {shown:?}, not an AG-UI event stream (text/event-stream); \
                 the run was stopped."
            ));
        }
        None
    }

    fn undecodable(&self, err: &SseError) -> String {
        let host = &self.host;
        match err {
            SseError::Json { source, .. } => {
                format!("The agent at {host} sent something that is not an AG-UI 1.0 event ({source}); the run was stopped.")
            }
            SseError::Truncated { .. } => format!("The agent at {host} closed the stream in the middle of an event; the run was stopped."),
            SseError::FrameTooLarge { limit } => {
                format!("The agent at {host} sent an event larger than {} MiB; the run was stopped.", limit / (1024 * 1024))
            }
        }
    }

    fn out_of_order(&self, err: &VerifyError) -> String {
        let host = &self.host;
        let sent = match err {
            VerifyError::NotOpen { event, entity, id } => {
                format!("sent {event} for a {entity} it never started (`{id}`)")
            }
            VerifyError::AlreadyOpen { event, entity, id } => {
                format!("sent {event} for {entity} `{id}`, which was already open")
            }
            VerifyError::FirstEventNotRunStarted { event } => format!("sent {event} before RUN_STARTED"),
            VerifyError::OpenAtRunFinished { entity, ids } => {
                format!("finished its run with {entity}s still open ({})", ids.join(", "))
            }
            other => format!("broke the AG-UI event order ({other})"),
        };
        format!("The agent at {host} {sent}; the run was stopped.")
    }
}

/// `bytes` in words: "32 MiB", "64 KiB", "100 bytes".
fn size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}
