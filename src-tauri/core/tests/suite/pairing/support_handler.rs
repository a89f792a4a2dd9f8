//! A request handler that counts what it is asked to do.

use std::sync::atomic::{AtomicUsize, Ordering};

use hearth_core::pairing::{BoxFuture, ErrorCode, RemoteError, RequestContext, RequestHandler, StreamId};
use serde_json::{Value, json};
use tokio::sync::watch;

/// Commands: `echo` (answers its params), `fail` (NotFound), `big` (a string of `len` bytes),
/// `stream` (opens `stream`, sends `event`, then ends it if `end`, else waits for the
/// connection to close and counts that), `wait` (waits for cancellation).
pub struct TestHandler {
    /// Requests the handler was given: the effect the tests count.
    pub calls: AtomicUsize,
    /// Stream producers that saw their connection close.
    pub streams_cancelled: watch::Sender<usize>,
    /// `wait` requests that have started.
    pub waits_started: watch::Sender<usize>,
}

impl Default for TestHandler {
    fn default() -> Self {
        Self { calls: AtomicUsize::new(0), streams_cancelled: watch::Sender::new(0), waits_started: watch::Sender::new(0) }
    }
}

impl TestHandler {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl RequestHandler for TestHandler {
    fn handle(&self, ctx: RequestContext, command: String, params: Value) -> BoxFuture<'_, Result<Value, RemoteError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            match command.as_str() {
                "echo" => Ok(json!({"device": ctx.device().as_str(), "params": params})),
                "fail" => Err(RemoteError::new(ErrorCode::NotFound, "thread 42 does not exist; reload the list")),
                "big" => Ok(Value::String("x".repeat(params["len"].as_u64().unwrap_or(0) as usize))),
                "stream" => {
                    let id = params["stream"].as_str().unwrap_or("s").to_owned();
                    let sink = ctx.open_stream(StreamId::new(id.clone()));
                    let event = params["event"].clone();
                    let end = params["end"].as_bool().unwrap_or(false);
                    let cancelled = self.streams_cancelled.clone();
                    tokio::spawn(async move {
                        if sink.send(event).await.is_err() {
                            return;
                        }
                        if end {
                            let _ = sink.end().await;
                            return;
                        }
                        sink.closed().await;
                        cancelled.send_modify(|n| *n += 1);
                    });
                    Ok(json!({"stream": id}))
                }
                "wait" => {
                    self.waits_started.send_modify(|n| *n += 1);
                    ctx.cancellation().cancelled().await;
                    Ok(Value::Null)
                }
                other => Err(RemoteError::new(ErrorCode::InvalidInput, format!("unknown command {other}"))),
            }
        })
    }
}
