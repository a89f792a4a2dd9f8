//! Filling a form by writing its objects directly, as pdf-lib does, without PDFium's
//! form-fill module (whose page loads, font maps and full save cost about 1 ms before any
//! field is touched).
//!
//! 1. The document's objects are read through its cross-reference data (`fast::Reader`:
//!    tables, streams, object streams, incremental updates) and its fields through the
//!    AcroForm tree (`fast::read_form`, the reading `inspect` uses).
//! 2. The values are checked by the same `fill::plan` as PDFium's path, so refusals are
//!    identical, before anything is written.
//! 3. Each field gets its value: text as a PDF text string (PDFDocEncoding when every
//!    character has a code there, else UTF-16BE), a checkbox or radio button its on state
//!    (or /Off) as /V and each widget's /AS (their existing on and off appearances are
//!    kept), a combo or list box its option's export value as /V (and /I). Text, combo and
//!    list widgets get a new normal appearance (`appearance`). With /NeedAppearances set, or
//!    where a text or choice widget has no appearance, the other fields get one too.
//! 4. A new file is written: every object reachable from the trailer, uncompressed, with
//!    active content (every action but GoTo, scripts, embedded files, media annotations)
//!    removed exactly as `sanitize` removes it from PDFium's output, and one classic
//!    cross-reference table. Nothing of the old file's revisions survives, so neither does
//!    their active content.
//!
//! Whatever this module cannot do faithfully is `Unsupported` (with a reason for the logs):
//! `fill` then leaves the whole document to PDFium's form-fill module. That includes
//! values PDFium would refuse (a line break in a one-line field, text past /MaxLen), so
//! the refusal comes from the same place as before.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::appearance::{self, Content, Font, Unsupported};
use super::fast::{self, FieldRead, FormRead, Reader, pdf_doc_char, string_bytes};
use super::fill::{Spec, Step, plan};
use super::sanitize::{Dict, Obj, Policy, clean_object, decode_name, get, name_is, refs, write_obj};
use super::{FieldKind, FieldValues, PdfError};

/// What the direct path made of a request.
pub(super) enum Outcome {
    /// The filled document (still to be verified by the caller).
    Filled(Vec<u8>),
    /// A value the form refuses (the same error PDFium's path gives).
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

/// The largest object number PDF allows.
const MAX_OBJECT: u32 = 8_388_607;

/// Fills `values` into `bytes` (already opened and checked by PDFium: `pages` pages).
pub(super) fn fill(bytes: &[u8], pages: u16, values: &FieldValues) -> Outcome {
    let Some(reader) = Reader::new(bytes) else {
        return Outcome::Unsupported("cross-reference data this reader does not follow");
    };
    let Some(form) = fast::read_form(&reader, usize::from(pages)) else {
        return Outcome::Unsupported("a form this reader is not sure of");
    };
    let specs: Vec<Spec<'_>> = form.fields.iter().map(spec).collect();
    let steps = match plan(&specs, values) {
        Ok(steps) => steps,
        Err(err) => return Outcome::Refused(err),
    };
    let mut edits = Edits::new(&reader);
    if let Err(reason) = edit(&reader, &form, &steps, &mut edits) {
        return Outcome::Unsupported(reason);
    }
    match write(&reader, &edits) {
        Ok(out) => Outcome::Filled(out),
        Err(reason) => Outcome::Unsupported(reason),
    }
}

fn spec<'f>(field: &'f FieldRead<'_>) -> Spec<'f> {
    Spec {
        name: &field.info.name,
        kind: field.info.kind,
        read_only: field.flags & 1 != 0,
        options: &field.info.options,
        exports: field.exports.iter().map(Option::as_deref).collect(),
    }
}

/// An entry set in a dictionary: key, serialized value, the objects the value references.
type Set = (&'static [u8], Vec<u8>, Vec<u32>);

/// Changes to the document: entries set in existing dictionaries, and new objects.
struct Edits {
    patches: HashMap<u32, Vec<Set>>,
    /// New object → (serialized object, objects it references).
    added: BTreeMap<u32, (Vec<u8>, Vec<u32>)>,
    next: u32,
}

impl Edits {
    fn new(reader: &Reader<'_>) -> Self {
        let highest = reader.numbers().last().copied().unwrap_or(0);
        let size = reader
            .trailer()
            .and_then(|t| get(t, b"Size"))
            .and_then(fast::raw)
            .and_then(fast::parse_usize)
            .and_then(|s| u32::try_from(s).ok())
            .unwrap_or(0);
        Self { patches: HashMap::new(), added: BTreeMap::new(), next: (highest + 1).max(size).max(1) }
    }

    fn set(&mut self, object: u32, key: &'static [u8], value: Vec<u8>, references: Vec<u32>) {
        let patch = self.patches.entry(object).or_default();
        match patch.iter_mut().find(|(k, _, _)| *k == key) {
            Some(entry) => *entry = (key, value, references),
            None => patch.push((key, value, references)),
        }
    }

    fn add(&mut self, object: Vec<u8>, references: Vec<u32>) -> u32 {
        let number = self.next;
        self.next += 1;
        self.added.insert(number, (object, references));
        number
    }
}

// ---------------------------------------------------------------------------------------------
// Values and appearances

fn edit<'r>(
    reader: &'r Reader<'r>,
    form: &FormRead<'r>,
    steps: &[(usize, Step<'_>)],
    edits: &mut Edits,
) -> Result<(), Unsupported> {
    let mut fonts = Fonts::new(reader, &form.acro_form);
    let mut done = vec![false; form.fields.len()];
    for (index, step) in steps {
        let field = form.fields.get(*index).ok_or("a field the plan does not know")?;
        done[*index] = true;
        match (field.info.kind, step) {
            (FieldKind::Text, Step::Text(text)) => {
                check_text(field, text)?;
                set_value(edits, field, text_string(text));
                variable_text(reader, form, field, &mut fonts, edits, Shown::Text(text))?;
            }
            (FieldKind::Checkbox, Step::Check(on)) => checkbox(reader, field, *on, edits)?,
            (FieldKind::Radio, Step::Pick(widget)) => radio(reader, field, *widget, edits)?,
            (FieldKind::ComboBox | FieldKind::ListBox, Step::Pick(option)) => {
                let pairs = reader.choice_options(&field.inherited).ok_or("unreadable options")?;
                if pairs.len() != field.info.options.len() {
                    return Err("options this reader counts differently");
                }
                let (export, _) = pairs.get(*option).ok_or("an option out of range")?;
                set_value(edits, field, text_string(export));
                if field.info.kind == FieldKind::ListBox || field.inherited.indices.is_some() {
                    for &node in &field.nodes {
                        edits.set(node, b"I", format!("[{option}]").into_bytes(), Vec::new());
                    }
                }
                variable_text(reader, form, field, &mut fonts, edits, Shown::Option(*option))?;
            }
            _ => return Err("a value of a kind the direct path does not write"),
        }
    }
    // Fields not asked for keep their appearances, unless a viewer was asked to make them
    // (/NeedAppearances, removed from the output) or a text or choice widget has none.
    let need_all = get(&form.acro_form, b"NeedAppearances")
        .and_then(|v| reader.resolve(v))
        .is_some_and(|v| matches!(v, Obj::Raw(b"true")));
    for (index, field) in form.fields.iter().enumerate() {
        if done[index] {
            continue;
        }
        let missing = field.widgets.iter().any(|&w| !has_normal_appearance(reader, w));
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
                variable_text(reader, form, field, &mut fonts, edits, shown)?;
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
fn check_text(field: &FieldRead<'_>, text: &str) -> Result<(), Unsupported> {
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
    if field.inherited.max_len.as_ref().is_some_and(|m| fast::raw(m).is_none()) {
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

fn max_len(field: &FieldRead<'_>) -> Option<usize> {
    field.inherited.max_len.as_ref().and_then(fast::raw).and_then(fast::parse_usize).filter(|&m| m > 0)
}

fn set_value(edits: &mut Edits, field: &FieldRead<'_>, value: Vec<u8>) {
    for &node in &field.nodes {
        edits.set(node, b"V", value.clone(), Vec::new());
    }
}

/// `text` as a PDF text string: PDFDocEncoding when it can be, else UTF-16BE with a BOM;
/// written in hex.
pub(super) fn text_string(text: &str) -> Vec<u8> {
    let pdf_doc: Option<Vec<u8>> = text
        .chars()
        .map(|c| {
            if c == '\0' {
                return None;
            }
            if let Ok(b) = u8::try_from(u32::from(c))
                && pdf_doc_char(b) == c
            {
                return Some(b);
            }
            (0x18..=0xA0u8).find(|&b| pdf_doc_char(b) == c)
        })
        .collect();
    let bytes = match pdf_doc {
        // A PDFDocEncoded string must not begin like a byte-order mark.
        Some(bytes)
            if !bytes.starts_with(&[0xFE, 0xFF])
                && !bytes.starts_with(&[0xFF, 0xFE])
                && !bytes.starts_with(&[0xEF, 0xBB, 0xBF]) =>
        {
            bytes
        }
        _ => {
            let mut bytes = vec![0xFE, 0xFF];
            for unit in text.encode_utf16() {
                bytes.extend_from_slice(&unit.to_be_bytes());
            }
            bytes
        }
    };
    let mut out = Vec::with_capacity(bytes.len() * 2 + 2);
    out.push(b'<');
    for b in bytes {
        out.extend_from_slice(format!("{b:02X}").as_bytes());
    }
    out.push(b'>');
    out
}

fn name_token(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 1);
    out.push(b'/');
    out.extend_from_slice(raw);
    out
}

fn widget_dict<'s>(reader: &'s Reader<'_>, widget: u32) -> Result<Dict<'s>, Unsupported> {
    reader.dict(&Obj::Ref(widget, 0)).ok_or("an unreadable widget")
}

fn has_normal_appearance(reader: &Reader<'_>, widget: u32) -> bool {
    reader
        .dict(&Obj::Ref(widget, 0))
        .and_then(|w| get(&w, b"AP").and_then(|a| reader.dict(a)))
        .is_some_and(|ap| get(&ap, b"N").is_some())
}

fn checkbox(reader: &Reader<'_>, field: &FieldRead<'_>, on: bool, edits: &mut Edits) -> Result<(), Unsupported> {
    let mut states = Vec::with_capacity(field.widgets.len());
    for &widget in &field.widgets {
        let dict = widget_dict(reader, widget)?;
        states.push(reader.on_state_key(&dict).ok_or("a checkbox without an on appearance")?.to_vec());
    }
    let first = states.first().ok_or("a checkbox without widgets")?.clone();
    if states.iter().any(|s| decode_name(s) != decode_name(&first)) {
        return Err("a checkbox whose widgets have different on states");
    }
    let value = if on { name_token(&first) } else { b"/Off".to_vec() };
    for &widget in &field.widgets {
        edits.set(widget, b"AS", value.clone(), Vec::new());
    }
    set_value(edits, field, value);
    Ok(())
}

fn radio(reader: &Reader<'_>, field: &FieldRead<'_>, chosen: usize, edits: &mut Edits) -> Result<(), Unsupported> {
    let chosen = *field.page_widgets.get(chosen).ok_or("a radio button out of range")?;
    let state_of = |widget: u32| -> Result<Vec<u8>, Unsupported> {
        let dict = widget_dict(reader, widget)?;
        Ok(reader.on_state_key(&dict).ok_or("a radio button without an on appearance")?.to_vec())
    };
    let on_state = state_of(chosen)?;
    let unison = field.flags & RADIOS_IN_UNISON != 0;
    for &widget in &field.widgets {
        let state = state_of(widget)?;
        let on = decode_name(&state) == decode_name(&on_state);
        if on && widget != chosen && !unison {
            return Err("radio buttons sharing an on state");
        }
        edits.set(widget, b"AS", if on { name_token(&state) } else { b"/Off".to_vec() }, Vec::new());
    }
    set_value(edits, field, name_token(&on_state));
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
fn variable_text<'r>(
    reader: &'r Reader<'r>,
    form: &FormRead<'r>,
    field: &FieldRead<'r>,
    fonts: &mut Fonts<'r>,
    edits: &mut Edits,
    shown: Shown<'_>,
) -> Result<(), Unsupported> {
    let flags = field.flags;
    for &widget in &field.widgets {
        let dict = widget_dict(reader, widget)?;
        let inherited = |key: &[u8], from_field: &Option<Obj<'r>>| -> Option<Obj<'r>> {
            get(&dict, key).cloned().or_else(|| from_field.clone()).or_else(|| get(&form.acro_form, key).cloned())
        };
        let da = inherited(b"DA", &field.inherited.da)
            .and_then(|d| reader.resolve(&d).as_ref().and_then(string_bytes))
            .ok_or("a field without /DA")?;
        let da = appearance::parse_da(&da)?;
        let align = inherited(b"Q", &field.inherited.q)
            .and_then(|q| reader.resolve(&q))
            .as_ref()
            .and_then(fast::raw)
            .and_then(|q| std::str::from_utf8(q).ok()?.parse::<i64>().ok())
            .unwrap_or(0);
        let look = appearance::look(reader, &dict)?;
        let font = fonts.find(&da.font, &dict, edits)?;
        let content = match (&shown, field.info.kind) {
            (Shown::Text(text), FieldKind::Text) => {
                let comb =
                    (flags & COMB != 0 && flags & (MULTILINE | PASSWORD | FILE_SELECT) == 0).then(|| max_len(field));
                let comb = match comb {
                    Some(None) => return Err("a comb field without /MaxLen"),
                    Some(cells) => cells,
                    None => None,
                };
                Content::Text { text, multiline: flags & MULTILINE != 0, comb, align }
            }
            (Shown::Text(text), _) => Content::Text { text, multiline: false, comb: None, align },
            (Shown::Option(option), FieldKind::ListBox) => {
                Content::List { options: &field.info.options, selected: Some(*option) }
            }
            (Shown::Nothing, FieldKind::ListBox) => Content::List { options: &field.info.options, selected: None },
            (Shown::Option(option), _) => {
                let label = field.info.options.get(*option).ok_or("an option out of range")?;
                Content::Text { text: label, multiline: false, comb: None, align }
            }
            (Shown::Nothing, _) => Content::Text { text: "", multiline: false, comb: None, align },
        };
        let (font_metrics, resource, resource_refs) = fonts.get(font);
        let data = appearance::stream(&look, &da, font_metrics, &content)?;
        let mut object = Vec::with_capacity(data.len() + 160);
        object.extend_from_slice(
            format!(
                "<</Type/XObject/Subtype/Form/BBox[0 0 {} {}]/Resources<</Font<</",
                appearance::fmt(look.width),
                appearance::fmt(look.height)
            )
            .as_bytes(),
        );
        object.extend_from_slice(&da.font);
        object.push(b' ');
        object.extend_from_slice(resource);
        object.extend_from_slice(format!(">>>>/Length {}>>\nstream\r\n", data.len()).as_bytes());
        object.extend_from_slice(&data);
        object.extend_from_slice(b"\r\nendstream");
        let references = resource_refs.to_vec();
        let number = edits.add(object, references);
        edits.set(widget, b"AP", format!("<</N {number} 0 R>>").into_bytes(), vec![number]);
    }
    Ok(())
}

/// The fonts appearances use, each read once.
struct Fonts<'r> {
    reader: &'r Reader<'r>,
    /// The AcroForm's /DR /Font.
    dr: Option<Dict<'r>>,
    /// (resource value as serialized, the objects it references, the font).
    loaded: Vec<(Vec<u8>, Vec<u32>, Font)>,
    /// The standard Helvetica object added for a /DA font no resource defines.
    helvetica: Option<usize>,
}

impl<'r> Fonts<'r> {
    fn new(reader: &'r Reader<'r>, acro_form: &Dict<'r>) -> Self {
        let dr = get(acro_form, b"DR")
            .and_then(|d| reader.dict(d))
            .and_then(|d| get(&d, b"Font").and_then(|f| reader.dict(f)));
        Self { reader, dr, loaded: Vec::new(), helvetica: None }
    }

    fn get(&self, index: usize) -> (&Font, &[u8], &[u32]) {
        let (resource, refs, font) = &self.loaded[index];
        (font, resource, refs)
    }

    /// The font /DA names: from the form's /DR, else from the resources of the widget's
    /// current appearance, else (for Helv or Helvetica) standard Helvetica.
    fn find(&mut self, name: &[u8], widget: &Dict<'r>, edits: &mut Edits) -> Result<usize, Unsupported> {
        let reader = self.reader;
        let wanted = decode_name(name);
        let lookup = |fonts: &Dict<'r>| fonts.iter().find(|(k, _)| decode_name(k) == wanted).map(|(_, v)| v.clone());
        let from_appearance = || {
            let ap = get(widget, b"AP").and_then(|a| reader.dict(a))?;
            let normal = get(&ap, b"N").and_then(|n| reader.dict(n))?;
            let resources = get(&normal, b"Resources").and_then(|r| reader.dict(r))?;
            let fonts = get(&resources, b"Font").and_then(|f| reader.dict(f))?;
            lookup(&fonts)
        };
        let value = self.dr.as_ref().and_then(lookup).or_else(from_appearance);
        let Some(value) = value else {
            if let Some(index) = self.helvetica {
                return Ok(index);
            }
            if wanted != b"Helv" && wanted != b"Helvetica" {
                return Err("a /DA font found in no resources");
            }
            let number = edits
                .add(b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>".to_vec(), Vec::new());
            self.loaded.push((format!("{number} 0 R").into_bytes(), vec![number], Font::helvetica()));
            self.helvetica = Some(self.loaded.len() - 1);
            return Ok(self.loaded.len() - 1);
        };
        let key = serialize(&value);
        if let Some(index) = self.loaded.iter().position(|(k, _, _)| *k == key) {
            return Ok(index);
        }
        let dict = reader.dict(&value).ok_or("an unreadable font")?;
        let font = Font::from_dict(reader, &dict)?;
        self.loaded.push((key, references(&value), font));
        Ok(self.loaded.len() - 1)
    }
}

fn serialize(value: &Obj<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_obj(value, &mut out);
    out
}

fn references(value: &Obj<'_>) -> Vec<u32> {
    let mut out = Vec::new();
    let _ = refs(value, &mut out, 0);
    out
}

// ---------------------------------------------------------------------------------------------
// Writing

fn write(reader: &Reader<'_>, edits: &Edits) -> Result<Vec<u8>, Unsupported> {
    let trailer = reader.trailer().ok_or("no trailer")?;
    let mut objects: BTreeMap<u32, (u16, Obj<'_>, Option<&[u8]>)> = BTreeMap::new();
    // Every object the cross-reference data lists must parse: PDFium may have repaired a
    // file this reader reads differently, and an object left out here would be lost.
    for number in reader.numbers() {
        objects.insert(number, reader.entry(number).ok_or("an object this reader cannot parse")?);
    }
    let policy = Policy::new(objects.iter().filter(|(_, (_, _, stream))| stream.is_none()).map(|(n, (_, v, _))| (*n, v)));
    for (number, (_, value, _)) in objects.iter_mut() {
        clean_object(*number, value, &policy).map_err(|_| "objects nested too deeply")?;
    }
    // What stays: everything reachable from the trailer, through the edited dictionaries.
    let mut stack: Vec<u32> = Vec::new();
    for key in [&b"Root"[..], b"Info"] {
        if let Some(value) = get(trailer, key) {
            refs(value, &mut stack, 0).map_err(|_| "objects nested too deeply")?;
        }
    }
    let mut keep = BTreeSet::new();
    while let Some(number) = stack.pop() {
        if keep.contains(&number) {
            continue;
        }
        if let Some((_, value, _)) = objects.get(&number) {
            match (edits.patches.get(&number), value) {
                (None, _) => refs(value, &mut stack, 0).map_err(|_| "objects nested too deeply")?,
                (Some(patch), Obj::Dict(dict)) => {
                    for (key, v) in dict {
                        if !patch.iter().any(|(k, _, _)| name_is(key, k)) {
                            refs(v, &mut stack, 0).map_err(|_| "objects nested too deeply")?;
                        }
                    }
                    stack.extend(patch.iter().flat_map(|(_, _, r)| r.iter().copied()));
                }
                (Some(_), _) => return Err("a field or widget that is not a dictionary"),
            }
        } else if let Some((_, references)) = edits.added.get(&number) {
            stack.extend(references.iter().copied());
        } else {
            // Legal (it reads as null) but also what a damaged file PDFium repairs looks like.
            return Err("a reference to an object the cross-reference data does not list");
        }
        keep.insert(number);
    }
    let size = keep.last().map_or(1, |n| n + 1);
    if size > MAX_OBJECT {
        return Err("object numbers past PDF's limit");
    }

    let mut out =
        Vec::with_capacity(reader_len_hint(&objects) + edits.added.values().map(|(o, _)| o.len()).sum::<usize>());
    out.extend_from_slice(reader.version().unwrap_or(b"%PDF-1.7"));
    out.extend_from_slice(b"\n%\xE2\xE3\xCF\xD3\n");
    let mut offsets: Vec<Option<(usize, u16)>> = vec![None; size as usize];
    for &number in &keep {
        let at = out.len();
        if let Some((generation, value, stream)) = objects.get(&number) {
            offsets[number as usize] = Some((at, *generation));
            out.extend_from_slice(format!("{number} {generation} obj\n").as_bytes());
            match (edits.patches.get(&number), value) {
                (Some(patch), Obj::Dict(dict)) => {
                    out.extend_from_slice(b"<<");
                    for (key, v) in dict {
                        if patch.iter().any(|(k, _, _)| name_is(key, k)) {
                            continue;
                        }
                        out.push(b'/');
                        out.extend_from_slice(key);
                        out.push(b' ');
                        write_obj(v, &mut out);
                    }
                    for (key, v, _) in patch {
                        out.push(b'/');
                        out.extend_from_slice(key);
                        out.push(b' ');
                        out.extend_from_slice(v);
                    }
                    out.extend_from_slice(b">>");
                }
                _ => write_obj(value, &mut out),
            }
            if let Some(data) = stream {
                out.extend_from_slice(b"\nstream\r\n");
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\nendstream");
            }
        } else if let Some((object, _)) = edits.added.get(&number) {
            offsets[number as usize] = Some((at, 0));
            out.extend_from_slice(format!("{number} 0 obj\n").as_bytes());
            out.extend_from_slice(object);
        }
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {size}\n").as_bytes());
    // Free entries form a list from object 0 through every unused number back to 0.
    let free: Vec<usize> = (1..size as usize).filter(|&n| offsets[n].is_none()).collect();
    let mut next_free = free.iter().copied().chain(std::iter::once(0));
    out.extend_from_slice(format!("{:010} 65535 f\r\n", next_free.next().unwrap_or(0)).as_bytes());
    for slot in offsets.iter().skip(1) {
        match slot {
            Some((offset, generation)) => {
                out.extend_from_slice(format!("{offset:010} {generation:05} n\r\n").as_bytes())
            }
            None => out.extend_from_slice(format!("{:010} 00001 f\r\n", next_free.next().unwrap_or(0)).as_bytes()),
        }
    }
    out.extend_from_slice(format!("trailer\n<</Size {size}").as_bytes());
    for key in [&b"Root"[..], b"Info", b"ID"] {
        if let Some(value) = get(trailer, key) {
            out.push(b'/');
            out.extend_from_slice(key);
            out.push(b' ');
            write_obj(value, &mut out);
        }
    }
    out.extend_from_slice(format!(">>\nstartxref\n{xref}\n%%EOF\n").as_bytes());
    Ok(out)
}

fn reader_len_hint(objects: &BTreeMap<u32, (u16, Obj<'_>, Option<&[u8]>)>) -> usize {
    objects.values().map(|(_, _, s)| s.map_or(64, |d| d.len() + 64)).sum()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pdf::FieldValue;

    fn filled(bytes: &[u8], pages: u16, values: &[(&str, FieldValue)]) -> Vec<u8> {
        let values: FieldValues = values.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        match fill(bytes, pages, &values) {
            Outcome::Filled(out) => out,
            Outcome::Refused(err) => panic!("refused: {err}"),
            Outcome::Unsupported(reason) => panic!("unsupported: {reason}"),
        }
    }

    /// Every in-use entry of the (single) cross-reference table points at its object.
    fn assert_sound_xref(pdf: &[u8]) {
        let count = |needle: &[u8]| pdf.windows(needle.len()).filter(|w| w == &needle).count();
        assert_eq!(count(b"startxref"), 1, "one revision");
        assert_eq!(count(b"%%EOF"), 1);
        let tail = std::str::from_utf8(&pdf[pdf.len() - 30..]).unwrap();
        let start: usize = tail.rsplit("startxref\n").next().unwrap().lines().next().unwrap().parse().unwrap();
        let table = std::str::from_utf8(&pdf[start..]).unwrap();
        assert!(table.starts_with("xref\n0 "));
        let mut lines = table.lines().skip(1);
        let size: usize = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        for number in 0..size {
            let entry = lines.next().unwrap();
            assert_eq!(entry.len(), 18, "{entry:?}");
            if entry.ends_with('n') {
                let offset: usize = entry[..10].parse().unwrap();
                let generation: u16 = entry[11..16].parse().unwrap();
                let header = format!("{number} {generation} obj\n");
                assert!(pdf[offset..].starts_with(header.as_bytes()), "object {number}");
            }
        }
        assert_eq!(lines.next(), Some("trailer"));
        // Entries are exactly 20 bytes (with their CR LF), as readers that seek into the table assume.
        let header = format!("xref\n0 {size}\n");
        assert!(table[header.len() + 20 * size..].starts_with("trailer\n"));
    }

    #[test]
    fn the_written_file_is_one_revision_with_a_sound_cross_reference_table() {
        let form = crate::workspace::seed::PERMISSION_FORM_PDF;
        let out = filled(form, 2, &[("participant_name", FieldValue::Text("Zoë".into()))]);
        assert_sound_xref(&out);
        // Refilled from its own output, too.
        assert_sound_xref(&filled(&out, 2, &[("participant_name", FieldValue::Text("Ann".into()))]));
        // The object and cross-reference streams are not carried over.
        assert!(!out.windows(7).any(|w| w == b"/ObjStm") && !out.windows(5).any(|w| w == b"/XRef"));
        let scripts: &[u8] = include_bytes!("../../tests/fixtures/scripts.pdf");
        let out = filled(scripts, 1, &[("city", FieldValue::Text("Lyon".into()))]);
        assert_sound_xref(&out);
        for gone in [&b"/JavaScript"[..], b"/OpenAction", b"/AA", b"/JS", b"app.alert"] {
            assert!(!out.windows(gone.len()).any(|w| w == gone), "{}", String::from_utf8_lossy(gone));
        }
    }

    #[test]
    fn values_the_direct_path_does_not_write_go_to_pdfium() {
        let choices: &[u8] = include_bytes!("../../tests/fixtures/choices.pdf");
        let values =
            |name: &str, text: &str| -> FieldValues { [(name.to_owned(), FieldValue::Text(text.to_owned()))].into() };
        let unsupported = |values: &FieldValues| matches!(fill(choices, 1, values), Outcome::Unsupported(_));
        assert!(unsupported(&values("city", "two\nlines")), "a line break in a one-line field");
        assert!(unsupported(&values("city", &"x".repeat(101))), "past /MaxLen 100");
        assert!(unsupported(&values("city", "tab\there")));
        assert!(unsupported(&values("city", "学生")), "not in the font's encoding");
        assert!(matches!(fill(choices, 1, &values("city", &"x".repeat(100))), Outcome::Filled(_)));
        // A refusal is a refusal, not a hand-over.
        assert!(matches!(fill(choices, 1, &values("nope", "x")), Outcome::Refused(PdfError::UnknownField { .. })));
    }

    #[test]
    fn text_strings_use_pdf_doc_encoding_when_they_can() {
        assert_eq!(text_string("Zoë €"), b"<5A6FEB20A0>".to_vec());
        assert_eq!(text_string("a\nb"), b"<610A62>".to_vec());
        assert_eq!(text_string("学"), b"<FEFF5B66>".to_vec());
        assert_eq!(text_string("a\0"), b"<FEFF00610000>".to_vec());
        assert_eq!(text_string("þÿ"), b"<FEFF00FE00FF>".to_vec(), "not mistaken for a byte-order mark");
        assert_eq!(text_string(""), b"<>".to_vec());
    }
}
