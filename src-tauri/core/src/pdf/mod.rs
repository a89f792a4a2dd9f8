//! PDFs through PDFium, loaded at run time from a configured library path.
//!
//! - [`inspect`]: pages and AcroForm fields (text, checkbox, radio, combo box, list box …) with
//!   their current values and options, read from the document's objects (`fast`) without
//!   loading pages when it can, else by PDFium from each page's widgets.
//! - [`fill`]: new bytes with the given values and regenerated appearances, written into the
//!   document's objects (`direct`, `appearance`) and read back by PDFium, or, for what that
//!   path cannot do faithfully, by PDFium's form-fill module; scripts and automatic actions
//!   removed either way.
//! - [`render_page`]: one page, form fields drawn, as an RGBA PNG.
//! - [`extract_text`]: the text of each page.
//! - [`count_scripts`]: document and field scripts PDFium sees (0 after `fill`).
//!
//! Every call is blocking (run it on a blocking thread) and checks the bytes the same way:
//! size, `%PDF-` header, encryption, damage, page count, XFA. PDFium calls live in `raw`, the
//! only module with `unsafe`; this process runs one PDFium operation at a time.

mod appearance;
mod direct;
mod fast;
mod fill;
mod inspect;
mod library;
mod metrics;
mod raw;
mod render;
mod sanitize;

pub use fill::fill;
#[doc(hidden)]
pub use fill::{FillPath, fill_with_pdfium, fill_with_report};
pub use hearth_protocol::pdf::{FieldKind, FieldValue, FieldValues, PdfField, PdfInfo};
pub use inspect::{count_scripts, inspect};
pub use library::{PDFIUM_LIBRARY_ENV, PdfEngine, default_library_path};
pub use render::{MAX_RENDER_PIXELS, RenderedPage, extract_text, render_page};

use std::path::PathBuf;

/// The largest PDF Hearth accepts.
pub const MAX_PDF_BYTES: usize = 10 * 1024 * 1024;
/// The most pages Hearth accepts.
pub const MAX_PDF_PAGES: u16 = 500;

/// Why a PDF could not be handled; each says what to do. Messages name fields but never
/// carry field values (they can be personal).
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// libpdfium is not where Hearth was told to find it.
    #[error(
        "Hearth could not load PDFium from {path} ({detail}). Run scripts/setup.sh, or set HEARTH_PDFIUM_LIB to a libpdfium.so."
    )]
    LibraryMissing {
        /// Where Hearth looked.
        path: PathBuf,
        /// The loader's words.
        detail: String,
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
fn list_for_message<'a>(items: impl ExactSizeIterator<Item = &'a str>) -> String {
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

/// Applies Hearth's checks and opens the document: the shared front door of every call.
fn open<'a>(engine: &PdfEngine, bytes: &'a [u8]) -> Result<raw::Document<'a>, PdfError> {
    if bytes.len() > MAX_PDF_BYTES {
        return Err(PdfError::TooLarge { bytes: bytes.len() });
    }
    if !bytes.starts_with(b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    let document = raw::Document::load(engine.lib(), bytes).map_err(|code| match code {
        raw::FPDF_ERR_PASSWORD | raw::FPDF_ERR_SECURITY => PdfError::Encrypted,
        2 => PdfError::Damaged { detail: "the file could not be read".into() },
        3 => PdfError::Damaged { detail: "not in a format PDFium can read".into() },
        other => PdfError::Damaged { detail: format!("PDFium error {other}") },
    })?;
    // A document that opens without a password may still be encrypted (an owner password
    // with restrictions). Hearth refuses those too: saving a filled copy would have to carry
    // or drop the sender's restrictions, and neither is Hearth's call.
    if document.security_revision() != -1 {
        return Err(PdfError::Encrypted);
    }
    let pages = u16::try_from(document.page_count().max(0)).unwrap_or(u16::MAX);
    if pages > MAX_PDF_PAGES {
        return Err(PdfError::TooManyPages { pages });
    }
    if matches!(document.form_type(), raw::FORMTYPE_XFA_FULL | raw::FORMTYPE_XFA_FOREGROUND) {
        return Err(PdfError::Xfa);
    }
    Ok(document)
}

/// Pages of an opened document (the count was checked in `open`).
fn page_count(document: &raw::Document<'_>) -> u16 {
    u16::try_from(document.page_count().max(0)).unwrap_or(u16::MAX)
}
