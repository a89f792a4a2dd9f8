//! A stdio server's standard error, kept bounded for the owner to read (Settings → Tools).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

/// Lines kept.
const KEEP_LINES: usize = 200;
/// The longest line kept (longer ones are cut).
const MAX_LINE_CHARS: usize = 1_000;

/// The last lines a server wrote to its standard error.
#[derive(Clone)]
pub struct StderrLog {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Counts lines written, so a reader can wait for the next one.
    written: watch::Sender<u64>,
}

impl Default for StderrLog {
    fn default() -> Self {
        Self { lines: Arc::default(), written: watch::Sender::new(0) }
    }
}

impl StderrLog {
    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect()
    }

    /// Waits until a kept line satisfies `check` (for tests and the Settings screen's live view);
    /// returns that line.
    pub async fn wait_for(&self, check: impl Fn(&str) -> bool) -> String {
        let mut written = self.written.subscribe();
        loop {
            if let Some(found) = self.lines().into_iter().find(|line| check(line)) {
                return found;
            }
            if written.changed().await.is_err() {
                // The sender lives in `self`: unreachable while we hold it.
                std::future::pending::<()>().await;
            }
        }
    }

    fn push(&self, mut line: String) {
        if line.chars().count() > MAX_LINE_CHARS {
            line = line.chars().take(MAX_LINE_CHARS).chain("…".chars()).collect();
        }
        {
            let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
            if lines.len() == KEEP_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
        self.written.send_modify(|n| *n += 1);
    }

    /// Reads `stream` line by line into the log until it ends.
    pub(super) fn follow(&self, stream: impl AsyncRead + Unpin + Send + 'static) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.push(line);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_cuts_long_ones() {
        let log = StderrLog::default();
        for n in 0..(KEEP_LINES + 5) {
            log.push(format!("line {n}"));
        }
        log.push("x".repeat(5_000));
        let lines = log.lines();
        assert_eq!(lines.len(), KEEP_LINES);
        assert_eq!(lines[0], "line 6");
        assert_eq!(lines.last().map(|l| l.chars().count()), Some(MAX_LINE_CHARS + 1));
    }
}
