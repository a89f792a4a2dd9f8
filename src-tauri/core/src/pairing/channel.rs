//! Application messages of any size (up to a bound) over Noise transport messages.
//!
//! A Noise transport message carries at most 65519 bytes of plaintext, so one application
//! message is split across as many as it needs. The first plaintext starts with the message's
//! total length (u32, big-endian); the reader checks it against its bound *before* reading
//! further, so an oversized message is refused after one frame, never buffered.
//!
//! The two directions are separate halves sharing one `StatelessTransportState` (snow's
//! explicit-nonce transport), each counting its own nonces. A reader task and a writer task can
//! then run at once without a lock, which matters: if each side could only read or write at a
//! time, two large messages crossing would fill both TCP buffers and stall both ends.
//! Nonces are still strictly sequential per direction, so a frame replayed, dropped or reordered
//! on the way fails authentication.

use std::sync::Arc;

use snow::StatelessTransportState;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::pairing::error::{PairingError, Result};
use crate::pairing::frame::{MAX_FRAME, push_frame, read_frame};
use crate::pairing::noise::TAG_LEN;

/// Plaintext bytes one transport message carries.
pub(crate) const CHUNK: usize = MAX_FRAME - TAG_LEN;

/// Bytes of the length header at the start of a message's first chunk.
const HEADER: usize = 4;

/// How much ciphertext a sender gathers before writing it out, so a large message costs a few
/// writes and a bounded buffer.
const WRITE_BATCH: usize = 256 * 1024;

/// The sending half of a secure channel.
pub(crate) struct SecureSender<W> {
    state: Arc<StatelessTransportState>,
    nonce: u64,
    writer: W,
    max_message: usize,
    cipher: Vec<u8>,
    out: Vec<u8>,
}

/// The receiving half of a secure channel.
pub(crate) struct SecureReceiver<R> {
    state: Arc<StatelessTransportState>,
    nonce: u64,
    reader: R,
    max_message: usize,
    frame: Vec<u8>,
    plain: Vec<u8>,
}

/// Splits a finished handshake into its two halves over the two halves of a stream; both read
/// and write messages of at most `max_message` bytes.
pub(crate) fn secure_channel<R, W>(
    state: StatelessTransportState,
    reader: R,
    writer: W,
    max_message: usize,
) -> (SecureSender<W>, SecureReceiver<R>) {
    let state = Arc::new(state);
    let sender = SecureSender { state: Arc::clone(&state), nonce: 0, writer, max_message, cipher: vec![0u8; MAX_FRAME], out: Vec::new() };
    let receiver = SecureReceiver { state, nonce: 0, reader, max_message, frame: vec![0u8; MAX_FRAME], plain: vec![0u8; MAX_FRAME] };
    (sender, receiver)
}

/// The next nonce of a direction. Noise reserves `u64::MAX`; no connection lives that long, but
/// if one did it must end rather than reuse a nonce.
fn take_nonce(nonce: &mut u64) -> Result<u64> {
    let current = *nonce;
    if current == u64::MAX - 1 {
        return Err(PairingError::protocol("the connection's nonces are exhausted; reconnect"));
    }
    *nonce += 1;
    Ok(current)
}

impl<W: AsyncWrite + Unpin> SecureSender<W> {
    /// Encrypts and writes one application message, refusing it first if it is over the bound.
    pub(crate) async fn send(&mut self, message: &[u8]) -> Result<()> {
        if message.len() > self.max_message {
            return Err(PairingError::MessageTooLarge { len: message.len(), max: self.max_message });
        }
        let total =
            u32::try_from(message.len()).map_err(|_| PairingError::MessageTooLarge { len: message.len(), max: self.max_message })?;
        self.out.clear();
        let first_len = message.len().min(CHUNK - HEADER);
        let mut first = Vec::with_capacity(HEADER + first_len);
        first.extend_from_slice(&total.to_be_bytes());
        first.extend_from_slice(&message[..first_len]);
        self.seal(&first).await?;
        for chunk in message[first_len..].chunks(CHUNK) {
            self.seal(chunk).await?;
        }
        self.writer.write_all(&self.out).await?;
        self.writer.flush().await?;
        self.out.clear();
        if self.out.capacity() > 2 * WRITE_BATCH {
            self.out.shrink_to(WRITE_BATCH);
        }
        Ok(())
    }

    /// Encrypts one chunk into the outgoing batch, writing the batch when it is full.
    async fn seal(&mut self, plain: &[u8]) -> Result<()> {
        let nonce = take_nonce(&mut self.nonce)?;
        let len = self.state.write_message(nonce, plain, &mut self.cipher)?;
        push_frame(&mut self.out, &self.cipher[..len])?;
        if self.out.len() >= WRITE_BATCH {
            self.writer.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }

    /// Ends this direction (TCP FIN), so the peer reads a clean close after what was sent.
    pub(crate) async fn shutdown(&mut self) -> Result<()> {
        self.writer.shutdown().await?;
        Ok(())
    }
}

impl<R: AsyncRead + Unpin> SecureReceiver<R> {
    /// Reads, authenticates and reassembles the next application message; `None` when the peer
    /// closed cleanly between messages. A message declared over the bound is
    /// [`PairingError::MessageTooLarge`] at once; the rest of it is never read.
    pub(crate) async fn recv(&mut self) -> Result<Option<Vec<u8>>> {
        let Some(first) = self.next_plain().await? else {
            return Ok(None);
        };
        let header: [u8; HEADER] = self
            .plain
            .get(..HEADER)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| PairingError::protocol("a message's first chunk is shorter than its length header"))?;
        let total = usize::try_from(u32::from_be_bytes(header)).unwrap_or(usize::MAX);
        if total > self.max_message {
            return Err(PairingError::MessageTooLarge { len: total, max: self.max_message });
        }
        // Grown as chunks arrive rather than reserved from the header, so a peer that declares
        // a large message and sends nothing more costs one chunk, not the whole bound.
        let mut message = Vec::with_capacity(total.min(4 * CHUNK));
        message.extend_from_slice(&self.plain[HEADER..first]);
        while message.len() < total {
            let len = self.next_plain().await?.ok_or_else(|| PairingError::protocol("the connection ended inside a message"))?;
            message.extend_from_slice(&self.plain[..len]);
        }
        if message.len() != total {
            return Err(PairingError::protocol("a message is longer than its length header says"));
        }
        Ok(Some(message))
    }

    /// Reads one frame and decrypts it into `self.plain`; the plaintext's length.
    async fn next_plain(&mut self) -> Result<Option<usize>> {
        let Some(len) = read_frame(&mut self.reader, &mut self.frame).await? else {
            return Ok(None);
        };
        let nonce = take_nonce(&mut self.nonce)?;
        let plain = self.state.read_message(nonce, &self.frame[..len], &mut self.plain)?;
        Ok(Some(plain))
    }

    /// Reads and discards what the peer still sends, up to `limit` bytes, so that closing after
    /// a refusal does not reset the connection before the peer has read why (a lingering close).
    pub(crate) async fn drain(&mut self, limit: usize) {
        let mut seen = 0usize;
        while seen < limit {
            match read_frame(&mut self.reader, &mut self.frame).await {
                Ok(Some(len)) => seen += len + 2,
                Ok(None) | Err(_) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::pairing::keys::StaticKeypair;
    use crate::pairing::noise::{session_initiator, session_responder};
    use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

    type Half = (SecureSender<WriteHalf<DuplexStream>>, SecureReceiver<ReadHalf<DuplexStream>>);

    /// Two channel ends over an in-memory pipe, after a real IK handshake.
    fn channel_pair(max_a: usize, max_b: usize) -> (Half, Half) {
        let host = StaticKeypair::generate().unwrap();
        let companion = StaticKeypair::generate().unwrap();
        let mut init = session_initiator(&companion, &host.public()).unwrap();
        let mut resp = session_responder(&host).unwrap();
        let (mut m, mut p) = (vec![0u8; MAX_FRAME], vec![0u8; MAX_FRAME]);
        let n = init.write_message(&[], &mut m).unwrap();
        resp.read_message(&m[..n], &mut p).unwrap();
        let n = resp.write_message(&[], &mut m).unwrap();
        init.read_message(&m[..n], &mut p).unwrap();
        let (a, b) = tokio::io::duplex(1 << 16);
        let (ar, aw) = tokio::io::split(a);
        let (br, bw) = tokio::io::split(b);
        (
            secure_channel(init.into_stateless_transport_mode().unwrap(), ar, aw, max_a),
            secure_channel(resp.into_stateless_transport_mode().unwrap(), br, bw, max_b),
        )
    }

    #[tokio::test]
    async fn messages_of_every_boundary_size_round_trip() {
        let ((mut tx, _arx), (_btx, mut rx)) = channel_pair(1 << 21, 1 << 21);
        let sizes = [0, 1, CHUNK - HEADER - 1, CHUNK - HEADER, CHUNK - HEADER + 1, CHUNK, 3 * CHUNK + 5, 1 << 20];
        let sender = tokio::spawn(async move {
            for size in sizes {
                let message: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
                tx.send(&message).await.unwrap();
            }
        });
        for size in sizes {
            let got = rx.recv().await.unwrap().unwrap();
            assert_eq!(got.len(), size);
            assert!(got.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        }
        sender.await.unwrap();
    }

    #[tokio::test]
    async fn an_oversized_message_is_refused_after_its_first_frame() {
        let ((mut tx, _arx), (_btx, mut rx)) = channel_pair(8 << 20, 1 << 20);
        // The pipe holds 64 KiB, so the sender blocks long before the message is through: the
        // receiver refusing proves it did not wait for (or buffer) the whole message.
        let _sender = tokio::spawn(async move { tx.send(&vec![b'x'; 2 << 20]).await });
        let err = rx.recv().await.unwrap_err();
        assert!(matches!(err, PairingError::MessageTooLarge { len, max } if len == 2 << 20 && max == 1 << 20), "{err}");
    }

    #[tokio::test]
    async fn the_sender_refuses_over_its_bound_without_writing() {
        let ((mut tx, _arx), _b) = channel_pair(100, 100);
        let err = tx.send(&[0u8; 101]).await.unwrap_err();
        assert!(matches!(err, PairingError::MessageTooLarge { len: 101, max: 100 }));
        assert_eq!(tx.nonce, 0, "nothing was encrypted");
    }

    #[tokio::test]
    async fn a_flipped_bit_or_a_replayed_frame_fails_authentication() {
        for tamper in ["flip", "replay"] {
            let ((tx, _arx), (_btx, mut rx)) = channel_pair(1 << 20, 1 << 20);
            // Seal two messages by hand, then tamper with the bytes on the way.
            let mut plain = Vec::new();
            plain.extend_from_slice(&3u32.to_be_bytes());
            plain.extend_from_slice(b"abc");
            let mut cipher = vec![0u8; MAX_FRAME];
            let n = tx.state.write_message(0, &plain, &mut cipher).unwrap();
            let mut wire = Vec::new();
            push_frame(&mut wire, &cipher[..n]).unwrap();
            let mut bytes = wire.clone();
            match tamper {
                "flip" => bytes[5] ^= 1,
                _ => bytes.extend_from_slice(&wire),
            }
            let mut writer = tx.writer;
            writer.write_all(&bytes).await.unwrap();
            if tamper == "replay" {
                assert_eq!(rx.recv().await.unwrap().unwrap(), b"abc");
            }
            assert!(matches!(rx.recv().await, Err(PairingError::Decrypt)), "{tamper}");
        }
    }
}
