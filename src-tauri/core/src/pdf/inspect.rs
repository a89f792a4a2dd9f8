//! Pages and form fields of a PDF, with current values and options.

use std::collections::HashMap;
use std::os::raw::c_int;

use super::raw::{self, Annot, Form, Page, PageView};
use super::{FieldKind, PdfEngine, PdfError, PdfField, PdfInfo, open, page_count};

/// Checks the bytes and lists pages and fields (one entry per named field, in page order),
/// each with its current value and, for radio groups, combo boxes and list boxes, its options.
///
/// PDFium opens and checks the document; the fields are then read from the document's objects
/// (`fast`), without loading pages, or, when that reader is unsure, by PDFium from every
/// page's widgets.
pub fn inspect(engine: &PdfEngine, bytes: &[u8]) -> Result<PdfInfo, PdfError> {
    inspect_with(engine, bytes, true)
}

pub(super) fn inspect_with(engine: &PdfEngine, bytes: &[u8], fast: bool) -> Result<PdfInfo, PdfError> {
    let _pdfium = engine.lock();
    let document = open(engine, bytes)?;
    let pages = page_count(&document);
    let fields = read_fields(&document, bytes, pages, fast)?;
    Ok(PdfInfo { pages, fields })
}

/// The fields of an opened document (`bytes`, `pages` pages): from its objects when `fast`
/// and that reader is sure, else by PDFium from every page's widgets.
pub(super) fn read_fields(
    document: &raw::Document<'_>,
    bytes: &[u8],
    pages: u16,
    fast: bool,
) -> Result<Vec<PdfField>, PdfError> {
    if fast && let Some(fields) = super::fast::fields(bytes, usize::from(pages)) {
        return Ok(fields);
    }
    let Some(form) = Form::new(document) else {
        return Ok(Vec::new());
    };
    let loaded = load_pages(document)?;
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
pub fn count_scripts(engine: &PdfEngine, bytes: &[u8]) -> Result<usize, PdfError> {
    let _pdfium = engine.lock();
    let document = open(engine, bytes)?;
    let mut count = usize::try_from(document.javascript_count().max(0)).unwrap_or(0);
    let Some(form) = Form::new(&document) else { return Ok(count) };
    for page in load_pages(&document)? {
        for index in 0..page.annot_count() {
            let Some(annot) = page.annot(index) else { continue };
            if annot.subtype() == raw::FPDF_ANNOT_WIDGET {
                // FPDF_ANNOT_AACTION_KEY_STROKE (12) … FPDF_ANNOT_AACTION_CALCULATE (15).
                count += (12..=15).filter(|&event| form.additional_action_js(&annot, event).is_some()).count();
            }
        }
    }
    Ok(count)
}

/// Every page of the document, loaded (PDFium needs a loaded page to reach its widgets).
pub(super) fn load_pages<'d>(document: &'d raw::Document<'_>) -> Result<Vec<Page<'d>>, PdfError> {
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
pub(super) fn scan<'f, 'p, 'd>(
    form: &'f Form<'d>,
    pages: &'p [Page<'d>],
    views: &mut Vec<Option<PageView<'f, 'p, 'd>>>,
) -> Vec<Field> {
    views.resize_with(pages.len(), || None);
    let mut fields: Vec<Field> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (page_index, page) in pages.iter().enumerate() {
        for annot_index in 0..page.annot_count() {
            let Some(annot) = page.annot(annot_index) else { continue };
            if annot.subtype() != raw::FPDF_ANNOT_WIDGET {
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

/// PDFium stores a typed line break as CR LF; Hearth reports `\n`, as it was given.
pub(super) fn unify_line_breaks(text: String) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text }
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
        raw::FPDF_FORMFIELD_TEXTFIELD => FieldKind::Text,
        raw::FPDF_FORMFIELD_CHECKBOX => FieldKind::Checkbox,
        raw::FPDF_FORMFIELD_RADIOBUTTON => FieldKind::Radio,
        raw::FPDF_FORMFIELD_COMBOBOX => FieldKind::ComboBox,
        raw::FPDF_FORMFIELD_LISTBOX => FieldKind::ListBox,
        raw::FPDF_FORMFIELD_PUSHBUTTON => FieldKind::PushButton,
        raw::FPDF_FORMFIELD_SIGNATURE => FieldKind::Signature,
        _ => FieldKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pdf::{FieldValue, FieldValues, default_library_path, fill};

    /// The page-free reader and PDFium's page walk agree on every fixture, filled or not.
    #[test]
    fn fast_and_pdfium_readings_agree() {
        let Ok(engine) = PdfEngine::load(&default_library_path()) else {
            panic!("libpdfium is needed (scripts/setup.sh)");
        };
        let choices: &[u8] = include_bytes!("../../tests/fixtures/choices.pdf");
        let scripts: &[u8] = include_bytes!("../../tests/fixtures/scripts.pdf");
        let packed: &[u8] = include_bytes!("../../tests/fixtures/choices-objstm.pdf");
        let form = crate::workspace::seed::PERMISSION_FORM_PDF;
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
            let fast = inspect_with(&engine, bytes, true).unwrap();
            let slow = inspect_with(&engine, bytes, false).unwrap();
            assert!(super::super::fast::fields(bytes, usize::from(fast.pages)).is_some(), "document {i} took the fast path");
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
                if let (Ok(fast), Ok(slow)) = (inspect_with(&engine, &bytes, true), inspect_with(&engine, &bytes, false)) {
                    compared += 1;
                    if fast != slow {
                        let only_fast: Vec<_> = fast.fields.iter().filter(|f| !slow.fields.contains(f)).collect();
                        let only_slow: Vec<_> = slow.fields.iter().filter(|f| !fast.fields.contains(f)).collect();
                        diverged.push(format!("at {at} ({} vs {} fields): {only_fast:?}\n   vs {only_slow:?}", fast.fields.len(), slow.fields.len()));
                    }
                }
            }
        }
        assert!(compared > 100, "{compared}");
        assert!(diverged.is_empty(), "{} of {compared} diverge:\n{}", diverged.len(), diverged.join("\n"));
    }
}
