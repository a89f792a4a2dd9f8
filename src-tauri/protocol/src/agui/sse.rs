//! Server-Sent Events framing for AG-UI: one event per frame, `data: <json>\n\n`.
//!
//! The encoder writes exactly that (LF only, optional fields omitted; JSON never holds a
//! raw newline, so one `data:` line always suffices). The decoder follows the WHATWG SSE
//! parsing rules — CRLF, LF and CR line ends, multi-line `data:` joined with `\n`,
//! `:` comments and `event:`/`id:`/`retry:` ignored, a leading BOM skipped — and accepts
//! arbitrary chunk boundaries (inside a UTF-8 sequence, between `\r` and `\n`, …).
//!
//! Why hand-rolled and byte-based: the stream is the hot path (a run can emit tens of
//! thousands of token deltas). Frames are found with `memchr` directly in the caller's
//! chunk and parsed with `serde_json::from_slice` in place; bytes are copied only when a
//! frame straddles two chunks or has several `data:` lines.

use super::events::Event;

/// Default cap on one frame's buffered size (the official TS client uses 10 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Encodes one event as an SSE frame: `data: <json>\n\n`.
pub fn encode(event: &Event) -> String {
    let mut buf = Vec::with_capacity(128);
    encode_into(&mut buf, event);
    match String::from_utf8(buf) {
        Ok(s) => s,
        // Unreachable: serde_json writes UTF-8 and the framing is ASCII.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Appends one event's SSE frame to `buf` (reuse one buffer across events to avoid
/// allocating per event).
pub fn encode_into(buf: &mut Vec<u8>, event: &Event) {
    let start = buf.len();
    buf.extend_from_slice(b"data: ");
    if let Err(e) = serde_json::to_writer(&mut *buf, event) {
        // Cannot happen for these types (string keys only, no non-finite floats), but
        // never emit half a frame: replace it with an SSE comment, which clients ignore.
        buf.truncate(start);
        buf.extend_from_slice(b": hearth could not encode an event: ");
        let msg = e.to_string().replace(['\r', '\n'], " ");
        buf.extend_from_slice(msg.as_bytes());
        buf.push(b'\n');
    }
    buf.extend_from_slice(b"\n\n");
}

/// Why the decoder could not produce an event.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// A frame's data was not a valid AG-UI event.
    #[error(
        "SSE frame is not a valid AG-UI 1.0 event: {source}; the producer must send exactly one JSON event object per frame (data was: {snippet})"
    )]
    Json {
        /// The JSON error (position is relative to the frame's data).
        #[source]
        source: serde_json::Error,
        /// The start of the offending data, for the log.
        snippet: String,
    },
    /// The stream ended inside a frame.
    #[error(
        "SSE stream ended inside a frame ({pending_bytes} bytes never terminated); the producer must end every event with a blank line (\"\\n\\n\") before closing the stream"
    )]
    Truncated {
        /// How many bytes were left unterminated.
        pending_bytes: usize,
    },
    /// One frame grew beyond the configured cap; it was dropped.
    #[error(
        "SSE frame exceeds {limit} bytes and was dropped; split large payloads (e.g. STATE_DELTA instead of STATE_SNAPSHOT) or raise the cap with SseDecoder::with_max_frame_bytes"
    )]
    FrameTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental SSE → [`Event`] decoder. Feed it byte chunks as they arrive.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of an unterminated line carried over from the previous chunk.
    carry: Vec<u8>,
    /// The current frame's data lines, joined by `\n`, when they could not stay borrowed.
    data: Vec<u8>,
    /// The current frame has seen at least one `data` field (invariant: `!has_data`
    /// implies `data.is_empty()`).
    has_data: bool,
    /// The current frame has seen a field line (so a stream end here is a truncation).
    in_frame: bool,
    /// The previous chunk ended with `\r`, so a leading `\n` completes that line end.
    skip_lf: bool,
    /// The optional leading BOM has been dealt with.
    bom_checked: bool,
    /// A frame exceeded the cap: drop lines until the next blank line.
    discarding: bool,
    max_frame: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the default frame cap ([`DEFAULT_MAX_FRAME_BYTES`]).
    pub fn new() -> Self {
        SseDecoder::with_max_frame_bytes(DEFAULT_MAX_FRAME_BYTES)
    }

    /// A decoder that rejects (and skips) frames larger than `limit` bytes, so a
    /// producer that never sends a blank line cannot grow memory without bound.
    pub fn with_max_frame_bytes(limit: usize) -> Self {
        SseDecoder {
            carry: Vec::new(),
            data: Vec::new(),
            has_data: false,
            in_frame: false,
            skip_lf: false,
            bom_checked: false,
            discarding: false,
            max_frame: limit,
        }
    }

    /// Decodes every frame completed by `chunk`, in order. A bad frame yields an `Err`
    /// in its place and decoding continues with the next frame.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Result<Event, SseError>> {
        // Token frames are ~100 bytes; reserving for 64-byte frames avoids regrowing
        // (and re-copying) a vector of large events in the common case.
        let mut out = Vec::with_capacity(chunk.len() / 64 + 1);
        self.feed_with(chunk, |r| out.push(r));
        out
    }

    /// Like [`SseDecoder::feed`] but appends to `out`, so a caller can reuse one vector.
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<Result<Event, SseError>>) {
        self.feed_with(chunk, |r| out.push(r));
    }

    /// Like [`SseDecoder::feed`] but hands each result to `emit` as soon as its frame
    /// completes, without collecting (the fastest way to drive a verifier or a UI).
    pub fn feed_with(&mut self, chunk: &[u8], mut emit: impl FnMut(Result<Event, SseError>)) {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            // Complete only the carried line from this chunk, so the bulk of the chunk
            // is still decoded in place rather than copied behind the carry.
            let Some(k) = memchr::memchr2(b'\n', b'\r', chunk) else {
                self.carry.extend_from_slice(chunk);
                return self.check_frame_size(&mut emit);
            };
            let mut buf = std::mem::take(&mut self.carry);
            buf.extend_from_slice(&chunk[..=k]);
            let used = self.process(&buf, &mut emit);
            rest = &chunk[k + 1..];
            if used < buf.len() {
                // Only a split BOM can leave bytes unconsumed; fall back to copying.
                buf.drain(..used);
                buf.extend_from_slice(rest);
                let used = self.process(&buf, &mut emit);
                buf.drain(..used);
                self.carry = buf;
                return self.check_frame_size(&mut emit);
            }
            buf.clear();
            self.carry = buf;
        }
        let used = self.process(rest, &mut emit);
        self.carry.extend_from_slice(&rest[used..]);
        self.check_frame_size(&mut emit);
    }

    fn check_frame_size(&mut self, emit: &mut impl FnMut(Result<Event, SseError>)) {
        if self.carry.len() + self.data.len() > self.max_frame {
            emit(Err(SseError::FrameTooLarge {
                limit: self.max_frame,
            }));
            self.carry.clear();
            self.data.clear();
            self.has_data = false;
            self.discarding = true;
        }
    }

    /// Ends the stream: `Err` if a frame was started but never terminated by a blank
    /// line (the SSE spec drops such a frame; we report it so truncation is visible).
    pub fn finish(self) -> Result<(), SseError> {
        let pending = self.carry.len() + self.data.len();
        if pending > 0 || self.in_frame || self.discarding {
            return Err(SseError::Truncated {
                pending_bytes: pending,
            });
        }
        Ok(())
    }

    /// Decodes a whole SSE body at once; the first error wins.
    pub fn decode_all(bytes: &[u8]) -> Result<Vec<Event>, SseError> {
        let mut dec = SseDecoder::new();
        let events = dec.feed(bytes).into_iter().collect::<Result<Vec<_>, _>>()?;
        dec.finish()?;
        Ok(events)
    }

    /// Consumes complete lines of `input`; returns how many bytes were consumed (the
    /// rest is an unterminated line the caller keeps).
    fn process<F: FnMut(Result<Event, SseError>)>(&mut self, input: &[u8], emit: &mut F) -> usize {
        let mut pos = 0;
        if !self.bom_checked {
            if input.len() < BOM.len() && BOM.starts_with(input) {
                return 0; // maybe a BOM split across chunks; wait for more
            }
            if input.starts_with(BOM) {
                pos = BOM.len();
            }
            self.bom_checked = true;
        }
        if self.skip_lf && pos < input.len() {
            if input[pos] == b'\n' {
                pos += 1;
            }
            self.skip_lf = false;
        }
        // The current frame's single data line, still borrowed from `input`.
        let mut pending: Option<(usize, usize)> = None;
        while let Some(off) = memchr::memchr2(b'\n', b'\r', &input[pos..]) {
            let end = pos + off;
            let mut next = end + 1;
            if input[end] == b'\r' {
                if next < input.len() {
                    if input[next] == b'\n' {
                        next += 1;
                    }
                } else {
                    self.skip_lf = true;
                }
            }
            self.line(input, pos, end, &mut pending, emit);
            pos = next;
        }
        if let Some((s, e)) = pending {
            // The frame continues in a later chunk: take ownership of its data.
            self.data.extend_from_slice(&input[s..e]);
        }
        pos
    }

    fn line<F: FnMut(Result<Event, SseError>)>(
        &mut self,
        input: &[u8],
        start: usize,
        end: usize,
        pending: &mut Option<(usize, usize)>,
        emit: &mut F,
    ) {
        let line = &input[start..end];
        if line.is_empty() {
            self.dispatch(input, pending, emit);
            return;
        }
        if self.discarding || line[0] == b':' {
            return;
        }
        self.in_frame = true;
        let (field, mut vstart) = if line.starts_with(b"data:") {
            (&line[..4], start + 5) // the common case, without a search
        } else {
            match memchr::memchr(b':', line) {
                Some(i) => (&line[..i], start + i + 1),
                None => (line, end),
            }
        };
        if field != b"data" {
            return; // event, id, retry and unknown fields do not affect AG-UI
        }
        if vstart < end && input[vstart] == b' ' {
            vstart += 1;
        }
        if !self.has_data {
            self.has_data = true;
            *pending = Some((vstart, end));
        } else {
            if let Some((s, e)) = pending.take() {
                self.data.extend_from_slice(&input[s..e]);
            }
            self.data.push(b'\n');
            self.data.extend_from_slice(&input[vstart..end]);
        }
    }

    fn dispatch<F: FnMut(Result<Event, SseError>)>(
        &mut self,
        input: &[u8],
        pending: &mut Option<(usize, usize)>,
        emit: &mut F,
    ) {
        if self.discarding {
            self.discarding = false;
        } else if self.has_data {
            let bytes = match pending.take() {
                Some((s, e)) => &input[s..e],
                None => &self.data[..],
            };
            emit(parse(bytes));
        }
        *pending = None;
        self.data.clear();
        self.has_data = false;
        self.in_frame = false;
    }
}

fn parse(bytes: &[u8]) -> Result<Event, SseError> {
    Event::from_json_slice(bytes).map_err(|source| {
        let cut = bytes.len().min(120);
        let mut snippet = String::from_utf8_lossy(&bytes[..cut]).into_owned();
        if cut < bytes.len() {
            snippet.push('…');
        }
        SseError::Json { source, snippet }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::agui::events::{TextMessageContentEvent, TextMessageEndEvent};
    use pretty_assertions::assert_eq;

    fn content(id: &str, delta: &str) -> Event {
        Event::TextMessageContent(TextMessageContentEvent {
            message_id: id.into(),
            delta: delta.into(),
            ..Default::default()
        })
    }

    fn ok(v: Vec<Result<Event, SseError>>) -> Vec<Event> {
        v.into_iter().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn encode_is_one_data_line_and_a_blank_line() {
        let s = encode(&content("m", "a\nb"));
        assert_eq!(
            s,
            "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"a\\nb\"}\n\n"
        );
    }

    #[test]
    fn crlf_cr_and_lf_line_ends_all_work() {
        let json = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;
        let want = Event::TextMessageEnd(TextMessageEndEvent {
            message_id: "m".into(),
            ..Default::default()
        });
        for sep in ["\n", "\r\n", "\r"] {
            let body = format!("data: {json}{sep}{sep}");
            let mut d = SseDecoder::new();
            assert_eq!(
                ok(d.feed(body.as_bytes())),
                vec![want.clone()],
                "sep {sep:?}"
            );
            d.finish().unwrap();
        }
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut d = SseDecoder::new();
        let mut got = ok(d.feed(b"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\r"));
        got.extend(ok(d.feed(b"\n\r")));
        got.extend(ok(d.feed(b"\n")));
        assert_eq!(got.len(), 1);
        d.finish().unwrap();
    }

    #[test]
    fn multi_line_data_comments_and_other_fields() {
        let body = b": keep-alive\nevent: message\nid: 7\nretry: 100\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\ndata:\"messageId\":\"m\",\"delta\":\"x\"}\nfoo\n\n";
        let mut d = SseDecoder::new();
        assert_eq!(ok(d.feed(body)), vec![content("m", "x")]);
        d.finish().unwrap();
    }

    #[test]
    fn frames_without_data_dispatch_nothing_and_bom_is_skipped() {
        let mut d = SseDecoder::new();
        assert!(d.feed(b"\xEF\xBB").is_empty());
        assert!(d.feed(b"\xBFevent: ping\n\n: c\n\n\n\n").is_empty());
        d.finish().unwrap();
    }

    #[test]
    fn bad_json_is_reported_and_decoding_continues() {
        let mut d = SseDecoder::new();
        let out = d.feed(b"data: {nope\n\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"x\"}\n\n");
        assert_eq!(out.len(), 2);
        let err = out[0].as_ref().unwrap_err().to_string();
        assert!(err.contains("{nope"), "{err}");
        assert_eq!(out[1].as_ref().unwrap(), &content("m", "x"));
    }

    #[test]
    fn truncated_stream_is_an_error() {
        let mut d = SseDecoder::new();
        assert!(d.feed(b"data: {\"type\":").is_empty());
        let e = d.finish().unwrap_err();
        assert!(matches!(e, SseError::Truncated { .. }));
        let mut d = SseDecoder::new();
        assert!(d.feed(b"data: {}\n").is_empty());
        assert!(d.finish().is_err());
    }

    #[test]
    fn oversized_frame_is_dropped_and_the_next_one_decodes() {
        let mut d = SseDecoder::with_max_frame_bytes(16);
        let out = d.feed(b"data: 0123456789012345678901234567");
        assert!(matches!(
            out[..],
            [Err(SseError::FrameTooLarge { limit: 16 })]
        ));
        assert!(d.feed(b"89\n\n").is_empty());
        let out = ok(d.feed(b"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n"));
        assert_eq!(out.len(), 1);
        d.finish().unwrap();
    }

    #[test]
    fn byte_at_a_time_including_utf8() {
        let ev = content("m", "héllo → 🌍");
        let body = format!("{}{}", encode(&ev), encode(&ev));
        let mut d = SseDecoder::new();
        let mut got = Vec::new();
        for b in body.as_bytes() {
            got.extend(ok(d.feed(std::slice::from_ref(b))));
        }
        assert_eq!(got, vec![ev.clone(), ev]);
        d.finish().unwrap();
    }
}
