//! Hearth's agent as an AG-UI 1.0 endpoint, so any AG-UI client can drive it.
//!
//! Off by default. It listens on loopback only, and every request must carry the bearer
//! token Hearth generated (shown to the owner in Settings). `POST /` takes a
//! `RunAgentInput` and streams the run as SSE; when the client goes away the stream is
//! dropped, which cancels the run (no effect starts after it).
//!
//! Before the token is looked at, a request must name this endpoint in its `Host`
//! (`127.0.0.1:<port>` or `localhost:<port>`) and carry no `Origin`, so a web page that
//! rebinds a name of its own to 127.0.0.1 gets nothing. Headers must arrive within
//! [`AguiLimits::header_read_timeout`], and connections and runs are capped
//! ([`AguiLimits`]; `Slots` says who gets a connection).
//!
//! HTTP/1.1 only. AG-UI clients POST and read SSE over HTTP/1.1 (the official
//! `@ag-ui/client` uses `fetch`, which speaks HTTP/2 only over TLS, and this endpoint is
//! plain `http://`), so cleartext HTTP/2 (prior knowledge) would serve no client and
//! would bring its own idle connections and streams to bound. Serving through hyper's
//! `http1` builder (not hyper-util's `auto`) also makes hyper's header timer start when the
//! connection is accepted: `auto` first waits, without any timer, for the bytes that tell
//! the versions apart, so a connection that sends nothing was never closed
//! (hyperium/hyper#3756, #3962). An HTTP/2 preface is a version error to the `http1`
//! connection, which closes at once.

mod handler;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use hearth_protocol::agui::RunAgentInput;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::{CoreError, Result};
use crate::runs::RunEvents;
use crate::secret::BearerToken;

/// What one endpoint admits at once, and how long it waits for a request's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AguiLimits {
    /// Open connections. Once all of them have presented the token, one more is answered
    /// 503 and closed (`Slots` below says how).
    pub max_connections: usize,
    /// Open connections that have not yet presented the token; fewer than
    /// `max_connections`, so such connections never hold the last slots. When they are all
    /// taken, a new connection closes the oldest of them.
    pub max_unauthenticated: usize,
    /// Runs streaming at once; one more is answered 429.
    pub max_runs: usize,
    /// How long a connection may take to send a request's headers, counted from the moment
    /// it was accepted or its last response was sent, before it is closed: a connection
    /// that sends nothing, sends its headers slowly, or sits idle between requests.
    pub header_read_timeout: Duration,
}

impl Default for AguiLimits {
    fn default() -> Self {
        Self { max_connections: 16, max_unauthenticated: 8, max_runs: 4, header_read_timeout: Duration::from_secs(10) }
    }
}

/// The endpoint's connection slots: at most [`AguiLimits::max_connections`] open, of which
/// at most [`AguiLimits::max_unauthenticated`] (fewer) have not yet sent a request carrying
/// the token. A new connection is let in whenever any open connection has not presented
/// the token: if the unauthenticated slots, or all slots, are taken, the oldest
/// unauthenticated connection is closed to make room. So silent, slow or tokenless
/// connections, however many, cannot lock out the owner's client (which sends the token in
/// its first request); only connections that presented the token can fill the endpoint,
/// and only then is a new one refused (503). A connection that presented the token keeps
/// its slot until it closes (at the latest [`AguiLimits::header_read_timeout`] after its
/// last response).
struct Slots {
    max_connections: usize,
    max_unauthenticated: usize,
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    /// Open connections that have not presented the token, oldest first, each with what
    /// closes it.
    waiting: VecDeque<(u64, CancellationToken)>,
    /// Open connections that have.
    authenticated: usize,
    next_id: u64,
}

impl Slots {
    fn new(limits: &AguiLimits) -> Self {
        Self { max_connections: limits.max_connections, max_unauthenticated: limits.max_unauthenticated, book: Mutex::default() }
    }

    /// A slot for a connection just accepted, closing the oldest unauthenticated connection
    /// if the slots are taken; `None` when every slot is held by a connection that
    /// presented the token.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        if book.waiting.len() >= self.max_unauthenticated || book.waiting.len() + book.authenticated >= self.max_connections {
            let (_, close) = book.waiting.pop_front()?;
            close.cancel();
            tracing::debug!("the AG-UI endpoint closed its oldest unauthenticated connection to make room");
        }
        let id = book.next_id;
        book.next_id += 1;
        let close = CancellationToken::new();
        book.waiting.push_back((id, close.clone()));
        Some(Slot { slots: self.clone(), id, close, authenticated: AtomicBool::new(false) })
    }
}

/// One open connection's place in [`Slots`], given back when it is dropped.
struct Slot {
    slots: Arc<Slots>,
    id: u64,
    /// Cancelled when a newer connection takes this one's place.
    close: CancellationToken,
    authenticated: AtomicBool,
}

impl Slot {
    /// The connection sent a request carrying the token: it keeps its slot until it closes.
    /// False if it had already lost its slot to a newer connection (it is being closed).
    fn authenticate(&self) -> bool {
        let mut book = self.slots.book.lock().unwrap_or_else(PoisonError::into_inner);
        if self.authenticated.load(Ordering::Relaxed) {
            return true;
        }
        let Some(at) = book.waiting.iter().position(|(id, _)| *id == self.id) else {
            return false;
        };
        book.waiting.remove(at);
        book.authenticated += 1;
        self.authenticated.store(true, Ordering::Relaxed);
        true
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut book = self.slots.book.lock().unwrap_or_else(PoisonError::into_inner);
        if self.authenticated.load(Ordering::Relaxed) {
            book.authenticated -= 1;
        } else if let Some(at) = book.waiting.iter().position(|(id, _)| *id == self.id) {
            book.waiting.remove(at);
        }
    }
}

/// The answer to a connection over the cap, written without waiting and then closed.
fn too_many_connections() -> Vec<u8> {
    let body = serde_json::json!({
        "error": "Hearth's AG-UI endpoint has too many open connections. Close one and try again."
    })
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// What the endpoint needs of Hearth: a run started for a client's `RunAgentInput`, whose
/// events it streams back. `Hearth` implements it; the endpoint is handed no more of it.
pub trait RunStarter: Clone + Send + Sync + 'static {
    /// Starts the run `input` asks for (see `Hearth::start_agui_run`). Dropping the events
    /// cancels the run.
    fn start_agui_run(&self, input: RunAgentInput) -> impl Future<Output = Result<RunEvents>> + Send;
}

/// A running endpoint. Dropping it does not stop it; call [`AguiServer::stop`] or
/// [`AguiServer::close`].
#[derive(Debug)]
pub struct AguiServer {
    addr: SocketAddr,
    stop: CancellationToken,
    /// The token every request is checked against, read per request (so a new one takes
    /// effect at once).
    token: Arc<RwLock<BearerToken>>,
    /// The accept loop, which owns the listener.
    accepting: JoinHandle<()>,
}

impl AguiServer {
    /// Listens on `addr` (which must be a loopback address) and serves `hearth`'s agent to
    /// clients presenting `token`, within the default [`AguiLimits`].
    pub async fn start<R: RunStarter>(hearth: R, addr: SocketAddr, token: BearerToken) -> Result<Self> {
        Self::start_with_limits(hearth, addr, token, AguiLimits::default()).await
    }

    /// [`AguiServer::start`] with explicit limits.
    pub async fn start_with_limits<R: RunStarter>(hearth: R, addr: SocketAddr, token: BearerToken, limits: AguiLimits) -> Result<Self> {
        // The endpoint's one door: a build without it (a phone's) never binds a listener.
        if !crate::parts::Part::Endpoint.is_built() {
            return Err(CoreError::Unavailable(crate::parts::Part::Endpoint.absent().to_owned()));
        }
        if !addr.ip().is_loopback() {
            return Err(CoreError::InvalidInput(format!(
                "The AG-UI endpoint listens on this machine only; {addr} is not a loopback address."
            )));
        }
        if limits.max_unauthenticated == 0
            || limits.max_unauthenticated >= limits.max_connections
            || limits.max_runs == 0
            || limits.header_read_timeout.is_zero()
        {
            return Err(CoreError::InvalidInput(format!(
                "The AG-UI endpoint needs at least one unauthenticated connection, fewer of them than connections, \
                 one run and a non-zero header timeout ({limits:?})."
            )));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|err| CoreError::Conflict(format!("Hearth could not listen on {addr} ({err}). Choose another port.")))?;
        let addr = listener.local_addr().map_err(|err| CoreError::Conflict(err.to_string()))?;
        let stop = CancellationToken::new();
        let stopping = stop.clone();
        let token = Arc::new(RwLock::new(token));
        let gate = Arc::new(handler::Gate::new(addr, token.clone(), limits.max_runs));
        let slots = Arc::new(Slots::new(&limits));
        // HTTP/1.1 only (see the module's comment); the header timer runs from the accept and
        // again from every response, so it also closes a connection idle between requests.
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
        let refusal = too_many_connections();
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    () = stopping.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok(pair) => pair,
                        Err(err) => {
                            tracing::warn!(error = %err, "the AG-UI endpoint could not accept a connection");
                            continue;
                        }
                    },
                };
                // Taken here, in accept order, so the cap holds however fast connections come.
                let Some(slot) = slots.admit() else {
                    // A fresh socket's send buffer is empty: this small write never waits.
                    let _ = stream.try_write(&refusal);
                    tracing::debug!("the AG-UI endpoint refused a connection over its cap");
                    continue;
                };
                let slot = Arc::new(slot);
                let (hearth, gate, stopping, builder) = (hearth.clone(), gate.clone(), stopping.clone(), builder.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn({
                        let slot = slot.clone();
                        move |request| handler::handle(hearth.clone(), gate.clone(), slot.clone(), request)
                    });
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        biased;
                        () = stopping.cancelled() => {}
                        // A newer connection took its place before it presented the token.
                        () = slot.close.cancelled() => {}
                        served = connection => {
                            if let Err(err) = served {
                                tracing::debug!(error = %err, "an AG-UI connection ended with an error");
                            }
                        }
                    }
                });
            }
        });
        Ok(Self { addr, stop, token, accepting })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the token: from now on every request must carry `token`, and one carrying
    /// the old token is refused (401). (The caller cancels the runs already streaming.)
    pub fn set_token(&self, token: BearerToken) {
        *self.token.write().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// Stops accepting and closes open connections (their runs are cancelled).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// [`AguiServer::stop`], returning once the port is free again (its listener closed),
    /// so the endpoint turned on again gets the same port back.
    pub async fn close(self) {
        self.stop();
        if let Err(err) = self.accepting.await {
            tracing::warn!(error = %err, "the AG-UI endpoint's accept loop failed");
        }
    }
}
