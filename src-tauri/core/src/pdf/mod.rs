//! PDFs: Hearth's AcroForm rules on lopdf's object layer, PDFium for rendering, text and the
//! form-fill fallback.
//!
//! - [`inspect`]: pages and AcroForm fields (text, checkbox, radio, combo box, list box …) with
//!   their current values and options, read from the document's objects (`form`) without
//!   loading pages, or, when that reader is not sure, by PDFium from every page's widgets.
//! - [`fill`]: new bytes with the given values and regenerated appearances, written into the
//!   document's objects (`form_writer`, `appearance`) and read back, or, for what that path
//!   cannot do faithfully, by PDFium's form-fill module; active content removed either way
//!   (`active_content`).
//! - [`render_page`]: one page, form fields drawn, as an RGBA PNG.
//! - [`extract_text`]: the text of each page.
//! - [`count_scripts`]: document and field scripts PDFium sees (0 after `fill`).
//!
//! Every call is blocking (run it on a blocking thread) and starts the same way: size, `%PDF-`
//! header, then `objects::load` within a [`Budget`] (objects, tree nodes, inflated bytes, Stop,
//! a deadline) with its refusals (encryption, XFA, page count, a malformed page tree). Only
//! then does PDFium see the bytes. The `_within` forms take the caller's budget (FileStore
//! passes the task's Stop); the plain forms use [`Budget::standard`].
//!
//! Modules own one thing each, with no cycles: `budget` ← `objects` ← `text`, `form` ←
//! `appearance` ← `form_writer` → `values`, `active_content`; `pdfium` (all PDFium calls);
//! `fill` and `inspect` put them together.

mod active_content;
mod appearance;
mod budget;
mod fill;
mod form;
mod form_writer;
mod inspect;
mod metrics;
mod objects;
mod pdfium;
mod text;
mod values;

pub use budget::{Budget, Limits, Spent};
#[doc(hidden)]
pub use fill::{FillPath, fill_with_pdfium, fill_with_report};
pub use fill::{Filled, fill, fill_inspected_within, fill_within};
pub use hearth_protocol::pdf::{FieldKind, FieldValue, FieldValues, PdfField, PdfInfo};
pub use inspect::{count_scripts, extract_text, extract_text_within, inspect, inspect_within, render_page, render_page_within};
pub use pdfium::{
    MAX_RENDER_PIXELS, PDFIUM_LIBRARY_ENV, PDFIUM_SHA256, PdfEngine, RenderedPage, default_library_path, private_library_path,
};

use std::path::PathBuf;

/// The largest PDF Hearth accepts.
pub const MAX_PDF_BYTES: usize = 10 * 1024 * 1024;
/// The most pages Hearth accepts.
pub const MAX_PDF_PAGES: u16 = 500;

/// Why a PDF could not be handled; each says what to do. Messages name fields but never
/// carry field values (they can be personal).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PdfError {
    /// libpdfium is not where Hearth was told to find it, or did not load.
    #[error(
        "Hearth could not load PDFium from {path} ({detail}). Run scripts/setup.sh (it installs libpdfium.so in ~/.local/share/hearth/pdfium, private to you), or set HEARTH_PDFIUM_LIB to a libpdfium.so in a folder only you can write."
    )]
    LibraryMissing {
        /// Where Hearth looked.
        path: PathBuf,
        /// The loader's words.
        detail: String,
    },
    /// libpdfium is somewhere another user could have written it, or is not the pinned build;
    /// refused before it was loaded.
    #[error("Hearth refused to load PDFium from {path}: {why}. {fix}")]
    LibraryRefused {
        /// Where Hearth was told to find it.
        path: PathBuf,
        /// What is wrong, naming the file or folder.
        why: String,
        /// What to do.
        fix: &'static str,
    },
    /// Not a PDF at all.
    #[error("This file is not a PDF (it does not start with %PDF-). Attach the PDF itself.")]
    NotPdf,
    /// Over the size limit.
    #[error("This PDF is {bytes} bytes; Hearth accepts PDFs up to 10 MB.")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Over the page limit.
    #[error("This PDF has {pages} pages; Hearth accepts up to 500.")]
    TooManyPages {
        /// Its pages.
        pages: u16,
    },
    /// Password-protected or restricted.
    #[error("This PDF is encrypted or password-protected. Ask the sender for an unprotected copy.")]
    Encrypted,
    /// PDFium could not parse it (truncated, damaged).
    #[error("This PDF is damaged or incomplete ({detail}). Ask the sender to send it again.")]
    Damaged {
        /// PDFium's words.
        detail: String,
    },
    /// A structure no sound PDF has (a page tree or form that loops, lists a node twice, or is
    /// nested absurdly deep): refused before any of it is walked twice.
    #[error("This PDF is malformed ({what}); Hearth does not read it. Ask the sender for a fresh copy (for example printed to PDF again).")]
    Malformed {
        /// What is wrong, in words.
        what: &'static str,
    },
    /// Reading it would cost more than Hearth allows one PDF (see `budget`).
    #[error(
        "This PDF is too complex to read safely ({what} go past {limit}). Ask the sender for a simpler copy (for example printed to PDF again)."
    )]
    TooComplex {
        /// What ran over, in words ("its compressed streams").
        what: &'static str,
        /// The limit, in words.
        limit: String,
    },
    /// Stopped by the owner; nothing was written.
    #[error("Stopped while reading the PDF; nothing was saved.")]
    Stopped,
    /// Over the time limit of one PDF operation.
    #[error(
        "Reading this PDF took longer than {seconds} s, Hearth's limit for one PDF; nothing was saved. Ask the sender for a simpler copy."
    )]
    TimedOut {
        /// The limit.
        seconds: u64,
    },
    /// An XFA form (Adobe's XML forms), which PDFium without XFA cannot fill faithfully.
    #[error(
        "This PDF is an XFA form; Hearth fills standard (AcroForm) PDF forms only. Ask the sender for a standard PDF form, or a version saved without XFA."
    )]
    Xfa,
    /// `fill` was given a name the form does not have.
    #[error("This form has no field named \"{name}\". Its fields are: {available}. Use one of those names.")]
    UnknownField {
        /// The name asked for.
        name: String,
        /// The form's field names, comma-separated, shortened when there are many.
        available: String,
    },
    /// A value of the wrong kind for the field (text for a checkbox, true/false for text).
    #[error("Field \"{name}\" is {kind}; give it {expected}.")]
    WrongKind {
        /// The field.
        name: String,
        /// Its kind, in words ("a checkbox").
        kind: &'static str,
        /// What it takes, in words ("true or false").
        expected: &'static str,
    },
    /// A radio group, combo box or list box was given something that is not one of its options.
    #[error("Field \"{name}\" has no such option. Choose one of: {options}.")]
    NotAnOption {
        /// The field.
        name: String,
        /// Its options, comma-separated, shortened when there are many.
        options: String,
    },
    /// A field Hearth cannot fill (push button, signature, read-only, unknown kind).
    #[error("Field \"{name}\" is {reason} and cannot be filled. Leave it out of the values.")]
    NotFillable {
        /// The field.
        name: String,
        /// Why, in words ("a push button").
        reason: &'static str,
    },
    /// PDFium did not keep the value (too long for the field, a line break in a one-line field …).
    #[error(
        "Field \"{name}\" did not take the value given (it may be longer than the field allows, or have line breaks the field cannot hold). Shorten or simplify it."
    )]
    ValueNotKept {
        /// The field.
        name: String,
    },
    /// Saving the filled document failed; the original is untouched.
    #[error("Hearth could not save the filled PDF ({detail}); the original is unchanged. Try again, or report this file.")]
    SaveFailed {
        /// What failed.
        detail: String,
    },
    /// `render_page` was asked for a page the document does not have.
    #[error("This PDF has {pages} pages; there is no page {page}. Ask for a page from 1 to {pages}.")]
    PageOutOfRange {
        /// The page asked for (1-based).
        page: u16,
        /// The document's pages.
        pages: u16,
    },
    /// The scale would make an image too large (or is not a positive number).
    #[error(
        "Hearth cannot render this page at scale {scale} ({width}×{height} pixels): it renders at a positive scale, up to 40 megapixels. Use a scale such as 1.0 (72 dpi) or 2.0."
    )]
    ImageTooLarge {
        /// The scale asked for.
        scale: f32,
        /// The width it would make.
        width: u64,
        /// The height it would make.
        height: u64,
    },
}

/// Comma-separated, at most 20 items or about 400 characters, then how many more.
pub(super) fn list_for_message<'a>(items: impl ExactSizeIterator<Item = &'a str>) -> String {
    let total = items.len();
    let mut out = String::new();
    let mut shown = 0;
    for item in items {
        if shown == 20 || out.len() + item.len() > 400 {
            break;
        }
        if shown > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(item);
        out.push('"');
        shown += 1;
    }
    if total == 0 {
        out.push_str("(none)");
    } else if shown < total {
        out.push_str(&format!(" … and {} more", total - shown));
    }
    out
}

/// The PDF reader and writer on untrusted bytes, for the fuzz target: load and check within a
/// small budget, read the form, and write a copy with no values changed (which exercises the
/// appearance, active-content and save code). No PDFium. Errors are fine; panics, hangs and
/// unbounded memory are not.
#[doc(hidden)]
pub fn fuzz_read_and_write(bytes: &[u8]) {
    let limits = Limits { nodes: 200_000, inflated_bytes: 16 * 1024 * 1024, time: std::time::Duration::from_secs(10) };
    let budget = Budget::new(limits, None);
    let Ok(loaded) = objects::load(bytes, &budget) else { return };
    if form::fields(&loaded, &budget).is_err() {
        return;
    }
    let _ = form_writer::fill(loaded, &FieldValues::new(), &budget);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// PDFium's reading, pages counted by PDFium too.
    fn by_pdfium(engine: &PdfEngine, bytes: &[u8]) -> Result<PdfInfo, PdfError> {
        let loaded = objects::load(bytes, &Budget::standard())?;
        Ok(PdfInfo { pages: loaded.page_count(), fields: pdfium::read_fields(engine, bytes, &Budget::standard())? })
    }

    /// The page-free reader (`inspect`) and PDFium's page walk agree on every fixture, filled or not.
    #[test]
    fn fast_and_pdfium_readings_agree() {
        let Ok(engine) = PdfEngine::load(&default_library_path()) else {
            panic!("libpdfium is needed (scripts/setup.sh)");
        };
        let choices: &[u8] = include_bytes!("../../tests/fixtures/choices.pdf");
        let scripts: &[u8] = include_bytes!("../../tests/fixtures/scripts.pdf");
        let packed: &[u8] = include_bytes!("../../tests/fixtures/choices-objstm.pdf");
        let form: &[u8] = include_bytes!("../../assets/permission-form.pdf");
        let mut documents = vec![choices.to_vec(), scripts.to_vec(), packed.to_vec(), form.to_vec()];
        let values: FieldValues = serde_json::from_str(include_str!("../../benches/data/permission-form.fill.json")).unwrap();
        documents.push(fill(&engine, form, &values).unwrap());
        let choice_values: FieldValues = [
            ("city", FieldValue::Text("Zoë (Ünter) — €5 \\ x".into())),
            ("agree", FieldValue::Checked(true)),
            ("size", FieldValue::Text("L".into())),
            ("country", FieldValue::Text("Germany".into())),
            ("color", FieldValue::Text("Green".into())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        documents.push(fill(&engine, choices, &choice_values).unwrap());
        documents.push(fill(&engine, packed, &choice_values).unwrap());
        for (i, bytes) in documents.iter().enumerate() {
            let fast = inspect(&engine, bytes).unwrap();
            let slow = by_pdfium(&engine, bytes).unwrap();
            let budget = Budget::standard();
            assert!(form::fields(&objects::load(bytes, &budget).unwrap(), &budget).unwrap().is_some(), "document {i} was read by `form`");
            assert_eq!(fast, slow, "document {i}");
        }
        // Damaged variants: where both readings succeed, they agree.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let (mut compared, mut diverged) = (0, Vec::new());
        for original in &documents {
            for round in 0..150 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let mut bytes = original.clone();
                let at = (state % bytes.len() as u64) as usize;
                if round % 5 == 0 {
                    bytes.truncate(at.max(8));
                } else {
                    bytes[at.max(8)] = (state >> 32) as u8;
                }
                if let (Ok(fast), Ok(slow)) = (inspect(&engine, &bytes), by_pdfium(&engine, &bytes)) {
                    compared += 1;
                    if fast != slow {
                        let only_fast: Vec<_> = fast.fields.iter().filter(|f| !slow.fields.contains(f)).collect();
                        let only_slow: Vec<_> = slow.fields.iter().filter(|f| !fast.fields.contains(f)).collect();
                        diverged.push(format!(
                            "at {at} ({} vs {} fields): {only_fast:?}\n   vs {only_slow:?}",
                            fast.fields.len(),
                            slow.fields.len()
                        ));
                    }
                }
            }
        }
        assert!(compared > 100, "{compared}");
        assert!(diverged.is_empty(), "{} of {compared} diverge:\n{}", diverged.len(), diverged.join("\n"));
    }
}
