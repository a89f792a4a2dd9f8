//! PDFium (through pdfium-render's bindings): opening documents, its own reading of a form
//! (the fallback), its form filler, rendering and text. Every PDFium call is in `ffi`, the only
//! module with `unsafe`; this process runs one PDFium operation at a time
//! ([`PdfEngine::lock`]).
//!
//! Callers pass PDFium only documents that `objects::load` has already checked within a
//! budget (the page tree walked once with a visited set, every `/Parent` chain climbed), so
//! PDFium's own unbounded walks never meet a hostile tree while holding the lock.

mod ffi;
mod fields;
mod form_fill;
mod library;
mod render;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod trust;

pub use library::{PDFIUM_LIBRARY_ENV, PDFIUM_SHA256, PdfEngine, default_library_path, private_library_path};
pub use render::{MAX_RENDER_PIXELS, RenderedPage};

pub(super) use fields::{count_scripts, read_fields};
pub(super) use form_fill::form_fill;
pub(super) use render::{extract_text, render_page};

use super::{Budget, MAX_PDF_PAGES, PdfError};

/// Opens `bytes` with PDFium and applies the same refusals as `objects::load` (a second
/// opinion: PDFium's parser may read a damaged file differently).
fn open<'a>(engine: &PdfEngine, bytes: &'a [u8]) -> Result<ffi::Document<'a>, PdfError> {
    let document = ffi::Document::load(engine.lib(), bytes).map_err(|code| match code {
        ffi::FPDF_ERR_PASSWORD | ffi::FPDF_ERR_SECURITY => PdfError::Encrypted,
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
    let pages = page_count(&document);
    if pages > MAX_PDF_PAGES {
        return Err(PdfError::TooManyPages { pages });
    }
    if matches!(document.form_type(), ffi::FORMTYPE_XFA_FULL | ffi::FORMTYPE_XFA_FOREGROUND) {
        return Err(PdfError::Xfa);
    }
    Ok(document)
}

/// Pages of an opened document.
fn page_count(document: &ffi::Document<'_>) -> u16 {
    u16::try_from(document.page_count().max(0)).unwrap_or(u16::MAX)
}

/// Whether PDFium opens `bytes` as a sound document of `pages` pages.
pub(super) fn opens_with_pages(engine: &PdfEngine, bytes: &[u8], pages: u16, budget: &Budget) -> Result<bool, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
    Ok(open(engine, bytes).is_ok_and(|document| page_count(&document) == pages))
}
