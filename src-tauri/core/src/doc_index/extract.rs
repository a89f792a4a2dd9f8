//! A file's text by its kind, or why it was skipped. Plain text and Markdown are read as
//! UTF-8; HTML through `html2text` (already used for mail); PDF through `crate::pdf` (PDFium's
//! text, within the PDF layer's budget); Word, PowerPoint, Excel and OpenDocument through
//! [`super::office`]. The older binary Office formats and RTF are skipped with a note. Any other
//! file is read as text if its bytes are text (no NUL byte, almost no invalid UTF-8), else
//! skipped as binary.

use std::path::Path;

use hearth_protocol::documents::SkipReason;

use super::limits::IndexLimits;
use super::office::{self, OfficeKind};
use crate::pdf::{Budget, PdfEngine, PdfError};

/// What is said about an older Office file.
pub const OLD_OFFICE_NOTE: &str =
    "not read: .doc, .xls, .ppt and RTF files are not supported; saved as .docx, .xlsx, .pptx or OpenDocument it is read";
/// What is said about a binary file.
pub const BINARY_NOTE: &str = "not read: its bytes are not text";
/// At most this share of replacement characters in text decoded from UTF-8.
const MAX_INVALID_PER_MILLE: usize = 50;
/// Bytes looked at for NUL.
const SNIFF_BYTES: usize = 64 * 1024;

/// How a file is read, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `.md`, `.markdown`.
    Markdown,
    /// `.html`, `.htm`, `.xhtml`.
    Html,
    /// `.pdf`.
    Pdf,
    /// `.docx`, `.pptx`, `.xlsx`, `.odt`, `.odp`, `.ods`.
    Office(OfficeKind),
    /// `.doc`, `.xls`, `.ppt`, `.rtf`: not read.
    OldOffice,
    /// Anything else: text if its bytes are.
    Text,
}

impl FileKind {
    /// The kind of `path`, by its extension (case-insensitive).
    pub fn of(path: &Path) -> Self {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
        match ext.as_str() {
            "md" | "markdown" => Self::Markdown,
            "html" | "htm" | "xhtml" => Self::Html,
            "pdf" => Self::Pdf,
            "doc" | "xls" | "ppt" | "rtf" => Self::OldOffice,
            other => OfficeKind::of(other).map_or(Self::Text, Self::Office),
        }
    }
}

/// A file's text, or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extracted {
    /// Its title and text (bounded).
    Text {
        /// The first Markdown heading, else the file's name.
        title: String,
        /// The text.
        body: String,
    },
    /// Not indexed.
    Skipped {
        /// Why.
        reason: SkipReason,
        /// What the owner is told.
        note: String,
    },
}

impl Extracted {
    fn skipped(reason: SkipReason, note: impl Into<String>) -> Self {
        Self::Skipped { reason, note: note.into() }
    }
}

/// The text of `bytes`, read from `path`. `engine` is PDFium, or why it is not there.
pub fn extract(path: &Path, bytes: &[u8], engine: Result<&PdfEngine, &str>, limits: IndexLimits) -> Extracted {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let body = match FileKind::of(path) {
        FileKind::OldOffice => return Extracted::skipped(SkipReason::Unsupported, OLD_OFFICE_NOTE),
        FileKind::Office(kind) => match office::text(kind, bytes, limits.max_text_bytes) {
            Ok(text) => text,
            Err(why) => return Extracted::skipped(SkipReason::Unreadable, format!("not read: {why}")),
        },
        FileKind::Pdf => match engine {
            Ok(engine) => match crate::pdf::extract_text_within(engine, bytes, &Budget::standard()) {
                Ok(pages) => pages.join("\n\n"),
                Err(err) => return Extracted::skipped(SkipReason::Unreadable, pdf_note(&err)),
            },
            Err(why) => return Extracted::skipped(SkipReason::Unreadable, format!("not read: PDFs cannot be read here ({why})")),
        },
        FileKind::Html => match as_text(bytes) {
            Some(html) => html2text::config::plain()
                .allow_width_overflow()
                .string_from_read(html.as_bytes(), 100)
                .unwrap_or_else(|_| html.into_owned()),
            None => return Extracted::skipped(SkipReason::Binary, BINARY_NOTE),
        },
        FileKind::Markdown | FileKind::Text => match as_text(bytes) {
            Some(text) => text.into_owned(),
            None => return Extracted::skipped(SkipReason::Binary, BINARY_NOTE),
        },
    };
    let title = match FileKind::of(path) {
        FileKind::Markdown => heading(&body).unwrap_or(name),
        FileKind::Html | FileKind::Pdf | FileKind::Office(_) | FileKind::OldOffice | FileKind::Text => name,
    };
    Extracted::Text { title, body: bounded(body, limits.max_text_bytes) }
}

/// `bytes` as text, or `None` when they are binary: a NUL byte near the start, or more than
/// 5% of what they decode to is not UTF-8.
fn as_text(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if memchr::memchr(0, &bytes[..bytes.len().min(SNIFF_BYTES)]).is_some() {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    if let std::borrow::Cow::Owned(decoded) = &text {
        let chars = decoded.chars().count().max(1);
        let invalid = decoded.chars().filter(|&c| c == char::REPLACEMENT_CHARACTER).count();
        if invalid * 1000 / chars > MAX_INVALID_PER_MILLE {
            return None;
        }
    }
    Some(text)
}

/// The first Markdown heading (`# Title`), trimmed, at most 200 characters.
fn heading(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix('#').map(|rest| rest.trim_start_matches('#').trim()))
        .filter(|h| !h.is_empty())
        .map(|h| h.chars().take(200).collect())
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn bounded(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

fn pdf_note(err: &PdfError) -> String {
    format!("not read: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, bytes: &[u8]) -> Extracted {
        extract(Path::new(name), bytes, Err("no PDFium in unit tests"), IndexLimits::STANDARD)
    }

    #[test]
    fn each_kind_is_read_or_skipped_with_a_note() {
        assert_eq!(
            read("notes.md", b"intro\n## Garden plans\nroses"),
            Extracted::Text { title: "Garden plans".into(), body: "intro\n## Garden plans\nroses".into() }
        );
        assert_eq!(read("a.txt", b"plain words"), Extracted::Text { title: "a.txt".into(), body: "plain words".into() });
        let Extracted::Text { body, .. } = read("p.html", b"<html><body><p>Hello <b>there</b></p><script>x</script></body></html>") else {
            panic!("HTML is read")
        };
        assert!(body.contains("Hello there"), "{body}");
        assert_eq!(read("r.doc", b"\xd0\xcf\x11\xe0"), Extracted::skipped(SkipReason::Unsupported, OLD_OFFICE_NOTE));
        assert!(matches!(read("r.docx", b"PK\x03\x04"), Extracted::Skipped { reason: SkipReason::Unreadable, .. }));
        let docx =
            super::super::office::tests::office_zip(&[("word/document.xml", "<w:document><w:p><w:t>orchard</w:t></w:p></w:document>")]);
        assert_eq!(read("r.docx", &docx), Extracted::Text { title: "r.docx".into(), body: "orchard\n\n".into() });
        assert_eq!(read("a.bin", b"\x7fELF\x00\x01"), Extracted::skipped(SkipReason::Binary, BINARY_NOTE));
        let latin1: Vec<u8> = (0..200).map(|i| 0xC0 + (i % 40) as u8).collect();
        assert_eq!(read("b.txt", &latin1), Extracted::skipped(SkipReason::Binary, BINARY_NOTE));
        assert!(matches!(read("x.pdf", b"%PDF-1.7"), Extracted::Skipped { reason: SkipReason::Unreadable, .. }));
    }

    #[test]
    fn text_is_bounded_at_a_character_boundary() {
        let limits = IndexLimits { max_text_bytes: 5, ..IndexLimits::STANDARD };
        let Extracted::Text { body, .. } = extract(Path::new("a.txt"), "ééé".as_bytes(), Err("none"), limits) else { panic!() };
        assert_eq!(body, "éé");
    }
}
