//! Filling AcroForm fields through PDFium's form-fill module.
//!
//! PDFium's own widgets do the editing, as a person would: focus the field, select its text
//! and replace it, press space on a checkbox or radio button, pick an option of a choice
//! field, then take the focus away so the value is committed and the appearance stream is
//! regenerated. pdfium-render's high-level setters are not used: they store text without an
//! appearance and write checkbox states as strings.

use super::inspect::{Field, checkbox_on, load_pages, scan, unify_line_breaks};
use super::raw::{Form, PageView, wide};
use super::sanitize::strip_active_content;
use super::{FieldKind, FieldValue, FieldValues, PdfEngine, PdfError, list_for_message, open, raw};

/// Returns a copy of `bytes` with `values` filled in (field name → value), appearances
/// regenerated, and JavaScript, `/OpenAction` and additional actions (`/AA`) removed (see
/// `sanitize`). Every value is checked before anything is changed; after filling, every
/// field is read back and must hold what was asked.
pub fn fill(engine: &PdfEngine, bytes: &[u8], values: &FieldValues) -> Result<Vec<u8>, PdfError> {
    let _pdfium = engine.lock();
    let document = open(engine, bytes)?;
    let form = Form::new(&document).ok_or_else(|| PdfError::SaveFailed { detail: "PDFium's form module did not start".into() })?;
    let pages = load_pages(&document)?;
    // Every page gets a view: that is where PDFium edits widgets, and it also generates the
    // appearance of any widget that has none, so dropping /NeedAppearances loses nothing.
    let mut views: Vec<Option<PageView<'_, '_, '_>>> = pages.iter().map(|p| Some(form.view(p))).collect();
    let fields = scan(&form, &pages, &mut views);
    let plan = plan(&fields, values)?;
    for (field, value) in &plan {
        apply(&form, &views, field, value)?;
    }
    form.kill_focus();
    for (field, value) in &plan {
        if !holds(&form, &views, field, value) {
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

/// What to do for one field, decided before anything changes.
enum Step<'v> {
    Text(&'v str),
    Check(bool),
    /// Option index (radio: widget index) to pick.
    Pick(usize),
}

fn plan<'f, 'v>(fields: &'f [Field], values: &'v FieldValues) -> Result<Vec<(&'f Field, Step<'v>)>, PdfError> {
    let mut plan = Vec::with_capacity(values.len());
    for (name, value) in values {
        let Some(field) = fields.iter().find(|f| &f.name == name) else {
            return Err(PdfError::UnknownField {
                name: name.clone(),
                available: list_for_message(fields.iter().map(|f| f.name.as_str())),
            });
        };
        let not_fillable = |reason| PdfError::NotFillable { name: name.clone(), reason };
        let wrong_kind = |kind, expected| PdfError::WrongKind { name: name.clone(), kind, expected };
        match field.kind {
            FieldKind::PushButton => return Err(not_fillable("a push button")),
            FieldKind::Signature => return Err(not_fillable("a signature field")),
            FieldKind::Unknown => return Err(not_fillable("of a kind Hearth does not know")),
            _ if field.flags & raw::FPDF_FORMFLAG_READONLY != 0 => return Err(not_fillable("read-only")),
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
                let Some(widget) = field.widgets.iter().position(|w| w.export.as_deref() == Some(option.as_str())) else {
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
        plan.push((field, step));
    }
    Ok(plan)
}

fn not_an_option(field: &Field) -> PdfError {
    PdfError::NotAnOption { name: field.name.clone(), options: list_for_message(field.options.iter().map(String::as_str)) }
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
