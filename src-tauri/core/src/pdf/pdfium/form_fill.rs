//! PDFium's form-fill module, for what the form writer cannot do faithfully. It edits as a
//! person would: focus the field, select its text and replace it, press space on a checkbox or
//! radio button, pick an option of a choice field, then take the focus away so the value is
//! committed and the appearance stream is regenerated. pdfium-render's high-level setters are
//! not used: they store text without an appearance and write checkbox states as strings.

use super::ffi::{self, Form, PageView, wide};
use super::fields::{Field, checkbox_on, load_pages, scan};
use super::{PdfEngine, open};
use crate::pdf::text::unify_line_breaks;
use crate::pdf::values::{Spec, Step, plan};
use crate::pdf::{Budget, FieldKind, FieldValues, PdfError};

/// Fills `values` with PDFium's form filler; returns what PDFium saved (active content still
/// in it: the caller strips it).
pub(in crate::pdf) fn form_fill(engine: &PdfEngine, bytes: &[u8], values: &FieldValues, budget: &Budget) -> Result<Vec<u8>, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
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
    Ok(saved)
}

impl Field {
    fn spec(&self) -> Spec<'_> {
        Spec {
            name: &self.name,
            kind: self.kind,
            read_only: self.flags & ffi::FPDF_FORMFLAG_READONLY != 0,
            options: &self.options,
            exports: self.widgets.iter().map(|w| w.export.as_deref()).collect(),
        }
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
            if field.flags & ffi::FPDF_FORMFLAG_CHOICE_MULTI_SELECT != 0 {
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
