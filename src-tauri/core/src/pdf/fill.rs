//! Filling AcroForm fields: by the form writer (`form_writer`), its output read back, or
//! through PDFium's form-fill module when the writer cannot do a document faithfully or its
//! output does not read back. Active content is removed either way.

use super::budget::Budget;
use super::form_writer::{self, Outcome};
use super::pdfium::{self, PdfEngine};
use super::text::unify_line_breaks;
use super::{FieldKind, FieldValue, FieldValues, PdfError, PdfField, PdfInfo, active_content, form, objects};

/// Which way [`fill_with_report`] filled a document (for tests and the benchmark).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FillPath {
    /// Values and appearances written into the document's objects, then read back.
    Direct,
    /// PDFium's form-fill module.
    PdfiumFormFill,
}

/// Returns a copy of `bytes` with `values` filled in (field name → value), appearances
/// regenerated, and active content removed: every action but GoTo, `/OpenAction`, additional
/// actions (`/AA`), scripts, embedded files and media annotations (see `active_content`).
/// Every value is checked before anything is changed; after filling, every field is read back
/// and must hold what was asked.
pub fn fill(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    fill_within(engine, bytes, values, &Budget::standard()).map(|(filled, _)| filled)
}

/// [`fill`], also saying which path filled the document.
#[doc(hidden)]
pub fn fill_with_report(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<(Vec<u8>, FillPath), PdfError> {
    fill_within(engine, bytes, values, &Budget::standard())
}

/// [`fill`] within `budget`, saying which path filled the document.
pub fn fill_within(engine: &PdfEngine, bytes: &[u8], values: &FieldValues, budget: &Budget) -> Result<(Vec<u8>, FillPath), PdfError> {
    fill_inspected_within(engine, bytes, values, budget).map(|filled| (filled.bytes, filled.path))
}

/// A filled copy, what `inspect` reads in it, and which path filled it.
#[derive(Debug)]
pub struct Filled {
    /// The new file.
    pub bytes: Vec<u8>,
    /// Its pages and fields, as [`super::inspect`] reports them.
    pub info: PdfInfo,
    /// Which path filled it.
    pub path: FillPath,
}

/// [`fill_within`], also returning the copy's fields: the form writer's read-back already
/// read them, so the caller does not load the copy a second time to inspect it.
///
/// The form writer runs first. Its output is opened by PDFium and every value read back; a
/// document it cannot fill faithfully, or an output that does not read back, is filled by
/// PDFium's form-fill module instead. Both paths check the values the same way
/// (`values::plan`), so a refusal is the same whichever path would have filled.
pub fn fill_inspected_within(engine: &PdfEngine, bytes: &[u8], values: &FieldValues, budget: &Budget) -> Result<Filled, PdfError> {
    let loaded = objects::load(bytes, budget)?;
    let pages = loaded.page_count();
    match form_writer::fill(loaded, values, budget) {
        Outcome::Refused(err) => return Err(err),
        Outcome::Filled(filled) => {
            if let Some(info) = reads_back(engine, &filled, pages, values, budget)? {
                return Ok(Filled { bytes: filled, info, path: FillPath::Direct });
            }
            tracing::warn!("a directly filled PDF did not read back; filling it with PDFium's form filler instead");
        }
        Outcome::Unsupported(reason) => tracing::debug!(reason, "filling a PDF with PDFium's form filler"),
    }
    let saved = pdfium::form_fill(engine, bytes, values, budget)?;
    let cleaned = active_content::strip_saved(&saved, budget)?;
    let info = super::inspect_within(engine, &cleaned, &budget.renewed())?;
    Ok(Filled { bytes: cleaned, info, path: FillPath::PdfiumFormFill })
}

/// [`fill`] through PDFium's form-fill module only (the fallback; for the benchmark).
#[doc(hidden)]
pub fn fill_with_pdfium(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    let budget = Budget::standard();
    objects::load(bytes, &budget)?;
    let saved = pdfium::form_fill(engine, bytes, values, &budget)?;
    active_content::strip_saved(&saved, &budget)
}

/// What `inspect` reads in `filled`, if PDFium opens it as a sound document of `pages` pages
/// and its fields hold `values`; `None` when it does not read back. Stop and the deadline
/// still end the operation.
fn reads_back(engine: &PdfEngine, filled: &[u8], pages: u16, values: &FieldValues, budget: &Budget) -> Result<Option<PdfInfo>, PdfError> {
    let read = || -> Result<Option<Vec<PdfField>>, PdfError> {
        if !pdfium::opens_with_pages(engine, filled, pages, budget)? {
            return Ok(None);
        }
        let loaded = objects::load_output(filled, budget)?;
        match form::fields(&loaded, budget)? {
            Some(fields) => Ok(Some(fields)),
            None => pdfium::read_fields(engine, filled, budget).map(Some),
        }
    };
    let fields = match read() {
        Ok(Some(fields)) => fields,
        Ok(None) => return Ok(None),
        Err(err @ (PdfError::Stopped | PdfError::TimedOut { .. })) => return Err(err),
        // Anything else means the copy does not read back: PDFium's form filler gets the job.
        Err(_) => return Ok(None),
    };
    let holds = values.iter().all(|(name, value)| fields.iter().find(|f| &f.name == name).is_some_and(|f| holds_value(f, value)));
    Ok(holds.then_some(PdfInfo { pages, fields }))
}

fn holds_value(field: &PdfField, value: &FieldValue) -> bool {
    match (field.kind, value) {
        (FieldKind::Text, FieldValue::Text(text)) => {
            unify_line_breaks(field.value.clone().unwrap_or_default()) == unify_line_breaks(text.clone())
        }
        (FieldKind::Checkbox, FieldValue::Checked(on)) => field.value.as_deref() == Some(on.to_string().as_str()),
        (FieldKind::Radio | FieldKind::ComboBox | FieldKind::ListBox, FieldValue::Text(option)) => {
            field.value.as_deref() == Some(option.as_str())
        }
        _ => false,
    }
}
