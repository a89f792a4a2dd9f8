//! PDF text strings, read as PDFium reads them and written as viewers expect.

use lopdf::{Object, StringFormat};

/// A text string (or a name, for export values) as PDFium's `PDF_DecodeText` reads it.
pub(super) fn text(value: &Object) -> Option<String> {
    match value {
        Object::Name(n) => Some(decode(n)),
        Object::String(bytes, _) => Some(decode(bytes)),
        _ => None,
    }
}

/// The raw bytes of a string object.
pub(super) fn string_bytes(value: &Object) -> Option<&[u8]> {
    match value {
        Object::String(bytes, _) => Some(bytes),
        _ => None,
    }
}

/// Text as PDFium hands it over: decoded, then cut at the first NUL (its C strings end there).
pub(super) fn decode(bytes: &[u8]) -> String {
    let mut text = decode_raw(bytes);
    if let Some(nul) = text.find('\0') {
        text.truncate(nul);
    }
    text
}

fn decode_raw(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from_be_bytes([p[0], p[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| pdf_doc_char(b)).collect()
}

/// PDFDocEncoding: Latin-1 except 0x18–0x1F and 0x80–0xA0; 0x7F and 0x9F are undefined
/// (PDFium reads them as NUL).
pub(super) fn pdf_doc_char(b: u8) -> char {
    const LOW: [u16; 8] = [0x02D8, 0x02C7, 0x02C6, 0x02D9, 0x02DD, 0x02DB, 0x02DA, 0x02DC];
    const HIGH: [u16; 33] = [
        0x2022, 0x2020, 0x2021, 0x2026, 0x2014, 0x2013, 0x0192, 0x2044, 0x2039, 0x203A, 0x2212, 0x2030, 0x201E, 0x201C, 0x201D, 0x2018,
        0x2019, 0x201A, 0x2122, 0xFB01, 0xFB02, 0x0141, 0x0152, 0x0160, 0x0178, 0x017D, 0x0131, 0x0142, 0x0153, 0x0161, 0x017E, 0xFFFD,
        0x20AC,
    ];
    let code = match b {
        0x7F | 0x9F => 0,
        0x18..=0x1F => LOW[usize::from(b - 0x18)],
        0x80..=0xA0 => HIGH[usize::from(b - 0x80)],
        _ => u16::from(b),
    };
    char::from_u32(u32::from(code)).unwrap_or('\u{FFFD}')
}

/// `text` as a PDF text string object: PDFDocEncoding when every character has a code there,
/// else UTF-16BE with a byte-order mark; written in hex.
pub(super) fn text_string(text: &str) -> Object {
    Object::String(text_string_bytes(text), StringFormat::Hexadecimal)
}

fn text_string_bytes(text: &str) -> Vec<u8> {
    let pdf_doc: Option<Vec<u8>> = text
        .chars()
        .map(|c| {
            if c == '\0' {
                return None;
            }
            if let Ok(b) = u8::try_from(u32::from(c))
                && pdf_doc_char(b) == c
            {
                return Some(b);
            }
            (0x18..=0xA0u8).find(|&b| pdf_doc_char(b) == c)
        })
        .collect();
    match pdf_doc {
        // A PDFDocEncoded string must not begin like a byte-order mark.
        Some(bytes)
            if !bytes.starts_with(&[0xFE, 0xFF]) && !bytes.starts_with(&[0xFF, 0xFE]) && !bytes.starts_with(&[0xEF, 0xBB, 0xBF]) =>
        {
            bytes
        }
        _ => {
            let mut bytes = vec![0xFE, 0xFF];
            for unit in text.encode_utf16() {
                bytes.extend_from_slice(&unit.to_be_bytes());
            }
            bytes
        }
    }
}

/// PDFium stores a typed line break as CR LF; Hearth reports `\n`, as it was given.
pub(super) fn unify_line_breaks(text: String) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_strings_use_pdf_doc_encoding_when_they_can() {
        assert_eq!(text_string_bytes("Zoë €"), vec![0x5A, 0x6F, 0xEB, 0x20, 0xA0]);
        assert_eq!(text_string_bytes("a\nb"), b"a\nb".to_vec());
        assert_eq!(text_string_bytes("学"), vec![0xFE, 0xFF, 0x5B, 0x66]);
        assert_eq!(text_string_bytes("a\0"), vec![0xFE, 0xFF, 0, 0x61, 0, 0]);
        assert_eq!(text_string_bytes("þÿ"), vec![0xFE, 0xFF, 0, 0xFE, 0, 0xFF], "not mistaken for a byte-order mark");
        assert_eq!(text_string_bytes(""), Vec::<u8>::new());
    }

    #[test]
    fn decoding_reads_every_encoding_pdfium_reads_and_stops_at_nul() {
        assert_eq!(decode(&[0xFE, 0xFF, 0x5B, 0x66]), "学");
        assert_eq!(decode(&[0xFF, 0xFE, 0x66, 0x5B]), "学");
        assert_eq!(decode(&[0xEF, 0xBB, 0xBF, b'o', b'k']), "ok");
        assert_eq!(decode(&[0x80, 0xA0]), "•€");
        assert_eq!(decode(b"ab\0cd"), "ab");
    }
}
