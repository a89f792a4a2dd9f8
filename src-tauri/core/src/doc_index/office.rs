//! The text of Office documents for the index: Word (`.docx`), PowerPoint (`.pptx`), Excel
//! (`.xlsx`) and OpenDocument (`.odt`, `.odp`, `.ods`). Each is a ZIP archive of XML parts;
//! the `zip` crate opens the archive and `quick-xml` walks the parts that hold the words.
//!
//! Why not a document crate: the maintained ones (`docx-rs`, `calamine`) build each format's
//! whole model — styles, numbering, cell types — to answer "what words are in it", each for one
//! family only, and `calamine` alone brings more dependencies than this file has lines. The index
//! needs the words in reading order and nothing else; the parts and elements named below are the
//! formats' own (ECMA-376 and ODF 1.2), and anything that does not fit is skipped with a note.
//! The older binary formats (`.doc`, `.xls`, `.ppt`) and RTF stay unread.
//!
//! Bounded like the rest of the index: at most [`MAX_PARTS`] parts are read, and no more than
//! the index's text budget times [`INFLATE_FACTOR`] bytes are inflated in all, so a ZIP bomb
//! stops at the budget rather than filling memory.

use std::io::{Cursor, Read};

use quick_xml::Reader;
use quick_xml::events::Event;

/// At most this many XML parts (slides, say) are read from one file.
const MAX_PARTS: usize = 500;
/// Markup is several times the words it holds: inflate at most this multiple of the text budget.
const INFLATE_FACTOR: usize = 8;

/// Which family a file is, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfficeKind {
    /// `.docx`.
    Word,
    /// `.pptx`.
    PowerPoint,
    /// `.xlsx`.
    Excel,
    /// `.odt`, `.odp`, `.ods`.
    OpenDocument,
}

impl OfficeKind {
    /// The kind of a lower-case extension, if it is one this file reads.
    pub fn of(ext: &str) -> Option<Self> {
        match ext {
            "docx" => Some(Self::Word),
            "pptx" => Some(Self::PowerPoint),
            "xlsx" => Some(Self::Excel),
            "odt" | "odp" | "ods" => Some(Self::OpenDocument),
            _ => None,
        }
    }

    /// Whether the part `name` holds the document's words, in the order parts are read.
    fn holds_text(self, name: &str) -> bool {
        match self {
            Self::Word => name == "word/document.xml",
            Self::PowerPoint => name.starts_with("ppt/slides/slide") && name.ends_with(".xml"),
            Self::Excel => name == "xl/sharedStrings.xml",
            Self::OpenDocument => name == "content.xml",
        }
    }

    /// Whether an element with local name `name` holds text to keep. OOXML keeps words in `t`
    /// elements (`w:t`, `a:t`, a shared string's `t`); everything else there is markup or field
    /// codes. In OpenDocument the words are the text inside paragraphs and headings.
    fn keeps(self, name: &str) -> bool {
        match self {
            Self::Word | Self::PowerPoint | Self::Excel => name == "t",
            Self::OpenDocument => matches!(name, "p" | "h" | "span" | "a" | "s"),
        }
    }
}

/// The words of an Office file of `kind`, in reading order, at most about `budget` bytes; or
/// why it could not be read (for the owner's note).
pub fn text(kind: OfficeKind, bytes: &[u8], budget: usize) -> Result<String, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|err| format!("it is not a readable Office file ({err})"))?;
    // A name that is not text (a broken archive) cannot be one of the parts named above.
    let mut names: Vec<String> =
        archive.file_names().filter_map(Result::ok).filter(|name| kind.holds_text(name)).map(std::borrow::Cow::into_owned).collect();
    if names.is_empty() {
        return Err("it has none of the parts that hold an Office document's text".to_owned());
    }
    // Slides in their order (slide2 before slide10), parts of other kinds are one each.
    names.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    names.truncate(MAX_PARTS);
    let mut left = budget.saturating_mul(INFLATE_FACTOR);
    let mut out = String::new();
    for name in names {
        if left == 0 || out.len() >= budget {
            break;
        }
        let part = archive.by_name(&name).map_err(|err| format!("its part {name} could not be opened ({err})"))?;
        let mut xml = Vec::new();
        part.take(left as u64).read_to_end(&mut xml).map_err(|err| format!("its part {name} could not be inflated ({err})"))?;
        // Cut at the budget: its markup (or a character) may end mid-way.
        let cut = xml.len() >= left;
        left = left.saturating_sub(xml.len());
        match words(kind, &xml, &mut out) {
            Ok(()) => out.push('\n'),
            // What was read before the cut stands (the words are appended as they are parsed),
            // and the budget is spent: a long document is indexed up to it, not skipped.
            Err(_) if cut => break,
            Err(err) => return Err(format!("its part {name} is not well-formed XML ({err})")),
        }
    }
    Ok(out)
}

/// Appends the words of one XML part to `out`: kept text, a line break after each paragraph
/// (or shared string), a tab or a break where the markup puts one.
fn words(kind: OfficeKind, xml: &[u8], out: &mut String) -> Result<(), quick_xml::Error> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    // How many enclosing elements keep their text.
    let mut keeping = 0usize;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(element) if kind.keeps(element.local_name().into_inner()) => keeping += 1,
            Event::End(element) => {
                let name = element.local_name().into_inner();
                if kind.keeps(name) {
                    keeping = keeping.saturating_sub(1);
                }
                if matches!(name, "p" | "h" | "si") {
                    out.push('\n');
                }
            }
            Event::Empty(element) => match element.local_name().into_inner() {
                "tab" => out.push('\t'),
                "br" | "cr" | "line-break" => out.push('\n'),
                // OpenDocument's run of spaces.
                "s" if keeping > 0 => out.push(' '),
                _ => {}
            },
            Event::Text(text) if keeping > 0 => out.push_str(&text.xml10_content()),
            Event::CData(text) if keeping > 0 => out.push_str(&text),
            Event::GeneralRef(reference) if keeping > 0 => {
                if let Some(c) = reference.resolve_char_ref()? {
                    out.push(c);
                } else {
                    out.push_str(match reference.as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}

#[cfg(test)]
#[expect(clippy::expect_used, reason = "a test fails by naming what it expected")]
pub(super) mod tests {
    use std::io::Write;

    use super::*;

    /// A ZIP of `parts` (name, content), as an Office program writes one (deflated).
    pub(crate) fn office_zip(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in parts {
            zip.start_file(*name, options).expect("a part starts");
            zip.write_all(content.as_bytes()).expect("a part is written");
        }
        zip.finish().expect("the archive closes").into_inner()
    }

    #[test]
    fn word_slides_sheets_and_opendocument_give_their_words_in_order() {
        let docx = office_zip(&[(
            "word/document.xml",
            r#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Garden</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve"> plans &amp; roses</w:t></w:r></w:p><w:p><w:r><w:instrText>PAGE</w:instrText><w:t>second</w:t></w:r></w:p></w:body></w:document>"#,
        )]);
        assert_eq!(text(OfficeKind::Word, &docx, 1000).expect("read"), "Garden\t plans & roses\nsecond\n\n");

        let pptx = office_zip(&[
            ("ppt/slides/slide10.xml", r#"<p:sld xmlns:a="a" xmlns:p="p"><a:p><a:r><a:t>ten</a:t></a:r></a:p></p:sld>"#),
            ("ppt/slides/slide2.xml", r#"<p:sld xmlns:a="a" xmlns:p="p"><a:p><a:r><a:t>two</a:t></a:r></a:p></p:sld>"#),
            ("ppt/notesSlides/notesSlide1.xml", r#"<p:notes xmlns:a="a" xmlns:p="p"><a:t>not a slide</a:t></p:notes>"#),
        ]);
        assert_eq!(text(OfficeKind::PowerPoint, &pptx, 1000).expect("read"), "two\n\nten\n\n");

        let xlsx = office_zip(&[("xl/sharedStrings.xml", r#"<sst><si><t>Invoice</t></si><si><r><t>Total &#8364;</t></r></si></sst>"#)]);
        assert_eq!(text(OfficeKind::Excel, &xlsx, 1000).expect("read"), "Invoice\nTotal €\n\n");

        let odt = office_zip(&[(
            "content.xml",
            r#"<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text><text:h>Minutes</text:h><text:p>Bring<text:s/>cake <text:span>please</text:span></text:p></office:text></office:body></office:document-content>"#,
        )]);
        assert_eq!(text(OfficeKind::OpenDocument, &odt, 1000).expect("read"), "Minutes\nBring cake please\n\n");
    }

    #[test]
    fn what_is_not_an_office_file_says_why_and_a_bomb_stops_at_the_budget() {
        assert!(text(OfficeKind::Word, b"PK\x03\x04 not really", 1000).expect_err("not a zip").contains("not a readable Office file"));
        let empty = office_zip(&[("other.xml", "<x/>")]);
        assert!(text(OfficeKind::Word, &empty, 1000).expect_err("no part").contains("none of the parts"));
        let broken = office_zip(&[("word/document.xml", "<w:document><w:t>open</w:x></w:document>")]);
        assert!(text(OfficeKind::Word, &broken, 1000).expect_err("mismatched").contains("not well-formed XML"));
        // A megabyte of one repeated word inflates no further than 8 × the budget.
        let big = format!("<w:document><w:p><w:t>{}</w:t></w:p></w:document>", "a".repeat(1 << 20));
        let bomb = office_zip(&[("word/document.xml", &big)]);
        let read = text(OfficeKind::Word, &bomb, 100).expect("a long document is read up to the budget, not skipped");
        assert!(read.starts_with("aaaa") && read.len() <= 8 * 100, "{} bytes", read.len());
    }
}
