//! The bytes on the TCP stream: a six-byte preamble, then Noise messages each prefixed by its
//! length as a big-endian u16.
//!
//! The length prefix is two bytes because Noise caps a message at 65535 bytes: a frame can never
//! ask the reader to buffer more than that, whatever the peer sends.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::pairing::error::{PairingError, Result};

/// The largest Noise message, and so the largest frame body.
pub(crate) const MAX_FRAME: usize = 65535;

/// The first bytes of every connection: magic, wire version, then the mode. The mode is also
/// bound into the Noise prologue, so altering it on the way fails the handshake.
const MAGIC: &[u8; 4] = b"HRTH";
const WIRE_VERSION: u8 = 1;

/// What a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A first pairing (`Noise_XXpsk3`).
    Pairing,
    /// A session of a paired device (`Noise_IK`).
    Session,
}

impl Mode {
    fn byte(self) -> u8 {
        match self {
            Self::Pairing => b'P',
            Self::Session => b'S',
        }
    }

    /// The preamble that opens a connection in this mode.
    pub(crate) fn preamble(self) -> [u8; 6] {
        [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], WIRE_VERSION, self.byte()]
    }
}

/// Reads and checks the preamble.
pub(crate) async fn read_preamble<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Mode> {
    let mut bytes = [0u8; 6];
    reader.read_exact(&mut bytes).await?;
    if &bytes[..4] != MAGIC {
        return Err(PairingError::protocol("the connection does not start with Hearth's preamble"));
    }
    if bytes[4] != WIRE_VERSION {
        return Err(PairingError::protocol(format!("wire version {} is not 1", bytes[4])));
    }
    match bytes[5] {
        b'P' => Ok(Mode::Pairing),
        b'S' => Ok(Mode::Session),
        other => Err(PairingError::protocol(format!("unknown connection mode {other:#04x}"))),
    }
}

/// Appends one frame (length, then body) to `out`, so several frames go out in one write.
pub(crate) fn push_frame(out: &mut Vec<u8>, body: &[u8]) -> Result<()> {
    let len = u16::try_from(body.len()).map_err(|_| PairingError::protocol("a Noise message over 65535 bytes"))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    Ok(())
}

/// Writes one frame and flushes it.
pub(crate) async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, body: &[u8]) -> Result<()> {
    let mut out = Vec::with_capacity(body.len() + 2);
    push_frame(&mut out, body)?;
    writer.write_all(&out).await?;
    writer.flush().await?;
    Ok(())
}

/// Reads one frame body into `buf` (which must hold [`MAX_FRAME`] bytes) and returns its length,
/// or `None` when the peer closed cleanly between frames.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> Result<Option<usize>> {
    let mut len = [0u8; 2];
    if reader.read(&mut len[..1]).await? == 0 {
        return Ok(None);
    }
    reader.read_exact(&mut len[1..]).await?;
    let len = usize::from(u16::from_be_bytes(len));
    let body = buf.get_mut(..len).ok_or_else(|| PairingError::protocol("a frame longer than the read buffer"))?;
    reader.read_exact(body).await?;
    Ok(Some(len))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_a_clean_close_is_none() {
        let (mut a, mut b) = tokio::io::duplex(1 << 20);
        let mut out = Vec::new();
        push_frame(&mut out, b"one").unwrap();
        push_frame(&mut out, &[7u8; MAX_FRAME]).unwrap();
        a.write_all(&out).await.unwrap();
        drop(a);
        let mut buf = vec![0u8; MAX_FRAME];
        assert_eq!(read_frame(&mut b, &mut buf).await.unwrap(), Some(3));
        assert_eq!(&buf[..3], b"one");
        assert_eq!(read_frame(&mut b, &mut buf).await.unwrap(), Some(MAX_FRAME));
        assert_eq!(read_frame(&mut b, &mut buf).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_truncated_frame_is_an_error_not_a_close() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(&[0, 10, 1, 2]).await.unwrap();
        drop(a);
        let mut buf = vec![0u8; MAX_FRAME];
        assert!(read_frame(&mut b, &mut buf).await.is_err());
    }

    #[test]
    fn a_body_over_65535_bytes_is_refused() {
        assert!(push_frame(&mut Vec::new(), &vec![0u8; MAX_FRAME + 1]).is_err());
    }

    #[tokio::test]
    async fn preambles_are_checked() {
        for (bytes, ok) in [
            (Mode::Pairing.preamble().to_vec(), true),
            (Mode::Session.preamble().to_vec(), true),
            (b"GET / ".to_vec(), false),
            (b"HRTH\x02S".to_vec(), false),
            (b"HRTH\x01X".to_vec(), false),
        ] {
            let mut reader: &[u8] = &bytes;
            assert_eq!(read_preamble(&mut reader).await.is_ok(), ok, "{bytes:?}");
        }
    }
}
