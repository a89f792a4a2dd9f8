//! The AcroForm: its fields, their kinds, values and options, read from the document's objects
//! the way PDFium's `CPDF_InteractiveForm` / `CPDF_FormField` / `CPDF_FormControl` read them,
//! without loading pages (which costs PDFium a content-stream parse and a font load per page).
//!
//! The field tree is walked once, within the budget and with a visited set: a field node
//! reached twice (a cyclic `/Kids`, a kid listed under two parents) is refused as malformed.
//! Anything valid but outside the common case — a direct widget dictionary in `/Annots`, a
//! text value held in a stream, rich text, a field kind PDFium does not load — is "not sure"
//! (`Ok(None)`), and the caller asks PDFium's own page walk instead. A test checks that both
//! readings agree on every fixture.

use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::budget::Budget;
use super::objects::{Loaded, get, get_dict, is_name, resolve, resolve_dict};
use super::text::{self, unify_line_breaks};
use super::{FieldKind, PdfError, PdfField};

const MAX_DEPTH: usize = 64;

/// The AcroForm and its fields, with what the form writer needs to change them.
pub(super) struct FormRead {
    /// The AcroForm dictionary (a copy).
    pub(super) acro_form: Dictionary,
    /// In page order, as `inspect` reports them.
    pub(super) fields: Vec<FieldRead>,
}

/// One field: how `inspect` reports it, and where it lives.
pub(super) struct FieldRead {
    pub(super) info: PdfField,
    /// /Ff (inherited).
    pub(super) flags: i64,
    /// Inheritable entries as they apply to this field.
    pub(super) inherited: Inherited,
    /// The terminal field dictionaries named `info.name` (where /V goes); usually one.
    pub(super) nodes: Vec<ObjectId>,
    /// Widget annotations in field (kid) order.
    pub(super) widgets: Vec<ObjectId>,
    /// Widget annotations in page order (PDFium's control order for a radio group's options).
    pub(super) page_widgets: Vec<ObjectId>,
    /// A radio button's export value per page-order widget (empty for other kinds).
    pub(super) exports: Vec<Option<String>>,
}

/// Inheritable field entries, as they apply to one field.
#[derive(Default, Clone)]
pub(super) struct Inherited {
    pub(super) ft: Option<Object>,
    pub(super) ff: Option<Object>,
    pub(super) v: Option<Object>,
    pub(super) opt: Option<Object>,
    /// /DA, /Q and /MaxLen (variable text).
    pub(super) da: Option<Object>,
    pub(super) q: Option<Object>,
    pub(super) max_len: Option<Object>,
    /// /I, a choice field's selected indices (PDFium uses them when there is no /V).
    pub(super) indices: Option<Object>,
    /// /RV (rich text): left to PDFium.
    pub(super) rich: bool,
}

/// The fields of a loaded document in page order: `Ok(None)` when this reader is not sure,
/// an error when the form is malformed or over the budget.
pub(super) fn fields(loaded: &Loaded, budget: &Budget) -> Result<Option<Vec<PdfField>>, PdfError> {
    // No AcroForm, no fields: PDFium's CPDF_InteractiveForm loads nothing without one, so
    // there is no need to load every page to find that out.
    if loaded.catalog().is_some_and(|c| !c.has(b"AcroForm")) {
        return Ok(Some(Vec::new()));
    }
    Ok(read(loaded, budget)?.map(|form| form.fields.into_iter().map(|f| f.info).collect()))
}

/// Reads the AcroForm's fields (see [`fields`]).
pub(super) fn read(loaded: &Loaded, budget: &Budget) -> Result<Option<FormRead>, PdfError> {
    let doc = &loaded.doc;
    let Some(catalog) = loaded.catalog() else { return Ok(None) };
    let Some(acro_form) = get_dict(doc, catalog, b"AcroForm") else { return Ok(None) };
    let mut walker = Walker { doc, budget, tree: FieldTree::default(), seen: HashSet::new() };
    if let Some(Object::Array(roots)) = get(doc, acro_form, b"Fields") {
        for root in roots {
            let Ok(id) = root.as_reference() else { return Ok(None) };
            if walker.walk(id, "", &Inherited::default(), 0)?.is_none() {
                return Ok(None);
            }
        }
    }
    let tree = walker.tree;
    let reader = Reader { doc };
    // In page order, as PDFium's page walk meets the widgets.
    let mut order: Vec<(usize, usize)> = Vec::new(); // (field index, page)
    let mut seen = vec![false; tree.fields.len()];
    let mut radio_widgets: Vec<Vec<ObjectId>> = vec![Vec::new(); tree.fields.len()];
    for (page_index, &page_id) in loaded.pages.iter().enumerate() {
        let Ok(page) = doc.get_dictionary(page_id) else { continue };
        let Some(Object::Array(annots)) = get(doc, page, b"Annots") else { continue };
        for annot in annots {
            budget.node("its annotations")?;
            let Ok(id) = annot.as_reference() else {
                if resolve_dict(doc, annot).is_some_and(|d| d.get(b"Subtype").is_ok_and(|s| is_name(s, b"Widget"))) {
                    return Ok(None);
                }
                continue;
            };
            // PDFium's page walk counts widget annotations only.
            let Some(dict) = resolve_dict(doc, annot) else { continue };
            if !dict.get(b"Subtype").is_ok_and(|s| is_name(s, b"Widget")) {
                continue;
            }
            // PDFium also finds fields from a page's widgets (through /Parent) and a widget's
            // page through /P: anything this walk does not account for the same way is left
            // to PDFium.
            let Some(&field) = tree.by_widget.get(&id) else { return Ok(None) };
            if dict.get(b"P").is_ok_and(|p| p.as_reference().ok() != Some(page_id)) {
                return Ok(None);
            }
            if let Some(&parent) = tree.parent_of.get(&id)
                && dict.get(b"Parent").ok().and_then(|p| p.as_reference().ok()) != Some(parent)
            {
                return Ok(None);
            }
            radio_widgets[field].push(id);
            if !seen[field] {
                seen[field] = true;
                order.push((field, page_index));
            }
        }
    }
    let mut fields = Vec::with_capacity(order.len());
    for (index, page) in order {
        let field = &tree.fields[index];
        let page_widgets = std::mem::take(&mut radio_widgets[index]);
        let Some((info, flags)) = reader.describe(field, &page_widgets, page) else { return Ok(None) };
        let exports = if info.kind == FieldKind::Radio {
            let Some(opt) = reader.opt_strings(field) else { return Ok(None) };
            page_widgets.iter().map(|&w| reader.export_value(field, w, opt.as_deref())).collect()
        } else {
            Vec::new()
        };
        fields.push(FieldRead {
            info,
            flags,
            inherited: field.inherited.clone(),
            nodes: field.nodes.clone(),
            widgets: field.widgets.clone(),
            page_widgets,
            exports,
        });
    }
    // No fields, or one of a kind PDFium does not load: let PDFium look (a damaged AcroForm
    // can hide fields from this reader that PDFium's repairs still find).
    if fields.is_empty() || fields.iter().any(|f| f.info.kind == FieldKind::Unknown) {
        return Ok(None);
    }
    Ok(Some(FormRead { acro_form: acro_form.clone(), fields }))
}

struct TreeField {
    name: String,
    inherited: Inherited,
    /// Widget objects in field (kid) order: PDFium's control order.
    widgets: Vec<ObjectId>,
    /// The terminal field dictionaries of this name.
    nodes: Vec<ObjectId>,
}

#[derive(Default)]
struct FieldTree {
    fields: Vec<TreeField>,
    by_name: HashMap<String, usize>,
    by_widget: HashMap<ObjectId, usize>,
    /// A kid widget's field node (its /Parent must say the same).
    parent_of: HashMap<ObjectId, ObjectId>,
}

struct Walker<'d> {
    doc: &'d Document,
    budget: &'d Budget,
    tree: FieldTree,
    /// Every field node and widget met: none may be met twice.
    seen: HashSet<ObjectId>,
}

impl Walker<'_> {
    /// Walks one node of the field tree (CPDF_InteractiveForm::LoadField's shape).
    /// `Ok(None)`: not sure.
    fn walk(&mut self, id: ObjectId, parent_name: &str, parent: &Inherited, depth: usize) -> Result<Option<()>, PdfError> {
        self.budget.node("its form")?;
        if depth > MAX_DEPTH {
            return Err(PdfError::Malformed { what: "its form's field tree is too deep" });
        }
        if !self.seen.insert(id) {
            return Err(PdfError::Malformed { what: "its form lists a field twice (or in a loop)" });
        }
        let doc = self.doc;
        let Ok(node) = doc.get_dictionary(id) else { return Ok(None) };
        let name = match get(doc, node, b"T") {
            Some(t) => {
                let Some(part) = text::text(t) else { return Ok(None) };
                if parent_name.is_empty() { part } else { format!("{parent_name}.{part}") }
            }
            None => parent_name.to_owned(),
        };
        let mut inherited = parent.clone();
        for (key, slot) in [
            (&b"FT"[..], &mut inherited.ft),
            (b"Ff", &mut inherited.ff),
            (b"V", &mut inherited.v),
            (b"Opt", &mut inherited.opt),
            (b"DA", &mut inherited.da),
            (b"Q", &mut inherited.q),
            (b"MaxLen", &mut inherited.max_len),
        ] {
            if let Ok(v) = node.get(key) {
                *slot = Some(v.clone());
            }
        }
        inherited.indices = node.get(b"I").ok().cloned();
        inherited.rich |= node.has(b"RV");
        let kids: &[Object] = match get(doc, node, b"Kids") {
            Some(Object::Array(kids)) => kids,
            _ => &[],
        };
        let is_widget = |d: &Dictionary| d.get(b"Subtype").is_ok_and(|s| is_name(s, b"Widget"));
        if kids.is_empty() {
            // A field and its only widget in one dictionary (PDFium keeps widgets only).
            if is_widget(node) {
                self.add_widget(name, inherited, id, id);
            }
            return Ok(Some(()));
        }
        for kid in kids {
            let Ok(kid_id) = kid.as_reference() else { return Ok(None) };
            let Some(kid_dict) = resolve_dict(doc, kid) else { return Ok(None) };
            if kid_dict.has(b"T") {
                if self.walk(kid_id, &name, &inherited, depth + 1)?.is_none() {
                    return Ok(None);
                }
            } else if is_widget(kid_dict) {
                self.budget.node("its form")?;
                if !self.seen.insert(kid_id) {
                    return Err(PdfError::Malformed { what: "its form lists a widget twice" });
                }
                self.add_widget(name.clone(), inherited.clone(), kid_id, id);
                self.tree.parent_of.insert(kid_id, id);
            }
        }
        Ok(Some(()))
    }

    fn add_widget(&mut self, name: String, inherited: Inherited, widget: ObjectId, node: ObjectId) {
        if name.is_empty() {
            return;
        }
        let tree = &mut self.tree;
        let index = match tree.by_name.get(&name) {
            Some(&i) => i,
            None => {
                tree.fields.push(TreeField { name: name.clone(), inherited, widgets: Vec::new(), nodes: Vec::new() });
                tree.by_name.insert(name, tree.fields.len() - 1);
                tree.fields.len() - 1
            }
        };
        if !tree.fields[index].nodes.contains(&node) {
            tree.fields[index].nodes.push(node);
        }
        tree.fields[index].widgets.push(widget);
        tree.by_widget.insert(widget, index);
    }
}

/// Field values and options, read as PDFium reads them.
struct Reader<'d> {
    doc: &'d Document,
}

impl Reader<'_> {
    fn resolved<'o>(&'o self, value: &'o Object) -> Option<&'o Object> {
        resolve(self.doc, value)
    }

    /// The field as `inspect` reports it, and its flags.
    fn describe(&self, field: &TreeField, page_order: &[ObjectId], page: usize) -> Option<(PdfField, i64)> {
        if field.inherited.rich {
            return None;
        }
        let flags = match field.inherited.ff.as_ref().map(|f| self.resolved(f)) {
            Some(Some(Object::Integer(n))) => *n,
            Some(_) => return None,
            None => 0,
        };
        let ft = field.inherited.ft.as_ref().and_then(|f| self.resolved(f)).and_then(|f| f.as_name().ok());
        let kind = match ft {
            Some(b"Tx") => FieldKind::Text,
            Some(b"Btn") if flags & (1 << 16) != 0 => FieldKind::PushButton,
            Some(b"Btn") if flags & (1 << 15) != 0 => FieldKind::Radio,
            Some(b"Btn") => FieldKind::Checkbox,
            Some(b"Ch") if flags & (1 << 17) != 0 => FieldKind::ComboBox,
            Some(b"Ch") => FieldKind::ListBox,
            Some(b"Sig") => FieldKind::Signature,
            _ => FieldKind::Unknown,
        };
        let value_obj = match &field.inherited.v {
            Some(v) => Some(self.resolved(v)?),
            None => None,
        };
        let mut options = Vec::new();
        let value = match kind {
            FieldKind::Text => match value_obj {
                None => None,
                Some(v @ Object::String(..)) => text::text(v).filter(|v| !v.is_empty()).map(unify_line_breaks),
                Some(_) => return None, // a value in a stream: let PDFium read it
            },
            FieldKind::Checkbox => {
                let mut on = false;
                for &w in &field.widgets {
                    on |= self.is_checked(w)?;
                }
                Some(on.to_string())
            }
            FieldKind::Radio => {
                let opt = self.opt_strings(field)?;
                for &w in page_order {
                    let export = self.export_value(field, w, opt.as_deref())?;
                    if !options.contains(&export) {
                        options.push(export);
                    }
                }
                let mut value = None;
                for &w in &field.widgets {
                    if self.is_checked(w)? {
                        value = Some(self.export_value(field, w, opt.as_deref())?);
                        break;
                    }
                }
                value.filter(|v| !v.is_empty() && v != "Off")
            }
            FieldKind::ComboBox | FieldKind::ListBox => {
                let pairs = choice_options(self.doc, &field.inherited)?;
                options = pairs.iter().map(|(_, label)| label.clone()).collect();
                let selected: Vec<String> = match value_obj {
                    Some(Object::Array(items)) => items.iter().map(|i| self.resolved(i).and_then(text::text)).collect::<Option<_>>()?,
                    Some(v @ (Object::String(..) | Object::Name(_))) => vec![text::text(v)?],
                    Some(_) => return None,
                    None => Vec::new(),
                };
                let by_index = match (value_obj, &field.inherited.indices) {
                    (None, Some(indices)) => match self.resolved(indices)? {
                        Object::Array(items) => {
                            let first = items.first().and_then(|i| i.as_i64().ok()).and_then(|i| usize::try_from(i).ok());
                            first.and_then(|i| pairs.get(i)).map(|(_, label)| label.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                by_index.or_else(|| {
                    pairs
                        .iter()
                        .find(|(export, _)| selected.contains(export))
                        .map(|(_, label)| label.clone())
                        .or_else(|| selected.first().cloned().filter(|v| !v.is_empty()))
                })
            }
            FieldKind::PushButton | FieldKind::Signature | FieldKind::Unknown => None,
        };
        let page = u16::try_from(page + 1).unwrap_or(u16::MAX);
        let info = PdfField { name: field.name.clone(), kind, page, value, options };
        Some((info, flags))
    }

    /// CPDF_FormControl::IsChecked: /AS equals the on state.
    fn is_checked(&self, widget: ObjectId) -> Option<bool> {
        let dict = self.doc.get_dictionary(widget).ok()?;
        let state: &[u8] = match dict.get(b"AS").ok().and_then(|s| self.resolved(s)) {
            Some(Object::Name(n)) => n,
            Some(_) => return None,
            None => b"",
        };
        Some(state == on_state(self.doc, dict).unwrap_or_default())
    }

    /// CPDF_FormControl::GetExportValue: /Opt[control index], else the on state, else "Yes".
    fn export_value(&self, field: &TreeField, widget: ObjectId, opt: Option<&[Vec<u8>]>) -> Option<String> {
        let dict = self.doc.get_dictionary(widget).ok()?;
        let mut on = on_state(self.doc, dict)?.to_vec();
        if let Some(opt) = opt {
            let control = field.widgets.iter().position(|&w| w == widget)?;
            on = opt.get(control).cloned().unwrap_or_default();
        }
        if on.is_empty() {
            on = b"Yes".to_vec();
        }
        Some(text::decode(&on))
    }

    /// A radio group's /Opt as byte strings, if it has one.
    fn opt_strings(&self, field: &TreeField) -> Option<Option<Vec<Vec<u8>>>> {
        let Some(opt) = &field.inherited.opt else { return Some(None) };
        let Some(Object::Array(items)) = self.resolved(opt) else { return Some(None) };
        let strings = items.iter().map(|i| self.resolved(i).and_then(text::string_bytes).map(<[u8]>::to_vec)).collect::<Option<_>>()?;
        Some(Some(strings))
    }
}

/// CPDF_FormControl::GetOnStateName: the first (sorted) key of /AP /N other than Off; `None`
/// without an /AP /N dictionary or an on state (PDFium's widget may not report one either).
pub(super) fn on_state<'d>(doc: &'d Document, widget: &'d Dictionary) -> Option<&'d [u8]> {
    let ap = get_dict(doc, widget, b"AP")?;
    let normal = get_dict(doc, ap, b"N")?;
    normal.iter().map(|(k, _)| k.as_slice()).filter(|k| *k != b"Off").min()
}

/// A choice field's options as (export value, label).
pub(super) fn choice_options(doc: &Document, inherited: &Inherited) -> Option<Vec<(String, String)>> {
    let Some(opt) = &inherited.opt else { return Some(Vec::new()) };
    let Some(Object::Array(items)) = resolve(doc, opt) else { return Some(Vec::new()) };
    items
        .iter()
        .map(|item| match resolve(doc, item)? {
            Object::Array(pair) => {
                let export = text::text(resolve(doc, pair.first()?)?)?;
                let label = text::text(resolve(doc, pair.get(1)?)?)?;
                Some((export, label))
            }
            other => {
                let t = text::text(other)?;
                Some((t.clone(), t))
            }
        })
        .collect()
}

/// Whether the widget has a normal appearance.
pub(super) fn has_normal_appearance(doc: &Document, widget: ObjectId) -> bool {
    doc.get_dictionary(widget).ok().and_then(|w| get_dict(doc, w, b"AP")).is_some_and(|ap| ap.has(b"N"))
}
