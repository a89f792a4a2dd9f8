#![allow(clippy::unwrap_used)]

use hearth_protocol::ids::FileId;
use pretty_assertions::assert_eq;

use super::*;

fn field(name: &str, kind: FieldKind, value: Option<&str>, options: &[&str]) -> PdfField {
    PdfField {
        name: name.into(),
        kind,
        page: 1,
        value: value.map(str::to_owned),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
    }
}

fn file(id: &str, source: FileSource, parent_name: Option<&str>) -> FileView {
    FileView {
        id: FileId::parse(id).unwrap(),
        name: format!("{id}.pdf"),
        size: 2048,
        pages: 2,
        fields: 3,
        source,
        parent_id: parent_name.map(|_| FileId::parse("parent").unwrap()),
        parent_name: parent_name.map(str::to_owned),
        sha256: "0".repeat(64),
        created_at: 1,
    }
}

fn form() -> Vec<PdfField> {
    vec![
        field("name", FieldKind::Text, Some("Ada"), &[]),
        field("notes", FieldKind::Text, None, &[]),
        field("consent", FieldKind::Checkbox, Some("false"), &[]),
        field("size", FieldKind::ComboBox, Some("M"), &["S", "M", "L"]),
        field("trip", FieldKind::Radio, None, &["yes", "no"]),
        field("submit", FieldKind::PushButton, None, &[]),
        field("signature", FieldKind::Signature, None, &[]),
    ]
}

#[test]
fn zoom_steps_stay_within_the_render_range() {
    assert_eq!(zoom_in(1.0), 1.25);
    assert_eq!(zoom_in(1.1), 1.25, "an in-between scale goes to the next step");
    assert_eq!(zoom_in(3.0), 4.0);
    assert_eq!(zoom_in(4.0), 4.0);
    assert_eq!(zoom_out(1.0), 0.75);
    assert_eq!(zoom_out(0.5), 0.25);
    assert_eq!(zoom_out(0.25), 0.25);
    assert!(!can_zoom_in(4.0) && can_zoom_in(3.0));
    assert!(!can_zoom_out(0.25) && can_zoom_out(0.5));
    let (lo, hi) = RENDER_SCALE_RANGE;
    assert!(ZOOM_STEPS.iter().all(|&s| (lo..=hi).contains(&s)));
    assert!(ZOOM_STEPS.contains(&DEFAULT_ZOOM));
    assert_eq!(zoom_label(1.5), "150%");
    assert_eq!(zoom_label(0.25), "25%");
}

#[test]
fn pages_stay_between_the_first_and_the_last() {
    assert_eq!(next_page(1, 3), 2);
    assert_eq!(next_page(3, 3), 3);
    assert_eq!(next_page(1, 0), 1, "an empty document still has page 1 as its cursor");
    assert_eq!(prev_page(2), 1);
    assert_eq!(prev_page(1), 1);
    assert_eq!(next_page(u16::MAX, u16::MAX), u16::MAX);
    assert_eq!(page_label(2, 5), "Page 2 of 5");
}

#[test]
fn only_image_data_urls_reach_an_img() {
    assert!(is_image_data_url("data:image/png;base64,iVBOR"));
    assert!(!is_image_data_url("javascript:alert(1)"));
    assert!(!is_image_data_url("https://example.org/page.png"));
    assert!(!is_image_data_url("data:text/html;base64,PGgxPg=="));
}

#[test]
fn labels_read_naturally() {
    assert_eq!(size_label(812), "812 bytes");
    assert_eq!(size_label(12_700), "12.4 KB");
    assert_eq!(size_label(3_250_000), "3.1 MB");
    assert_eq!(size_label(-1), "-1 bytes", "a nonsense size is shown, not hidden");
    assert_eq!(pages_label(1), "1 page");
    assert_eq!(pages_label(4), "4 pages");
    assert_eq!(fields_label(0), "no form fields");
    assert_eq!(fields_label(1), "1 form field");
    assert_eq!(fields_label(12), "12 form fields");
}

#[test]
fn a_filled_file_names_its_parent() {
    assert_eq!(source_label(&file("f", FileSource::MailAttachment, None)), "From a mail attachment");
    assert_eq!(source_label(&file("f", FileSource::Filled, Some("form.pdf"))), "Filled from form.pdf");
    assert_eq!(source_label(&file("f", FileSource::Filled, None)), "Filled from another file");
    assert_eq!(source_label(&file("f", FileSource::Computer, None)), "From the computer's workspace");
    assert_eq!(source_label(&file("f", FileSource::Web, None)), "Downloaded by the browser");
    assert_eq!(source_label(&file("f", FileSource::Disk, None)), "Imported from your disk");
    for source in [FileSource::MailAttachment, FileSource::Filled, FileSource::Computer, FileSource::Web, FileSource::Disk] {
        assert_eq!(serde_json::to_value(source).unwrap(), source_slug(source), "the hook is the wire spelling");
    }
}

#[test]
fn a_new_file_goes_first_and_replaces_its_older_copy() {
    let mut files = vec![file("a", FileSource::MailAttachment, None), file("b", FileSource::MailAttachment, None)];
    upsert_file(&mut files, file("c", FileSource::Filled, Some("a.pdf")));
    upsert_file(&mut files, file("b", FileSource::MailAttachment, None));
    let ids: Vec<_> = files.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["b", "c", "a"]);
}

#[test]
fn each_kind_gets_its_editor() {
    let editors: Vec<_> = form().iter().map(editor_for).collect();
    assert_eq!(
        editors,
        [
            FieldEditor::Text,
            FieldEditor::Text,
            FieldEditor::Checkbox,
            FieldEditor::Choice(vec!["S".into(), "M".into(), "L".into()]),
            FieldEditor::Choice(vec!["yes".into(), "no".into()]),
            FieldEditor::ReadOnly,
            FieldEditor::ReadOnly,
        ]
    );
    let odd = field("size", FieldKind::ListBox, Some("XL"), &["S", "M"]);
    assert_eq!(editor_for(&odd), FieldEditor::Choice(vec!["XL".into(), "S".into(), "M".into()]), "the held value stays visible");
}

#[test]
fn checkbox_values_read_as_states() {
    for on in ["true", "True", "yes", "On", "1"] {
        assert!(is_checked(Some(on)), "{on}");
    }
    for off in ["false", "Off", "", "maybe"] {
        assert!(!is_checked(Some(off)), "{off}");
    }
    assert!(!is_checked(None));
}

#[test]
fn the_draft_starts_with_the_files_values_and_sends_nothing() {
    let draft = FormDraft::from_fields(&form());
    assert_eq!(draft.text("name"), "Ada");
    assert_eq!(draft.text("notes"), "");
    assert!(!draft.checked("consent"));
    assert_eq!(draft.text("size"), "M");
    assert!(!draft.has_changes());
    assert!(draft.changed_values().is_empty());
}

#[test]
fn only_changed_fields_are_sent_checkboxes_as_bools() {
    let mut draft = FormDraft::from_fields(&form());
    draft.set_text("notes", "Peanut allergy".into());
    draft.set_checked("consent", true);
    draft.set_text("trip", "yes".into());
    draft.set_text("name", "Ada".into()); // typed over with the same value: unchanged
    let expected: FieldValues = [
        ("consent".to_owned(), FieldValue::Checked(true)),
        ("notes".to_owned(), FieldValue::Text("Peanut allergy".into())),
        ("trip".to_owned(), FieldValue::Text("yes".into())),
    ]
    .into_iter()
    .collect();
    assert_eq!(draft.changed_values(), expected);
    assert!(draft.has_changes());
    assert_eq!(serde_json::to_string(&draft.changed_values()).unwrap(), r#"{"consent":true,"notes":"Peanut allergy","trip":"yes"}"#);
}

#[test]
fn clearing_a_field_is_a_change_and_undoing_an_edit_is_not() {
    let mut draft = FormDraft::from_fields(&form());
    draft.set_text("name", String::new());
    assert_eq!(draft.changed_values().get("name"), Some(&FieldValue::Text(String::new())));
    draft.set_text("name", "Ada".into());
    draft.set_checked("consent", true);
    draft.set_checked("consent", false);
    assert!(!draft.has_changes());
}

#[test]
fn kinds_cannot_be_mixed_and_unfillable_fields_are_never_sent() {
    let mut draft = FormDraft::from_fields(&form());
    draft.set_checked("name", true);
    draft.set_text("consent", "true".into());
    draft.set_text("submit", "click".into());
    draft.set_text("signature", "Ada".into());
    draft.set_text("no-such-field", "x".into());
    assert!(draft.changed_values().is_empty());
}

#[test]
fn kind_hooks_are_the_wire_spelling_and_unfillable_kinds_say_so() {
    let kinds = [
        FieldKind::Text,
        FieldKind::Checkbox,
        FieldKind::Radio,
        FieldKind::ComboBox,
        FieldKind::ListBox,
        FieldKind::PushButton,
        FieldKind::Signature,
        FieldKind::Unknown,
    ];
    for kind in kinds {
        assert_eq!(serde_json::to_value(kind).unwrap(), field_kind_slug(kind));
        assert_eq!(field_kind_label(kind).contains("not fillable"), !kind.is_fillable(), "{kind:?}");
        assert_eq!(editor_for(&field("f", kind, None, &[])) == FieldEditor::ReadOnly, !kind.is_fillable(), "{kind:?}");
    }
}
