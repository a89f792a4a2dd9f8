//! The host's side of pairing (`Noise_XXpsk3`): registers the companion's key if, and only if,
//! it proves it knows the live offer's secret.
//!
//! ```text
//! companion → host   preamble "HRTH" 1 'P'
//! companion → host   msg 1: e                       (plaintext; nothing in it is used)
//! host → companion   msg 2: e, ee, s, es            (the companion checks s against the QR)
//! companion → host   msg 3: s, se, psk + {name}     (wrong secret: fails here, counted)
//! host → companion   transport: {deviceId}          (key confirmation: the host knew it too)
//! ```
//!
//! A replayed exchange fails at message 3: the recorded message was made against the earlier
//! host ephemeral, and this handshake's keys mix in a fresh one.

use tokio::io::{AsyncRead, AsyncWrite};

use crate::pairing::channel::secure_channel;
use crate::pairing::error::{PairingError, Result};
use crate::pairing::frame::{MAX_FRAME, read_frame, write_frame};
use crate::pairing::host::{HostInner, now_ms};
use crate::pairing::keys::DeviceId;
use crate::pairing::noise::{PAIRING_PSK_SLOT, pairing_responder, remote_static};
use crate::pairing::store::{DeviceName, PairedDevice};
use crate::pairing::wire::{PairConfirm, PairRequest};

/// Runs the pairing handshake after the preamble; the id registered.
pub(crate) async fn respond<R, W>(inner: &HostInner, mut reader: R, mut writer: W) -> Result<DeviceId>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut frame = vec![0u8; MAX_FRAME];
    let mut payload = vec![0u8; MAX_FRAME];
    let mut state = pairing_responder(&inner.keypair)?;

    // Message 1 is read before looking at the offer, so that refusing leaves no unread bytes
    // and the companion sees a clean close rather than a reset.
    let len = read_frame(&mut reader, &mut frame).await?.ok_or_else(|| PairingError::protocol("closed before message 1"))?;
    let Some(ticket) = inner.offers.ticket() else {
        tracing::info!("pairing attempt with no live offer");
        return Err(PairingError::PairingRefused);
    };
    state.read_message(&frame[..len], &mut payload)?;

    let len = state.write_message(&[], &mut frame)?;
    write_frame(&mut writer, &frame[..len]).await?;

    let len = read_frame(&mut reader, &mut frame).await?.ok_or_else(|| PairingError::protocol("closed before message 3"))?;
    state.set_psk(usize::from(PAIRING_PSK_SLOT), ticket.psk.as_slice())?;
    let request_len = match state.read_message(&frame[..len], &mut payload) {
        Ok(request_len) => request_len,
        Err(snow::Error::Decrypt) => {
            inner.offers.record_failure(ticket.generation);
            tracing::warn!("pairing attempt with a wrong secret (or a replayed exchange)");
            return Err(PairingError::PairingRefused);
        }
        Err(other) => return Err(other.into()),
    };
    let public_key = remote_static(&state)?;
    let request: PairRequest = serde_json::from_slice(&payload[..request_len])
        .map_err(|e| PairingError::protocol(format!("message 3 did not carry a pairing request: {e}")))?;

    if !inner.offers.consume(ticket.generation) {
        tracing::info!("pairing proved the secret of an offer already used, expired or replaced");
        return Err(PairingError::PairingRefused);
    }
    let device = PairedDevice {
        id: public_key.device_id(),
        offer: ticket.offer,
        public_key,
        name: DeviceName::from_untrusted(&request.name),
        paired_at: now_ms(),
    };
    let id = device.id.clone();
    inner.store.register(device).await.map_err(PairingError::DeviceStore)?;
    tracing::info!(device = %id, "paired a new device");

    let transport = state.into_stateless_transport_mode()?;
    let (mut sender, _receiver) = secure_channel(transport, reader, writer, inner.config.limits.max_message_len);
    let confirm = serde_json::to_vec(&PairConfirm { device_id: id.as_str().to_owned() })
        .map_err(|e| PairingError::protocol(format!("the confirmation did not serialize: {e}")))?;
    sender.send(&confirm).await?;
    sender.shutdown().await?;
    Ok(id)
}
