#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

/// An owned copy of a frame, to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Got {
    event: Option<String>,
    data: String,
    id: Option<String>,
}

type Out = Vec<Result<Got, EventTooLarge>>;

fn own(frame: Frame<'_>) -> Got {
    Got { event: frame.event_lossy(), data: frame.data_lossy(), id: frame.id.map(|id| String::from_utf8_lossy(id).into_owned()) }
}

fn push(framer: &mut Framer, bytes: &[u8], out: &mut Out) {
    framer.feed_with(bytes, |frame| out.push(frame.map(own)));
}

/// Feeds `chunks` one after another and returns every frame, then the end.
fn frames_of(limit: usize, chunks: &[&[u8]]) -> (Out, Option<Got>, bool) {
    let mut framer = Framer::with_max_event_bytes(limit);
    let mut out = Vec::new();
    for chunk in chunks {
        push(&mut framer, chunk, &mut out);
    }
    match framer.finish() {
        End::Clean => (out, None, true),
        End::Unterminated { frame, .. } => (out, frame.map(own), false),
    }
}

fn data(text: &str) -> Result<Got, EventTooLarge> {
    Ok(Got { event: None, data: text.into(), id: None })
}

const BIG: usize = 1 << 20;

#[test]
fn whatwg_fields_comments_and_one_optional_space() {
    let wire = b": a comment\nevent: add\ndata: first\ndata:second\ndata:  two spaces\ndata\nid: 7\nretry: 1500\nunknown: x\n\n\
                 id: bad\0id\nretry: 12a\ndata: next\n\nid\ndata: third\n\n";
    let mut framer = Framer::with_max_event_bytes(BIG);
    let mut out = Vec::new();
    push(&mut framer, wire, &mut out);
    assert_eq!(
        out,
        vec![
            Ok(Got { event: Some("add".into()), data: "first\nsecond\n two spaces\n".into(), id: Some("7".into()) }),
            // An id holding NUL is ignored (the last id stays); the event name does not carry over.
            Ok(Got { event: None, data: "next".into(), id: Some("7".into()) }),
            // `id` with no colon empties the last id.
            Ok(Got { event: None, data: "third".into(), id: Some(String::new()) }),
        ]
    );
    // `retry: 12a` was ignored; the last valid one stands.
    assert_eq!(framer.retry(), Some(1500));
    assert_eq!(framer.finish(), End::Clean);
}

#[test]
fn events_without_data_dispatch_nothing() {
    let (out, last, clean) = frames_of(BIG, &[b"event: ping\n\n: keep-alive\n\nid: 3\n\n\n\n"]);
    assert_eq!((out, last, clean), (vec![], None, true));
}

#[test]
fn issue10_cr_only_line_endings() {
    let (out, _, clean) = frames_of(BIG, &[b"event: a\rdata: one\rdata: two\r\rdata: three\r\r"]);
    assert_eq!(out, vec![Ok(Got { event: Some("a".into()), data: "one\ntwo".into(), id: None }), data("three")]);
    assert!(clean);
}

#[test]
fn crlf_lf_and_cr_are_each_one_line_end() {
    for eol in ["\n", "\r\n", "\r"] {
        let wire = "data: a\ndata: b\n\n: c\n\ndata: d\n\n".replace('\n', eol);
        let (out, _, clean) = frames_of(BIG, &[wire.as_bytes()]);
        assert_eq!(out, vec![data("a\nb"), data("d")], "{eol:?}");
        assert!(clean, "{eol:?}");
    }
}

#[test]
fn issue10_a_crlf_split_across_pushes_is_one_line_end() {
    // Split inside every CRLF: still one line end each, so one event, not a blank line early.
    let chunks: [&[u8]; 5] = [b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n", b"data: z\r\n\r\n"];
    let (out, _, clean) = frames_of(BIG, &chunks);
    assert_eq!(out, vec![data("x\ny"), data("z")]);
    assert!(clean);
    // A lone CR at a chunk's end followed by a chunk that does not start with LF.
    let (out, _, _) = frames_of(BIG, &[b"data: x\r", b"data: y\r", b"\r"]);
    assert_eq!(out, vec![data("x\ny")]);
}

#[test]
fn issue10_a_leading_bom_is_skipped_once() {
    let (out, _, _) = frames_of(BIG, &[b"\xEF\xBB\xBFdata: a\n\n"]);
    assert_eq!(out, vec![data("a")]);
    // Split across three pushes, one byte each.
    let (out, _, clean) = frames_of(BIG, &[b"\xEF", b"\xBB", b"\xBF", b"data: a\n\n"]);
    assert_eq!((out, clean), (vec![data("a")], true));
    // Only at the very start: a second BOM is part of the next line (a field nobody knows).
    let (out, _, _) = frames_of(BIG, &[b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\ndata: c\n\n"]);
    assert_eq!(out, vec![data("a"), data("c")]);
    // A BOM's start that is not a BOM is data: the held-back bytes begin the first line.
    let (out, _, _) = frames_of(BIG, &[b"\xEF\xBB", b"x\ndata: a\n\n"]);
    assert_eq!(out, vec![data("a")]);
    let (out, last, clean) = frames_of(BIG, &[b"\xEF\xBB"]);
    assert_eq!((out, last, clean), (vec![], None, false), "an unfinished BOM prefix is pending input");
}

/// A wire with every rule in it; every way of cutting it in two or three gives the same frames.
const WIRE: &[u8] = b"\xEF\xBB\xBF: hi\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\nid: 9\rdata: one\rdata:two\r\r\
                      data: three\ndata: four\n\nretry: 10\ndata: [DONE]\n\n";

fn wire_frames() -> Out {
    vec![
        Ok(Got { event: Some("a".into()), data: "{\"x\":1}".into(), id: None }),
        Ok(Got { event: None, data: "one\ntwo".into(), id: Some("9".into()) }),
        Ok(Got { event: None, data: "three\nfour".into(), id: Some("9".into()) }),
        Ok(Got { event: None, data: "[DONE]".into(), id: Some("9".into()) }),
    ]
}

#[test]
fn every_split_gives_the_same_frames() {
    for i in 0..=WIRE.len() {
        for j in i..=WIRE.len() {
            let (out, _, clean) = frames_of(BIG, &[&WIRE[..i], &WIRE[i..j], &WIRE[j..]]);
            assert_eq!(out, wire_frames(), "cut at {i} and {j}");
            assert!(clean, "cut at {i} and {j}");
        }
    }
    let bytes: Vec<&[u8]> = WIRE.chunks(1).collect();
    assert_eq!(frames_of(BIG, &bytes).0, wire_frames(), "one byte at a time");
}

#[test]
fn issue10_each_byte_is_searched_for_a_line_end_once() {
    // A 64 KiB line fed a byte at a time: the partial line is carried, never searched again.
    let mut framer = Framer::with_max_event_bytes(BIG);
    let mut out = Vec::new();
    let line: Vec<u8> = b"data: ".iter().copied().chain(std::iter::repeat_n(b'x', 64 * 1024)).collect();
    for byte in &line {
        push(&mut framer, std::slice::from_ref(byte), &mut out);
    }
    assert!(out.is_empty());
    assert_eq!(framer.carry.len(), line.len(), "the partial line is buffered once");
    push(&mut framer, b"\n\n", &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(framer.scanned, line.len() + 2, "every byte fed was searched exactly once");
    // The same for a whole stream in odd chunks.
    let mut framer = Framer::with_max_event_bytes(BIG);
    for chunk in WIRE.chunks(7) {
        framer.feed_with(chunk, |_| {});
    }
    assert!(framer.scanned <= WIRE.len(), "{} of {} bytes", framer.scanned, WIRE.len());
}

#[test]
fn a_single_line_event_is_lent_from_the_chunk_not_copied() {
    let chunk = b"data: {\"type\":\"RUN_STARTED\"}\n\n".to_vec();
    let mut framer = Framer::with_max_event_bytes(BIG);
    let mut lent = false;
    framer.feed_with(&chunk, |frame| {
        let data = frame.unwrap().data;
        lent = chunk.as_ptr_range().contains(&data.as_ptr());
    });
    assert!(lent, "the data is a slice of the caller's chunk");
    assert!(framer.data.capacity() == 0 && framer.carry.capacity() == 0, "nothing was buffered");
}

#[test]
fn issue10_an_event_past_the_cap_is_refused_then_the_stream_goes_on() {
    const CAP: usize = 16;
    let too_large = || Err(EventTooLarge { limit: CAP });
    // A partial line that grows past the cap a byte at a time: refused at the first byte past
    // it, never buffered beyond it, and reported once.
    let mut framer = Framer::with_max_event_bytes(CAP);
    let mut out = Vec::new();
    for fed in 1..=40 {
        push(&mut framer, b"d", &mut out);
        assert!(framer.carry.len() <= CAP, "never buffered past the cap");
        assert_eq!(out.len(), usize::from(fed > CAP), "refused exactly at byte {}", CAP + 1);
    }
    push(&mut framer, b"ata: still the same line\ndata: and its event\n\ndata: ok\n\n", &mut out);
    assert_eq!(out, vec![too_large(), data("ok")], "the over-long event is skipped, the next one decodes");

    // A whole over-long line in one push.
    assert_eq!(frames_of(CAP, &[b"data: 0123456789abcdef\n\ndata: ok\n\n"]).0, vec![too_large(), data("ok")]);
    // Short lines whose joined data goes past the cap.
    assert_eq!(frames_of(CAP, &[b"data: 01234567\ndata: 89abcdef\n\ndata: ok\n\n"]).0, vec![too_large(), data("ok")]);
    // The same, split across pushes.
    assert_eq!(frames_of(CAP, &[b"data: 0123", b"4567\ndata: 89a", b"bcdef\n", b"\ndata: ok\n\n"]).0, vec![too_large(), data("ok")]);
    // Exactly at the cap is fine (the line, field name included, is 16 bytes).
    assert_eq!(frames_of(CAP, &[b"data: 0123456789\n\n"]).0, vec![data("0123456789")]);
    // Comments and blank lines never count: a long keep-alive is not an event.
    assert_eq!(frames_of(CAP, &[b": a comment far longer than sixteen bytes\n\ndata: ok\n\n"]).0, vec![data("ok")]);
    assert_eq!(frames_of(CAP, &[b": a comment far longer", b" than sixteen bytes", b"\n\ndata: ok\n\n"]).0, vec![data("ok")]);
    // A stream that ends while skipping has not ended cleanly.
    let (_, last, clean) = frames_of(CAP, &[b"data: 0123456789abcdef"]);
    assert_eq!((last, clean), (None, false));
}

#[test]
fn the_end_of_the_stream() {
    assert_eq!(frames_of(BIG, &[b""]), (vec![], None, true));
    assert_eq!(frames_of(BIG, &[b"data: a\n\n: bye\n"]), (vec![data("a")], None, true));
    // A last event without its blank line, or without even a line end: the rules drop it,
    // the caller is told what it held.
    assert_eq!(frames_of(BIG, &[b"data: a\n\ndata: [DONE]\n"]), (vec![data("a")], Some(data("[DONE]").unwrap()), false));
    assert_eq!(frames_of(BIG, &[b"data: [DO", b"NE]"]), (vec![], Some(data("[DONE]").unwrap()), false));
    assert_eq!(frames_of(BIG, &[b"event: x\n"]), (vec![], None, false), "a field without data is pending, not an event");
    let mut framer = Framer::with_max_event_bytes(BIG);
    framer.feed_with(b"data: abc\ndata: de", |_| {});
    assert!(matches!(framer.finish(), End::Unterminated { pending_bytes: 11, .. }), "3 bytes of data and the 8-byte partial line");
}
