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
//! ([`AguiLimits`]).

mod handler;

use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::error::{CoreError, Result};
use crate::hearth::Hearth;
use crate::secret::BearerToken;

/// What one endpoint admits at once, and how long it waits for a request's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AguiLimits {
    /// Open connections; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Runs streaming at once; one more is answered 429.
    pub max_runs: usize,
    /// How long a connection may take to send a request's headers before it is closed.
    pub header_read_timeout: Duration,
}

impl Default for AguiLimits {
    fn default() -> Self {
        Self { max_connections: 16, max_runs: 4, header_read_timeout: Duration::from_secs(10) }
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

/// A running endpoint. Dropping it does not stop it; call [`AguiServer::stop`].
#[derive(Debug)]
pub struct AguiServer {
    addr: SocketAddr,
    stop: CancellationToken,
    /// The token every request is checked against, read per request (so a new one takes
    /// effect at once).
    token: Arc<RwLock<BearerToken>>,
}

impl AguiServer {
    /// Listens on `addr` (which must be a loopback address) and serves `hearth`'s agent to
    /// clients presenting `token`, within the default [`AguiLimits`].
    pub async fn start(hearth: Hearth, addr: SocketAddr, token: BearerToken) -> Result<Self> {
        Self::start_with_limits(hearth, addr, token, AguiLimits::default()).await
    }

    /// [`AguiServer::start`] with explicit limits.
    pub async fn start_with_limits(hearth: Hearth, addr: SocketAddr, token: BearerToken, limits: AguiLimits) -> Result<Self> {
        if !addr.ip().is_loopback() {
            return Err(CoreError::InvalidInput(format!(
                "The AG-UI endpoint listens on this machine only; {addr} is not a loopback address."
            )));
        }
        if limits.max_connections == 0 || limits.max_runs == 0 || limits.header_read_timeout.is_zero() {
            return Err(CoreError::InvalidInput(format!(
                "The AG-UI endpoint needs at least one connection, one run and a non-zero header timeout ({limits:?})."
            )));
        }
        let listener = TcpListener::bind(addr).await.map_err(|err| {
            CoreError::Conflict(format!("Hearth could not listen on {addr} ({err}). Choose another port."))
        })?;
        let addr = listener.local_addr().map_err(|err| CoreError::Conflict(err.to_string()))?;
        let stop = CancellationToken::new();
        let stopping = stop.clone();
        let token = Arc::new(RwLock::new(token));
        let gate = Arc::new(handler::Gate::new(addr, token.clone(), limits.max_runs));
        let connections = Arc::new(Semaphore::new(limits.max_connections));
        let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
        builder.http2().timer(TokioTimer::new()).max_concurrent_streams(u32::try_from(limits.max_runs).unwrap_or(u32::MAX));
        let builder = Arc::new(builder);
        let refusal = too_many_connections();
        tokio::spawn(async move {
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
                let Ok(permit) = connections.clone().try_acquire_owned() else {
                    // A fresh socket's send buffer is empty: this small write never waits.
                    let _ = stream.try_write(&refusal);
                    tracing::debug!("the AG-UI endpoint refused a connection over its cap");
                    continue;
                };
                let (hearth, gate, stopping, builder) = (hearth.clone(), gate.clone(), stopping.clone(), builder.clone());
                tokio::spawn(async move {
                    let _permit = permit;
                    let service = hyper::service::service_fn(move |request| {
                        handler::handle(hearth.clone(), gate.clone(), request)
                    });
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        () = stopping.cancelled() => {}
                        served = connection => {
                            if let Err(err) = served {
                                tracing::debug!(error = %err, "an AG-UI connection ended with an error");
                            }
                        }
                    }
                });
            }
        });
        Ok(Self { addr, stop, token })
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
}
