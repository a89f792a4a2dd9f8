//! A stdio server's standard error, kept bounded for the owner to read.

#![cfg_attr(not(feature = "mcp"), allow(dead_code, reason = "only the MCP client feeds the log; a build without it keeps the type"))]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// Lines kept.
const KEEP_LINES: usize = 200;
/// The longest line kept (longer ones are cut).
const MAX_LINE_CHARS: usize = 1_000;
/// The most bytes of one line ever held while reading it (the rest, to its newline, is skipped):
/// a server that writes without newlines cannot grow this.
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS;

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

    /// Reads `stream` line by line into the log until it ends, holding at most
    /// [`MAX_LINE_BYTES`] of a line; bytes that are not UTF-8 are shown replaced, never an end.
    pub(super) fn follow(&self, mut stream: impl AsyncRead + Unpin + Send + 'static) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut chunk = [0_u8; 4096];
            let mut line = Vec::with_capacity(256);
            let mut cut = false;
            while let Ok(read) = stream.read(&mut chunk).await {
                if read == 0 {
                    break;
                }
                for &byte in &chunk[..read] {
                    if byte == b'\n' {
                        log.push_bytes(&line, cut);
                        line.clear();
                        cut = false;
                    } else if line.len() < MAX_LINE_BYTES {
                        line.push(byte);
                    } else {
                        cut = true;
                    }
                }
            }
            if !line.is_empty() {
                log.push_bytes(&line, cut);
            }
        });
    }

    fn push_bytes(&self, line: &[u8], cut: bool) {
        let mut text = String::from_utf8_lossy(line).into_owned();
        if cut {
            text.push('…');
        }
        self.push(text);
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
