//! PDFium through pdfium-render: inspecting the seeded form, and clear refusals.

use std::sync::OnceLock;

use hearth_core::pdf::{FieldKind, PdfEngine, PdfError, default_library_path, inspect};
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;

/// PDFium is bound once per process.
fn engine() -> &'static PdfEngine {
    static ENGINE: OnceLock<PdfEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        PdfEngine::load(&default_library_path())
            .unwrap_or_else(|err| panic!("{err} (scripts/test.sh installs libpdfium and sets HEARTH_PDFIUM_LIB)"))
    })
}

#[test]
fn the_seeded_permission_form_has_two_pages_and_six_fields() {
    let info = inspect(engine(), PERMISSION_FORM_PDF).unwrap();
    assert_eq!(info.pages, 2);
    let mut fields: Vec<(&str, FieldKind)> = info.fields.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    fields.sort_by_key(|(name, _)| *name);
    assert_eq!(
        fields,
        [
            ("additional_notes", FieldKind::Text),
            ("emergency_contact", FieldKind::Text),
            ("emergency_phone", FieldKind::Text),
            ("guardian_name", FieldKind::Text),
            ("participant_name", FieldKind::Text),
            ("permission_granted", FieldKind::Checkbox),
        ]
    );
}

#[test]
fn refusals_say_what_is_wrong() {
    assert!(matches!(inspect(engine(), b"GIF89a not a pdf"), Err(PdfError::NotPdf)));
    let mut huge = b"%PDF-1.7\n".to_vec();
    huge.resize(10 * 1024 * 1024 + 1, b' ');
    assert!(matches!(inspect(engine(), &huge), Err(PdfError::TooLarge { .. })));
    let truncated = &PERMISSION_FORM_PDF[..PERMISSION_FORM_PDF.len() / 5];
    let err = inspect(engine(), truncated).unwrap_err();
    assert!(matches!(err, PdfError::Damaged { .. }), "{err:?}");
    assert!(err.to_string().contains("send it again"));
}

#[test]
fn a_missing_library_names_the_path() {
    let err = PdfEngine::load(std::path::Path::new("/nonexistent/libpdfium.so")).unwrap_err();
    assert!(matches!(err, PdfError::LibraryMissing { .. }));
    assert!(err.to_string().contains("/nonexistent/libpdfium.so"), "{err}");
}
