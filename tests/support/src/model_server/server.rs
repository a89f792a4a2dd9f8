//! The loopback HTTP/1.1 server (hyper 1): takes the next turn for each request, streams it in
//! the request's wire format, records requests and mid-stream disconnects.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::script::{End, HttpError, Reply, Script, Turn};
use super::{anthropic, openai_chat, responses};

/// The wire format a request asked for, by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFormat {
    /// `…/chat/completions`
    OpenAiChat,
    /// `…/messages`
    Anthropic,
    /// `…/responses`
    OpenAiResponses,
}

impl WireFormat {
    fn from_path(path: &str) -> Option<Self> {
        if path.ends_with("/chat/completions") {
            Some(Self::OpenAiChat)
        } else if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Self::OpenAiResponses)
        } else {
            None
        }
    }

    fn error_body(self, status: u16) -> String {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => openai_chat::error_body(status),
            Self::Anthropic => anthropic::error_body(status),
        }
    }
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names are lower-case.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` if it was not JSON; see `raw_body`).
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// The events of one reply, split so the server can end it as scripted.
pub(crate) struct Encoded {
    pub events: Vec<String>,
    pub complete: Vec<String>,
    pub provider_error: Vec<String>,
}

struct State {
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<RecordedRequest>>,
    received: watch::Sender<usize>,
    disconnects: watch::Sender<usize>,
    /// Events of paced replies, with the wall-clock time each was handed to the connection.
    sent: Mutex<Vec<(SystemTime, String)>>,
    /// The instructions a [`Turn::Obey`] has obeyed, so each is obeyed once.
    obeyed: Mutex<Vec<String>>,
}

impl State {
    fn record_disconnect(&self) {
        self.disconnects.send_modify(|n| *n += 1);
    }
}

/// The running server; stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

type Body = BoxBody<Bytes, io::Error>;

impl ModelServer {
    /// Binds 127.0.0.1 on a free port and starts serving `script`.
    pub async fn start(script: Script) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            turns: Mutex::new(script.turns.into()),
            requests: Mutex::new(Vec::new()),
            received: watch::channel(0).0,
            disconnects: watch::channel(0).0,
            sent: Mutex::new(Vec::new()),
            obeyed: Mutex::new(Vec::new()),
        });
        let accept_state = Arc::clone(&state);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                // As a provider's front end does: without it, the response head and the first
                // event go out as two small writes, Nagle holds the second for the client's
                // delayed ACK, and every first token arrives ≈ 40 ms late (measured:
                // send_latency's empty-thread Send → first token went from 47 ms to the figure
                // in the README).
                let _ = stream.set_nodelay(true);
                let state = Arc::clone(&accept_state);
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(Arc::clone(&state), req));
                    // A client that goes away mid-stream ends the connection with an error; the
                    // stream task records it.
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Self { addr, state, accept })
    }

    /// `http://127.0.0.1:<port>/v1`, the base URL a provider is configured with.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many clients went away before their stream ended.
    pub fn disconnects(&self) -> usize {
        *self.state.disconnects.borrow()
    }

    /// Waits until at least `n` clients have gone away mid-stream.
    pub async fn wait_for_disconnects(&self, n: usize) {
        let mut rx = self.state.disconnects.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
    }

    /// Waits until at least `n` requests have been received.
    pub async fn wait_for_requests(&self, n: usize) {
        let mut rx = self.state.received.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
    }

    /// The events of paced replies ([`Reply::paced`]) and when each was handed to the
    /// connection, by the wall clock (a webview reads the same clock).
    pub fn sent(&self) -> Vec<(SystemTime, String)> {
        self.state.sent.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Turns not yet played.
    pub fn turns_left(&self) -> usize {
        self.state.turns.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let raw = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let raw_body = String::from_utf8_lossy(&raw).into_owned();
    let raw_text = raw_body.clone();
    let json: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let path = parts.uri.path().to_owned();
    state.requests.lock().unwrap_or_else(|p| p.into_inner()).push(RecordedRequest {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts.headers.iter().map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect(),
        body: json.clone(),
        raw_body,
    });
    state.received.send_modify(|n| *n += 1);
    let Some(format) = WireFormat::from_path(&path) else {
        return Ok(plain(StatusCode::NOT_FOUND, format!("no model API at {path}")));
    };
    let turn = state.turns.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    let model = json.get("model").and_then(Value::as_str).unwrap_or("scripted").to_owned();
    Ok(match turn {
        None => plain(StatusCode::INTERNAL_SERVER_ERROR, "the scripted model server ran out of turns".to_owned()),
        Some(Turn::Error(error)) => error_response(format, &error),
        Some(Turn::Reply(reply)) => stream(state, format, &reply, &model),
        Some(Turn::Obey) => {
            let reply = obey(&state, &raw_text);
            stream(state, format, &reply, &model)
        }
    })
}

/// What an obeying model answers to a request: a call for the newest instruction it has not
/// obeyed yet, else a short text.
fn obey(state: &State, request: &str) -> Reply {
    let mut obeyed = state.obeyed.lock().unwrap_or_else(|p| p.into_inner());
    match super::script::obey_markers(request).into_iter().rev().find(|(marker, _, _)| !obeyed.contains(marker)) {
        Some((marker, tool, arguments)) => {
            obeyed.push(marker);
            let id = format!("obey-{}", obeyed.len());
            Reply::new().tool_call(&id, &tool, &[arguments.as_str()])
        }
        None => Reply::new().text(&["Nothing more to do."]),
    }
}

fn full(text: String) -> Body {
    Full::new(Bytes::from(text)).map_err(|never: Infallible| match never {}).boxed()
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response
}

fn error_response(format: WireFormat, error: &HttpError) -> Response<Body> {
    let mut builder = Response::builder().status(error.status).header("content-type", "application/json");
    if let Some(secs) = error.retry_after {
        builder = builder.header("retry-after", secs.to_string());
    }
    if let Some(location) = &error.location {
        builder = builder.header("location", location.as_str());
    }
    builder
        .body(full(format.error_body(error.status)))
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "bad scripted status".to_owned()))
}

fn stream(state: Arc<State>, format: WireFormat, reply: &Reply, model: &str) -> Response<Body> {
    let encoded = match format {
        WireFormat::OpenAiChat => openai_chat::encode(reply, model),
        WireFormat::Anthropic => anthropic::encode(reply, model),
        WireFormat::OpenAiResponses => responses::encode(reply, model),
    };
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, io::Error>>(1);
    let pace = Pace { delay: reply.chunk_delay, paced_from: reply.paced.then(tokio::time::Instant::now) };
    tokio::spawn(play(state, encoded, reply.end.clone(), pace, tx));
    let frames = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|frame| (frame, rx)) });
    let body = StreamBody::new(frames).boxed();
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(body)
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "bad stream response".to_owned()))
}

type Tx = mpsc::Sender<Result<Frame<Bytes>, io::Error>>;

/// When a reply's events go out.
#[derive(Clone, Copy)]
struct Pace {
    delay: Duration,
    /// Paced replies: event `n` goes out at this instant + (n + 1) × delay, and is recorded.
    paced_from: Option<tokio::time::Instant>,
}

async fn send(state: &State, tx: &Tx, pace: Pace, n: u32, event: String) -> bool {
    match pace.paced_from {
        Some(start) => tokio::time::sleep_until(start + pace.delay * (n + 1)).await,
        None if !pace.delay.is_zero() => tokio::time::sleep(pace.delay).await,
        None => {}
    }
    let record = pace.paced_from.is_some().then(|| event.clone());
    let sent_at = SystemTime::now();
    let delivered = tx.send(Ok(Frame::data(Bytes::from(event)))).await.is_ok();
    if let Some(event) = record {
        state.sent.lock().unwrap_or_else(|p| p.into_inner()).push((sent_at, event));
    }
    delivered
}

async fn play(state: Arc<State>, encoded: Encoded, end: End, pace: Pace, tx: Tx) {
    let ending = match end {
        End::Complete => encoded.complete,
        End::ProviderError => encoded.provider_error,
        End::Disconnect | End::HoldUntilDisconnect => Vec::new(),
    };
    for (n, event) in (0u32..).zip(encoded.events.into_iter().chain(ending)) {
        if !send(&state, &tx, pace, n, event).await {
            state.record_disconnect();
            return;
        }
    }
    match end {
        End::Complete | End::ProviderError => {}
        End::Disconnect => {
            // A body error makes hyper abort the connection without the final chunk.
            let _ = tx.send(Err(io::Error::other("scripted disconnect"))).await;
        }
        End::HoldUntilDisconnect => loop {
            tokio::select! {
                () = tx.closed() => {
                    state.record_disconnect();
                    return;
                }
                () = tokio::time::sleep(Duration::from_millis(5)) => {
                    if tx.send(Ok(Frame::data(Bytes::from_static(b": keep-alive\n\n")))).await.is_err() {
                        state.record_disconnect();
                        return;
                    }
                }
            }
        },
    }
}
