//! Fast JSON → [`Event`] decoding.
//!
//! Why not `serde_json::from_slice::<Event>`: serde's internally-tagged enums buffer the
//! whole object into an intermediate tree before choosing the variant, which costs more
//! than the parse itself. Here the `type` is read first — straight from a leading
//! `{"type":"…"` (how [`crate::agui::sse::encode`] writes it), else by a pre-pass that
//! skips every other key without allocating — and the bytes are then parsed directly into
//! that type's struct (which ignores the `type` key like any unknown key).
//!
//! The three token-stream events (`TEXT_MESSAGE_CONTENT`, `TOOL_CALL_ARGS`,
//! `REASONING_MESSAGE_CONTENT`) are most of any stream, so their exact canonical shape —
//! `{"type":…,"<id key>":"…","delta":"…"}` and nothing else — is recognised by hand.
//! Anything that deviates (another key, other order, whitespace, an escaped id, a raw
//! control character) falls back to serde, so both paths accept and produce the same.

use serde::Deserialize;

use super::events::{Event, EventType, ReasoningMessageContentEvent, TextMessageContentEvent, ToolCallArgsEvent};

/// Only the discriminator, for the slow path; every other key is skipped.
#[derive(Deserialize)]
struct TypeProbe {
    #[serde(rename = "type")]
    ty: EventType,
}

impl Event {
    /// Decodes one event from JSON bytes (see the module docs for why this is faster
    /// than `serde_json::from_slice::<Event>`, which also works).
    pub fn from_json_slice(bytes: &[u8]) -> Result<Event, serde_json::Error> {
        let ty = match type_from_prefix(bytes) {
            Some((ty, after)) => {
                if let Some(ev) = fast_delta(ty, bytes, after) {
                    return Ok(ev);
                }
                ty
            }
            None => serde_json::from_slice::<TypeProbe>(bytes)?.ty,
        };
        Event::parse_as(ty, bytes)
    }

    /// Decodes one event from a JSON string; see [`Event::from_json_slice`].
    pub fn from_json_str(s: &str) -> Result<Event, serde_json::Error> {
        Event::from_json_slice(s.as_bytes())
    }
}

/// Reads the type from a leading `{"type":"…"` and returns it with the offset just
/// after its closing quote; `None` when the object does not start exactly that way.
fn type_from_prefix(bytes: &[u8]) -> Option<(EventType, usize)> {
    const PREFIX: &[u8] = b"{\"type\":\"";
    let rest = bytes.strip_prefix(PREFIX)?;
    // The longest wire name is 29 bytes; look no further.
    let window = &rest[..rest.len().min(32)];
    let end = window.iter().position(|&b| b == b'"')?;
    let name = &window[..end];
    // The token events are most of a stream; test them before the general lookup.
    let ty = match name {
        b"TEXT_MESSAGE_CONTENT" => EventType::TextMessageContent,
        b"TOOL_CALL_ARGS" => EventType::ToolCallArgs,
        b"REASONING_MESSAGE_CONTENT" => EventType::ReasoningMessageContent,
        _ => EventType::from_wire(std::str::from_utf8(name).ok()?)?,
    };
    Some((ty, PREFIX.len() + end + 1))
}

/// The hand-recognised canonical token events; `None` means "ask serde".
fn fast_delta(ty: EventType, bytes: &[u8], after_type: usize) -> Option<Event> {
    let key = match ty {
        EventType::TextMessageContent | EventType::ReasoningMessageContent => ",\"messageId\":",
        EventType::ToolCallArgs => ",\"toolCallId\":",
        _ => return None,
    };
    // Validate the frame once; every cut below is next to an ASCII byte, so it lands
    // on a char boundary (and `get` would refuse it otherwise rather than panic).
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.get(after_type..)?.strip_prefix(key)?;
    let (id, rest) = plain_string(rest)?;
    let rest = rest.strip_prefix(",\"delta\":")?;
    let (delta, rest) = json_string(rest)?;
    if !rest.strip_prefix('}')?.trim_start_matches([' ', '\t', '\n', '\r']).is_empty() {
        return None;
    }
    let id = id.to_owned();
    Some(match ty {
        EventType::TextMessageContent => Event::TextMessageContent(TextMessageContentEvent { message_id: id, delta, ..Default::default() }),
        EventType::ReasoningMessageContent => {
            Event::ReasoningMessageContent(ReasoningMessageContentEvent { message_id: id, delta, ..Default::default() })
        }
        _ => Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: id, delta, ..Default::default() }),
    })
}

/// The index of the first byte that ends or complicates a JSON string body: a quote, a
/// backslash or a raw control character (which JSON forbids).
fn string_stop(s: &str) -> Option<usize> {
    s.bytes().position(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// A JSON string without escapes starting at `s[0] == '"'`; returns it and the rest.
fn plain_string(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('"')?;
    let end = string_stop(body)?;
    if body.as_bytes()[end] != b'"' {
        return None;
    }
    Some((body.get(..end)?, body.get(end + 1..)?))
}

/// Any JSON string starting at `s[0] == '"'`, escapes decoded; `None` on anything
/// malformed (serde then reports it properly).
fn json_string(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let first = string_stop(body)?;
    if bytes[first] == b'"' {
        return Some((body.get(..first)?.to_owned(), body.get(first + 1..)?));
    }
    // Escapes present: copy the runs between them, decoding each escape.
    let mut out = String::with_capacity(body.len().min(256));
    let mut i = 0;
    let mut stop = first;
    loop {
        out.push_str(body.get(i..stop)?);
        match bytes[stop] {
            b'"' => return Some((out, body.get(stop + 1..)?)),
            b'\\' => i = unescape(bytes, stop + 1, &mut out)?,
            _ => return None, // raw control character
        }
        stop = i + string_stop(body.get(i..)?)?;
    }
}

/// Decodes the escape whose letter is at `body[at]` into `out`; returns the index after it.
fn unescape(body: &[u8], at: usize, out: &mut String) -> Option<usize> {
    let ch = match *body.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex4(body.get(at + 1..at + 5)?)?;
            let (c, next) = if (0xD800..0xDC00).contains(&hi) {
                // A high surrogate must be followed by an escaped low surrogate.
                if body.get(at + 5..at + 7)? != b"\\u" {
                    return None;
                }
                let lo = hex4(body.get(at + 7..at + 11)?)?;
                if !(0xDC00..0xE000).contains(&lo) {
                    return None;
                }
                (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), at + 11)
            } else {
                (hi, at + 5)
            };
            out.push(char::from_u32(c)?); // rejects a lone low surrogate
            return Some(next);
        }
        _ => return None,
    };
    out.push(ch);
    Some(at + 1)
}

fn hex4(h: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &b in h {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = v * 16 + u32::from(d);
    }
    Some(v)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn both(json: &str) -> (Result<Event, String>, Result<Event, String>) {
        let fast = Event::from_json_str(json).map_err(|e| e.to_string());
        let ty = serde_json::from_str::<TypeProbe>(json).map(|p| p.ty);
        let slow = ty.and_then(|ty| Event::parse_as(ty, json.as_bytes())).map_err(|e| e.to_string());
        (fast, slow)
    }

    #[test]
    fn fast_path_matches_serde_on_edge_cases() {
        let cases = [
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"plain"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"esc \" \\ \n \u00e9 \ud83c\udf0d"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"trailing backslash \\"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":""}  "#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\"x","delta":"id escaped"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","timestamp":5}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"a\":1}"}"#,
            r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":"é"}"#,
            "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"raw\ttab\"}",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"bad \q escape"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"unterminated}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}x"#,
            r#"{"type":"TOOL_CALL_ARGS","messageId":"m","delta":"wrong key"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\uD83C\uDF0D \u00E9\/\b\f\r\t"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"lone \ud83c high"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"lone \udf0d low"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"short \u12"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"bad hex \u12G4"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"nul \u0000 ok"}"#,
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"ends in escape \""#,
        ];
        for c in cases {
            let (fast, slow) = both(c);
            assert_eq!(fast.is_ok(), slow.is_ok(), "{c}: fast {fast:?} slow {slow:?}");
            if let (Ok(f), Ok(s)) = (fast, slow) {
                assert_eq!(f, s, "{c}");
            }
        }
    }

    #[test]
    fn invalid_utf8_is_rejected() {
        let mut bytes = br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}"#.to_vec();
        bytes[56] = 0xFF;
        assert!(Event::from_json_slice(&bytes).is_err());
    }
}
