//! The browser's DevTools connection: a pipe only this process holds, never a port.
//!
//! chromiumoxide launches Chromium with `--remote-debugging-port=0`, and that port listens on
//! loopback without a credential: any local account can find it (`/proc/net/tcp`) and drive
//! the owner's browser — read every cookie of its profiles, open `file://` pages, download into
//! the home folder. With `--remote-debugging-pipe` Chromium opens no port and speaks CDP over
//! its fds 3 (it reads) and 4 (it writes), one NUL-terminated JSON message at a time.
//!
//! chromiumoxide 0.9 speaks only a websocket that it dials over TCP itself (its `Connection`
//! wraps a `WebSocketStream<TcpStream>` and `Handler::new` is private; pipe support is an open
//! pull request upstream), so Hearth launches Chromium itself ([`spawn`]) and [`bridge`]s the
//! pipe to chromiumoxide through a one-shot loopback listener. That listener accepts exactly
//! one connection: the one whose other end is a socket this process holds (found by its inode
//! in `/proc/net/tcp` and `/proc/self/fd`; TCP carries no peer credentials). Any other
//! connection in that window is closed before a byte is read, and the listener closes as soon
//! as chromiumoxide's is accepted — milliseconds after it opened. Every CDP message after that
//! goes over the pipe. (Forking chromiumoxide to take another transport was the alternative;
//! this keeps the crate as published, and its `Browser::connect_with_config` as the seam.)

use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;

use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{AnyDelimiterCodec, FramedRead};

/// The largest CDP message either side may send (a page's picture is a few MB; chromiumoxide
/// itself sets no limit): a larger one ends the connection, and the browser with it.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// How much of Chromium's stderr is kept for a launch error (its last lines).
const STDERR_TAIL: usize = 2048;

/// Chromium's stderr, read as it runs (so it never fills), its last [`STDERR_TAIL`] bytes kept.
pub(super) struct Stderr {
    tail: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Stderr {
    /// What the browser last wrote, once it closed its stderr (waiting at most 2 s for that):
    /// for the error of a launch it did not survive.
    pub(super) async fn last_words(self) -> String {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.reader).await;
        let tail = self.tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&tail).trim().to_owned()
    }
}

/// Hearth's ends of a browser's pipes.
pub(super) struct Ends {
    to_browser: pipe::Sender,
    from_browser: pipe::Receiver,
}

/// Starts `program` with `args` and exactly the variables `env` (nothing inherited), its stdin
/// reading what Hearth writes to the returned [`Ends`] and its stdout writing what they read.
/// The program is the launcher script ([`super::chromium`]), which moves those two to fds 3
/// and 4 before Chromium starts: std places only fds 0–2 in a child, and this keeps the move
/// out of unsafe `pre_exec` code. The child is killed when its handle is dropped.
pub(super) fn spawn(program: &Path, args: &[String], env: &[(String, String)]) -> std::io::Result<(tokio::process::Child, Ends, Stderr)> {
    let (browser_reads, hearth_writes) = std::io::pipe()?;
    let (hearth_reads, browser_writes) = std::io::pipe()?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::from(browser_reads))
        .stdout(Stdio::from(browser_writes))
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    // The child's ends went with the command: Chromium's exit is this side's end of file.
    let ends = Ends {
        to_browser: pipe::Sender::from_owned_fd(OwnedFd::from(hearth_writes))?,
        from_browser: pipe::Receiver::from_owned_fd(OwnedFd::from(hearth_reads))?,
    };
    let tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = tail.clone();
    let stderr = child.stderr.take();
    let reader = tokio::spawn(async move {
        if let Some(mut stderr) = stderr {
            let mut chunk = [0u8; 4096];
            while let Ok(read) = tokio::io::AsyncReadExt::read(&mut stderr, &mut chunk).await {
                if read == 0 {
                    break;
                }
                let mut kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                kept.extend_from_slice(&chunk[..read]);
                let excess = kept.len().saturating_sub(STDERR_TAIL);
                kept.drain(..excess);
            }
        }
    });
    Ok((child, ends, Stderr { tail, reader }))
}

/// Opens the one-shot listener for `ends` and returns the websocket URL chromiumoxide is to
/// connect to, with the task that accepts that one connection and then carries messages both
/// ways until either side ends. Chromium's end of file drops the websocket without a closing
/// handshake, which chromiumoxide reports as a connection error (a clean close would leave its
/// handler waiting for ever, and the browser would not be seen to have died).
pub(super) async fn bridge(ends: Ends) -> std::io::Result<(String, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let Some(stream) = accept_own(listener, address).await else { return };
        // Each message is written as it comes: with Nagle's algorithm a message written while
        // the last was unacknowledged waited for chromiumoxide's delayed ACK (40 ms a time),
        // and a cold launch took about 250 ms longer than over Chromium's own DevTools socket.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::warn!(error = %err, "the browser's CDP bridge could not turn Nagle's algorithm off");
        }
        let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
        match async_tungstenite::tokio::accept_async_with_config(stream, Some(config)).await {
            Ok(socket) => carry(socket, ends).await,
            Err(err) => tracing::warn!(error = %err, "the browser's CDP bridge could not start its websocket"),
        }
    });
    Ok((format!("ws://{address}/devtools/browser/hearth"), task))
}

/// The first connection to `listener` (at `address`) whose other end this process holds; the
/// listener is closed when this returns.
async fn accept_own(listener: TcpListener, address: SocketAddr) -> Option<TcpStream> {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::warn!(error = %err, "the browser's CDP bridge could not accept its connection");
                return None;
            }
        };
        match held_here(peer, address) {
            Ok(true) => return Some(stream),
            Ok(false) => tracing::warn!(%peer, "refused a connection to the browser's CDP bridge from outside Hearth"),
            Err(err) => tracing::warn!(%peer, error = %err, "refused a connection to the browser's CDP bridge: /proc could not be read"),
        }
    }
}

/// Whether the TCP socket at `peer`, connected to `local`, is open in this process.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn held_here(peer: SocketAddr, local: SocketAddr) -> procfs::ProcResult<bool> {
    let inode = procfs::net::tcp()?.into_iter().find(|e| e.local_address == peer && e.remote_address == local).map(|e| e.inode);
    let Some(inode) = inode.filter(|inode| *inode != 0) else { return Ok(false) };
    let mut fds = procfs::process::Process::myself()?.fd()?;
    Ok(fds.any(|fd| fd.is_ok_and(|fd| matches!(fd.target, procfs::process::FDTarget::Socket(i) if i == inode))))
}

/// Without /proc (macOS, iOS) no connection can be shown to come from this process, so none is
/// let through; the browser runs on Linux (a phone build never launches it: `crate::parts`).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn held_here(_peer: SocketAddr, _local: SocketAddr) -> Result<bool, &'static str> {
    Err("this system has no /proc to tell which process holds a connection")
}

/// Carries chromiumoxide's messages to the browser and the browser's back, until either ends.
async fn carry<S>(socket: async_tungstenite::WebSocketStream<S>, ends: Ends)
where
    S: futures::AsyncRead + futures::AsyncWrite + Unpin,
{
    let Ends { mut to_browser, from_browser } = ends;
    let (mut to_client, mut from_client) = socket.split();
    let outbound = async {
        while let Some(Ok(message)) = from_client.next().await {
            let bytes = match message {
                Message::Text(text) => text.as_bytes().to_vec(),
                Message::Binary(bytes) => bytes.to_vec(),
                Message::Close(_) => break,
                _ => continue,
            };
            // A NUL inside a message would split it; JSON text never carries one raw.
            if bytes.contains(&0) || to_browser.write_all(&bytes).await.is_err() || to_browser.write_all(&[0]).await.is_err() {
                break;
            }
        }
    };
    let inbound = async {
        let mut messages = FramedRead::new(from_browser, AnyDelimiterCodec::new_with_max_length(vec![0], vec![0], MAX_MESSAGE));
        while let Some(Ok(message)) = messages.next().await {
            let Ok(text) = String::from_utf8(message.to_vec()) else { break };
            if to_client.send(Message::text(text)).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        () = outbound => {}
        () = inbound => {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::{Read, Write};

    use super::*;

    /// The bridge answers only a connection from this process: another process's (here a
    /// shell's, which asks for the websocket) is closed with nothing sent back; this process's
    /// is served, its messages reach the browser's end NUL-terminated and the browser's come
    /// back; the listener is gone once it is taken; and the browser's end of file ends the
    /// websocket without a closing handshake (an error to chromiumoxide, so a dead browser is
    /// seen). Oracles: the bytes the other process read, the bytes on the "browser's" pipe ends.
    #[tokio::test]
    async fn only_this_process_reaches_the_pipe_and_the_pipe_carries_both_ways() {
        let (mut browser_reads, hearth_writes) = std::io::pipe().unwrap();
        let (hearth_reads, mut browser_writes) = std::io::pipe().unwrap();
        let ends = Ends {
            to_browser: pipe::Sender::from_owned_fd(OwnedFd::from(hearth_writes)).unwrap(),
            from_browser: pipe::Receiver::from_owned_fd(OwnedFd::from(hearth_reads)).unwrap(),
        };
        let (url, task) = bridge(ends).await.unwrap();
        let port = url.trim_start_matches("ws://127.0.0.1:").split('/').next().unwrap().to_owned();

        // Another process asks for the websocket and reads what comes back until the bridge
        // closes its connection (`timeout` only bounds a failure: a served socket stays open).
        let request = "GET /devtools/browser/hearth HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                       Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
        let other = tokio::process::Command::new("bash")
            // SIGPIPE ignored: the bridge may close the socket before the request is written
            // (that is the refusal), and the write must not kill the shell that then counts.
            .args([
                "-c",
                r#"trap '' PIPE; exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 2; printf '%s' "$2" >&3 2>/dev/null; timeout 10 cat <&3 | wc -c"#,
                "bash",
                &port,
                request,
            ])
            .output()
            .await
            .unwrap();
        assert!(
            other.status.success(),
            "the other process could not connect ({:?}): {}",
            other.status,
            String::from_utf8_lossy(&other.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&other.stdout).trim(), "0", "another process was answered");

        let (mut socket, _) = async_tungstenite::tokio::connect_async(url.as_str()).await.unwrap();
        assert!(TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).await.is_err(), "the listener outlived its one connection");
        socket.send(Message::text(r#"{"id":1,"method":"Browser.getVersion"}"#)).await.unwrap();
        let sent = tokio::task::spawn_blocking(move || {
            let mut got = Vec::new();
            let mut byte = [0u8; 1];
            while browser_reads.read_exact(&mut byte).is_ok() && byte[0] != 0 {
                got.push(byte[0]);
            }
            got
        })
        .await
        .unwrap();
        assert_eq!(sent, br#"{"id":1,"method":"Browser.getVersion"}"#);
        browser_writes.write_all(b"{\"id\":1,\"result\":{}}\0{\"method\":\"Target.targetCreated\"}\0").unwrap();
        let answer = socket.next().await.unwrap().unwrap();
        assert_eq!(answer, Message::text(r#"{"id":1,"result":{}}"#));
        let event = socket.next().await.unwrap().unwrap();
        assert_eq!(event, Message::text(r#"{"method":"Target.targetCreated"}"#));

        drop(browser_writes);
        let last = socket.next().await;
        assert!(matches!(last, Some(Err(_))), "the browser's end of file came as {last:?}, not as a broken connection");
        task.await.unwrap();
    }
}
