//! A server-sent-events decoder: bytes in, `(event, data)` pairs out. Lines may end in `\n`
//! or `\r\n`; comments (`:`) are skipped; several `data:` lines join with `\n`.
//!
//! Each push scans only the bytes it adds (a pending partial line is never rescanned), and
//! no line or event may exceed [`MAX_EVENT_BYTES`]: past it the decoder fails with
//! [`TooLarge`] instead of buffering without end.

/// The largest line, and the largest event's joined data, the providers accept: 4 MiB. The
/// biggest legitimate event is OpenAI Responses' `response.completed`, which repeats the
/// whole answer; a long answer with its tool arguments stays well under this.
pub(crate) const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
}

/// A line or an event went past the decoder's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooLarge {
    /// The limit in bytes.
    pub limit: usize,
}

#[derive(Debug)]
pub(crate) struct SseDecoder {
    /// The pending partial line (no `\n` in it).
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    limit: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limit(MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    /// A decoder that refuses lines and events longer than `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self { buf: Vec::new(), event: None, data: None, limit }
    }

    /// Feeds bytes; returns the events they complete, or [`TooLarge`] once a line or an
    /// event is longer than the limit (the decoder is then spent: feed it no more).
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, TooLarge> {
        let mut out = Vec::new();
        let mut rest = bytes;
        // Only the new bytes are searched: `buf` is known to hold no newline.
        while let Some(pos) = rest.iter().position(|b| *b == b'\n') {
            let (head, tail) = rest.split_at(pos);
            rest = &tail[1..];
            if self.buf.is_empty() {
                self.complete_line(head, &mut out)?;
            } else {
                self.check(self.buf.len() + head.len())?;
                self.buf.extend_from_slice(head);
                let line = std::mem::take(&mut self.buf);
                self.complete_line(&line, &mut out)?;
                // Keep the allocation for the next partial line.
                self.buf = line;
                self.buf.clear();
            }
        }
        self.check(self.buf.len() + rest.len())?;
        self.buf.extend_from_slice(rest);
        Ok(out)
    }

    /// The event left pending when the stream ended without a blank line.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, TooLarge> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.complete_line(&rest, &mut out)?;
        }
        self.line("", &mut out)?;
        Ok(out.pop())
    }

    fn check(&self, len: usize) -> Result<(), TooLarge> {
        within(self.limit, len)
    }

    /// One line without its `\n` (a trailing `\r` is dropped here).
    fn complete_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), TooLarge> {
        self.check(line.len())?;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = String::from_utf8_lossy(line);
        self.line(&line, out)
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), TooLarge> {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        let limit = self.limit;
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    within(limit, data.len() + 1 + value.len())?;
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
        Ok(())
    }
}

fn within(limit: usize, len: usize) -> Result<(), TooLarge> {
    if len > limit { Err(TooLarge { limit }) } else { Ok(()) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const WIRE: &[u8] = b"event: a\r\ndata: {\"x\":1}\r\n\r\n: ping\n\ndata: one\ndata: two\n\ndata: [DONE]";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent { event: Some("a".into()), data: "{\"x\":1}".into() },
            SseEvent { event: None, data: "one\ntwo".into() },
            SseEvent { event: None, data: "[DONE]".into() },
        ]
    }

    #[test]
    fn events_split_anywhere_reassemble() {
        for split in 0..WIRE.len() {
            let mut d = SseDecoder::default();
            let mut got = d.push(&WIRE[..split]).unwrap();
            got.extend(d.push(&WIRE[split..]).unwrap());
            got.extend(d.finish().unwrap());
            assert_eq!(got, expected(), "split at {split}");
        }
    }

    #[test]
    fn issue10_one_byte_at_a_time_gives_the_same_events_as_one_push() {
        let mut whole = SseDecoder::default();
        let mut at_once = whole.push(WIRE).unwrap();
        at_once.extend(whole.finish().unwrap());
        let mut bytewise = SseDecoder::default();
        let mut one_by_one = Vec::new();
        for byte in WIRE {
            one_by_one.extend(bytewise.push(std::slice::from_ref(byte)).unwrap());
        }
        one_by_one.extend(bytewise.finish().unwrap());
        assert_eq!(at_once, expected());
        assert_eq!(one_by_one, at_once);
    }

    #[test]
    fn issue10_the_pending_line_is_never_rescanned() {
        // A long partial line fed a byte at a time: the decoder holds exactly the bytes of
        // the line (nothing re-copied or duplicated) and finds its end once.
        let mut d = SseDecoder::default();
        let line = vec![b'x'; 64 * 1024];
        for byte in b"data: ".iter().chain(&line) {
            assert!(d.push(std::slice::from_ref(byte)).unwrap().is_empty());
        }
        assert_eq!(d.buf.len(), 6 + line.len(), "the partial line is buffered once");
        let events = d.push(b"\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), line.len());
        assert!(d.buf.is_empty());
    }

    #[test]
    fn issue10_a_line_or_an_event_past_the_limit_is_refused() {
        // A partial line that grows past the limit, a byte at a time.
        let mut d = SseDecoder::with_limit(16);
        let mut fed = 0;
        let err = loop {
            match d.push(b"d") {
                Ok(events) => assert!(events.is_empty()),
                Err(err) => break err,
            }
            fed += 1;
        };
        assert_eq!(err, TooLarge { limit: 16 });
        assert_eq!(fed, 16, "refused at the first byte past the limit");
        assert!(d.buf.len() <= 16, "never buffered past the limit");

        // A whole over-long line in one push.
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.push(b"data: 0123456789abcdef\n\n"), Err(TooLarge { limit: 16 }));

        // Short lines whose joined data goes past the limit.
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.push(b"data: 01234567\ndata: 89abcdef\n\n"), Err(TooLarge { limit: 16 }));

        // Exactly at the limit is fine.
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.push(b"data: 0123456789\n\n").unwrap(), vec![SseEvent { event: None, data: "0123456789".into() }]);
    }
}
