//! PDFium's own reading of a form: every page loaded, its widgets gathered by field name. The
//! fallback when `form` is not sure of a document, and the reading the fill paths check
//! against.

use std::collections::HashMap;
use std::os::raw::c_int;

use super::ffi::{self, Annot, Form, Page, PageView};
use super::{PdfEngine, open};
use crate::pdf::text::unify_line_breaks;
use crate::pdf::{Budget, FieldKind, PdfError, PdfField};

/// The fields of `bytes` in page order, as PDFium's page walk finds them.
pub(in crate::pdf) fn read_fields(engine: &PdfEngine, bytes: &[u8], budget: &Budget) -> Result<Vec<PdfField>, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
    let document = open(engine, bytes)?;
    let Some(form) = Form::new(&document) else {
        return Ok(Vec::new());
    };
    let loaded = load_pages(&document)?;
    let mut views = Vec::new();
    let fields = scan(&form, &loaded, &mut views)
        .into_iter()
        .map(|f| PdfField {
            name: f.name,
            kind: f.kind,
            page: u16::try_from(f.page + 1).unwrap_or(u16::MAX),
            value: f.value,
            options: f.options,
        })
        .collect();
    Ok(fields)
}

/// How many scripts PDFium finds: document-level JavaScript actions plus field scripts
/// (keystroke, format, validate, calculate). A check for callers that want to warn about
/// active content, and the oracle for `fill`'s removal of it.
pub(in crate::pdf) fn count_scripts(engine: &PdfEngine, bytes: &[u8], budget: &Budget) -> Result<usize, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
    let document = open(engine, bytes)?;
    let mut count = usize::try_from(document.javascript_count().max(0)).unwrap_or(0);
    let Some(form) = Form::new(&document) else { return Ok(count) };
    for page in load_pages(&document)? {
        for index in 0..page.annot_count() {
            let Some(annot) = page.annot(index) else { continue };
            if annot.subtype() == ffi::FPDF_ANNOT_WIDGET {
                // FPDF_ANNOT_AACTION_KEY_STROKE (12) … FPDF_ANNOT_AACTION_CALCULATE (15).
                count += (12..=15).filter(|&event| form.additional_action_js(&annot, event).is_some()).count();
            }
        }
    }
    Ok(count)
}

/// Every page of the document, loaded (PDFium needs a loaded page to reach its widgets).
pub(super) fn load_pages<'d>(document: &'d ffi::Document<'_>) -> Result<Vec<Page<'d>>, PdfError> {
    (0..document.page_count())
        .map(|i| document.page(i).ok_or_else(|| PdfError::Damaged { detail: format!("page {} does not load", i + 1) }))
        .collect()
}

/// One widget (the on-page part) of a field.
#[derive(Debug)]
pub(super) struct Widget {
    /// Page index (0-based).
    pub page: usize,
    /// Annotation index on that page.
    pub annot: c_int,
    /// A checkbox's or radio button's "on" value.
    pub export: Option<String>,
}

/// A field as `scan` finds it.
#[derive(Debug)]
pub(super) struct Field {
    pub name: String,
    pub kind: FieldKind,
    pub flags: c_int,
    /// Page index (0-based) of the first widget.
    pub page: usize,
    pub widgets: Vec<Widget>,
    pub value: Option<String>,
    pub options: Vec<String>,
}

/// Walks every page's widgets and gathers fields by name. Radio buttons need their page
/// registered with the form to report their export value: `views[i]` is filled on demand
/// (callers that already registered every page pass them in).
pub(super) fn scan<'f, 'p, 'd>(form: &'f Form<'d>, pages: &'p [Page<'d>], views: &mut Vec<Option<PageView<'f, 'p, 'd>>>) -> Vec<Field> {
    views.resize_with(pages.len(), || None);
    let mut fields: Vec<Field> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (page_index, page) in pages.iter().enumerate() {
        for annot_index in 0..page.annot_count() {
            let Some(annot) = page.annot(annot_index) else { continue };
            if annot.subtype() != ffi::FPDF_ANNOT_WIDGET {
                continue;
            }
            let field_type = form.field_type(&annot);
            if field_type < 0 {
                continue;
            }
            let Some(name) = form.field_name(&annot).filter(|n| !n.is_empty()) else { continue };
            let kind = kind(field_type);
            let export = if matches!(kind, FieldKind::Radio | FieldKind::Checkbox) {
                if kind == FieldKind::Radio && views[page_index].is_none() {
                    views[page_index] = Some(form.view(page));
                }
                form.export_value(&annot)
            } else {
                None
            };
            let widget = Widget { page: page_index, annot: annot_index, export };
            if let Some(&index) = by_name.get(&name) {
                let field = &mut fields[index];
                add_widget(field, widget);
                continue;
            }
            let mut field = Field {
                name: name.clone(),
                kind,
                flags: form.field_flags(&annot),
                page: page_index,
                widgets: Vec::new(),
                value: None,
                options: Vec::new(),
            };
            match kind {
                FieldKind::Text => field.value = form.field_value(&annot).filter(|v| !v.is_empty()).map(unify_line_breaks),
                // PDFium reports a checkbox or radio group's value as the "on" value of the
                // checked widget, or "Off" (FPDFAnnot_IsChecked needs the page's view).
                FieldKind::Checkbox => field.value = Some(checkbox_on(form, &annot).to_string()),
                FieldKind::Radio => {
                    field.value = form.field_value(&annot).filter(|v| !v.is_empty() && v != "Off");
                }
                FieldKind::ComboBox | FieldKind::ListBox => {
                    let count = form.option_count(&annot).max(0);
                    field.options = (0..count).map(|i| form.option_label(&annot, i).unwrap_or_default()).collect();
                    field.value = (0..count)
                        .find(|&i| form.is_option_selected(&annot, i))
                        .and_then(|i| field.options.get(usize::try_from(i).unwrap_or(usize::MAX)).cloned())
                        .or_else(|| form.field_value(&annot).filter(|v| !v.is_empty()));
                }
                FieldKind::PushButton | FieldKind::Signature | FieldKind::Unknown => {}
            }
            add_widget(&mut field, widget);
            by_name.insert(name, fields.len());
            fields.push(field);
        }
    }
    fields
}

/// Whether a checkbox field is on.
pub(super) fn checkbox_on(form: &Form<'_>, annot: &Annot<'_>) -> bool {
    form.field_value(annot).is_some_and(|v| !v.is_empty() && v != "Off")
}

fn add_widget(field: &mut Field, widget: Widget) {
    if field.kind == FieldKind::Radio
        && let Some(export) = &widget.export
        && !field.options.contains(export)
    {
        field.options.push(export.clone());
    }
    field.widgets.push(widget);
}

fn kind(field_type: c_int) -> FieldKind {
    match field_type {
        ffi::FPDF_FORMFIELD_TEXTFIELD => FieldKind::Text,
        ffi::FPDF_FORMFIELD_CHECKBOX => FieldKind::Checkbox,
        ffi::FPDF_FORMFIELD_RADIOBUTTON => FieldKind::Radio,
        ffi::FPDF_FORMFIELD_COMBOBOX => FieldKind::ComboBox,
        ffi::FPDF_FORMFIELD_LISTBOX => FieldKind::ListBox,
        ffi::FPDF_FORMFIELD_PUSHBUTTON => FieldKind::PushButton,
        ffi::FPDF_FORMFIELD_SIGNATURE => FieldKind::Signature,
        _ => FieldKind::Unknown,
    }
}
