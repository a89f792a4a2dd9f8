//! Filling a form by writing its objects, as pdf-lib does, instead of through PDFium's
//! form-fill module (whose page loads, font maps and full save cost several times more; the
//! `pdf_inspect` bench prints both).
//!
//! 1. The fields are read by `form` from the loaded document.
//! 2. The values are checked by `values::plan`, the same rules PDFium's path applies, before
//!    anything is written.
//! 3. Each field gets its value: text as a PDF text string (PDFDocEncoding when every
//!    character has a code there, else UTF-16BE), a checkbox or radio button its on state
//!    (or /Off) as /V and each widget's /AS (their existing on and off appearances are
//!    kept), a combo or list box its option's export value as /V (and /I). Text, combo and
//!    list widgets get a new normal appearance (`appearance`). With /NeedAppearances set, or
//!    where a text or choice widget has no appearance, the other fields get one too.
//! 4. Active content is removed (`active_content`), only objects reachable from the trailer
//!    are kept, and lopdf writes one revision with a classic cross-reference table: nothing of
//!    the old file's revisions, object streams or removed content survives.
//!
//! Whatever this module cannot do faithfully is `Unsupported` (with a reason for the logs):
//! `fill` then leaves the whole document to PDFium's form-fill module. That includes values
//! PDFium would refuse (a line break in a one-line field, text past /MaxLen), so the refusal
//! comes from the same place as before.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

use super::active_content;
use super::appearance::{self, Content, Font, Unsupported};
use super::budget::Budget;
use super::form::{self, FieldRead, FormRead};
use super::objects::{self, Loaded, get, get_dict, resolve, resolve_dict};
use super::text::{string_bytes, text_string};
use super::values::{Spec, Step, plan};
use super::{FieldKind, FieldValues, PdfError};

/// What the form writer made of a request.
pub(super) enum Outcome {
    /// The filled document (still to be verified by the caller).
    Filled(Vec<u8>),
    /// A value the form refuses (the same error PDFium's path gives), or the budget ran out.
    Refused(PdfError),
    /// Something this path does not do faithfully; PDFium's form-fill should.
    Unsupported(Unsupported),
}

// Field flags (/Ff), PDF 32000-1 tables 226 and 228.
const MULTILINE: i64 = 1 << 12;
const PASSWORD: i64 = 1 << 13;
const FILE_SELECT: i64 = 1 << 20;
const DO_NOT_SCROLL: i64 = 1 << 23;
const COMB: i64 = 1 << 24;
const RICH_TEXT: i64 = 1 << 25;
const RADIOS_IN_UNISON: i64 = 1 << 25;

/// Fills `values` into the loaded document.
pub(super) fn fill(mut loaded: Loaded, values: &FieldValues, budget: &Budget) -> Outcome {
    let form = match form::read(&loaded, budget) {
        Ok(Some(form)) => form,
        Ok(None) => return Outcome::Unsupported("a form this reader is not sure of"),
        Err(err) => return Outcome::Refused(err),
    };
    let specs: Vec<Spec<'_>> = form.fields.iter().map(spec).collect();
    let steps = match plan(&specs, values) {
        Ok(steps) => steps,
        Err(err) => return Outcome::Refused(err),
    };
    let mut edits = Edits::new(&loaded.doc);
    if let Err(reason) = edit(&loaded.doc, &form, &steps, &mut edits) {
        return Outcome::Unsupported(reason);
    }
    let doc = &mut loaded.doc;
    if let Err(reason) = edits.apply(doc) {
        return Outcome::Unsupported(reason);
    }
    match finish(doc, budget) {
        Ok(Ok(bytes)) => Outcome::Filled(bytes),
        Ok(Err(reason)) => Outcome::Unsupported(reason),
        Err(err) => Outcome::Refused(err),
    }
}

/// Removes active content and everything unreachable, then writes the file.
fn finish(doc: &mut Document, budget: &Budget) -> Result<Result<Vec<u8>, Unsupported>, PdfError> {
    active_content::strip(doc, budget)?;
    match active_content::keep_reachable(doc, budget)? {
        Ok(()) => {}
        Err(reason) => return Ok(Err(reason)),
    }
    if doc.objects.keys().next_back().is_some_and(|&(n, _)| n > objects::MAX_OBJECT) {
        return Ok(Err("object numbers past PDF's limit"));
    }
    Ok(Ok(objects::save(doc)?))
}

fn spec(field: &FieldRead) -> Spec<'_> {
    Spec {
        name: &field.info.name,
        kind: field.info.kind,
        read_only: field.flags & 1 != 0,
        options: &field.info.options,
        exports: field.exports.iter().map(Option::as_deref).collect(),
    }
}

/// Changes to the document, gathered while reading it, applied at once.
struct Edits {
    /// Entries set in existing dictionaries.
    patches: Vec<(ObjectId, &'static [u8], Object)>,
    /// New objects, numbered from the document's highest number up.
    added: Vec<(ObjectId, Object)>,
    next: u32,
}

impl Edits {
    fn new(doc: &Document) -> Self {
        let highest = doc.objects.keys().next_back().map_or(0, |&(n, _)| n);
        Self { patches: Vec::new(), added: Vec::new(), next: highest.max(doc.max_id).saturating_add(1) }
    }

    fn set(&mut self, object: ObjectId, key: &'static [u8], value: Object) {
        self.patches.retain(|(id, k, _)| !(*id == object && *k == key));
        self.patches.push((object, key, value));
    }

    fn add(&mut self, object: Object) -> ObjectId {
        let id = (self.next, 0);
        self.next = self.next.saturating_add(1);
        self.added.push((id, object));
        id
    }

    fn apply(self, doc: &mut Document) -> Result<(), Unsupported> {
        for (id, key, value) in self.patches {
            let dict = doc.get_dictionary_mut(id).map_err(|_| "a field or widget that is not a dictionary")?;
            dict.set(key, value);
        }
        for (id, object) in self.added {
            doc.objects.insert(id, object);
            doc.max_id = doc.max_id.max(id.0);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Values and appearances

fn edit<'d>(doc: &'d Document, form: &'d FormRead, steps: &[(usize, Step<'_>)], edits: &mut Edits) -> Result<(), Unsupported> {
    let mut fonts = Fonts::new(doc, &form.acro_form);
    let mut done = vec![false; form.fields.len()];
    for (index, step) in steps {
        let field = form.fields.get(*index).ok_or("a field the plan does not know")?;
        done[*index] = true;
        match (field.info.kind, step) {
            (FieldKind::Text, Step::Text(text)) => {
                check_text(field, text)?;
                set_value(edits, field, text_string(text));
                variable_text(doc, form, field, &mut fonts, edits, Shown::Text(text))?;
            }
            (FieldKind::Checkbox, Step::Check(on)) => checkbox(doc, field, *on, edits)?,
            (FieldKind::Radio, Step::Pick(widget)) => radio(doc, field, *widget, edits)?,
            (FieldKind::ComboBox | FieldKind::ListBox, Step::Pick(option)) => {
                let pairs = form::choice_options(doc, &field.inherited).ok_or("unreadable options")?;
                if pairs.len() != field.info.options.len() {
                    return Err("options this reader counts differently");
                }
                let (export, _) = pairs.get(*option).ok_or("an option out of range")?;
                set_value(edits, field, text_string(export));
                if field.info.kind == FieldKind::ListBox || field.inherited.indices.is_some() {
                    let index = i64::try_from(*option).map_err(|_| "an option out of range")?;
                    for &node in &field.nodes {
                        edits.set(node, b"I", Object::Array(vec![Object::Integer(index)]));
                    }
                }
                variable_text(doc, form, field, &mut fonts, edits, Shown::Option(*option))?;
            }
            _ => return Err("a value of a kind the form writer does not write"),
        }
    }
    // Fields not asked for keep their appearances, unless a viewer was asked to make them
    // (/NeedAppearances, removed from the output) or a text or choice widget has none.
    let need_all = get(doc, &form.acro_form, b"NeedAppearances").is_some_and(|v| matches!(v, Object::Boolean(true)));
    for (index, field) in form.fields.iter().enumerate() {
        if done[index] {
            continue;
        }
        let missing = field.widgets.iter().any(|&w| !form::has_normal_appearance(doc, w));
        match field.info.kind {
            FieldKind::Text | FieldKind::ComboBox | FieldKind::ListBox if need_all || missing => {
                let shown = match field.info.kind {
                    FieldKind::Text => {
                        if field.flags & (PASSWORD | FILE_SELECT | RICH_TEXT) != 0 {
                            return Err("a password, file-select or rich-text field to redraw");
                        }
                        Shown::Text(field.info.value.as_deref().unwrap_or(""))
                    }
                    _ => match &field.info.value {
                        Some(value) => match field.info.options.iter().position(|o| o == value) {
                            Some(option) => Shown::Option(option),
                            None => Shown::Text(value),
                        },
                        None => Shown::Nothing,
                    },
                };
                variable_text(doc, form, field, &mut fonts, edits, shown)?;
            }
            FieldKind::Checkbox | FieldKind::Radio if missing => {
                return Err("a checkbox or radio button without appearances");
            }
            _ => {}
        }
    }
    Ok(())
}

/// Values PDFium's form filler would not keep, and kinds of text field this path does not draw.
fn check_text(field: &FieldRead, text: &str) -> Result<(), Unsupported> {
    if field.flags & (PASSWORD | FILE_SELECT | RICH_TEXT) != 0 {
        return Err("a password, file-select or rich-text field");
    }
    if field.flags & MULTILINE == 0 && text.contains(['\r', '\n']) {
        return Err("a line break in a one-line field");
    }
    // PDFium's editor stops at the edge of a field that does not scroll.
    if field.flags & DO_NOT_SCROLL != 0 {
        return Err("a field that does not scroll");
    }
    if field.inherited.max_len.as_ref().is_some_and(|m| !matches!(m, Object::Integer(_))) {
        return Err("an indirect /MaxLen");
    }
    if text.chars().any(|c| c.is_control() && c != '\r' && c != '\n') {
        return Err("a control character");
    }
    if let Some(max) = max_len(field)
        && text.chars().count() > max
    {
        return Err("text longer than /MaxLen");
    }
    Ok(())
}

fn max_len(field: &FieldRead) -> Option<usize> {
    match field.inherited.max_len {
        Some(Object::Integer(m)) if m > 0 => usize::try_from(m).ok(),
        _ => None,
    }
}

fn set_value(edits: &mut Edits, field: &FieldRead, value: Object) {
    for &node in &field.nodes {
        edits.set(node, b"V", value.clone());
    }
}

fn widget_dict(doc: &Document, widget: ObjectId) -> Result<&Dictionary, Unsupported> {
    doc.get_dictionary(widget).map_err(|_| "an unreadable widget")
}

fn checkbox(doc: &Document, field: &FieldRead, on: bool, edits: &mut Edits) -> Result<(), Unsupported> {
    let mut states = Vec::with_capacity(field.widgets.len());
    for &widget in &field.widgets {
        let dict = widget_dict(doc, widget)?;
        states.push(form::on_state(doc, dict).ok_or("a checkbox without an on appearance")?.to_vec());
    }
    let first = states.first().ok_or("a checkbox without widgets")?.clone();
    if states.iter().any(|s| *s != first) {
        return Err("a checkbox whose widgets have different on states");
    }
    let value = Object::Name(if on { first } else { b"Off".to_vec() });
    for &widget in &field.widgets {
        edits.set(widget, b"AS", value.clone());
    }
    set_value(edits, field, value);
    Ok(())
}

fn radio(doc: &Document, field: &FieldRead, chosen: usize, edits: &mut Edits) -> Result<(), Unsupported> {
    let chosen = *field.page_widgets.get(chosen).ok_or("a radio button out of range")?;
    let state_of = |widget: ObjectId| -> Result<Vec<u8>, Unsupported> {
        let dict = widget_dict(doc, widget)?;
        Ok(form::on_state(doc, dict).ok_or("a radio button without an on appearance")?.to_vec())
    };
    let on_state = state_of(chosen)?;
    let unison = field.flags & RADIOS_IN_UNISON != 0;
    for &widget in &field.widgets {
        let state = state_of(widget)?;
        let on = state == on_state;
        if on && widget != chosen && !unison {
            return Err("radio buttons sharing an on state");
        }
        edits.set(widget, b"AS", Object::Name(if on { state } else { b"Off".to_vec() }));
    }
    set_value(edits, field, Object::Name(on_state));
    Ok(())
}

/// What a text or choice widget shows.
enum Shown<'t> {
    Text(&'t str),
    /// A choice field's option (index into its options).
    Option(usize),
    Nothing,
}

/// New normal appearances for every widget of a text, combo-box or list-box field.
fn variable_text<'d>(
    doc: &'d Document,
    form: &'d FormRead,
    field: &FieldRead,
    fonts: &mut Fonts<'d>,
    edits: &mut Edits,
    shown: Shown<'_>,
) -> Result<(), Unsupported> {
    let flags = field.flags;
    for &widget in &field.widgets {
        let dict = widget_dict(doc, widget)?;
        let inherited = |key: &[u8], from_field: &Option<Object>| -> Option<Object> {
            dict.get(key).ok().cloned().or_else(|| from_field.clone()).or_else(|| form.acro_form.get(key).ok().cloned())
        };
        let da = inherited(b"DA", &field.inherited.da)
            .and_then(|d| resolve(doc, &d).and_then(string_bytes).map(<[u8]>::to_vec))
            .ok_or("a field without /DA")?;
        let da = appearance::parse_da(&da)?;
        let align = inherited(b"Q", &field.inherited.q)
            .and_then(|q| match resolve(doc, &q) {
                Some(Object::Integer(q)) => Some(*q),
                _ => None,
            })
            .unwrap_or(0);
        let look = appearance::look(doc, dict)?;
        let font = fonts.find(&da.font, dict, edits)?;
        let content = match (&shown, field.info.kind) {
            (Shown::Text(text), FieldKind::Text) => {
                let comb = (flags & COMB != 0 && flags & (MULTILINE | PASSWORD | FILE_SELECT) == 0).then(|| max_len(field));
                let comb = match comb {
                    Some(None) => return Err("a comb field without /MaxLen"),
                    Some(cells) => cells,
                    None => None,
                };
                Content::Text { text, multiline: flags & MULTILINE != 0, comb, align }
            }
            (Shown::Text(text), _) => Content::Text { text, multiline: false, comb: None, align },
            (Shown::Option(option), FieldKind::ListBox) => Content::List { options: &field.info.options, selected: Some(*option) },
            (Shown::Nothing, FieldKind::ListBox) => Content::List { options: &field.info.options, selected: None },
            (Shown::Option(option), _) => {
                let label = field.info.options.get(*option).ok_or("an option out of range")?;
                Content::Text { text: label, multiline: false, comb: None, align }
            }
            (Shown::Nothing, _) => Content::Text { text: "", multiline: false, comb: None, align },
        };
        let (font_metrics, resource) = fonts.get(font);
        let data = appearance::stream(&look, &da, font_metrics, &content)?;
        let mut font_resources = Dictionary::new();
        font_resources.set(da.font.clone(), resource.clone());
        let mut resources = Dictionary::new();
        resources.set("Font", Object::Dictionary(font_resources));
        let mut xobject = Dictionary::new();
        xobject.set("Type", Object::Name(b"XObject".to_vec()));
        xobject.set("Subtype", Object::Name(b"Form".to_vec()));
        xobject.set("BBox", Object::Array(vec![0.into(), 0.into(), Object::Real(look.width as f32), Object::Real(look.height as f32)]));
        xobject.set("Resources", Object::Dictionary(resources));
        let id = edits.add(Object::Stream(Stream::new(xobject, data)));
        let mut ap = Dictionary::new();
        ap.set("N", Object::Reference(id));
        edits.set(widget, b"AP", Object::Dictionary(ap));
    }
    Ok(())
}

/// The fonts appearances use, each read once.
struct Fonts<'d> {
    doc: &'d Document,
    /// The AcroForm's /DR /Font.
    dr: Option<&'d Dictionary>,
    /// (resource value, the font).
    loaded: Vec<(Object, Font)>,
    /// The standard Helvetica object added for a /DA font no resource defines.
    helvetica: Option<usize>,
    by_value: HashMap<ObjectId, usize>,
}

impl<'d> Fonts<'d> {
    fn new(doc: &'d Document, acro_form: &'d Dictionary) -> Self {
        let dr = acro_form.get(b"DR").ok().and_then(|d| resolve_dict(doc, d)).and_then(|d| get_dict(doc, d, b"Font"));
        Self { doc, dr, loaded: Vec::new(), helvetica: None, by_value: HashMap::new() }
    }

    fn get(&self, index: usize) -> (&Font, &Object) {
        let (resource, font) = &self.loaded[index];
        (font, resource)
    }

    /// The font /DA names: from the form's /DR, else from the resources of the widget's
    /// current appearance, else (for Helv or Helvetica) standard Helvetica.
    fn find(&mut self, name: &[u8], widget: &Dictionary, edits: &mut Edits) -> Result<usize, Unsupported> {
        let doc = self.doc;
        let lookup = |fonts: &'d Dictionary| fonts.get(name).ok();
        let from_appearance = || {
            let ap = get_dict(doc, widget, b"AP")?;
            let normal = get_dict(doc, ap, b"N")?;
            let resources = get_dict(doc, normal, b"Resources")?;
            get_dict(doc, resources, b"Font")?.get(name).ok().cloned()
        };
        let value = self.dr.and_then(lookup).cloned().or_else(from_appearance);
        let Some(value) = value else {
            if let Some(index) = self.helvetica {
                return Ok(index);
            }
            if name != b"Helv" && name != b"Helvetica" {
                return Err("a /DA font found in no resources");
            }
            let mut font = Dictionary::new();
            font.set("Type", Object::Name(b"Font".to_vec()));
            font.set("Subtype", Object::Name(b"Type1".to_vec()));
            font.set("BaseFont", Object::Name(b"Helvetica".to_vec()));
            font.set("Encoding", Object::Name(b"WinAnsiEncoding".to_vec()));
            let id = edits.add(Object::Dictionary(font));
            self.loaded.push((Object::Reference(id), Font::helvetica()));
            self.helvetica = Some(self.loaded.len() - 1);
            return Ok(self.loaded.len() - 1);
        };
        if let Object::Reference(id) = value
            && let Some(&index) = self.by_value.get(&id)
        {
            return Ok(index);
        }
        let dict = resolve_dict(doc, &value).ok_or("an unreadable font")?;
        let font = Font::from_dict(doc, dict)?;
        if let Object::Reference(id) = value {
            self.by_value.insert(id, self.loaded.len());
        }
        self.loaded.push((value, font));
        Ok(self.loaded.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pdf::FieldValue;

    fn fill_bytes(bytes: &[u8], values: &FieldValues) -> Outcome {
        let budget = Budget::standard();
        fill(objects::load(bytes, &budget).unwrap(), values, &budget)
    }

    fn filled(bytes: &[u8], values: &[(&str, FieldValue)]) -> Vec<u8> {
        let values: FieldValues = values.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        match fill_bytes(bytes, &values) {
            Outcome::Filled(out) => out,
            Outcome::Refused(err) => panic!("refused: {err}"),
            Outcome::Unsupported(reason) => panic!("unsupported: {reason}"),
        }
    }

    fn count(pdf: &[u8], needle: &[u8]) -> usize {
        pdf.windows(needle.len()).filter(|w| w == &needle).count()
    }

    #[test]
    fn the_written_file_is_one_revision_that_reloads() {
        let form: &[u8] = include_bytes!("../../assets/permission-form.pdf");
        let out = filled(form, &[("participant_name", FieldValue::Text("Zoë".into()))]);
        assert_eq!(count(&out, b"startxref"), 1, "one revision");
        assert_eq!(count(&out, b"%%EOF"), 1);
        // Refilled from its own output, too.
        let again = filled(&out, &[("participant_name", FieldValue::Text("Ann".into()))]);
        assert_eq!(count(&again, b"startxref"), 1);
        // The object and cross-reference streams are not carried over.
        assert_eq!(count(&out, b"/ObjStm"), 0);
        assert_eq!(count(&out, b"/XRef"), 0);
        let scripts: &[u8] = include_bytes!("../../tests/fixtures/scripts.pdf");
        let out = filled(scripts, &[("city", FieldValue::Text("Lyon".into()))]);
        for gone in [&b"/JavaScript"[..], b"/OpenAction", b"/AA", b"/JS", b"app.alert"] {
            assert_eq!(count(&out, gone), 0, "{}", String::from_utf8_lossy(gone));
        }
    }

    #[test]
    fn values_the_form_writer_does_not_write_go_to_pdfium() {
        let choices: &[u8] = include_bytes!("../../tests/fixtures/choices.pdf");
        let values = |name: &str, text: &str| -> FieldValues { [(name.to_owned(), FieldValue::Text(text.to_owned()))].into() };
        let unsupported = |values: &FieldValues| matches!(fill_bytes(choices, values), Outcome::Unsupported(_));
        assert!(unsupported(&values("city", "two\nlines")), "a line break in a one-line field");
        assert!(unsupported(&values("city", &"x".repeat(101))), "past /MaxLen 100");
        assert!(unsupported(&values("city", "tab\there")));
        assert!(unsupported(&values("city", "学生")), "not in the font's encoding");
        assert!(matches!(fill_bytes(choices, &values("city", &"x".repeat(100))), Outcome::Filled(_)));
        // A refusal is a refusal, not a hand-over.
        assert!(matches!(fill_bytes(choices, &values("nope", "x")), Outcome::Refused(PdfError::UnknownField { .. })));
    }
}
