//! Server-Sent Events for AG-UI: one event per frame, `data: <json>\n\n`.
//!
//! The encoder writes exactly that (LF only, optional fields omitted; JSON never holds a
//! raw newline, so one `data:` line always suffices). The decoder is the shared
//! event-stream framing ([`crate::sse`]: the WHATWG rules, any chunk boundaries, linear in
//! the input, a cap per event) with each frame's data parsed as one [`Event`] — in place,
//! from the caller's chunk, whenever the frame has one `data:` line and arrived whole.

use super::events::Event;
use crate::sse::{End, EventTooLarge, Frame, FrameSink, Framer};

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
    /// One frame grew beyond the configured cap (its data and the line being read); it
    /// was dropped.
    #[error(
        "SSE frame exceeds {limit} bytes and was dropped; split large payloads (e.g. STATE_DELTA instead of STATE_SNAPSHOT) or raise the cap with SseDecoder::with_max_frame_bytes"
    )]
    FrameTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
}

/// Incremental SSE → [`Event`] decoder: the shared event-stream framing
/// ([`crate::sse::Framer`]) with each event's data parsed as one AG-UI event. Feed it byte
/// chunks as they arrive.
#[derive(Debug)]
pub struct SseDecoder {
    framer: Framer,
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
        SseDecoder { framer: Framer::with_max_event_bytes(limit) }
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
    /// completes, without collecting (the fastest way to drive a verifier or a UI). The
    /// `event:`, `id:` and `retry:` fields do not affect AG-UI and are not looked at.
    pub fn feed_with(&mut self, chunk: &[u8], emit: impl FnMut(Result<Event, SseError>)) {
        self.framer.feed_sink(chunk, &mut EventSink(emit));
    }

    /// Ends the stream: `Err` if a frame was started but never terminated by a blank
    /// line (the SSE spec drops such a frame; we report it so truncation is visible).
    pub fn finish(mut self) -> Result<(), SseError> {
        match self.framer.finish() {
            End::Clean => Ok(()),
            End::Unterminated { pending_bytes, .. } => Err(SseError::Truncated { pending_bytes }),
        }
    }

    /// Decodes a whole SSE body at once; the first error wins.
    pub fn decode_all(bytes: &[u8]) -> Result<Vec<Event>, SseError> {
        let mut dec = SseDecoder::new();
        let events = dec.feed(bytes).into_iter().collect::<Result<Vec<_>, _>>()?;
        dec.finish()?;
        Ok(events)
    }
}

/// Parses each frame as an event for `emit`. A sink rather than a closure so it is inlined
/// into the framer's line loop (a closure layer there cost ~2% of the bench in moves and calls).
struct EventSink<E>(E);

impl<E: FnMut(Result<Event, SseError>)> FrameSink for EventSink<E> {
    #[inline(always)]
    fn frame(&mut self, frame: Result<Frame<'_>, EventTooLarge>) {
        (self.0)(match frame {
            Ok(frame) => parse(frame.data),
            Err(EventTooLarge { limit }) => Err(SseError::FrameTooLarge { limit }),
        });
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
        Event::TextMessageContent(TextMessageContentEvent { message_id: id.into(), delta: delta.into(), ..Default::default() })
    }

    fn ok(v: Vec<Result<Event, SseError>>) -> Vec<Event> {
        v.into_iter().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn encode_is_one_data_line_and_a_blank_line() {
        let s = encode(&content("m", "a\nb"));
        assert_eq!(s, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"a\\nb\"}\n\n");
    }

    #[test]
    fn crlf_cr_and_lf_line_ends_all_work() {
        let json = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;
        let want = Event::TextMessageEnd(TextMessageEndEvent { message_id: "m".into(), ..Default::default() });
        for sep in ["\n", "\r\n", "\r"] {
            let body = format!("data: {json}{sep}{sep}");
            let mut d = SseDecoder::new();
            assert_eq!(ok(d.feed(body.as_bytes())), vec![want.clone()], "sep {sep:?}");
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
        let end = b"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n";
        let mut d = SseDecoder::with_max_frame_bytes(64);
        let out = d.feed(&[b"data: ".as_slice(), &[b'0'; 70]].concat());
        assert!(matches!(out[..], [Err(SseError::FrameTooLarge { limit: 64 })]));
        assert!(d.feed(b"89\n\n").is_empty());
        let out = ok(d.feed(end));
        assert_eq!(out.len(), 1);
        // A frame over the cap is refused even when it arrives whole in one chunk.
        let whole = [b"data: ".as_slice(), &[b'0'; 70], b"\n\n", end].concat();
        let out = d.feed(&whole);
        assert!(matches!(out[..], [Err(SseError::FrameTooLarge { limit: 64 }), Ok(Event::TextMessageEnd(_))]), "{out:?}");
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
