//! One command in the container: an argv exec (never a host shell) of
//! `timeout --signal=TERM --kill-after=2s 30s bash --noprofile --norc -c <command>`, its
//! output read as it arrives and capped, its exit code, and Stop.
//!
//! An exec cannot be killed reliably from outside the container (the engine has no "kill exec"
//! call, and killing the `docker exec` client leaves the process running), so a command Stop
//! reached, or one that ran past its limit, ends by stopping the whole container: the caller
//! (holding the computer's busy lock) returns only when the engine reports it stopped, and the
//! next command starts it again. A command that exits by itself may leave background
//! processes (`setsid cmd &`): [`signal_all`] kills them before the lock is released.

use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use futures::StreamExt;
use hearth_protocol::computer::{CommandOutput, CommandReceipt, CommandStatus, OutputStream};
use tokio_util::sync::CancellationToken;

use super::engine::{self, bounded};
use super::spec;
use super::{ComputerError, OutputSink};

/// The command's time limit, as `timeout` enforces it inside the container.
pub const TIME_LIMIT: Duration = Duration::from_secs(30);
/// stdout and stderr together; the rest is read and dropped, and `truncated` set.
pub const OUTPUT_CAP: usize = 128 * 1024;
pub use hearth_protocol::computer::MAX_COMMAND_CHARS;
/// If the exec's stream has not ended this long after the limit (plus `timeout`'s 2 s kill
/// grace), the container is stopped anyway: `timeout` itself may have been killed.
const OVERDUE_MARGIN: Duration = Duration::from_secs(10);

/// What the owner is told about a command that may have done part of its work.
pub const STOPPED_NOTE: &str = "stopped while running; inspect the files before running it again";
/// Likewise, for one past its time limit.
pub const TIMED_OUT_NOTE: &str = "ran past its 30 s limit and was killed with the container; inspect the files before running it again";

/// A command to run: checked by [`CommandRequest::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    command: String,
    cwd: String,
}

impl CommandRequest {
    /// `command` (1..=16,000 characters, no NUL) in `cwd` (a path inside /workspace; see
    /// [`super::paths::workspace_path`]), or what to fix.
    pub fn new(command: &str, cwd: Option<&str>) -> Result<Self, String> {
        let chars = command.chars().count();
        if command.trim().is_empty() || chars > MAX_COMMAND_CHARS {
            return Err(format!("`command` must be 1 to {MAX_COMMAND_CHARS} characters (it has {chars})."));
        }
        if command.contains('\0') {
            return Err("`command` contains a NUL character, which no shell can run.".into());
        }
        let cwd = super::paths::workspace_path(cwd.unwrap_or(spec::WORKSPACE)).map_err(|why| format!("`cwd` {why}"))?;
        Ok(Self { command: command.to_owned(), cwd })
    }

    /// The command text.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The working directory (normalized, inside /workspace).
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    fn argv(&self, time_limit: Duration) -> Vec<String> {
        let limit = format!("{}s", time_limit.as_secs().max(1));
        ["timeout", "--signal=TERM", "--kill-after=2s", &limit, "bash", "--noprofile", "--norc", "-c", &self.command]
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// Every exec Hearth makes in the container: `argv` (never a shell line) as the command user,
/// unprivileged, with exactly the spec's environment, stdout and stderr attached (and stdin
/// when the caller writes to it).
pub(super) fn exec_options(argv: Vec<String>, working_dir: &str, stdin: bool) -> CreateExecOptions<String> {
    CreateExecOptions {
        attach_stdin: Some(stdin),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        privileged: Some(false),
        env: Some(spec::ENV.iter().map(|&e| e.to_owned()).collect()),
        cmd: Some(argv),
        user: Some(spec::USER.to_owned()),
        working_dir: Some(working_dir.to_owned()),
        ..Default::default()
    }
}

/// Why a command has no plain receipt.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Nothing ran (off, no engine, isolation refused, busy, the exec was not created).
    #[error(transparent)]
    NotRun(ComputerError),
    /// It started and may have done part of its work: Stop, the time limit, or a lost stream.
    /// The container was stopped; `receipt` holds what was seen.
    #[error("{}", .receipt.note.as_deref().unwrap_or(STOPPED_NOTE))]
    MayHaveRun {
        /// Status interrupted or timed out, with the output read so far.
        receipt: CommandReceipt,
    },
}

/// How a started command ended, for the caller that holds the busy lock.
pub enum Ran {
    /// It exited by itself: its receipt (succeeded or failed). Processes it left in the
    /// background are the caller's to end ([`signal_all`]).
    Ended(CommandReceipt),
    /// Stop, the time limit or a lost answer ended the wait: it may still be running, and the
    /// caller must stop the container before anything else runs.
    MayStillRun(CommandReceipt),
}

/// Runs `request` in the verified, running container `container_id`, with `time_limit`.
/// What the receipt keeps is also sent to `output_to`, as it arrives.
pub async fn run(
    docker: &Docker,
    container_id: &str,
    request: &CommandRequest,
    cancel: &CancellationToken,
    output_to: Option<&OutputSink>,
    time_limit: Duration,
) -> Result<Ran, ComputerError> {
    if cancel.is_cancelled() {
        return Err(ComputerError::StoppedBefore);
    }
    let options = exec_options(request.argv(time_limit), request.cwd(), false);
    let exec = bounded(docker.create_exec(container_id, options)).await??;
    // Stop may have come while the exec was being created: it is not started then.
    if cancel.is_cancelled() {
        return Err(ComputerError::StoppedBefore);
    }
    let started = Instant::now();
    // From here on the command may be running: every failure is "may still run".
    let attached = tokio::time::timeout(engine::ENGINE_LIMIT, docker.start_exec(&exec.id, None)).await;
    let mut output = Output::default();
    let ended = match attached {
        Ok(Ok(StartExecResults::Attached { output: mut stream, .. })) => {
            let overdue = tokio::time::sleep(time_limit + Duration::from_secs(2) + OVERDUE_MARGIN);
            tokio::pin!(overdue);
            loop {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => break Ended::Stopped,
                    () = &mut overdue => break Ended::TimedOut,
                    item = stream.next() => match item {
                        Some(Ok(LogOutput::StdOut { message })) => forward(output_to, OutputStream::Stdout, output.push(Stream::Out, &message)),
                        Some(Ok(LogOutput::StdErr { message })) => forward(output_to, OutputStream::Stderr, output.push(Stream::Err, &message)),
                        Some(Ok(LogOutput::StdIn { .. } | LogOutput::Console { .. })) => {}
                        Some(Err(_)) => break Ended::Lost,
                        None => break Ended::Exited,
                    },
                }
            }
        }
        Ok(Ok(StartExecResults::Detached) | Err(_)) | Err(_) => Ended::Lost,
    };
    let exit_code = match ended {
        Ended::Exited => bounded(docker.inspect_exec(&exec.id)).await.ok().and_then(Result::ok).and_then(|e| e.exit_code),
        Ended::Stopped | Ended::TimedOut | Ended::Lost => None,
    };
    let elapsed = started.elapsed();
    // `timeout` exits 124 after TERM, 137 after the KILL that follows; only past the limit is
    // that a time-out rather than the command's own code.
    let timed_out = matches!(ended, Ended::TimedOut) || (matches!(exit_code, Some(124 | 137)) && elapsed >= time_limit);
    let status = match ended {
        Ended::Stopped | Ended::Lost => CommandStatus::Interrupted,
        Ended::TimedOut => CommandStatus::TimedOut,
        Ended::Exited if timed_out => CommandStatus::TimedOut,
        Ended::Exited if exit_code == Some(0) => CommandStatus::Succeeded,
        Ended::Exited if exit_code.is_some() => CommandStatus::Failed,
        // It ended, but the engine could not say how.
        Ended::Exited => CommandStatus::Interrupted,
    };
    let note = match status {
        CommandStatus::Succeeded | CommandStatus::Failed => None,
        CommandStatus::TimedOut => Some(TIMED_OUT_NOTE.to_owned()),
        CommandStatus::Interrupted => Some(STOPPED_NOTE.to_owned()),
    };
    let receipt = output.into_receipt(status, exit_code, elapsed, note);
    Ok(match status {
        CommandStatus::Succeeded | CommandStatus::Failed => Ran::Ended(receipt),
        CommandStatus::TimedOut | CommandStatus::Interrupted => Ran::MayStillRun(receipt),
    })
}

/// Signals every process in the container except the init (PID 1), the one process the init
/// started (`sleep infinity`, the container's life: the init's child with the earliest start
/// time — an orphan the init adopted later always started later, so a command cannot pass one
/// off as it), and the signaller itself. Run as `python3 -I` in the container; the argument is
/// `TERM` or `KILL`.
const SIGNAL_ALL: &str = r#"
import os, signal, sys, time
sig = signal.SIGKILL if sys.argv[1] == "KILL" else signal.SIGTERM
me = os.getpid()
def scan():
    procs = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(b")") + 2:].split()
        if fields[0] != b"Z":
            procs.append((int(name), int(fields[1]), int(fields[19])))
    return procs
# A process can fork between a scan and its kill: KILL repeats until a scan finds nothing
# (a TERM is one pass: the container is stopped after it anyway).
keep = None
for _ in range(50 if sig == signal.SIGKILL else 1):
    procs = scan()
    if keep is None:
        keep = {1, me}
        adopted = [p for p in procs if p[1] == 1]
        if adopted:
            keep.add(min(adopted, key=lambda p: p[2])[0])
    left = [pid for pid, _, _ in procs if pid not in keep]
    if not left:
        sys.exit(0)
    for pid in left:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    time.sleep(0.01)
sys.exit(0 if sig == signal.SIGTERM or not [p for p, _, _ in scan() if p not in keep] else 3)
"#;

/// Which signal [`signal_all`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Before the container is stopped: the command hears Stop first.
    Term,
    /// After a command that exited by itself: what it left running ends.
    Kill,
}

/// Sends `signal` (`TERM` or `KILL`) to every process of the commands ([`SIGNAL_ALL`]). With
/// `KILL`, after a command that exited by itself: nothing it started in the background
/// (`setsid cmd &`) runs beside the next operation. With `TERM`, before the container is
/// stopped: the command hears Stop first (the engine's stop signals only PID 1).
pub async fn signal_all(docker: &Docker, container_id: &str, signal: Signal) -> Result<(), ComputerError> {
    // Bounded as a whole: on the Stop path a stalled engine must not hold Stop up.
    let limit = match signal {
        Signal::Kill => Duration::from_secs(10),
        Signal::Term => Duration::from_secs(3),
    };
    tokio::time::timeout(limit, signal_all_unbounded(docker, container_id, signal))
        .await
        .map_err(|_| ComputerError::Engine(format!("signalling the command's processes took over {} s", limit.as_secs())))?
}

async fn signal_all_unbounded(docker: &Docker, container_id: &str, signal: Signal) -> Result<(), ComputerError> {
    let signal = match signal {
        Signal::Kill => "KILL",
        Signal::Term => "TERM",
    };
    let argv = ["/usr/bin/python3", "-I", "-c", SIGNAL_ALL, signal].map(str::to_owned).to_vec();
    let options = exec_options(argv, spec::WORKSPACE, false);
    let exec = bounded(docker.create_exec(container_id, options)).await??;
    match bounded(docker.start_exec(&exec.id, None)).await?? {
        StartExecResults::Attached { mut output, .. } => while output.next().await.is_some() {},
        StartExecResults::Detached => {}
    }
    match bounded(docker.inspect_exec(&exec.id)).await??.exit_code {
        Some(0) => Ok(()),
        other => Err(ComputerError::Engine(format!("signalling the command's processes exited with {other:?}"))),
    }
}

/// Sends what the receipt kept of a chunk to the live view (a closed view is no error: the
/// command goes on, and its receipt has everything).
fn forward(to: Option<&OutputSink>, stream: OutputStream, kept: &[u8]) {
    if let Some(sink) = to
        && !kept.is_empty()
    {
        let _ = sink.send(CommandOutput { stream, text: String::from_utf8_lossy(kept).into_owned() });
    }
}

enum Ended {
    Exited,
    Stopped,
    TimedOut,
    Lost,
}

#[derive(Clone, Copy)]
enum Stream {
    Out,
    Err,
}

/// stdout and stderr, capped together at [`OUTPUT_CAP`].
#[derive(Default)]
struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    truncated: bool,
}

impl Output {
    /// Keeps what fits under the cap; returns the part kept.
    fn push<'b>(&mut self, stream: Stream, bytes: &'b [u8]) -> &'b [u8] {
        let room = OUTPUT_CAP.saturating_sub(self.stdout.len() + self.stderr.len());
        let take = bytes.len().min(room);
        if take < bytes.len() {
            self.truncated = true;
        }
        let buffer = match stream {
            Stream::Out => &mut self.stdout,
            Stream::Err => &mut self.stderr,
        };
        buffer.extend_from_slice(&bytes[..take]);
        &bytes[..take]
    }

    fn into_receipt(self, status: CommandStatus, exit_code: Option<i64>, elapsed: Duration, note: Option<String>) -> CommandReceipt {
        CommandReceipt {
            status,
            exit_code,
            stdout: String::from_utf8_lossy(&self.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&self.stderr).into_owned(),
            truncated: self.truncated,
            duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn output_is_capped_across_both_streams() {
        let mut out = Output::default();
        out.push(Stream::Out, &vec![b'a'; OUTPUT_CAP - 10]);
        out.push(Stream::Err, &[b'b'; 20]);
        out.push(Stream::Out, b"more");
        let receipt = out.into_receipt(CommandStatus::Succeeded, Some(0), Duration::ZERO, None);
        assert_eq!(receipt.stdout.len() + receipt.stderr.len(), OUTPUT_CAP);
        assert_eq!(receipt.stderr, "b".repeat(10));
        assert!(receipt.truncated);
    }

    #[test]
    fn requests_are_checked() {
        assert!(CommandRequest::new("", None).is_err());
        assert!(CommandRequest::new(&"x".repeat(MAX_COMMAND_CHARS + 1), None).is_err());
        assert!(CommandRequest::new("echo\0", None).is_err());
        assert!(CommandRequest::new("ls", Some("/etc")).is_err());
        let ok = CommandRequest::new("ls", Some("/workspace/src/")).unwrap();
        assert_eq!(ok.cwd(), "/workspace/src");
        assert_eq!(ok.argv(TIME_LIMIT)[..5], ["timeout", "--signal=TERM", "--kill-after=2s", "30s", "bash"]);
    }
}
