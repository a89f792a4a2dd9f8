//! Filling AcroForm fields: directly in the document's objects (`direct`), with PDFium
//! reading the result back, or through PDFium's form-fill module when the direct path cannot
//! do a document faithfully or its result does not read back.
//!
//! PDFium's form filler edits as a person would: focus the field, select its text and replace
//! it, press space on a checkbox or radio button, pick an option of a choice field, then take
//! the focus away so the value is committed and the appearance stream is regenerated.
//! pdfium-render's high-level setters are not used: they store text without an appearance and
//! write checkbox states as strings.

use super::direct::{self, Outcome};
use super::inspect::{Field, checkbox_on, load_pages, read_fields, scan, unify_line_breaks};
use super::raw::{Form, PageView, wide};
use super::sanitize::strip_active_content;
use super::{FieldKind, FieldValue, FieldValues, PdfEngine, PdfError, PdfField, list_for_message, open, page_count, raw};

/// Which way [`fill_with_report`] filled a document (for tests and the benchmark).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FillPath {
    /// Values and appearances written into the document's objects, then read back by PDFium.
    Direct,
    /// PDFium's form-fill module.
    PdfiumFormFill,
}

/// Returns a copy of `bytes` with `values` filled in (field name → value), appearances
/// regenerated, and active content removed: every action but GoTo, `/OpenAction`, additional
/// actions (`/AA`), scripts, embedded files and media annotations (see `sanitize`). Every value is checked before anything is changed; after filling, every
/// field is read back and must hold what was asked.
pub fn fill(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    fill_with_report(engine, bytes, values).map(|(filled, _)| filled)
}

/// [`fill`], also saying which path filled the document.
///
/// The direct path (`direct`) runs first. Its output is opened by PDFium and every value read
/// back; a document it cannot fill faithfully, or an output that does not read back, is
/// filled by PDFium's form-fill module instead. Both paths check the values the same way
/// (`plan`), so a refusal is the same whichever path would have filled.
#[doc(hidden)]
pub fn fill_with_report(
    engine: &PdfEngine,
    bytes: &[u8],
    values: &FieldValues,
) -> Result<(Vec<u8>, FillPath), PdfError> {
    let _pdfium = engine.lock();
    let pages = page_count(&open(engine, bytes)?);
    match direct::fill(bytes, pages, values) {
        Outcome::Refused(err) => return Err(err),
        Outcome::Filled(filled) => {
            if reads_back(engine, &filled, pages, values) {
                return Ok((filled, FillPath::Direct));
            }
            tracing::warn!("a directly filled PDF did not read back; filling it with PDFium's form filler instead");
        }
        Outcome::Unsupported(reason) => tracing::debug!(reason, "filling a PDF with PDFium's form filler"),
    }
    form_fill(engine, bytes, values).map(|filled| (filled, FillPath::PdfiumFormFill))
}

/// [`fill`] through PDFium's form-fill module only (the fallback; for the benchmark).
#[doc(hidden)]
pub fn fill_with_pdfium(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    let _pdfium = engine.lock();
    form_fill(engine, bytes, values)
}

/// Whether PDFium opens `filled` as a sound document of `pages` pages whose fields hold
/// `values` (read as `inspect` reads them).
fn reads_back(engine: &PdfEngine, filled: &[u8], pages: u16, values: &FieldValues) -> bool {
    let Ok(document) = open(engine, filled) else { return false };
    if page_count(&document) != pages {
        return false;
    }
    let Ok(fields) = read_fields(&document, filled, pages, true) else { return false };
    values.iter().all(|(name, value)| fields.iter().find(|f| &f.name == name).is_some_and(|f| holds_value(f, value)))
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

fn form_fill(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    let document = open(engine, bytes)?;
    let form = Form::new(&document).ok_or_else(|| PdfError::SaveFailed { detail: "PDFium's form module did not start".into() })?;
    let pages = load_pages(&document)?;
    // Every page gets a view: that is where PDFium edits widgets, and it also generates the
    // appearance of any widget that has none, so dropping /NeedAppearances loses nothing.
    let mut views: Vec<Option<PageView<'_, '_, '_>>> = pages.iter().map(|p| Some(form.view(p))).collect();
    let fields = scan(&form, &pages, &mut views);
    let specs: Vec<Spec<'_>> = fields.iter().map(Field::spec).collect();
    let plan = plan(&specs, values)?;
    for (index, step) in &plan {
        apply(&form, &views, &fields[*index], step)?;
    }
    form.kill_focus();
    for (index, step) in &plan {
        let field = &fields[*index];
        if !holds(&form, &views, field, step) {
            return Err(PdfError::ValueNotKept { name: field.name.clone() });
        }
    }
    drop(views);
    drop(pages);
    let saved = document
        .save_copy(bytes.len() + bytes.len() / 4)
        .ok_or_else(|| PdfError::SaveFailed { detail: "PDFium could not write the document".into() })?;
    drop(form);
    drop(document);
    strip_active_content(&saved).map_err(|err| PdfError::SaveFailed { detail: format!("cleaning it failed: {}", err.0) })
}

/// A field as both paths see it, for checking values.
pub(super) struct Spec<'f> {
    pub(super) name: &'f str,
    pub(super) kind: FieldKind,
    pub(super) read_only: bool,
    /// A radio group's export values (distinct), a choice field's option labels.
    pub(super) options: &'f [String],
    /// A radio group's export value of each widget, in page order.
    pub(super) exports: Vec<Option<&'f str>>,
}

impl Field {
    fn spec(&self) -> Spec<'_> {
        Spec {
            name: &self.name,
            kind: self.kind,
            read_only: self.flags & raw::FPDF_FORMFLAG_READONLY != 0,
            options: &self.options,
            exports: self.widgets.iter().map(|w| w.export.as_deref()).collect(),
        }
    }
}

/// What to do for one field, decided before anything changes.
pub(super) enum Step<'v> {
    Text(&'v str),
    Check(bool),
    /// Option index (radio: widget index, in page order) to pick.
    Pick(usize),
}

/// Checks every value against the form's fields, in the order given; the first that does not
/// fit is the error. Returns (field index, step) per value.
pub(super) fn plan<'v>(fields: &[Spec<'_>], values: &'v FieldValues) -> Result<Vec<(usize, Step<'v>)>, PdfError> {
    let mut plan = Vec::with_capacity(values.len());
    for (name, value) in values {
        let Some(index) = fields.iter().position(|f| f.name == name) else {
            let available = list_for_message(fields.iter().map(|f| f.name));
            return Err(PdfError::UnknownField { name: name.clone(), available });
        };
        let field = &fields[index];
        let not_fillable = |reason| PdfError::NotFillable { name: name.clone(), reason };
        let wrong_kind = |kind, expected| PdfError::WrongKind { name: name.clone(), kind, expected };
        match field.kind {
            FieldKind::PushButton => return Err(not_fillable("a push button")),
            FieldKind::Signature => return Err(not_fillable("a signature field")),
            FieldKind::Unknown => return Err(not_fillable("of a kind Hearth does not know")),
            _ if field.read_only => return Err(not_fillable("read-only")),
            _ => {}
        }
        let step = match (field.kind, value) {
            (FieldKind::Text, FieldValue::Text(text)) => Step::Text(text),
            (FieldKind::Text, FieldValue::Checked(_)) => return Err(wrong_kind("a text field", "text, not true or false")),
            (FieldKind::Checkbox, FieldValue::Checked(on)) => Step::Check(*on),
            (FieldKind::Checkbox, FieldValue::Text(_)) => return Err(wrong_kind("a checkbox", "true or false, not text")),
            (FieldKind::Radio | FieldKind::ComboBox | FieldKind::ListBox, FieldValue::Checked(_)) => {
                return Err(wrong_kind(kind_words(field.kind), "one of its options as text, not true or false"));
            }
            (FieldKind::Radio, FieldValue::Text(option)) => {
                let Some(widget) = field.exports.iter().position(|e| *e == Some(option.as_str())) else {
                    return Err(not_an_option(field));
                };
                Step::Pick(widget)
            }
            (FieldKind::ComboBox | FieldKind::ListBox, FieldValue::Text(option)) => {
                let Some(index) = field.options.iter().position(|o| o == option) else {
                    return Err(not_an_option(field));
                };
                Step::Pick(index)
            }
            (FieldKind::PushButton | FieldKind::Signature | FieldKind::Unknown, _) => {
                return Err(not_fillable("not fillable"));
            }
        };
        plan.push((index, step));
    }
    Ok(plan)
}

fn not_an_option(field: &Spec<'_>) -> PdfError {
    let options = list_for_message(field.options.iter().map(String::as_str));
    PdfError::NotAnOption { name: field.name.to_owned(), options }
}

fn kind_words(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Radio => "a radio group",
        FieldKind::ComboBox => "a drop-down",
        FieldKind::ListBox => "a list",
        _ => "a field",
    }
}

fn apply(form: &Form<'_>, views: &[Option<PageView<'_, '_, '_>>], field: &Field, step: &Step<'_>) -> Result<(), PdfError> {
    let widget = match step {
        Step::Pick(index) if field.kind == FieldKind::Radio => field.widgets.get(*index),
        _ => field.widgets.first(),
    };
    let failed = || PdfError::ValueNotKept { name: field.name.clone() };
    let widget = widget.ok_or_else(failed)?;
    let view = views.get(widget.page).and_then(Option::as_ref).ok_or_else(failed)?;
    let annot = view.page().annot(widget.annot).ok_or_else(failed)?;
    if !view.focus(&annot) {
        return Err(failed());
    }
    match step {
        Step::Text(text) => {
            view.select_all_text();
            view.replace_selection(&wide(text));
        }
        Step::Check(on) => {
            if form.is_checked(&annot) != *on {
                view.char(u16::from(b' '));
            }
        }
        Step::Pick(_) if field.kind == FieldKind::Radio => {
            if !form.is_checked(&annot) {
                view.char(u16::from(b' '));
            }
        }
        Step::Pick(index) => {
            let index = i32::try_from(*index).map_err(|_| failed())?;
            if field.flags & raw::FPDF_FORMFLAG_CHOICE_MULTI_SELECT != 0 {
                for other in 0..form.option_count(&annot) {
                    if other != index && form.is_option_selected(&annot, other) {
                        view.set_index_selected(other, false);
                    }
                }
            }
            view.set_index_selected(index, true);
        }
    }
    form.kill_focus();
    Ok(())
}

/// Whether the field now holds what was asked.
fn holds(form: &Form<'_>, views: &[Option<PageView<'_, '_, '_>>], field: &Field, step: &Step<'_>) -> bool {
    let Some(widget) = field.widgets.first() else { return false };
    let Some(view) = views.get(widget.page).and_then(Option::as_ref) else { return false };
    let Some(annot) = view.page().annot(widget.annot) else { return false };
    match step {
        Step::Text(text) => unify_line_breaks(form.field_value(&annot).unwrap_or_default()) == unify_line_breaks((*text).to_owned()),
        Step::Check(on) => checkbox_on(form, &annot) == *on,
        Step::Pick(index) if field.kind == FieldKind::Radio => {
            let wanted = field.widgets.get(*index).and_then(|w| w.export.as_deref());
            wanted.is_some() && form.field_value(&annot).as_deref() == wanted
        }
        Step::Pick(index) => i32::try_from(*index).is_ok_and(|i| form.is_option_selected(&annot, i)),
    }
}
