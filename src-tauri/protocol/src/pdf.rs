//! PDF form fields as the backend reports them and the UI edits them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What kind of form field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text.
    Text,
    /// On or off.
    Checkbox,
    /// One of a group of options.
    Radio,
    /// A drop-down (one option, sometimes editable).
    ComboBox,
    /// A list (one option).
    ListBox,
    /// A button (no value).
    PushButton,
    /// A signature slot (not fillable).
    Signature,
    /// Something PDFium does not classify.
    Unknown,
}

impl FieldKind {
    /// Whether Hearth can fill this kind.
    pub const fn is_fillable(self) -> bool {
        matches!(self, FieldKind::Text | FieldKind::Checkbox | FieldKind::Radio | FieldKind::ComboBox | FieldKind::ListBox)
    }
}

/// One form field (radio groups and repeated widgets are one field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfField {
    /// The field's full name.
    pub name: String,
    /// Its kind.
    pub kind: FieldKind,
    /// The page of its first widget (1-based).
    pub page: u16,
    /// Its current value: text, the chosen option, or "true"/"false" for a checkbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The options of a radio group, combo box or list box, in document order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// What inspecting a PDF found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfInfo {
    /// Pages.
    pub pages: u16,
    /// Form fields, in page order.
    pub fields: Vec<PdfField>,
}

/// A value to put in a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// A checkbox's state.
    Checked(bool),
    /// Text, or the option to choose for a radio group, combo box or list box.
    Text(String),
}

/// Field name → value, in a stable order (so the same values hash the same).
pub type FieldValues = BTreeMap<String, FieldValue>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_are_plain_json() {
        let values: FieldValues = serde_json::from_str(r#"{"consent":true,"name":"Ada"}"#).unwrap();
        assert_eq!(values.get("consent"), Some(&FieldValue::Checked(true)));
        assert_eq!(values.get("name"), Some(&FieldValue::Text("Ada".into())));
        let field = PdfField { name: "a".into(), kind: FieldKind::ComboBox, page: 1, value: None, options: vec![] };
        assert_eq!(serde_json::to_string(&field).unwrap(), r#"{"name":"a","kind":"combo_box","page":1}"#);
    }
}
