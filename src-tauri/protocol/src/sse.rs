//! Server-sent events framing — the one event-stream parser of Hearth, shared by the AG-UI
//! decoder ([`crate::agui::sse::SseDecoder`]) and the core's model providers.
//!
//! It follows the WHATWG HTML rules for interpreting an event stream: lines end in CRLF, LF
//! or CR (a CRLF split across two chunks is one line end); a leading UTF-8 BOM is skipped
//! once; a line starting with `:` is a comment; a field name runs to the first `:`, and a
//! single space after that colon is dropped; `data:` lines are joined with `\n`; `event:`
//! names the event; `id:` sets the last event id (ignored if it holds NUL); `retry:` sets
//! the reconnection time when it is all ASCII digits; a blank line dispatches the event if
//! it has data. What the rules leave to the caller is left to it: a stream that ends
//! without a final blank line is reported by [`Framer::finish`] as [`End::Unterminated`],
//! with the event it would have dispatched — the AG-UI decoder calls that a truncation,
//! the providers accept it.
//!
//! **Linear in the input.** Every byte is scanned for a line end once, when it arrives:
//! a partial line is carried to the next chunk and only the new chunk is searched. Lines
//! are handled in place in the caller's chunk; bytes are copied only for a line that
//! straddles two chunks and for an event with more than one `data:` line, so an event's
//! data is usually a slice of the chunk itself (the AG-UI hot path parses it from there).
//!
//! **Bounded.** No event may grow past the framer's limit: its joined data plus the line
//! being read (a single line counts whole, field name included). The first byte past it
//! yields [`EventTooLarge`] in the event's place, nothing of it is kept, and the framer
//! skips to the next blank line and goes on.
//!
//! Why hand-written rather than a crate: the maintained ones either need an async `Stream`
//! (`eventsource-stream`, `sse-stream` over `http-body`) or pull `futures-core`,
//! `pin-project-lite` or `bytes` into this crate (`sse-parse`, `sse-core`), which must stay
//! serde + memchr for wasm (`tests/architecture.rs`); and all of them hand out an owned
//! `String` per event, where this layer lends the chunk's bytes (an owned copy and UTF-8
//! check per token event is what the AG-UI decoder was written to avoid). Measured on
//! `benches/agui_decode.rs` (`agui-100k.sse`, 2-core machine, another build running): the
//! AG-UI decoder it replaced, 3.15–3.19 M events/s; over this layer, 3.12–3.15 M events/s
//! (callgrind: 0.8% more instructions for the whole decode + verify). The per-event work is
//! handed over through a `FrameSink` rather than a closure so it is inlined into the line
//! loop, which a closure layer was not (that cost 4.6% in instructions).

use memchr::{memchr, memchr2};

/// The UTF-8 byte-order mark a stream may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event. It borrows from the chunk being fed or from the framer, so it
/// lives only as long as the callback it is handed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The `event:` field, if the event had one (bytes as sent; UTF-8 from a sound server).
    pub event: Option<&'a [u8]>,
    /// The `data:` lines, joined with `\n`.
    pub data: &'a [u8],
    /// The last event id (`id:`) in force when the event was dispatched, if any was sent.
    pub id: Option<&'a [u8]>,
}

impl Frame<'_> {
    /// The event's name, decoded (invalid UTF-8 becomes U+FFFD).
    pub fn event_lossy(&self) -> Option<String> {
        self.event.map(|name| String::from_utf8_lossy(name).into_owned())
    }

    /// The event's data, decoded (invalid UTF-8 becomes U+FFFD).
    pub fn data_lossy(&self) -> String {
        String::from_utf8_lossy(self.data).into_owned()
    }
}

/// An event grew past the framer's limit: it was dropped, and the framer went on after the
/// next blank line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an event in the event stream is larger than {limit} bytes, so it was dropped")]
pub struct EventTooLarge {
    /// The limit in bytes.
    pub limit: usize,
}

/// How the stream ended, from [`Framer::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End<'a> {
    /// After a blank line (or before anything): nothing was pending.
    Clean,
    /// Inside an event: the WHATWG rules drop it.
    Unterminated {
        /// Bytes of the event left unterminated (its data and its last, partial line).
        pending_bytes: usize,
        /// What a blank line would have dispatched here (the partial line included), for a
        /// caller that accepts a stream without its final blank line; `None` if no data.
        frame: Option<Frame<'a>>,
    },
}

/// Where a framer's events go.
pub(crate) trait FrameSink {
    /// One event, or [`EventTooLarge`] in its place.
    fn frame(&mut self, frame: Result<Frame<'_>, EventTooLarge>);
}

/// A closure as a [`FrameSink`].
struct FnSink<F>(F);

impl<F: FnMut(Result<Frame<'_>, EventTooLarge>)> FrameSink for FnSink<F> {
    #[inline(always)]
    fn frame(&mut self, frame: Result<Frame<'_>, EventTooLarge>) {
        (self.0)(frame);
    }
}

/// A sink for a line that cannot complete an event (the last one, at the end).
struct Ignore;

impl FrameSink for Ignore {
    fn frame(&mut self, _: Result<Frame<'_>, EventTooLarge>) {}
}

/// Where the leading byte-order mark stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// This many bytes of the stream so far are a prefix of the BOM.
    Checking(usize),
    /// Skipped, or the stream did not start with one.
    Done,
}

/// The incremental event-stream parser. Feed it chunks as they arrive; each completed
/// event is handed to the callback at once.
#[derive(Debug)]
pub struct Framer {
    /// The partial line carried over from the previous chunk (never holds a line end).
    carry: Vec<u8>,
    /// The event's joined data, once it could not stay borrowed from a chunk.
    data: Vec<u8>,
    /// Length of the event's joined data, borrowed or owned.
    data_len: usize,
    /// The event has had a `data` field.
    has_data: bool,
    /// The event's `event` field.
    event: Vec<u8>,
    has_event: bool,
    /// The last event id buffer.
    last_id: Vec<u8>,
    has_id: bool,
    retry: Option<u64>,
    /// A field line has been read since the last blank line.
    in_event: bool,
    /// The previous chunk ended in `\r`: a `\n` starting this one ends nothing.
    skip_lf: bool,
    bom: Bom,
    /// An event went past the limit: lines are dropped until the next blank line.
    discarding: bool,
    /// The rest of the current line is dropped unread (a comment, or a line of an event
    /// being discarded): the next line end is its end, not a blank line.
    skipping_line: bool,
    limit: usize,
    /// Bytes searched for a line end, to pin that each is searched once.
    #[cfg(test)]
    scanned: usize,
}

impl Framer {
    /// A framer that refuses events larger than `limit` bytes.
    pub fn with_max_event_bytes(limit: usize) -> Self {
        Framer {
            carry: Vec::new(),
            data: Vec::new(),
            data_len: 0,
            has_data: false,
            event: Vec::new(),
            has_event: false,
            last_id: Vec::new(),
            has_id: false,
            retry: None,
            in_event: false,
            skip_lf: false,
            bom: Bom::Checking(0),
            discarding: false,
            skipping_line: false,
            limit,
            #[cfg(test)]
            scanned: 0,
        }
    }

    /// The limit this framer enforces.
    pub fn max_event_bytes(&self) -> usize {
        self.limit
    }

    /// The reconnection time the stream last asked for (`retry:`), in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds one chunk; `emit` gets every event it completes, in order, and an
    /// [`EventTooLarge`] in the place of an event that went past the limit.
    pub fn feed_with<F>(&mut self, chunk: &[u8], emit: F)
    where
        F: FnMut(Result<Frame<'_>, EventTooLarge>),
    {
        self.feed_sink(chunk, &mut FnSink(emit));
    }

    /// [`Framer::feed_with`] for a [`FrameSink`] (the AG-UI decoder's, whose handling is
    /// inlined into the line loop: the hot path of a run's stream).
    pub(crate) fn feed_sink<S: FrameSink>(&mut self, chunk: &[u8], emit: &mut S) {
        let Some(mut rest) = self.skip_bom(chunk) else { return };
        if rest.is_empty() {
            return;
        }
        if self.skip_lf {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        if !self.carry.is_empty() || self.skipping_line {
            // Complete only the line in progress from this chunk, so the rest is still
            // handled in place; the carry is not searched again (it holds no line end).
            let Some(k) = self.find_line_end(rest) else {
                if !self.skipping_line {
                    if self.data_len + self.carry.len() + rest.len() > self.limit {
                        self.overflow(emit);
                        self.skipping_line = true;
                    } else {
                        self.carry.extend_from_slice(rest);
                    }
                }
                return;
            };
            if self.skipping_line {
                self.skipping_line = false;
            } else if self.data_len + self.carry.len() + k > self.limit {
                self.overflow(emit);
            } else {
                let mut line = std::mem::take(&mut self.carry);
                line.extend_from_slice(&rest[..k]);
                let mut pending = None;
                self.line(&line, 0, line.len(), &mut pending, emit);
                if let Some((start, end)) = pending {
                    self.data.extend_from_slice(&line[start..end]);
                }
                // Keep the allocation for the next partial line.
                line.clear();
                self.carry = line;
            }
            rest = &rest[self.after_line_end(rest, k)..];
        }
        let used = self.process(rest, emit);
        let tail = &rest[used..];
        if tail.is_empty() {
            return;
        }
        if self.discarding || tail[0] == b':' {
            // Nothing of it is needed: no buffer, and no limit, for a long comment.
            self.skipping_line = true;
        } else if self.data_len + tail.len() > self.limit {
            self.overflow(emit);
            self.skipping_line = true;
        } else {
            self.carry.extend_from_slice(tail);
        }
    }

    /// Ends the stream: [`End::Clean`] after a blank line, else what was left pending. The
    /// framer is spent afterwards.
    pub fn finish(&mut self) -> End<'_> {
        if let Bom::Checking(matched) = self.bom {
            // A BOM prefix that never completed was the start of a line.
            self.carry.extend_from_slice(&BOM[..matched]);
            self.bom = Bom::Done;
        }
        let pending_bytes = self.carry.len() + self.data_len;
        if pending_bytes == 0 && !self.in_event && !self.discarding && !self.skipping_line {
            return End::Clean;
        }
        if !self.carry.is_empty() && !self.discarding {
            // The last line, never ended; it fits (checked as it grew).
            let line = std::mem::take(&mut self.carry);
            let mut pending = None;
            self.line(&line, 0, line.len(), &mut pending, &mut Ignore);
            if let Some((start, end)) = pending {
                self.data.extend_from_slice(&line[start..end]);
            }
        }
        let frame = (self.has_data && !self.discarding).then(|| Frame {
            event: self.has_event.then_some(&self.event[..]),
            data: &self.data,
            id: self.has_id.then_some(&self.last_id[..]),
        });
        End::Unterminated { pending_bytes, frame }
    }

    /// The chunk after a leading BOM (or the part of one seen so far); `None` when the whole
    /// chunk may still be the BOM's start.
    fn skip_bom<'c>(&mut self, chunk: &'c [u8]) -> Option<&'c [u8]> {
        let Bom::Checking(matched) = self.bom else { return Some(chunk) };
        let same = chunk.iter().zip(&BOM[matched..]).take_while(|(a, b)| a == b).count();
        if matched + same == BOM.len() {
            self.bom = Bom::Done;
            return Some(&chunk[same..]);
        }
        if same == chunk.len() {
            self.bom = Bom::Checking(matched + same);
            return None;
        }
        // Not a BOM: the bytes held back from earlier chunks start the first line.
        self.bom = Bom::Done;
        self.carry.extend_from_slice(&BOM[..matched]);
        Some(chunk)
    }

    /// The offset of the first `\r` or `\n` in `hay`.
    #[inline]
    fn find_line_end(&mut self, hay: &[u8]) -> Option<usize> {
        let found = memchr2(b'\n', b'\r', hay);
        #[cfg(test)]
        {
            self.scanned += found.map_or(hay.len(), |k| k + 1);
        }
        found
    }

    /// Where the next line starts after the line end at `at` (a CRLF is one line end; a
    /// `\r` ending the chunk may be the first half of one).
    #[inline]
    fn after_line_end(&mut self, input: &[u8], at: usize) -> usize {
        let next = at + 1;
        if input[at] == b'\r' {
            match input.get(next) {
                Some(b'\n') => return next + 1,
                None => self.skip_lf = true,
                Some(_) => {}
            }
        }
        next
    }

    /// Handles every complete line of `input` in place; returns how many bytes that used
    /// (the rest is a partial line).
    #[inline]
    fn process<F>(&mut self, input: &[u8], emit: &mut F) -> usize
    where
        F: FrameSink,
    {
        let mut pos = 0;
        // The event's one data line so far, still borrowed from `input`.
        let mut pending: Option<(usize, usize)> = None;
        while let Some(offset) = self.find_line_end(&input[pos..]) {
            let end = pos + offset;
            self.line(input, pos, end, &mut pending, emit);
            pos = self.after_line_end(input, end);
        }
        if let Some((start, end)) = pending {
            // The event goes on in a later chunk: its data can no longer be borrowed.
            self.data.extend_from_slice(&input[start..end]);
        }
        pos
    }

    /// One complete line, `input[start..end]`, without its line end.
    // Inlined into the hot loop: a call per line cost ~15% of the framing's time.
    #[inline(always)]
    fn line<F>(&mut self, input: &[u8], start: usize, end: usize, pending: &mut Option<(usize, usize)>, emit: &mut F)
    where
        F: FrameSink,
    {
        let line = &input[start..end];
        if line.is_empty() {
            self.dispatch(input, pending, emit);
            return;
        }
        if self.discarding || line[0] == b':' {
            return;
        }
        if self.data_len + line.len() > self.limit {
            *pending = None;
            self.overflow(emit);
            return;
        }
        self.in_event = true;
        let (field, mut value_start) = if line.starts_with(b"data:") {
            (&line[..4], start + 5) // the common case, without a search
        } else {
            match memchr(b':', line) {
                Some(colon) => (&line[..colon], start + colon + 1),
                None => (line, end),
            }
        };
        if value_start < end && input[value_start] == b' ' {
            value_start += 1;
        }
        let value = &input[value_start..end];
        match field {
            b"data" => {
                if !self.has_data {
                    self.has_data = true;
                    self.data_len = value.len();
                    *pending = Some((value_start, end));
                } else {
                    if let Some((s, e)) = pending.take() {
                        self.data.extend_from_slice(&input[s..e]);
                    }
                    self.data.push(b'\n');
                    self.data.extend_from_slice(value);
                    self.data_len += 1 + value.len();
                }
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
                self.has_event = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id.clear();
                self.last_id.extend_from_slice(value);
                self.has_id = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let millis = value.iter().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')));
                self.retry = Some(millis);
            }
            _ => {} // unknown fields, and an `id` with NUL, are ignored
        }
    }

    /// A blank line: the event, if it has data, goes out.
    #[inline(always)]
    fn dispatch<F>(&mut self, input: &[u8], pending: &mut Option<(usize, usize)>, emit: &mut F)
    where
        F: FrameSink,
    {
        if self.discarding {
            self.discarding = false;
        } else if self.has_data {
            let data = match pending.take() {
                Some((start, end)) => &input[start..end],
                None => &self.data[..],
            };
            emit.frame(Ok(Frame { event: self.has_event.then_some(&self.event[..]), data, id: self.has_id.then_some(&self.last_id[..]) }));
        }
        *pending = None;
        self.reset_event();
    }

    /// The event went past the limit: say so once, keep nothing of it, skip to its end.
    fn overflow<F>(&mut self, emit: &mut F)
    where
        F: FrameSink,
    {
        emit.frame(Err(EventTooLarge { limit: self.limit }));
        self.carry.clear();
        self.reset_event();
        self.discarding = true;
    }

    #[inline]
    fn reset_event(&mut self) {
        self.data.clear();
        self.data_len = 0;
        self.has_data = false;
        self.event.clear();
        self.has_event = false;
        self.in_event = false;
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
