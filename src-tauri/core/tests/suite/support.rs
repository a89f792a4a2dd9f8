//! Opening a Hearth on a temporary folder and collecting run streams.

use std::time::Duration;

use hearth_core::{Config, Hearth, RunEvents};
use hearth_protocol::agui::Event;
use hearth_protocol::ipc::RunStartParams;

pub struct TestHearth {
    pub hearth: Hearth,
    pub dir: tempfile::TempDir,
}

/// A Hearth with no pacing, so tests run as fast as the machine allows.
pub async fn open() -> TestHearth {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    TestHearth { hearth, dir }
}

pub fn fast_config(dir: &std::path::Path) -> Config {
    let mut config = Config::new(dir);
    config.sample_chunk_delay = Duration::ZERO;
    config.sample_slow_step = Duration::ZERO;
    config
}

pub async fn start(hearth: &Hearth, thread_id: Option<&str>, text: &str) -> (String, String, RunEvents) {
    let params = RunStartParams { thread_id: thread_id.map(str::to_owned), text: text.to_owned() };
    let (started, events) = hearth.start_run(params).await.unwrap();
    (started.thread_id, started.run_id, events)
}

pub async fn collect(mut events: RunEvents) -> Vec<Event> {
    let mut all = Vec::new();
    while let Some(event) = events.recv().await {
        all.push(event);
    }
    all
}

/// Waits until the run registry is empty (the driver recorded the run's end).
pub async fn settled(hearth: &Hearth) {
    while hearth.active_runs() > 0 {
        tokio::task::yield_now().await;
    }
}

pub fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageContent(c) => Some(c.delta.as_str()),
            _ => None,
        })
        .collect()
}
