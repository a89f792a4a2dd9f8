//! Hearth's agent as an AG-UI 1.0 endpoint, so any AG-UI client can drive it.
//!
//! Off by default. It listens on loopback only, and every request must carry the bearer
//! token Hearth generated (shown to the owner in Settings). `POST /` takes a
//! `RunAgentInput` and streams the run as SSE; when the client goes away the stream is
//! dropped, which cancels the run (no effect starts after it).

mod handler;
mod token;

use std::net::SocketAddr;

use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use token::{BearerToken, new_token};

use crate::error::{CoreError, Result};
use crate::hearth::Hearth;

/// A running endpoint. Dropping it does not stop it; call [`AguiServer::stop`].
#[derive(Debug)]
pub struct AguiServer {
    addr: SocketAddr,
    stop: CancellationToken,
}

impl AguiServer {
    /// Listens on `addr` (which must be a loopback address) and serves `hearth`'s agent to
    /// clients presenting `token`.
    pub async fn start(hearth: Hearth, addr: SocketAddr, token: BearerToken) -> Result<Self> {
        if !addr.ip().is_loopback() {
            return Err(CoreError::InvalidInput(format!(
                "The AG-UI endpoint listens on this machine only; {addr} is not a loopback address."
            )));
        }
        let listener = TcpListener::bind(addr).await.map_err(|err| {
            CoreError::Conflict(format!("Hearth could not listen on {addr} ({err}). Choose another port."))
        })?;
        let addr = listener.local_addr().map_err(|err| CoreError::Conflict(err.to_string()))?;
        let stop = CancellationToken::new();
        let stopping = stop.clone();
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
                let (hearth, token, stopping) = (hearth.clone(), token.clone(), stopping.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        handler::handle(hearth.clone(), token.clone(), request)
                    });
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
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
        Ok(Self { addr, stop })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and closes open connections (their runs are cancelled).
    pub fn stop(&self) {
        self.stop.cancel();
    }
}
