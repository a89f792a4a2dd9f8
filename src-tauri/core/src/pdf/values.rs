//! Checking values against a form's fields before anything is changed: the one set of rules
//! both fill paths (the form writer and PDFium's form filler) apply, so a refusal is the same
//! whichever path would have filled.

use super::{FieldKind, FieldValue, FieldValues, PdfError, list_for_message};

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
