//! Reading AcroForm fields straight from the document's objects, without loading pages.
//!
//! Loading a page makes PDFium parse its content stream and load every font on it (glyph
//! names, glyph boxes): about 0.3 ms per page of the permission form, five times the cost of
//! opening the document. `inspect` needs none of that, so after PDFium has opened and checked
//! the document (damage, encryption, XFA, page count), this module reads the cross-reference
//! data, the page tree and the AcroForm field tree itself and derives each field's kind,
//! value and options the way PDFium's `CPDF_FormField` / `CPDF_FormControl` do.
//!
//! Anything outside the common case — an unknown stream filter or predictor, a direct widget
//! dictionary in `/Annots`, a text value held in a stream, a page count that disagrees with
//! PDFium's — returns `None`, and `inspect` falls back to PDFium's own (slower) reading. A test
//! checks that both paths agree on every fixture.

use std::collections::HashMap;

use super::sanitize::{Dict, Lexer, Obj, decode_name, get, name_is, rfind};
use super::{FieldKind, PdfField};

const MAX_DEPTH: usize = 64;
const MAX_INFLATED: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, Copy)]
enum Loc {
    Offset(usize),
    Packed { stream: u32, index: usize },
    Free,
}

/// A decoded object stream: its data and, per index, (object number, offset in the data).
type Packed = (Vec<u8>, Vec<(u32, usize)>);

/// A document's objects, found through its cross-reference data (tables, streams, object
/// streams, incremental updates: the newest definition of each object wins).
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    xref: HashMap<u32, Loc>,
    packed: HashMap<u32, Packed>,
    root: Option<u32>,
    /// The newest trailer (for a cross-reference stream, its dictionary).
    trailer: Option<Dict<'a>>,
}

/// The fields of `bytes` in page order, or `None` when this reader is not sure.
pub(super) fn fields(bytes: &[u8], page_count: usize) -> Option<Vec<PdfField>> {
    let reader = Reader::new(bytes)?;
    Some(read_form(&reader, page_count)?.fields.into_iter().map(|f| f.info).collect())
}

/// The AcroForm and its fields as `fields` reads them, with what the direct filler needs to
/// change them (see `direct`).
pub(super) struct FormRead<'r> {
    pub(super) acro_form: Dict<'r>,
    /// In page order, as `fields` reports them.
    pub(super) fields: Vec<FieldRead<'r>>,
}

/// One field: how `inspect` reports it, and where it lives.
pub(super) struct FieldRead<'r> {
    pub(super) info: PdfField,
    /// /Ff (inherited).
    pub(super) flags: i64,
    /// Inheritable entries as they apply to this field.
    pub(super) inherited: Inherited<'r>,
    /// The terminal field dictionaries named `info.name` (where /V goes); usually one.
    pub(super) nodes: Vec<u32>,
    /// Widget annotations in field (kid) order.
    pub(super) widgets: Vec<u32>,
    /// Widget annotations in page order (PDFium's control order for a radio group's options).
    pub(super) page_widgets: Vec<u32>,
    /// A radio button's export value per page-order widget (empty for other kinds).
    pub(super) exports: Vec<Option<String>>,
}

/// Reads the AcroForm's fields (see `fields`).
pub(super) fn read_form<'r>(reader: &'r Reader<'_>, page_count: usize) -> Option<FormRead<'r>> {
    let catalog = reader.dict(&Obj::Ref(reader.root?, 0))?;
    let pages = reader.pages(&catalog)?;
    if pages.len() != page_count {
        return None;
    }
    let acro_form = get(&catalog, b"AcroForm").and_then(|a| reader.dict(a))?;
    let mut tree = FieldTree::default();
    if let Some(Obj::Array(roots)) = get(&acro_form, b"Fields").and_then(|f| reader.resolve(f)) {
        for root in &roots {
            let Obj::Ref(n, _) = root else { return None };
            reader.walk(*n, "", &Inherited::default(), &mut tree, 0)?;
        }
    }
    // In page order, as PDFium's page walk meets the widgets.
    let mut order: Vec<(usize, usize)> = Vec::new(); // (field index, page)
    let mut seen = vec![false; tree.fields.len()];
    let mut radio_widgets: Vec<Vec<u32>> = vec![Vec::new(); tree.fields.len()];
    for (page_index, (page_number, page)) in pages.iter().enumerate() {
        let Some(annots) = get(page, b"Annots").and_then(|a| reader.resolve(a)) else { continue };
        let Obj::Array(annots) = annots else { continue };
        for annot in &annots {
            let Obj::Ref(n, _) = annot else {
                if reader.dict(annot).is_some_and(|d| get(&d, b"Subtype").is_some_and(|s| is_name(s, b"Widget"))) {
                    return None;
                }
                continue;
            };
            // PDFium's page walk counts widget annotations only.
            let Some(dict) = reader.dict(annot) else { continue };
            if !get(&dict, b"Subtype").is_some_and(|s| is_name(s, b"Widget")) {
                continue;
            }
            // PDFium also finds fields from a page's widgets (through /Parent) and finds a
            // widget's page through /P: anything this tree walk does not account for the
            // same way is left to PDFium.
            let &field = tree.by_widget.get(n)?;
            if get(&dict, b"P").is_some_and(|p| !matches!(p, Obj::Ref(pn, _) if pn == page_number)) {
                return None;
            }
            if let Some(&parent) = tree.parent_of.get(n)
                && !matches!(get(&dict, b"Parent"), Some(Obj::Ref(pn, _)) if *pn == parent)
            {
                return None;
            }
            radio_widgets[field].push(*n);
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
        let (info, flags) = reader.describe(field, &page_widgets, page)?;
        let exports = if info.kind == FieldKind::Radio {
            let opt = reader.opt_strings(field)?;
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
        return None;
    }
    Some(FormRead { acro_form, fields })
}

#[derive(Default, Clone)]
pub(super) struct Inherited<'r> {
    pub(super) ft: Option<Obj<'r>>,
    pub(super) ff: Option<Obj<'r>>,
    pub(super) v: Option<Obj<'r>>,
    pub(super) opt: Option<Obj<'r>>,
    /// /DA, /Q and /MaxLen (variable text).
    pub(super) da: Option<Obj<'r>>,
    pub(super) q: Option<Obj<'r>>,
    pub(super) max_len: Option<Obj<'r>>,
    /// /I, a choice field's selected indices (PDFium uses them when there is no /V).
    pub(super) indices: Option<Obj<'r>>,
    /// /RV (rich text): left to PDFium.
    pub(super) rich: bool,
}

struct TreeField<'r> {
    name: String,
    inherited: Inherited<'r>,
    /// Widget object numbers in field (kid) order: PDFium's control order.
    widgets: Vec<u32>,
    /// The terminal field dictionaries of this name.
    nodes: Vec<u32>,
}

#[derive(Default)]
struct FieldTree<'r> {
    fields: Vec<TreeField<'r>>,
    by_name: HashMap<String, usize>,
    by_widget: HashMap<u32, usize>,
    /// A kid widget's field node (its /Parent must say the same).
    parent_of: HashMap<u32, u32>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Option<Self> {
        let tail = bytes.len().saturating_sub(2048);
        let at = rfind(&bytes[tail..], b"startxref")? + tail;
        let mut lexer = Lexer { bytes, pos: at + b"startxref".len() };
        let mut next = Some(usize::try_from(lexer.integer().ok()?).ok()?);
        let mut reader = Reader { bytes, xref: HashMap::new(), packed: HashMap::new(), root: None, trailer: None };
        let mut sections = 0;
        while let Some(offset) = next.take() {
            sections += 1;
            if sections > 32 {
                return None;
            }
            let trailer = reader.section(offset)?;
            if reader.trailer.is_none() {
                reader.trailer = Some(trailer.clone());
            }
            if reader.root.is_none()
                && let Some(Obj::Ref(n, _)) = get(&trailer, b"Root")
            {
                reader.root = Some(*n);
            }
            if let Some(Obj::Raw(stm)) = get(&trailer, b"XRefStm") {
                reader.section(parse_usize(stm)?)?;
            }
            if let Some(Obj::Raw(prev)) = get(&trailer, b"Prev") {
                next = Some(parse_usize(prev)?);
            }
        }
        let streams: Vec<u32> = {
            let mut s: Vec<u32> = reader
                .xref
                .values()
                .filter_map(|l| if let Loc::Packed { stream, .. } = l { Some(*stream) } else { None })
                .collect();
            s.sort_unstable();
            s.dedup();
            s
        };
        for stream in streams {
            let Loc::Offset(offset) = *reader.xref.get(&stream)? else { return None };
            let (dict, data) = reader.stream_at(offset, stream)?;
            let data = decode(&dict, data)?;
            let count = parse_usize(raw(get(&dict, b"N")?)?)?;
            let first = parse_usize(raw(get(&dict, b"First")?)?)?;
            let mut header = Lexer { bytes: &data, pos: 0 };
            let mut index = Vec::with_capacity(count.min(100_000));
            for _ in 0..count {
                let number = u32::try_from(header.integer().ok()?).ok()?;
                let offset = usize::try_from(header.integer().ok()?).ok()?;
                index.push((number, first.checked_add(offset)?));
            }
            reader.packed.insert(stream, (data, index));
        }
        Some(reader)
    }

    /// Reads one cross-reference section (table or stream) at `offset`; returns its trailer.
    /// Entries already known (from a newer section) win.
    fn section(&mut self, offset: usize) -> Option<Dict<'a>> {
        let bytes = self.bytes;
        let mut lexer = Lexer { bytes, pos: offset };
        if lexer.keyword(b"xref") {
            loop {
                if lexer.keyword(b"trailer") {
                    break;
                }
                let start = u32::try_from(lexer.integer().ok()?).ok()?;
                let count = u32::try_from(lexer.integer().ok()?).ok()?;
                for i in 0..count {
                    let field1 = usize::try_from(lexer.integer().ok()?).ok()?;
                    let _generation = lexer.integer().ok()?;
                    let loc = if lexer.keyword(b"n") {
                        Loc::Offset(field1)
                    } else if lexer.keyword(b"f") {
                        Loc::Free
                    } else {
                        return None;
                    };
                    self.xref.entry(start.checked_add(i)?).or_insert(loc);
                }
            }
            let Obj::Dict(trailer) = lexer.value(0).ok()? else { return None };
            return Some(trailer);
        }
        // An xref stream: `N G obj << /Type /XRef … >> stream … endstream`.
        let number = u32::try_from(lexer.integer().ok()?).ok()?;
        let (dict, data) = self.stream_at(offset, number)?;
        if !get(&dict, b"Type").is_some_and(|t| is_name(t, b"XRef")) {
            return None;
        }
        let data = decode(&dict, data)?;
        let Some(Obj::Array(w)) = get(&dict, b"W") else { return None };
        let widths: Vec<usize> = w.iter().map(|x| raw(x).and_then(parse_usize)).collect::<Option<_>>()?;
        let [w0, w1, w2] = widths[..] else { return None };
        let row = w0 + w1 + w2;
        if row == 0 || w0 > 8 || w1 > 8 || w2 > 8 {
            return None;
        }
        let index: Vec<usize> = match get(&dict, b"Index") {
            Some(Obj::Array(items)) => items.iter().map(|x| raw(x).and_then(parse_usize)).collect::<Option<_>>()?,
            _ => vec![0, parse_usize(raw(get(&dict, b"Size")?)?)?],
        };
        let mut rows = data.chunks_exact(row);
        for pair in index.chunks_exact(2) {
            for i in 0..pair[1] {
                let entry = rows.next()?;
                let int = |b: &[u8]| b.iter().fold(0usize, |acc, &x| (acc << 8) | usize::from(x));
                let kind = if w0 == 0 { 1 } else { int(&entry[..w0]) };
                let f2 = int(&entry[w0..w0 + w1]);
                let f3 = int(&entry[w0 + w1..]);
                let loc = match kind {
                    0 => Loc::Free,
                    1 => Loc::Offset(f2),
                    2 => Loc::Packed { stream: u32::try_from(f2).ok()?, index: f3 },
                    _ => continue,
                };
                self.xref.entry(u32::try_from(pair[0].checked_add(i)?).ok()?).or_insert(loc);
            }
        }
        Some(dict)
    }

    /// The stream object `number` at `offset`: its dictionary and raw (encoded) data.
    fn stream_at(&self, offset: usize, number: u32) -> Option<(Dict<'a>, &'a [u8])> {
        let bytes = self.bytes;
        let mut lexer = Lexer { bytes, pos: offset };
        if lexer.integer().ok()? != i64::from(number) {
            return None;
        }
        lexer.integer().ok()?;
        if !lexer.keyword(b"obj") {
            return None;
        }
        let Obj::Dict(dict) = lexer.value(0).ok()? else { return None };
        if !lexer.keyword(b"stream") {
            return None;
        }
        if bytes.get(lexer.pos) == Some(&b'\r') {
            lexer.pos += 1;
        }
        if bytes.get(lexer.pos) == Some(&b'\n') {
            lexer.pos += 1;
        }
        let length = match get(&dict, b"Length")? {
            Obj::Raw(n) => parse_usize(n)?,
            Obj::Ref(n, _) => match self.object(*n)? {
                Obj::Raw(v) => parse_usize(v)?,
                _ => return None,
            },
            _ => return None,
        };
        let data = bytes.get(lexer.pos..lexer.pos.checked_add(length)?)?;
        Some((dict, data))
    }

    /// The newest trailer dictionary.
    pub(super) fn trailer(&self) -> Option<&Dict<'a>> {
        self.trailer.as_ref()
    }

    /// The header line (`%PDF-1.x`), when the file starts with a well-formed one.
    pub(super) fn version(&self) -> Option<&'a [u8]> {
        let line = self.bytes.get(..8)?;
        let ok = line.starts_with(b"%PDF-") && line[5].is_ascii_digit() && line[6] == b'.' && line[7].is_ascii_digit();
        ok.then_some(line)
    }

    /// Object numbers in use, ascending.
    pub(super) fn numbers(&self) -> Vec<u32> {
        let mut numbers: Vec<u32> =
            self.xref.iter().filter(|(_, l)| !matches!(l, Loc::Free)).map(|(n, _)| *n).collect();
        numbers.sort_unstable();
        numbers
    }

    /// Object `number` in full: its generation, its value and, for a stream, its raw
    /// (still encoded) data.
    pub(super) fn entry(&self, number: u32) -> Option<(u16, Obj<'_>, Option<&'a [u8]>)> {
        match *self.xref.get(&number)? {
            Loc::Offset(offset) => {
                let mut lexer = Lexer { bytes: self.bytes, pos: offset };
                if lexer.integer().ok()? != i64::from(number) {
                    return None;
                }
                let generation = u16::try_from(lexer.integer().ok()?).ok()?;
                if !lexer.keyword(b"obj") {
                    return None;
                }
                let value = lexer.value(0).ok()?;
                if !lexer.keyword(b"stream") {
                    return Some((generation, value, None));
                }
                let (_, data) = self.stream_at(offset, number)?;
                Some((generation, value, Some(data)))
            }
            Loc::Packed { .. } => Some((0, self.object(number)?, None)),
            Loc::Free => None,
        }
    }

    pub(super) fn object(&self, number: u32) -> Option<Obj<'_>> {
        match *self.xref.get(&number)? {
            Loc::Offset(offset) => {
                let mut lexer = Lexer { bytes: self.bytes, pos: offset };
                if lexer.integer().ok()? != i64::from(number) {
                    return None;
                }
                lexer.integer().ok()?;
                if !lexer.keyword(b"obj") {
                    return None;
                }
                lexer.value(0).ok()
            }
            Loc::Packed { stream, index } => {
                let (data, offsets) = self.packed.get(&stream)?;
                let &(n, offset) = offsets.get(index)?;
                if n != number {
                    return None;
                }
                Lexer { bytes: data, pos: offset }.value(0).ok()
            }
            Loc::Free => None,
        }
    }

    /// Follows a reference (one level; chains of references do not occur in practice).
    pub(super) fn resolve<'s>(&'s self, value: &Obj<'s>) -> Option<Obj<'s>> {
        match value {
            Obj::Ref(n, _) => self.object(*n),
            other => Some(other.clone()),
        }
    }

    pub(super) fn dict<'s>(&'s self, value: &Obj<'s>) -> Option<Dict<'s>> {
        match self.resolve(value)? {
            Obj::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// Page dictionaries (with their object numbers) in order.
    fn pages(&self, catalog: &Dict<'_>) -> Option<Vec<(u32, Dict<'_>)>> {
        let mut out = Vec::new();
        let Some(Obj::Ref(root, _)) = get(catalog, b"Pages") else { return None };
        self.page_node(*root, &mut out, 0)?;
        Some(out)
    }

    fn page_node<'s>(&'s self, number: u32, out: &mut Vec<(u32, Dict<'s>)>, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH || out.len() > usize::from(super::MAX_PDF_PAGES) {
            return None;
        }
        let Obj::Dict(node) = self.object(number)? else { return None };
        match get(&node, b"Kids").and_then(|k| self.resolve(k)) {
            Some(Obj::Array(kids)) if !get(&node, b"Type").is_some_and(|t| is_name(t, b"Page")) => {
                for kid in &kids {
                    let Obj::Ref(n, _) = kid else { return None };
                    self.page_node(*n, out, depth + 1)?;
                }
            }
            _ => out.push((number, node)),
        }
        Some(())
    }

    /// Walks one node of the field tree (CPDF_InteractiveForm::LoadField's shape).
    fn walk<'s>(
        &'s self,
        number: u32,
        parent_name: &str,
        parent: &Inherited<'s>,
        tree: &mut FieldTree<'s>,
        depth: usize,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let node = self.dict(&Obj::Ref(number, 0))?;
        let name = match get(&node, b"T").and_then(|t| self.resolve(t)) {
            Some(t) => {
                let part = text(&t)?;
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
            if let Some(v) = get(&node, key) {
                *slot = Some(v.clone());
            }
        }
        inherited.indices = get(&node, b"I").cloned();
        inherited.rich |= get(&node, b"RV").is_some();
        let kids = match get(&node, b"Kids").and_then(|k| self.resolve(k)) {
            Some(Obj::Array(kids)) => kids,
            _ => Vec::new(),
        };
        let is_widget = |d: &Dict<'_>| get(d, b"Subtype").is_some_and(|s| is_name(s, b"Widget"));
        if kids.is_empty() {
            // A field and its only widget in one dictionary (PDFium keeps widgets only).
            return if is_widget(&node) { self.add_widget(tree, name, inherited, number, number) } else { Some(()) };
        }
        for kid in &kids {
            let Obj::Ref(n, _) = kid else { return None };
            let kid_dict = self.dict(kid)?;
            if get(&kid_dict, b"T").is_some() {
                self.walk(*n, &name, &inherited, tree, depth + 1)?;
            } else if is_widget(&kid_dict) {
                self.add_widget(tree, name.clone(), inherited.clone(), *n, number)?;
                tree.parent_of.insert(*n, number);
            }
        }
        Some(())
    }

    fn add_widget<'s>(
        &'s self,
        tree: &mut FieldTree<'s>,
        name: String,
        inherited: Inherited<'s>,
        widget: u32,
        node: u32,
    ) -> Option<()> {
        if name.is_empty() {
            return Some(());
        }
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
        Some(())
    }

    /// The field as `inspect` reports it, and its flags.
    fn describe(&self, field: &TreeField<'_>, page_order: &[u32], page: usize) -> Option<(PdfField, i64)> {
        if field.inherited.rich {
            return None;
        }
        let flags = match &field.inherited.ff {
            Some(Obj::Raw(n)) => std::str::from_utf8(n).ok()?.parse::<i64>().ok()?,
            Some(_) => return None,
            None => 0,
        };
        let ft = field.inherited.ft.as_ref().and_then(|f| if let Obj::Name(n) = f { Some(decode_name(n)) } else { None });
        let kind = match ft.as_deref() {
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
            Some(v) => Some(self.resolve(v)?),
            None => None,
        };
        let mut options = Vec::new();
        let value = match kind {
            FieldKind::Text => match &value_obj {
                None => None,
                Some(Obj::Raw(_)) => text(value_obj.as_ref()?).filter(|v| !v.is_empty()).map(unify_line_breaks),
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
                let pairs = self.choice_options(&field.inherited)?;
                options = pairs.iter().map(|(_, label)| label.clone()).collect();
                let selected: Vec<String> = match &value_obj {
                    Some(Obj::Array(items)) => {
                        items.iter().map(|i| self.resolve(i).as_ref().and_then(text)).collect::<Option<_>>()?
                    }
                    Some(v @ Obj::Raw(_)) => vec![text(v)?],
                    Some(_) => return None,
                    None => Vec::new(),
                };
                let by_index = match (&value_obj, &field.inherited.indices) {
                    (None, Some(indices)) => match self.resolve(indices)? {
                        Obj::Array(items) => {
                            let first = items.first().and_then(raw).and_then(parse_usize);
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

    /// The on state as `on_state` picks it, but as written (a raw name, for writing /AS and
    /// /V back); `None` without an /AP /N dictionary or an on state.
    pub(super) fn on_state_key<'s>(&'s self, widget: &Dict<'s>) -> Option<&'s [u8]> {
        let ap = get(widget, b"AP").and_then(|a| self.dict(a))?;
        let normal = get(&ap, b"N").and_then(|n| self.dict(n))?;
        let mut keys: Vec<(Vec<u8>, &[u8])> =
            normal.iter().map(|(k, _)| (decode_name(k), *k)).filter(|(k, _)| k != b"Off").collect();
        keys.sort();
        keys.first().map(|(_, raw)| *raw)
    }

    /// CPDF_FormControl::GetOnStateName: the first (sorted) key of /AP /N other than Off.
    fn on_state(&self, widget: &Dict<'_>) -> Option<Vec<u8>> {
        let Some(ap) = get(widget, b"AP").and_then(|a| self.dict(a)) else { return Some(Vec::new()) };
        let Some(normal) = get(&ap, b"N").and_then(|n| self.dict(n)) else { return Some(Vec::new()) };
        let mut keys: Vec<Vec<u8>> = normal.iter().map(|(k, _)| decode_name(k)).filter(|k| k != b"Off").collect();
        keys.sort();
        Some(keys.into_iter().next().unwrap_or_default())
    }

    /// CPDF_FormControl::IsChecked: /AS equals the on state.
    fn is_checked(&self, widget: u32) -> Option<bool> {
        let dict = self.dict(&Obj::Ref(widget, 0))?;
        let state = match get(&dict, b"AS") {
            Some(Obj::Name(n)) => decode_name(n),
            Some(_) => return None,
            None => Vec::new(),
        };
        Some(state == self.on_state(&dict)?)
    }

    /// CPDF_FormControl::GetExportValue: /Opt[control index], else the on state, else "Yes".
    fn export_value(&self, field: &TreeField<'_>, widget: u32, opt: Option<&[Vec<u8>]>) -> Option<String> {
        let dict = self.dict(&Obj::Ref(widget, 0))?;
        let mut on = self.on_state(&dict)?;
        if on.is_empty() {
            return None; // no "on" appearance: PDFium's widget may not report one either
        }
        if let Some(opt) = opt {
            let control = field.widgets.iter().position(|&w| w == widget)?;
            on = opt.get(control).cloned().unwrap_or_default();
        }
        if on.is_empty() {
            on = b"Yes".to_vec();
        }
        Some(decode_text(&on))
    }

    /// A radio group's /Opt as byte strings, if it has one.
    fn opt_strings(&self, field: &TreeField<'_>) -> Option<Option<Vec<Vec<u8>>>> {
        let Some(opt) = &field.inherited.opt else { return Some(None) };
        let Obj::Array(items) = self.resolve(opt)? else { return Some(None) };
        let strings = items.iter().map(|i| self.resolve(i).as_ref().and_then(string_bytes)).collect::<Option<_>>()?;
        Some(Some(strings))
    }

    /// A choice field's options as (export value, label).
    pub(super) fn choice_options(&self, inherited: &Inherited<'_>) -> Option<Vec<(String, String)>> {
        let Some(opt) = &inherited.opt else { return Some(Vec::new()) };
        let Obj::Array(items) = self.resolve(opt)? else { return Some(Vec::new()) };
        items
            .iter()
            .map(|item| match self.resolve(item)? {
                Obj::Array(pair) => {
                    let export = text(&self.resolve(pair.first()?)?)?;
                    let label = text(&self.resolve(pair.get(1)?)?)?;
                    Some((export, label))
                }
                other => {
                    let t = text(&other)?;
                    Some((t.clone(), t))
                }
            })
            .collect()
    }
}

pub(super) fn is_name(value: &Obj<'_>, wanted: &[u8]) -> bool {
    matches!(value, Obj::Name(n) if name_is(n, wanted))
}

pub(super) fn raw<'o>(value: &'o Obj<'_>) -> Option<&'o [u8]> {
    if let Obj::Raw(r) = value { Some(r) } else { None }
}

pub(super) fn parse_usize(token: &[u8]) -> Option<usize> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

fn unify_line_breaks(text: String) -> String {
    super::inspect::unify_line_breaks(text)
}

/// Stream data after its filters: none, or FlateDecode with an optional PNG predictor.
fn decode(dict: &Dict<'_>, data: &[u8]) -> Option<Vec<u8>> {
    let filter = match get(dict, b"Filter") {
        None => None,
        Some(Obj::Name(n)) => Some(decode_name(n)),
        Some(Obj::Array(items)) if items.len() == 1 => match &items[0] {
            Obj::Name(n) => Some(decode_name(n)),
            _ => return None,
        },
        Some(_) => return None,
    };
    let inflated = match filter.as_deref() {
        None => data.to_vec(),
        Some(b"FlateDecode") => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, MAX_INFLATED).ok()?,
        Some(_) => return None,
    };
    let params = match get(dict, b"DecodeParms") {
        Some(Obj::Dict(d)) => d.clone(),
        Some(Obj::Array(items)) if items.len() == 1 => match &items[0] {
            Obj::Dict(d) => d.clone(),
            _ => return None,
        },
        None => return Some(inflated),
        Some(_) => return None,
    };
    let predictor = get(&params, b"Predictor").and_then(raw).and_then(parse_usize).unwrap_or(1);
    if predictor == 1 {
        return Some(inflated);
    }
    if predictor < 10 {
        return None; // TIFF predictor: not used by cross-reference streams in practice
    }
    let columns = get(&params, b"Columns").and_then(raw).and_then(parse_usize).unwrap_or(1);
    let colors = get(&params, b"Colors").and_then(raw).and_then(parse_usize).unwrap_or(1);
    let bits = get(&params, b"BitsPerComponent").and_then(raw).and_then(parse_usize).unwrap_or(8);
    if bits != 8 || columns == 0 {
        return None;
    }
    let bpp = colors.max(1);
    let width = columns.checked_mul(bpp)?;
    if width >= inflated.len() {
        return None;
    }
    let mut out = Vec::with_capacity(inflated.len());
    let mut previous = vec![0u8; width];
    for row in inflated.chunks(width + 1) {
        let (&kind, data) = row.split_first()?;
        if data.len() != width {
            return None;
        }
        let mut line = data.to_vec();
        for i in 0..width {
            let left = if i >= bpp { line[i - bpp] } else { 0 };
            let up = previous[i];
            let up_left = if i >= bpp { previous[i - bpp] } else { 0 };
            let add = match kind {
                0 => 0,
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                _ => return None,
            };
            line[i] = line[i].wrapping_add(add);
        }
        out.extend_from_slice(&line);
        previous = line;
    }
    Some(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// The bytes of a literal or hex string token.
pub(super) fn string_bytes(value: &Obj<'_>) -> Option<Vec<u8>> {
    let Obj::Raw(token) = value else { return None };
    match token.first()? {
        b'(' => {
            let inner = &token[1..token.len().checked_sub(1)?];
            let mut out = Vec::with_capacity(inner.len());
            let mut i = 0;
            while i < inner.len() {
                let b = inner[i];
                i += 1;
                if b != b'\\' {
                    // An unescaped end of line in a string reads as LF.
                    if b == b'\r' {
                        if inner.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                        out.push(b'\n');
                    } else {
                        out.push(b);
                    }
                    continue;
                }
                let Some(&e) = inner.get(i) else { break };
                i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'\r' => {
                        if inner.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                    }
                    b'\n' => {}
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        for _ in 0..2 {
                            match inner.get(i) {
                                Some(&d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push((v & 0xFF) as u8);
                    }
                    other => out.push(other),
                }
            }
            Some(out)
        }
        b'<' => {
            // Like PDFium's ReadHexString, anything but a hex digit is skipped.
            let digits: Vec<u8> = token[1..token.len().checked_sub(1)?]
                .iter()
                .filter_map(|&b| match b {
                    b'0'..=b'9' => Some(b - b'0'),
                    b'a'..=b'f' => Some(b - b'a' + 10),
                    b'A'..=b'F' => Some(b - b'A' + 10),
                    _ => None,
                })
                .collect();
            Some(digits.chunks(2).map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0)).collect())
        }
        _ => None,
    }
}

/// A text string (or a name, for export values) as PDFium's PDF_DecodeText reads it.
pub(super) fn text(value: &Obj<'_>) -> Option<String> {
    match value {
        Obj::Name(n) => Some(decode_text(&decode_name(n))),
        Obj::Raw(_) => Some(decode_text(&string_bytes(value)?)),
        _ => None,
    }
}

/// Text as PDFium hands it over: decoded, then cut at the first NUL (its C strings end there).
fn decode_text(bytes: &[u8]) -> String {
    let mut text = decode_text_raw(bytes);
    if let Some(nul) = text.find('\0') {
        text.truncate(nul);
    }
    text
}

fn decode_text_raw(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from_be_bytes([p[0], p[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| pdf_doc_char(b)).collect()
}

/// PDFDocEncoding: Latin-1 except 0x18–0x1F and 0x80–0xA0; 0x7F and 0x9F are undefined
/// (PDFium reads them as NUL).
pub(super) fn pdf_doc_char(b: u8) -> char {
    const LOW: [u16; 8] = [0x02D8, 0x02C7, 0x02C6, 0x02D9, 0x02DD, 0x02DB, 0x02DA, 0x02DC];
    const HIGH: [u16; 33] = [
        0x2022, 0x2020, 0x2021, 0x2026, 0x2014, 0x2013, 0x0192, 0x2044, 0x2039, 0x203A, 0x2212, 0x2030, 0x201E, 0x201C,
        0x201D, 0x2018, 0x2019, 0x201A, 0x2122, 0xFB01, 0xFB02, 0x0141, 0x0152, 0x0160, 0x0178, 0x017D, 0x0131, 0x0142,
        0x0153, 0x0161, 0x017E, 0xFFFD, 0x20AC,
    ];
    let code = match b {
        0x7F | 0x9F => 0,
        0x18..=0x1F => LOW[usize::from(b - 0x18)],
        0x80..=0xA0 => HIGH[usize::from(b - 0x80)],
        _ => u16::from(b),
    };
    char::from_u32(u32::from(code)).unwrap_or('\u{FFFD}')
}
