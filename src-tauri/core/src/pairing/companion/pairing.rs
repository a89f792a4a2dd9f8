//! The companion's side of pairing (`Noise_XXpsk3`, initiator).
//!
//! The order matters: message 3 is the only one that depends on the secret, and whoever reads it
//! can test guesses of the secret against it offline. So the host's key is checked against the
//! offer's fingerprint after message 2 and *before* message 3 is written: an impostor on the
//! LAN gets nothing to test. Pairing completes only on the host's confirmation, which needs the
//! secret too, so a typed code (no fingerprint) still never pairs with a host that did not show it.

use std::net::SocketAddr;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::pairing::channel::secure_channel;
use crate::pairing::companion::{CompanionConfig, HostPairing};
use crate::pairing::error::{PairingError, Result};
use crate::pairing::frame::{MAX_FRAME, Mode, read_frame, write_frame};
use crate::pairing::keys::{Fingerprint, StaticKeypair};
use crate::pairing::noise::{pairing_initiator, remote_static};
use crate::pairing::offer::PairingSecret;
use crate::pairing::wire::{PairConfirm, PairRequest};

/// Pairs within the handshake deadline.
pub(crate) async fn pair(
    keypair: &StaticKeypair,
    config: CompanionConfig,
    host: SocketAddr,
    expected: Option<Fingerprint>,
    secret: &PairingSecret,
    name: &str,
) -> Result<HostPairing> {
    let deadline = config.limits.handshake_timeout;
    tokio::time::timeout(deadline, run(keypair, config, host, expected, secret, name))
        .await
        .map_err(|_| PairingError::HandshakeTimeout { after: deadline })?
}

async fn run(
    keypair: &StaticKeypair,
    config: CompanionConfig,
    host: SocketAddr,
    expected: Option<Fingerprint>,
    secret: &PairingSecret,
    name: &str,
) -> Result<HostPairing> {
    let stream = TcpStream::connect(host).await.map_err(|source| PairingError::Connect { addr: host, source })?;
    stream.set_nodelay(true)?;
    let (read, mut writer) = stream.into_split();
    let mut reader = BufReader::with_capacity(MAX_FRAME + 2, read);
    let mut frame = vec![0u8; MAX_FRAME];
    let mut payload = vec![0u8; MAX_FRAME];

    let psk = secret.psk();
    let mut state = pairing_initiator(keypair, &psk)?;
    writer.write_all(&Mode::Pairing.preamble()).await?;
    let len = state.write_message(&[], &mut frame)?;
    write_frame(&mut writer, &frame[..len]).await?;

    // A clean close instead of message 2: the host has no live offer (used, expired,
    // withdrawn). The host reads message 1 whole before closing, so a refusal is never a reset;
    // a reset is a network failure and reported as one.
    let len = read_frame(&mut reader, &mut frame).await?.ok_or(PairingError::PairingRefused)?;
    state.read_message(&frame[..len], &mut payload)?;
    let host_key = remote_static(&state)?;
    if let Some(expected) = expected {
        let found = host_key.fingerprint();
        if found != expected {
            return Err(PairingError::HostKeyMismatch { addr: host, expected: expected.to_string(), found: found.to_string() });
        }
    }

    let request = serde_json::to_vec(&PairRequest { name: name.to_owned() }).map_err(|e| PairingError::protocol(format!("{e}")))?;
    if request.len() > 4096 {
        return Err(PairingError::MessageTooLarge { len: request.len(), max: 4096 });
    }
    let len = state.write_message(&request, &mut frame)?;
    write_frame(&mut writer, &frame[..len]).await?;

    let transport = state.into_stateless_transport_mode()?;
    let (_sender, mut receiver) = secure_channel(transport, reader, writer, config.limits.max_message_len);
    // Closed cleanly without confirming: the host refused the secret.
    let confirm = receiver.recv().await?.ok_or(PairingError::PairingRefused)?;
    let confirm: PairConfirm =
        serde_json::from_slice(&confirm).map_err(|e| PairingError::protocol(format!("the host's confirmation did not parse: {e}")))?;
    let own = keypair.public().device_id();
    if confirm.device_id != own.as_str() {
        return Err(PairingError::protocol(format!("the host registered {} instead of {own}", confirm.device_id)));
    }
    Ok(HostPairing { host, host_key, device_id: own })
}
