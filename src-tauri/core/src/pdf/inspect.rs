//! Pages and form fields of a PDF.

use pdfium_render::prelude::{PdfDocument, PdfFormFieldCommon, PdfFormFieldType, PdfiumError, PdfiumInternalError};
use serde::{Deserialize, Serialize};

use super::{MAX_PDF_BYTES, MAX_PDF_PAGES, PdfEngine, PdfError};

/// What kind of form field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text.
    Text,
    /// On or off.
    Checkbox,
    /// One of a group.
    Radio,
    /// A drop-down.
    ComboBox,
    /// A list.
    ListBox,
    /// A button (no value).
    PushButton,
    /// A signature slot.
    Signature,
    /// Something PDFium does not classify.
    Unknown,
}

/// One form field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfField {
    /// The field's name.
    pub name: String,
    /// Its kind.
    pub kind: FieldKind,
    /// The page it is on (1-based).
    pub page: u16,
}

/// What inspecting a PDF found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfInfo {
    /// Pages.
    pub pages: u16,
    /// Form fields, in page order (one entry per named field).
    pub fields: Vec<PdfField>,
}

/// Checks the bytes and lists pages and fields.
pub fn inspect(engine: &PdfEngine, bytes: &[u8]) -> Result<PdfInfo, PdfError> {
    let document = open(engine, bytes)?;
    // PDFium counts pages in an i32; a negative count never happens, a huge one is refused.
    let page_count = u16::try_from(document.pages().len().max(0)).unwrap_or(u16::MAX);
    if page_count > MAX_PDF_PAGES {
        return Err(PdfError::TooManyPages { pages: page_count });
    }
    let mut fields: Vec<PdfField> = Vec::new();
    for (index, page) in document.pages().iter().enumerate() {
        for annotation in page.annotations().iter() {
            let Some(field) = annotation.as_form_field() else { continue };
            let Some(name) = field.name() else { continue };
            if fields.iter().any(|f| f.name == name) {
                continue; // radio groups and repeated widgets share one name
            }
            let page = u16::try_from(index + 1).unwrap_or(u16::MAX);
            fields.push(PdfField { name, kind: kind(field.field_type()), page });
        }
    }
    Ok(PdfInfo { pages: page_count, fields })
}

fn open<'a>(engine: &'a PdfEngine, bytes: &'a [u8]) -> Result<PdfDocument<'a>, PdfError> {
    if bytes.len() > MAX_PDF_BYTES {
        return Err(PdfError::TooLarge { bytes: bytes.len() });
    }
    if !bytes.starts_with(b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    engine.pdfium.load_pdf_from_byte_slice(bytes, None).map_err(|err| match err {
        PdfiumError::PdfiumLibraryInternalError(
            PdfiumInternalError::PasswordError | PdfiumInternalError::SecurityError,
        ) => PdfError::Encrypted,
        other => PdfError::Damaged { detail: other.to_string() },
    })
}

fn kind(field_type: PdfFormFieldType) -> FieldKind {
    match field_type {
        PdfFormFieldType::Text => FieldKind::Text,
        PdfFormFieldType::Checkbox => FieldKind::Checkbox,
        PdfFormFieldType::RadioButton => FieldKind::Radio,
        PdfFormFieldType::ComboBox => FieldKind::ComboBox,
        PdfFormFieldType::ListBox => FieldKind::ListBox,
        PdfFormFieldType::PushButton => FieldKind::PushButton,
        PdfFormFieldType::Signature => FieldKind::Signature,
        PdfFormFieldType::Unknown => FieldKind::Unknown,
    }
}
