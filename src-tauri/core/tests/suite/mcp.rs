//! The MCP client against a real server on the official SDK (`hearth-mcp-test-server`, in the
//! test support crate), over stdio and over Streamable HTTP on loopback. Effects are counted in
//! the server's own ledger file; what the server was doing, in its standard error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use hearth_core::mcp::{McpClient, McpError, McpLimits, McpServerSpec, McpTransportSpec, PROTOCOL_VERSION};
use serde_json::{Map, Value, json};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::support::guarded;

/// The server binary, built beside this test by the workspace build.
pub(super) fn server_binary() -> PathBuf {
    let here = std::env::current_exe().unwrap();
    let built = here.parent().and_then(|deps| deps.parent()).unwrap().join("hearth-mcp-test-server");
    assert!(built.exists(), "{} is missing: build the workspace first (cargo build --workspace --all-targets)", built.display());
    built
}

/// The test server over Streamable HTTP on loopback (ended when the child is dropped), and its URL.
pub(super) async fn http_server() -> (tokio::process::Child, String) {
    let mut server = tokio::process::Command::new(server_binary())
        .arg("http")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
    // Its first line, printed once it listens.
    let url = guarded(lines.next_line()).await.unwrap().unwrap();
    (server, url)
}

pub(super) struct Ledger {
    _dir: tempfile::TempDir,
    pub(super) path: PathBuf,
}

impl Ledger {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        Self { _dir: dir, path }
    }

    pub(super) fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path).map(|t| t.lines().map(str::to_owned).collect()).unwrap_or_default()
    }
}

fn stdio(ledger: &Ledger) -> McpServerSpec {
    let env = BTreeMap::from([("HEARTH_MCP_LEDGER".to_owned(), ledger.path.display().to_string())]);
    McpServerSpec {
        name: "notes".into(),
        transport: McpTransportSpec::Stdio { command: server_binary().display().to_string(), args: vec!["stdio".into()], env },
    }
}

/// Short enough that the tests of silent servers end soon; the answer never comes either way.
fn limits() -> McpLimits {
    McpLimits { call_timeout: Duration::from_secs(3), ..McpLimits::default() }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_is_started_listed_and_called() {
    let ledger = Ledger::new();
    let client = guarded(McpClient::connect(&stdio(&ledger), limits())).await.unwrap();
    assert_eq!(client.info().protocol_version, PROTOCOL_VERSION);
    assert_eq!(client.info().name.as_deref(), Some("hearth-mcp-test-server"));

    let tools = guarded(client.tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["lookup", "record", "slow", "huge", "crash", "hang", "garble", "inject"] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let lookup = tools.iter().find(|t| t.name == "lookup").unwrap();
    assert!(lookup.read_only_hint && lookup.input_schema.contains_key("properties"), "{lookup:?}");
    assert!(!tools.iter().find(|t| t.name == "record").unwrap().read_only_hint);

    let none = CancellationToken::new();
    let read = guarded(client.call("lookup", args(json!({"key": "rain"})), &none)).await.unwrap();
    assert_eq!(read.text, "the value of rain");
    assert!(ledger.lines().is_empty(), "a read leaves no effect");
    let written = guarded(client.call("record", args(json!({"line": "milk"})), &none)).await.unwrap();
    assert_eq!(written.text, "kept");
    assert_eq!(ledger.lines(), ["record milk"], "exactly one effect at the server");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_call_is_cancelled_at_the_server() {
    let ledger = Ledger::new();
    let client = guarded(McpClient::connect(&stdio(&ledger), limits())).await.unwrap();
    let stop = CancellationToken::new();
    let (stopped, _) = tokio::join!(client.call("slow", Map::new(), &stop), async {
        // Stop once the server is working on it, not before it has it.
        guarded(client.stderr().wait_for(|line| line == "slow started")).await;
        stop.cancel();
    });
    assert!(matches!(stopped, Err(McpError::Cancelled)), "{stopped:?}");
    guarded(client.stderr().wait_for(|line| line == "slow cancelled")).await;
    assert_eq!(ledger.lines(), ["cancelled"], "the server received exactly one cancellation");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_crash_hang_flood_or_garble_give_clear_errors() {
    let ledger = Ledger::new();
    let none = CancellationToken::new();
    for (tool, expected) in [("hang", "did not answer"), ("huge", "did not answer"), ("garble", "did not answer")] {
        let client = guarded(McpClient::connect(&stdio(&ledger), limits())).await.unwrap();
        let failed = guarded(client.call(tool, Map::new(), &none)).await.unwrap_err();
        assert!(failed.to_string().contains(expected), "{tool}: {failed}");
        // The connection still answers what is well-formed.
        let after = guarded(client.call("lookup", args(json!({"key": "k"})), &none)).await.unwrap();
        assert_eq!(after.text, "the value of k", "after {tool}");
        client.close().await;
    }
    let client = guarded(McpClient::connect(&stdio(&ledger), limits())).await.unwrap();
    let crashed = guarded(client.call("crash", Map::new(), &none)).await.unwrap_err();
    assert!(matches!(crashed, McpError::Ended { .. }), "{crashed}");
    let later = guarded(client.call("lookup", args(json!({"key": "k"})), &none)).await.unwrap_err();
    assert!(matches!(later, McpError::Ended { .. }), "{later}");
    assert!(ledger.lines().is_empty(), "nothing was recorded by any of them");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_does_not_exist_says_so() {
    let spec = McpServerSpec {
        name: "missing".into(),
        transport: McpTransportSpec::Stdio { command: "/nonexistent/mcp-server".into(), args: vec![], env: BTreeMap::new() },
    };
    let failed = McpClient::connect(&spec, limits()).await.unwrap_err();
    assert!(matches!(failed, McpError::Spawn { .. }), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_on_loopback_is_listed_and_called() {
    let (_server, url) = http_server().await;
    let spec = McpServerSpec { name: "web".into(), transport: McpTransportSpec::Http { url, bearer: Some("a-token".to_owned().into()) } };
    let client = guarded(McpClient::connect(&spec, limits())).await.unwrap();
    assert_eq!(client.info().protocol_version, PROTOCOL_VERSION);
    assert!(guarded(client.tools()).await.unwrap().iter().any(|t| t.name == "lookup" && t.read_only_hint));
    let none = CancellationToken::new();
    let read = guarded(client.call("lookup", args(json!({"key": "snow"})), &none)).await.unwrap();
    assert_eq!(read.text, "the value of snow");
    // 20 MB is over the reply bound: refused, not read.
    let flood = guarded(client.call("huge", Map::new(), &none)).await.unwrap_err();
    assert!(!matches!(flood, McpError::Cancelled), "{flood}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_another_machine_is_refused_before_connecting() {
    let spec = McpServerSpec { name: "far".into(), transport: McpTransportSpec::Http { url: "http://192.0.2.1/mcp".into(), bearer: None } };
    let refused = McpClient::connect(&spec, limits()).await.unwrap_err();
    assert!(matches!(refused, McpError::InvalidSpec(_)), "{refused}");
}

/// A stdio server runs in a process group of its own, and what it started ends with it: a
/// server started through a shell that leaves a child behind, then closed — the child is ended
/// (waited on through a pidfd, which becomes readable when the process ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_stdio_server_started_ends_with_it() {
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    let ledger = Ledger::new();
    let pid_file = ledger.path.with_file_name("child.pid");
    let script = format!("sleep 600 & echo $! > '{}'; exec '{}' stdio", pid_file.display(), server_binary().display());
    let spec = McpServerSpec {
        name: "parent".into(),
        transport: McpTransportSpec::Stdio { command: "sh".into(), args: vec!["-c".into(), script], env: BTreeMap::new() },
    };
    let client = guarded(McpClient::connect(&spec, limits())).await.unwrap();
    // Written before the server started, so before its handshake completed.
    let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let pidfd = pidfd_open(Pid::from_raw(child).unwrap(), PidfdFlags::empty()).expect("the child runs while its server does");
    client.close().await;
    // A pidfd is readable once its process has ended: no timing involved.
    let ended = tokio::task::spawn_blocking(move || {
        let mut fds = [rustix::event::PollFd::new(&pidfd, rustix::event::PollFlags::IN)];
        // Bounded, so a regression fails here rather than hanging the run.
        let bound = rustix::event::Timespec { tv_sec: 60, tv_nsec: 0 };
        rustix::event::poll(&mut fds, Some(&bound)).map(|ready| (ready, fds[0].revents()))
    });
    let (ready, events) = guarded(ended).await.unwrap().unwrap();
    if ready == 0 {
        // Not ended: end it here, so the failing test leaves nothing behind.
        let _ = rustix::process::kill_process(Pid::from_raw(child).unwrap(), rustix::process::Signal::KILL);
    }
    assert!(ready == 1 && events.contains(rustix::event::PollFlags::IN), "the child outlived its server: {events:?}");
}
