//! A Hearth answering through the scripted model server (real OpenAI Chat streaming over
//! loopback), workers off, on a fresh data folder: the set-up of the chat benches. Included by
//! each with `#[path]`, like `figure.rs`.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_core::{Config, Hearth};
use hearth_testkit::model_server::{ModelServer, Script};

/// The server, the data folder (kept while it lives) and Hearth, with no retries.
pub async fn hearth_with_model(script: Script) -> (ModelServer, tempfile::TempDir, Hearth) {
    let server = ModelServer::start(script).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.start_workers = false;
    // A bench's approval is carried out at once, as before the undo window.
    config.undo_window = std::time::Duration::ZERO;
    let provider = ProviderConfig::new("Scripted", server.base_url(), None).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    let hearth = Hearth::open(config).await.unwrap().with_model(Arc::new(OpenAiChat::new(&provider).unwrap()), "scripted");
    (server, dir, hearth)
}

/// The machine's load average, printed beside every figure.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
