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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pdf::{FieldValue, FieldValues, default_library_path, fill};

    /// PDFium's reading, pages counted by PDFium too.
    fn by_pdfium(engine: &PdfEngine, bytes: &[u8]) -> Result<PdfInfo, PdfError> {
        let loaded = objects::load(bytes, &Budget::standard())?;
        Ok(PdfInfo { pages: loaded.page_count(), fields: pdfium::read_fields(engine, bytes, &Budget::standard())? })
    }

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
            let fast = inspect(&engine, bytes).unwrap();
            let slow = by_pdfium(&engine, bytes).unwrap();
            let budget = Budget::standard();
            assert!(form::fields(&objects::load(bytes, &budget).unwrap(), &budget).unwrap().is_some(), "document {i} was read by `form`");
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
                if let (Ok(fast), Ok(slow)) = (inspect(&engine, &bytes), by_pdfium(&engine, &bytes)) {
                    compared += 1;
                    if fast != slow {
                        let only_fast: Vec<_> = fast.fields.iter().filter(|f| !slow.fields.contains(f)).collect();
                        let only_slow: Vec<_> = slow.fields.iter().filter(|f| !fast.fields.contains(f)).collect();
                        diverged.push(format!(
                            "at {at} ({} vs {} fields): {only_fast:?}\n   vs {only_slow:?}",
                            fast.fields.len(),
                            slow.fields.len()
                        ));
                    }
                }
            }
        }
        assert!(compared > 100, "{compared}");
        assert!(diverged.is_empty(), "{} of {compared} diverge:\n{}", diverged.len(), diverged.join("\n"));
    }
}
