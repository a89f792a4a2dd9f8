//! One request: check where it is addressed and from, authenticate, parse the
//! `RunAgentInput`, stream the run as SSE.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};

use bytes::Bytes;
use futures::StreamExt;
use hearth_protocol::agui::RunAgentInput;
use hearth_protocol::error::ErrorCode;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use tokio::sync::Semaphore;

use super::{RunStarter, Slot};
use crate::secret::BearerToken;

/// The largest `RunAgentInput` accepted.
const MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What every request on one endpoint is checked against.
pub(super) struct Gate {
    /// The `Host` values naming this endpoint, lower case.
    hosts: Vec<String>,
    /// Shared with the server, which may replace it (a regenerated token).
    token: Arc<RwLock<BearerToken>>,
    /// One permit per run streaming now.
    runs: Arc<Semaphore>,
    max_runs: usize,
}

impl Gate {
    pub(super) fn new(addr: SocketAddr, token: Arc<RwLock<BearerToken>>, max_runs: usize) -> Self {
        let port = addr.port();
        let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
        let own = addr.to_string();
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        Self { hosts, token, runs: Arc::new(Semaphore::new(max_runs)), max_runs }
    }

    /// Whether the request's `Authorization` carries the current token.
    fn admits(&self, authorization: Option<&[u8]>) -> bool {
        self.token.read().unwrap_or_else(PoisonError::into_inner).admits(authorization)
    }

    /// Why a request is refused before its token is looked at: it names another host (a
    /// rebound DNS name), or it comes from a web page (it has an `Origin`).
    fn refuse_addressing<B>(&self, request: &Request<B>) -> Option<Response<Body>> {
        if request.headers().contains_key(header::ORIGIN) {
            return Some(error(
                StatusCode::FORBIDDEN,
                "Hearth's AG-UI endpoint does not answer web pages (the request has an Origin header). \
                 Call it from a local client, not a browser.",
            ));
        }
        let hosts = request.headers().get_all(header::HOST);
        let mut named: Vec<&[u8]> = hosts.iter().map(|v| v.as_bytes()).collect();
        if let Some(authority) = request.uri().authority() {
            named.push(authority.as_str().as_bytes());
        }
        let admitted = |value: &[u8]| self.hosts.iter().any(|host| host.as_bytes().eq_ignore_ascii_case(value));
        if named.is_empty() || hosts.iter().count() > 1 || !named.iter().all(|value| admitted(value)) {
            return Some(error(
                StatusCode::MISDIRECTED_REQUEST,
                &format!("Hearth's AG-UI endpoint answers only requests addressed to Host: {}.", self.hosts.join(" or ")),
            ));
        }
        None
    }
}

pub(super) async fn handle<R: RunStarter>(
    hearth: R,
    gate: Arc<Gate>,
    slot: Arc<Slot>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if let Some(refused) = gate.refuse_addressing(&request) {
        return Ok(refused);
    }
    if request.method() != Method::POST || request.uri().path() != "/" {
        return Ok(error(StatusCode::NOT_FOUND, "POST a RunAgentInput to / on this endpoint."));
    }
    // Kept (wiped on drop) to check again once the body is in.
    let parts_authorization = request.headers().get(header::AUTHORIZATION).map(|v| zeroize::Zeroizing::new(v.as_bytes().to_vec()));
    if !gate.admits(parts_authorization.as_ref().map(|v| v.as_slice())) {
        return Ok(error(StatusCode::UNAUTHORIZED, "Send the bearer token shown in Hearth's Settings."));
    }
    // The owner's client: its connection keeps its slot (unless a newer one already took it).
    if !slot.authenticate() {
        return Ok(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Hearth's AG-UI endpoint closed this connection to make room for a newer one. Connect again.",
        ));
    }
    let body = match Limited::new(request.into_body(), MAX_INPUT_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(error(StatusCode::PAYLOAD_TOO_LARGE, "The RunAgentInput is over 4 MB or the upload broke off.")),
    };
    // The token again, now that the body is in: a Regenerate while the body was arriving has
    // put a new token in force, and the old one must not start a run after it returned.
    if !gate.admits(parts_authorization.as_ref().map(|v| v.as_slice())) {
        return Ok(error(StatusCode::UNAUTHORIZED, "Send the bearer token shown in Hearth's Settings."));
    }
    let input: RunAgentInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(err) => return Ok(error(StatusCode::BAD_REQUEST, &format!("The body is not a RunAgentInput ({err})."))),
    };
    // Held by the stream for as long as it lasts (the run ends when it is dropped).
    let Ok(permit) = gate.runs.clone().try_acquire_owned() else {
        return Ok(error(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Hearth's AG-UI endpoint is already streaming {} runs. Wait for one to end, then try again.", gate.max_runs),
        ));
    };
    let events = match hearth.start_agui_run(input).await {
        Ok(events) => events,
        Err(err) => {
            let refusal = err.to_ipc();
            let status = match refusal.code {
                ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
                ErrorCode::NotFound => StatusCode::NOT_FOUND,
                ErrorCode::Conflict | ErrorCode::NeedsReview => StatusCode::CONFLICT,
                ErrorCode::Forbidden => StatusCode::FORBIDDEN,
                ErrorCode::ApprovalExpired => StatusCode::GONE,
                ErrorCode::Cancelled => StatusCode::CONFLICT,
                ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
                // Database and other internal words stay in Hearth's log, not in a client's hands.
                ErrorCode::Internal => {
                    tracing::warn!(error = %err, "an AG-UI endpoint run could not start");
                    return Ok(error(StatusCode::INTERNAL_SERVER_ERROR, "Hearth could not start the run. Try again."));
                }
            };
            return Ok(error(status, &refusal.message));
        }
    };
    // Dropping this stream (the client went away) drops the receiver, which cancels the run.
    let frames = futures::stream::unfold((events, permit), |(mut events, permit)| async move {
        let event = events.recv().await?;
        let frame = Frame::data(Bytes::from(hearth_protocol::agui::sse::encode(&event)));
        Some((Ok::<_, Infallible>(frame), (events, permit)))
    })
    .boxed();
    let response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(StreamBody::new(frames).boxed_unsync());
    Ok(response.unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "Hearth could not start the stream.")))
}

fn error(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}
