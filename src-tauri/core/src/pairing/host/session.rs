//! One connection on the host: the handshake under a deadline, then a paired device's session.
//!
//! ```text
//! companion → host   preamble "HRTH" 1 'S'
//! companion → host   msg 1: e, es, s, ss            (the host learns and checks the device key)
//! host → companion   msg 2: e, ee, se
//! companion → host   transport: hello               (only now is the session live)
//! ```
//!
//! IK's first message can be replayed verbatim by anyone who recorded it, and the host cannot
//! tell; so nothing in it is acted on, and the session starts only with the companion's `hello`,
//! which needs this handshake's keys (mixing the host's fresh ephemeral) to encrypt. A replayer
//! has no such keys: its next frame fails authentication and the connection closes before any
//! request is read.
//!
//! Once live, a reader reads requests (checking the device's standing before each, so a
//! revocation written by any path refuses the next request), runs each on its own task, and a
//! writer drains the connection's outbox. The connection's cancellation token ends both: the
//! registry cancels it on revocation, the host's token on shutdown.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use tokio::io::{AsyncWrite, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::pairing::channel::{SecureReceiver, SecureSender, secure_channel};
use crate::pairing::error::{PairingError, Result};
use crate::pairing::frame::{MAX_FRAME, Mode, read_frame, read_preamble, write_frame};
use crate::pairing::handler::RequestContext;
use crate::pairing::host::registry::CloseCause;
use crate::pairing::host::{HostInner, pairing};
use crate::pairing::keys::{DeviceId, PublicKey};
use crate::pairing::noise::{remote_static, session_responder};
use crate::pairing::outbox::{Outbox, Outgoing};
use crate::pairing::store::Standing;
use crate::pairing::wire::{APP_PROTOCOL, ClientMessage, CloseReason, ErrorCode, Outcome, RemoteError, RequestId, Response, ServerMessage};

type Reader = BufReader<OwnedReadHalf>;

/// An authenticated, live session.
struct Live {
    device: DeviceId,
    key: PublicKey,
    sender: SecureSender<OwnedWriteHalf>,
    receiver: SecureReceiver<Reader>,
}

/// Runs a connection: preamble and handshake under the deadline, then the session.
pub(crate) async fn run(inner: &Arc<HostInner>, stream: TcpStream, peer: SocketAddr) -> Result<()> {
    let (read, writer) = stream.into_split();
    let mut reader = BufReader::with_capacity(MAX_FRAME + 2, read);
    let deadline = inner.config.limits.handshake_timeout;
    let handshake = async {
        match read_preamble(&mut reader).await? {
            Mode::Pairing => pairing::respond(inner, reader, writer).await.map(|_| None),
            Mode::Session => accept(inner, reader, writer).await.map(Some),
        }
    };
    let live = tokio::select! {
        biased;
        () = inner.shutdown.cancelled() => return Ok(()),
        outcome = tokio::time::timeout(deadline, handshake) => match outcome {
            Ok(outcome) => outcome?,
            Err(_) => {
                tracing::info!(%peer, ?deadline, "handshake timed out");
                return Err(PairingError::HandshakeTimeout { after: deadline });
            }
        },
    };
    match live {
        Some(live) => serve(inner, live, peer).await,
        None => Ok(()),
    }
}

/// The IK handshake and the companion's hello.
async fn accept(inner: &HostInner, mut reader: Reader, mut writer: OwnedWriteHalf) -> Result<Live> {
    let mut frame = vec![0u8; MAX_FRAME];
    let mut payload = vec![0u8; MAX_FRAME];
    let mut state = session_responder(&inner.keypair)?;

    let len = read_frame(&mut reader, &mut frame).await?.ok_or_else(|| PairingError::protocol("closed before message 1"))?;
    // The payload is ignored on purpose: message 1 can be a replay.
    state.read_message(&frame[..len], &mut payload)?;
    let key = remote_static(&state)?;
    let device = key.device_id();
    if !is_active(inner, &device, &key).await? {
        tracing::info!(%device, "refused a session: device not paired or revoked");
        return Err(PairingError::DeviceRefused);
    }

    let len = state.write_message(&[], &mut frame)?;
    write_frame(&mut writer, &frame[..len]).await?;

    let transport = state.into_stateless_transport_mode()?;
    let (sender, mut receiver) = secure_channel(transport, reader, writer, inner.config.limits.max_message_len);
    let hello = match receiver.recv().await {
        Ok(Some(hello)) => hello,
        Ok(None) => return Err(PairingError::protocol("closed before hello")),
        Err(PairingError::Decrypt) => {
            tracing::warn!(%device, "a session's first message failed authentication (a replayed handshake?)");
            return Err(PairingError::Decrypt);
        }
        Err(other) => return Err(other),
    };
    match serde_json::from_slice::<ClientMessage>(&hello) {
        Ok(ClientMessage::Hello { protocol }) if protocol == APP_PROTOCOL => {}
        Ok(ClientMessage::Hello { protocol }) => {
            return Err(PairingError::protocol(format!("application protocol {protocol} is not {APP_PROTOCOL}")));
        }
        _ => return Err(PairingError::protocol("the first message was not hello")),
    }
    Ok(Live { device, key, sender, receiver })
}

/// Whether `device` is paired, not revoked, and paired with this very key.
async fn is_active(inner: &HostInner, device: &DeviceId, key: &PublicKey) -> Result<bool> {
    let standing = inner.store.standing(device).await.map_err(PairingError::DeviceStore)?;
    Ok(matches!(standing, Standing::Active(stored) if stored == *key))
}

/// How the reader stopped.
enum ReadEnd {
    /// The companion closed, or the connection broke.
    Gone,
    /// The connection was cancelled (revoked, shutting down).
    Cancelled,
    /// The host refuses to go on: answer `answer` if any, say why, close.
    Refuse { reason: CloseReason, message: String, answer: Option<(RequestId, RemoteError)>, limit: Option<usize> },
}

/// Serves a live session until it ends.
async fn serve(inner: &Arc<HostInner>, live: Live, peer: SocketAddr) -> Result<()> {
    let Live { device, key, sender, mut receiver } = live;
    let config = inner.config;
    let cancel = inner.shutdown.child_token();
    let cause: CloseCause = Arc::new(OnceLock::new());
    let (outbox, queue) = Outbox::new(config.outbox_capacity, config.limits.max_message_len);
    let _registration = inner.registry.register(&device, cancel.clone(), Arc::clone(&cause), outbox.clone());
    // Checked again after registering: a revocation between the handshake's check and the
    // registration would otherwise miss this connection.
    if !is_active(inner, &device, &key).await? {
        let _ = cause.set(CloseReason::Revoked);
        cancel.cancel();
    }
    tracing::info!(%device, %peer, "device connected");

    let writer = tokio::spawn(write_loop(sender, queue, cancel.clone(), Arc::clone(&cause), config.linger));
    let end = read_loop(inner, &device, &key, &mut receiver, &outbox, &cancel).await;
    match end {
        ReadEnd::Refuse { reason, message, answer, limit } => {
            tracing::info!(%device, ?reason, "closing a session: {message}");
            let _ = cause.set(reason);
            // Tell the companion why, then keep reading (and discarding) for a moment, so the
            // close does not reset the connection before the companion has read the reason.
            let tell = async {
                if let Some((id, error)) = answer {
                    outbox.send(&ServerMessage::Response(Response { id, outcome: Outcome::Error(error) })).await?;
                }
                outbox.send(&ServerMessage::Closing { reason, message, limit }).await
            };
            let told = tokio::time::timeout(config.linger, tell);
            let drained = tokio::time::timeout(config.linger, receiver.drain(2 * config.limits.max_message_len));
            let (told, _) = tokio::join!(told, drained);
            if !matches!(told, Ok(Ok(()))) {
                cancel.cancel();
            }
        }
        ReadEnd::Gone => {
            let _ = cause.set(CloseReason::ConnectionLost);
            cancel.cancel();
        }
        ReadEnd::Cancelled => {}
    }
    // The writer ends on its own after a `closing`, or at once when cancelled.
    let _ = tokio::time::timeout(config.linger.saturating_mul(2), writer).await;
    cancel.cancel();
    tracing::info!(%device, %peer, "device disconnected");
    Ok(())
}

/// Reads requests until the connection ends or must be refused.
async fn read_loop(
    inner: &Arc<HostInner>,
    device: &DeviceId,
    key: &PublicKey,
    receiver: &mut SecureReceiver<Reader>,
    outbox: &Outbox,
    cancel: &CancellationToken,
) -> ReadEnd {
    let in_flight = Arc::new(Semaphore::new(inner.config.max_in_flight.max(1)));
    loop {
        let received = tokio::select! {
            biased;
            () = cancel.cancelled() => return ReadEnd::Cancelled,
            received = receiver.recv() => received,
        };
        let bytes = match received {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return ReadEnd::Gone,
            Err(PairingError::MessageTooLarge { len, max }) => {
                return ReadEnd::Refuse {
                    reason: CloseReason::MessageTooLarge,
                    message: format!(
                        "a message of {len} bytes is more than the {max} bytes your Hearth accepts; it was not read. Send less at once"
                    ),
                    answer: None,
                    limit: Some(max),
                };
            }
            Err(error) => {
                tracing::info!(%device, %error, "session read failed");
                return ReadEnd::Gone;
            }
        };
        let (id, command, params) = match serde_json::from_slice::<ClientMessage>(&bytes) {
            Ok(ClientMessage::Request { id, command, params }) => (id, command, params),
            Ok(ClientMessage::Hello { .. }) => {
                return ReadEnd::Refuse {
                    reason: CloseReason::ProtocolError,
                    message: "hello was sent twice".into(),
                    answer: None,
                    limit: None,
                };
            }
            Err(error) => {
                return ReadEnd::Refuse {
                    reason: CloseReason::ProtocolError,
                    message: format!("a message was not a request ({error})"),
                    answer: None,
                    limit: None,
                };
            }
        };
        // Revocation takes effect on the next request, whichever path wrote it.
        match is_active(inner, device, key).await {
            Ok(true) => {}
            Ok(false) => {
                return ReadEnd::Refuse {
                    reason: CloseReason::Revoked,
                    message: CloseReason::Revoked.default_message().into(),
                    answer: Some((id, RemoteError::new(ErrorCode::Forbidden, CloseReason::Revoked.default_message()))),
                    limit: None,
                };
            }
            Err(error) => {
                tracing::error!(%device, %error, "could not read the device's standing");
                let refusal = RemoteError::new(
                    ErrorCode::Unavailable,
                    "your Hearth could not check this device's pairing right now; nothing was done. Try again",
                );
                let _ = outbox.send(&ServerMessage::Response(Response { id, outcome: Outcome::Error(refusal) })).await;
                continue;
            }
        }
        let permit = tokio::select! {
            biased;
            () = cancel.cancelled() => return ReadEnd::Cancelled,
            permit = Arc::clone(&in_flight).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return ReadEnd::Cancelled,
            },
        };
        let ctx = RequestContext { device: device.clone(), request: id, cancel: cancel.clone(), outbox: outbox.clone() };
        let handler = Arc::clone(&inner.handler);
        let outbox = outbox.clone();
        inner.tasks.spawn(async move {
            let _permit = permit;
            // The handler runs on a task of its own so that a panic in it becomes an answer.
            let answer = tokio::spawn(async move { handler.handle(ctx, command, params).await }).await;
            let outcome = match answer {
                Ok(Ok(value)) => Outcome::Result(value),
                Ok(Err(error)) => Outcome::Error(error),
                Err(_) => Outcome::Error(RemoteError::new(
                    ErrorCode::Internal,
                    "your Hearth failed while answering (a bug); whether it was carried out is unknown. Check its activity before trying again",
                )),
            };
            respond(&outbox, id, outcome).await;
        });
    }
}

/// Queues a response; an answer over the bound becomes an error the companion can act on.
async fn respond(outbox: &Outbox, id: RequestId, outcome: Outcome) {
    let message = ServerMessage::Response(Response { id, outcome });
    let sent = match outbox.send(&message).await {
        Err(PairingError::MessageTooLarge { len, max }) => {
            let error = RemoteError::new(
                ErrorCode::Internal,
                format!("the answer is {len} bytes, more than the {max} a message may carry; ask for less (a page, a range)"),
            );
            outbox.send(&ServerMessage::Response(Response { id, outcome: Outcome::Error(error) })).await
        }
        other => other,
    };
    if let Err(error) = sent {
        tracing::debug!(%id, %error, "an answer was not delivered");
    }
}

/// Writes queued messages until a `closing` has gone out, the queue closes, or the connection
/// is cancelled (then, if idle, says why in a `closing` of its own).
async fn write_loop<W: AsyncWrite + Unpin>(
    mut sender: SecureSender<W>,
    mut queue: mpsc::Receiver<Outgoing>,
    cancel: CancellationToken,
    cause: CloseCause,
    linger: std::time::Duration,
) {
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            next = queue.recv() => next,
        };
        let Some(outgoing) = next else { break };
        let written = tokio::select! {
            biased;
            // Cancelled in the middle of a message: the frame is cut, so no goodbye can follow.
            () = cancel.cancelled() => return,
            written = sender.send(&outgoing.bytes) => written,
        };
        if let Err(error) = written {
            tracing::debug!(%error, "session write failed");
            cancel.cancel();
            return;
        }
        if outgoing.last {
            let _ = tokio::time::timeout(linger, sender.shutdown()).await;
            return;
        }
    }
    let reason = cause.get().copied().unwrap_or(CloseReason::HostShutdown);
    if reason != CloseReason::ConnectionLost {
        let closing = ServerMessage::Closing { reason, message: reason.default_message().into(), limit: None };
        if let Ok(bytes) = serde_json::to_vec(&closing) {
            let _ = tokio::time::timeout(linger, sender.send(&bytes)).await;
        }
    }
    let _ = tokio::time::timeout(linger, sender.shutdown()).await;
}
