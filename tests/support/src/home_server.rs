//! `hearth serve` — the app's own binary as the headless home server — on a data folder,
//! driven through its standard input as an owner at that machine would (src-tauri/src/headless.rs).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::PATIENCE;

/// A running home server.
pub struct HomeServer {
    child: Child,
    input: ChildStdin,
    output: Lines<BufReader<ChildStdout>>,
    /// Where it listens for paired devices (loopback, a free port).
    pub listening: SocketAddr,
}

impl HomeServer {
    /// Starts `app serve` on `data`; panics (failing the test) if it does not say where it listens.
    pub async fn start(app: &str, data: &Path) -> Self {
        let mut child = Command::new(app)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("HEARTH_DATA_DIR", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{app} serve did not start: {e}"));
        let input = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let mut output = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("no stdout"))).lines();
        let first = next_json(&mut output).await;
        let listening =
            first["listening"].as_str().and_then(|a| a.parse().ok()).unwrap_or_else(|| panic!("the host did not start: {first}"));
        Self { child, input, output, listening }
    }

    /// One line to the host (`offer <name> [scopes]`, `devices`, `revoke <id>`), its one-line answer.
    pub async fn ask(&mut self, line: &str) -> Value {
        self.input.write_all(format!("{line}\n").as_bytes()).await.unwrap_or_else(|e| panic!("the host's input: {e}"));
        next_json(&mut self.output).await
    }

    /// Ends the input; the host shuts down and exits, successfully (else a panic).
    pub async fn stop(mut self) {
        drop(self.input);
        let status = tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the host did not exit"))
            .unwrap_or_else(|e| panic!("the host's exit: {e}"));
        assert!(status.success(), "the host exited with {status}");
    }
}

async fn next_json(output: &mut Lines<BufReader<ChildStdout>>) -> Value {
    let line = tokio::time::timeout(PATIENCE, output.next_line())
        .await
        .unwrap_or_else(|_| panic!("the host did not answer"))
        .unwrap_or_else(|e| panic!("the host's output: {e}"))
        .unwrap_or_else(|| panic!("the host exited"));
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("the host's answer {line:?}: {e}"))
}
