//! Reading a PDF: its fields, pages as pictures, text, and the scripts in it. Each call loads
//! and checks the document within its budget first (`objects`), so PDFium only sees a
//! document that passed.

use super::budget::Budget;
use super::pdfium::{self, PdfEngine, RenderedPage};
use super::{PdfError, PdfInfo, form, objects};

/// Checks the bytes and lists pages and fields (one entry per named field, in page order),
/// each with its current value and, for radio groups, combo boxes and list boxes, its options.
pub fn inspect(engine: &PdfEngine, bytes: &[u8]) -> Result<PdfInfo, PdfError> {
    inspect_within(engine, bytes, &Budget::standard())
}

/// [`inspect`] within `budget`.
///
/// The fields are read from the document's objects (`form`) without PDFium when that reader
/// is sure; otherwise PDFium walks every page's widgets.
pub fn inspect_within(engine: &PdfEngine, bytes: &[u8], budget: &Budget) -> Result<PdfInfo, PdfError> {
    let loaded = objects::load(bytes, budget)?;
    let pages = loaded.page_count();
    if let Some(fields) = form::fields(&loaded, budget)? {
        return Ok(PdfInfo { pages, fields });
    }
    drop(loaded);
    Ok(PdfInfo { pages, fields: pdfium::read_fields(engine, bytes, budget)? })
}

/// How many scripts PDFium finds: document-level JavaScript actions plus field scripts
/// (keystroke, format, validate, calculate). A check for callers that want to warn about
/// active content, and the oracle for `fill`'s removal of it.
pub fn count_scripts(engine: &PdfEngine, bytes: &[u8]) -> Result<usize, PdfError> {
    let budget = Budget::standard();
    objects::load(bytes, &budget)?;
    pdfium::count_scripts(engine, bytes, &budget)
}

/// Renders page `page` (1-based) at `scale` (1.0 = 72 dpi, one pixel per point) on white,
/// with form fields drawn as they are filled. The caller clamps the scale to what it needs;
/// images over [`super::MAX_RENDER_PIXELS`] are refused.
pub fn render_page(engine: &PdfEngine, bytes: &[u8], page: u16, scale: f32) -> Result<RenderedPage, PdfError> {
    render_page_within(engine, bytes, page, scale, &Budget::standard())
}

/// [`render_page`] within `budget` (for the checks; PDFium's drawing itself is one call).
pub fn render_page_within(engine: &PdfEngine, bytes: &[u8], page: u16, scale: f32, budget: &Budget) -> Result<RenderedPage, PdfError> {
    objects::load(bytes, budget)?;
    pdfium::render_page(engine, bytes, page, scale, budget)
}

/// The text of each page, in PDFium's reading order, lines separated by `\n` (form field
/// values are not part of a page's text).
pub fn extract_text(engine: &PdfEngine, bytes: &[u8]) -> Result<Vec<String>, PdfError> {
    extract_text_within(engine, bytes, &Budget::standard())
}

/// [`extract_text`] within `budget`.
pub fn extract_text_within(engine: &PdfEngine, bytes: &[u8], budget: &Budget) -> Result<Vec<String>, PdfError> {
    objects::load(bytes, budget)?;
    pdfium::extract_text(engine, bytes, budget)
}
