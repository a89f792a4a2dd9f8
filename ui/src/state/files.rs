//! The Files screen as plain data: the viewer's page and zoom, the form editor's draft and
//! the values it sends, and the labels the list shows.

use std::collections::BTreeMap;

use hearth_protocol::files::{FileSource, FileView, RENDER_SCALE_RANGE};
use hearth_protocol::pdf::{FieldKind, FieldValue, FieldValues, PdfField};

/// The zoom levels the viewer steps through, all within [`RENDER_SCALE_RANGE`].
pub const ZOOM_STEPS: [f32; 9] = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0];

/// Where the viewer starts: 1.0 (72 dpi) fits a page beside the file list in the default window.
pub const DEFAULT_ZOOM: f32 = 1.0;

// Half the smallest gap between steps: a scale this close to a step is that step.
const ZOOM_EPSILON: f32 = 0.01;

/// The next zoom step above `scale`, at most the largest.
pub fn zoom_in(scale: f32) -> f32 {
    ZOOM_STEPS.into_iter().find(|&step| step > scale + ZOOM_EPSILON).unwrap_or(RENDER_SCALE_RANGE.1)
}

/// The next zoom step below `scale`, at least the smallest.
pub fn zoom_out(scale: f32) -> f32 {
    ZOOM_STEPS.into_iter().rev().find(|&step| step < scale - ZOOM_EPSILON).unwrap_or(RENDER_SCALE_RANGE.0)
}

/// Whether a larger zoom is available.
pub fn can_zoom_in(scale: f32) -> bool {
    scale < RENDER_SCALE_RANGE.1 - ZOOM_EPSILON
}

/// Whether a smaller zoom is available.
pub fn can_zoom_out(scale: f32) -> bool {
    scale > RENDER_SCALE_RANGE.0 + ZOOM_EPSILON
}

/// "150%".
pub fn zoom_label(scale: f32) -> String {
    format!("{:.0}%", scale * 100.0)
}

/// The page after `page`, staying on the last one.
pub fn next_page(page: u16, pages: u16) -> u16 {
    page.saturating_add(1).min(pages.max(1))
}

/// The page before `page`, staying on the first one.
pub fn prev_page(page: u16) -> u16 {
    page.saturating_sub(1).max(1)
}

/// "Page 2 of 5".
pub fn page_label(page: u16, pages: u16) -> String {
    format!("Page {page} of {pages}")
}

/// Whether a rendered page can go in an `<img src>`: only a data URL holding an image.
pub fn is_image_data_url(url: &str) -> bool {
    url.starts_with("data:image/png;base64,") || url.starts_with("data:image/jpeg;base64,")
}

/// "812 bytes", "12.4 KB", "3.1 MB".
pub fn size_label(bytes: i64) -> String {
    const KB: i64 = 1024;
    #[expect(clippy::cast_precision_loss, reason = "one decimal shown; files are far below 2^52 bytes")]
    let scaled = |unit: i64| bytes as f64 / unit as f64;
    match bytes {
        ..KB => format!("{bytes} bytes"),
        KB..1_048_576 => format!("{:.1} KB", scaled(KB)),
        _ => format!("{:.1} MB", scaled(KB * KB)),
    }
}

/// "1 page", "3 pages".
pub fn pages_label(pages: u16) -> String {
    if pages == 1 { "1 page".to_owned() } else { format!("{pages} pages") }
}

/// "no form fields", "1 form field", "12 form fields".
pub fn fields_label(fields: u16) -> String {
    match fields {
        0 => "no form fields".to_owned(),
        1 => "1 form field".to_owned(),
        n => format!("{n} form fields"),
    }
}

/// Where a file came from, as the list shows it.
pub fn source_label(file: &FileView) -> String {
    match (file.source, file.parent_name.as_deref()) {
        (FileSource::MailAttachment, _) => "From a mail attachment".to_owned(),
        (FileSource::Computer, _) => "From the computer's workspace".to_owned(),
        (FileSource::Web, _) => "Downloaded by the browser".to_owned(),
        (FileSource::Disk, _) => "Imported from your disk".to_owned(),
        (FileSource::Filled, Some(parent)) => format!("Filled from {parent}"),
        (FileSource::Filled, None) => "Filled from another file".to_owned(),
    }
}

/// A source's wire spelling (its CSS/test hook).
pub const fn source_slug(source: FileSource) -> &'static str {
    match source {
        FileSource::MailAttachment => "mail_attachment",
        FileSource::Filled => "filled",
        FileSource::Computer => "computer",
        FileSource::Web => "web",
        FileSource::Disk => "disk",
    }
}

/// Puts `file` first in a newest-first list, replacing an older copy of it.
pub fn upsert_file(files: &mut Vec<FileView>, file: FileView) {
    files.retain(|held| held.id != file.id);
    files.insert(0, file);
}

/// How the editor lets the owner change a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldEditor {
    /// A text box.
    Text,
    /// A checkbox.
    Checkbox,
    /// A select of these options (radio group, combo box, list box).
    Choice(Vec<String>),
    /// Shown but not editable (push button, signature, unknown).
    ReadOnly,
}

/// The editor for `field`. A current value missing from the options is kept as an option,
/// so the select shows what the file holds rather than silently picking another.
pub fn editor_for(field: &PdfField) -> FieldEditor {
    match field.kind {
        FieldKind::Text => FieldEditor::Text,
        FieldKind::Checkbox => FieldEditor::Checkbox,
        FieldKind::Radio | FieldKind::ComboBox | FieldKind::ListBox => {
            let mut options = field.options.clone();
            if let Some(current) = field.value.as_deref().filter(|v| !v.is_empty() && !options.iter().any(|o| o == v)) {
                options.insert(0, current.to_owned());
            }
            FieldEditor::Choice(options)
        }
        FieldKind::PushButton | FieldKind::Signature | FieldKind::Unknown => FieldEditor::ReadOnly,
    }
}

/// A field kind as the owner reads it.
pub const fn field_kind_label(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Text => "text",
        FieldKind::Checkbox => "checkbox",
        FieldKind::Radio => "radio buttons",
        FieldKind::ComboBox => "drop-down",
        FieldKind::ListBox => "list",
        FieldKind::PushButton => "button, not fillable",
        FieldKind::Signature => "signature, not fillable",
        FieldKind::Unknown => "unknown kind, not fillable",
    }
}

/// A field kind's wire spelling (its CSS/test hook).
pub const fn field_kind_slug(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Text => "text",
        FieldKind::Checkbox => "checkbox",
        FieldKind::Radio => "radio",
        FieldKind::ComboBox => "combo_box",
        FieldKind::ListBox => "list_box",
        FieldKind::PushButton => "push_button",
        FieldKind::Signature => "signature",
        FieldKind::Unknown => "unknown",
    }
}

/// A checkbox's reported value as a state ("true"/"false"; PDF "Yes"/"On" too).
pub fn is_checked(value: Option<&str>) -> bool {
    value.is_some_and(|v| ["true", "yes", "on", "1"].iter().any(|on| v.trim().eq_ignore_ascii_case(on)))
}

/// The form editor's values: what the file holds and what the owner typed.
///
/// Only fields the owner changed are sent. The copy starts from the original, so unchanged
/// fields keep their values anyway, and resending them would rewrite fields the owner never
/// touched (a checkbox's export value, a choice's spelling) and could trip validation on
/// values the backend reports but would not accept back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormDraft {
    original: BTreeMap<String, FieldValue>,
    current: BTreeMap<String, FieldValue>,
}

impl FormDraft {
    /// The fillable fields with their current values.
    pub fn from_fields(fields: &[PdfField]) -> Self {
        let original: BTreeMap<_, _> = fields
            .iter()
            .filter(|field| field.kind.is_fillable())
            .map(|field| {
                let value = match field.kind {
                    FieldKind::Checkbox => FieldValue::Checked(is_checked(field.value.as_deref())),
                    _ => FieldValue::Text(field.value.clone().unwrap_or_default()),
                };
                (field.name.clone(), value)
            })
            .collect();
        Self { current: original.clone(), original }
    }

    /// A text or choice field's value ("" for a checkbox or an unknown name).
    pub fn text(&self, name: &str) -> String {
        match self.current.get(name) {
            Some(FieldValue::Text(text)) => text.clone(),
            _ => String::new(),
        }
    }

    /// A checkbox's state (false for anything else).
    pub fn checked(&self, name: &str) -> bool {
        matches!(self.current.get(name), Some(FieldValue::Checked(true)))
    }

    /// Sets a text or choice field; ignored for a checkbox or a name the form lacks.
    pub fn set_text(&mut self, name: &str, text: String) {
        if let Some(value @ FieldValue::Text(_)) = self.current.get_mut(name) {
            *value = FieldValue::Text(text);
        }
    }

    /// Sets a checkbox; ignored for any other field.
    pub fn set_checked(&mut self, name: &str, checked: bool) {
        if let Some(value @ FieldValue::Checked(_)) = self.current.get_mut(name) {
            *value = FieldValue::Checked(checked);
        }
    }

    /// What `file_fill` gets: the fields whose value differs from the file's.
    pub fn changed_values(&self) -> FieldValues {
        self.current
            .iter()
            .filter(|(name, value)| self.original.get(*name) != Some(value))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }

    /// Whether there is anything to fill.
    pub fn has_changes(&self) -> bool {
        self.current != self.original
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
