//! The document's objects, on lopdf: loading within a [`Budget`], the checks every operation
//! makes before it trusts a document, and small readers the form and appearance modules share.
//!
//! lopdf reads the cross-reference data (tables, streams, hybrid files, incremental updates
//! with `/Prev` cycles cut), object streams and filters, and bounds what it parses itself
//! (nesting depth 100, xref field widths ≤ 8, entries no more than the stream's bytes). What
//! it does not bound, this module does, before the work:
//!
//! - **inflating**: object streams are decoded here, in lopdf's load filter, each with the
//!   budget's remainder as its limit, so their sum is bounded; cross-reference streams (which
//!   lopdf decodes before any filter runs) get `remainder / (n + 1)` each, `n` counted from the
//!   `/XRef` names in the file (their dictionaries are never compressed);
//! - **objects**: every object lopdf loads costs one budget node, and the load ends at Stop,
//!   the deadline or the node limit (later objects are dropped unparsed by the filter's
//!   answer — lopdf still tokenizes them, which the 10 MB size limit bounds);
//! - **trees**: the page tree is walked here once, with a visited set (a node listed twice,
//!   as in a "doubled" tree whose 63 levels would be 2^63 walks, is refused, not walked
//!   again), a depth limit, the page limit checked against `/Count` before the walk, and every
//!   page's `/Parent` chain followed up to the root so a cycle there is refused too. PDFium
//!   only ever sees documents that passed this walk.
//!
//! Documents are refused here the way PDFium refused them before: encrypted (any `/Encrypt`
//! at all: Hearth does not carry a sender's restrictions into a filled copy), XFA, too many
//! pages, damaged beyond lopdf's repairs.

use std::cell::RefCell;
use std::collections::HashSet;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};

use super::budget::Budget;
use super::{MAX_PDF_BYTES, MAX_PDF_PAGES, PdfError};

/// The largest object number PDF allows.
pub(super) const MAX_OBJECT: u32 = 8_388_607;

/// How deep a page tree may go (PDFium allows 1024; real files use 2–4 levels).
const MAX_TREE_DEPTH: usize = 64;
/// How deep a field tree may go: PDFium's `LoadField` stops at 32 levels.
const MAX_FIELD_DEPTH: usize = 32;
/// How many nodes (fields and widgets) one field tree may have; real forms have a few.
const MAX_FIELD_PARTS: usize = 10_000;
/// What one cross-reference stream (or object stream: lopdf re-checks them against the same
/// limit) may inflate to: about 1.4 million objects' entries, far past any real 10 MB file.
const MAX_XREF_STREAM_BYTES: usize = 4 * 1024 * 1024;

/// A document that passed the checks, with its pages in order.
pub(super) struct Loaded {
    pub(super) doc: Document,
    /// Page objects, in page order.
    pub(super) pages: Vec<ObjectId>,
}

impl Loaded {
    /// The number of pages (at most [`MAX_PDF_PAGES`]).
    pub(super) fn page_count(&self) -> u16 {
        u16::try_from(self.pages.len()).unwrap_or(u16::MAX)
    }

    /// The document catalog.
    pub(super) fn catalog(&self) -> Option<&Dictionary> {
        catalog(&self.doc)
    }
}

/// The size and header checks every entry point makes first.
pub(super) fn check_bytes(bytes: &[u8]) -> Result<(), PdfError> {
    if bytes.len() > MAX_PDF_BYTES {
        return Err(PdfError::TooLarge { bytes: bytes.len() });
    }
    if !bytes.starts_with(b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    Ok(())
}

/// Loads and checks `bytes` within `budget`.
pub(super) fn load(bytes: &[u8], budget: &Budget) -> Result<Loaded, PdfError> {
    check_bytes(bytes)?;
    load_output(bytes, budget)
}

/// [`load`] without the size limit, for what Hearth itself wrote (a filled copy may be a little
/// larger than the 10 MB it was made from).
pub(super) fn load_output(bytes: &[u8], budget: &Budget) -> Result<Loaded, PdfError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    if has_name(bytes, b"/Encrypt") {
        return Err(PdfError::Encrypted);
    }
    budget.alive()?;
    // Cross-reference streams are decoded by lopdf before any filter runs: each gets a fixed
    // cap, and the caps of those the file names are charged to the budget up front.
    let xref_streams = count_names(bytes, b"/XRef").max(1);
    budget.inflated(xref_streams.saturating_mul(MAX_XREF_STREAM_BYTES))?;
    let options = LoadOptions { filter: Some(load_filter), max_decompressed_size: Some(MAX_XREF_STREAM_BYTES), ..LoadOptions::default() };
    let doc = {
        let _loading = Loading::begin(budget.clone());
        let loaded = Document::load_mem_with_options(bytes, options);
        if let Some(err) = Loading::take_error() {
            return Err(err);
        }
        loaded.map_err(|err| damaged(&err))?
    };
    if doc.encryption_state.is_some() || doc.trailer.has(b"Encrypt") {
        return Err(PdfError::Encrypted);
    }
    every_entry_loaded(&doc, budget)?;
    let root = catalog(&doc).ok_or_else(|| PdfError::Damaged { detail: "it has no document catalog".into() })?;
    let acro_form = root.get(b"AcroForm").ok().and_then(|a| resolve_dict(&doc, a));
    if acro_form.is_some_and(|form| form.has(b"XFA")) {
        return Err(PdfError::Xfa);
    }
    let pages = page_tree(&doc, root, budget)?;
    if let Some(acro_form) = acro_form {
        field_trees(&doc, acro_form, &pages, budget)?;
    }
    Ok(Loaded { doc, pages })
}

/// Every object the cross-reference data lists as in use must have loaded as that object.
///
/// lopdf skips what it cannot parse or decode (and keeps an object under the number its own
/// header gives), while PDFium reads the same entries its own way: a document the two read
/// differently could pass every check here and still show PDFium a different tree. So an
/// entry without its object is refused, not skipped.
fn every_entry_loaded(doc: &Document, budget: &Budget) -> Result<(), PdfError> {
    for (&number, entry) in &doc.reference_table.entries {
        let generation = match entry {
            lopdf::xref::XrefEntry::Normal { generation, .. } => *generation,
            lopdf::xref::XrefEntry::Compressed { .. } => 0,
            lopdf::xref::XrefEntry::Free | lopdf::xref::XrefEntry::UnusableFree => continue,
        };
        budget.node("its objects")?;
        if !doc.objects.contains_key(&(number, generation)) {
            return Err(PdfError::Damaged { detail: format!("object {number} is not where its cross-reference entry says") });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_whole_and_through_escapes() {
        assert!(has_name(b"<</Encrypt 5 0 R>>", b"/Encrypt"));
        assert!(has_name(b"<</Encr#79pt 5 0 R>>", b"/Encrypt"));
        assert!(has_name(b"trailer<</Size 3/Encrypt<<>>", b"/Encrypt"));
        assert!(!has_name(b"<</EncryptMetadata false>>", b"/Encrypt"));
        assert!(!has_name(b"<</Encryp 1>>", b"/Encrypt"));
        assert_eq!(count_names(b"/XRef /XRef/XRefStm /X#52ef", b"/XRef"), 3);
    }
}

fn damaged(err: &lopdf::Error) -> PdfError {
    // lopdf's words name offsets and object numbers, never content.
    PdfError::Damaged { detail: format!("the file could not be read: {err}") }
}

// ---------------------------------------------------------------------------------------------
// The load filter

thread_local! {
    /// The budget of the load running on this thread (lopdf's filter is a plain `fn`).
    static LOADING: RefCell<Option<LoadState>> = const { RefCell::new(None) };
}

struct LoadState {
    budget: Budget,
    error: Option<PdfError>,
}

/// The load in progress on this thread; ends it (even on an early return) when dropped.
struct Loading;

impl Loading {
    fn begin(budget: Budget) -> Self {
        LOADING.with(|slot| *slot.borrow_mut() = Some(LoadState { budget, error: None }));
        Self
    }

    fn take_error() -> Option<PdfError> {
        LOADING.with(|slot| slot.borrow_mut().as_mut().and_then(|state| state.error.take()))
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        LOADING.with(|slot| *slot.borrow_mut() = None);
    }
}

/// Counts each object against the budget and decodes object streams within its inflate
/// remainder (lopdf then reads them as plain data). After the first failure every object is
/// dropped, and the load reports the failure.
fn load_filter(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    LOADING.with(|slot| {
        let mut slot = slot.borrow_mut();
        let Some(state) = slot.as_mut() else { return Some((id, object.clone())) };
        if state.error.is_some() {
            return None;
        }
        if let Err(err) = state.budget.node("its objects") {
            state.error = Some(err);
            return None;
        }
        if let Object::Stream(stream) = object
            && stream.dict.has_type(b"ObjStm")
            && stream.filters().is_ok_and(|f| !f.is_empty())
        {
            let allowance = state.budget.inflate_allowance();
            match stream.decompressed_content_with_limit(allowance) {
                Ok(data) => {
                    if let Err(err) = state.budget.inflated(data.len()) {
                        state.error = Some(err);
                        return None;
                    }
                    stream.set_plain_content(data);
                }
                Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                    state.error = Some(state.budget.inflate_exceeded());
                    return None;
                }
                // An object stream that does not decode: lopdf would skip it too.
                Err(_) => return None,
            }
        }
        // lopdf keeps a top-level object from `object` (changed in place) but an object from
        // an object stream from the answer, so both must hold it.
        Some((id, object.clone()))
    })
}

/// Whether `name` occurs in `bytes` as a whole name (not the start of a longer one, as
/// `/Encrypt` is of `/EncryptMetadata`), `#xx` escapes decoded as lopdf decodes them (so
/// `/Encr#79pt` counts too).
fn has_name(bytes: &[u8], name: &[u8]) -> bool {
    count_names(bytes, name) > 0
}

/// How many names in `bytes` are `name` (with its slash). A linear scan of every `/`; it also
/// counts names inside strings and streams, which only ever errs towards refusing.
fn count_names(bytes: &[u8], name: &[u8]) -> usize {
    let wanted = &name[1..];
    let mut count = 0;
    for at in memchr::memchr_iter(b'/', bytes) {
        let token = &bytes[at + 1..];
        let end = token.iter().position(|&b| is_delimiter_or_space(b)).unwrap_or(token.len());
        let token = &token[..end];
        if token.len() < wanted.len() || token.len() > wanted.len() * 3 {
            continue;
        }
        if token == wanted || (token.contains(&b'#') && decode_name(token) == wanted) {
            count += 1;
        }
    }
    count
}

/// A name's `#xx` escapes decoded.
fn decode_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#'
            && let Some(hex) = raw.get(i + 1..i + 3)
            && let Ok(text) = std::str::from_utf8(hex)
            && let Ok(byte) = u8::from_str_radix(text, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

fn is_delimiter_or_space(b: u8) -> bool {
    matches!(b, b'\0' | b'\t' | b'\n' | b'\x0C' | b'\r' | b' ' | b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

// ---------------------------------------------------------------------------------------------
// The page tree

fn page_tree(doc: &Document, catalog: &Dictionary, budget: &Budget) -> Result<Vec<ObjectId>, PdfError> {
    let root =
        catalog.get(b"Pages").and_then(Object::as_reference).map_err(|_| PdfError::Damaged { detail: "it has no page tree".into() })?;
    // A /Count past the limit is refused before walking anything.
    if let Some(count) = doc.get_dictionary(root).ok().and_then(|d| d.get(b"Count").ok()).and_then(|c| c.as_i64().ok())
        && count > i64::from(MAX_PDF_PAGES)
    {
        return Err(PdfError::TooManyPages { pages: u16::try_from(count).unwrap_or(u16::MAX) });
    }
    let mut pages = Vec::new();
    let mut seen = HashSet::new();
    // Depth-first, kids in order: (node, depth).
    let mut stack = vec![(root, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        budget.node("its page tree")?;
        if !seen.insert(id) {
            return Err(PdfError::Malformed { what: "its page tree lists a page or node twice" });
        }
        if depth > MAX_TREE_DEPTH {
            return Err(PdfError::Malformed { what: "its page tree is too deep" });
        }
        let node = doc.get_dictionary(id).map_err(|_| PdfError::Damaged { detail: format!("page tree node {} is missing", id.0) })?;
        let kids = node.get(b"Kids").ok().and_then(|k| resolve(doc, k)).and_then(|k| k.as_array().ok());
        match kids {
            // PDFium decides by /Kids alone, whatever /Type says: so does this walk.
            Some(kids) => {
                for kid in kids.iter().rev() {
                    let kid =
                        kid.as_reference().map_err(|_| PdfError::Malformed { what: "its page tree holds a page that is not an object" })?;
                    stack.push((kid, depth + 1));
                }
            }
            _ => {
                pages.push(id);
                if pages.len() > usize::from(MAX_PDF_PAGES) {
                    return Err(PdfError::TooManyPages { pages: u16::try_from(pages.len()).unwrap_or(u16::MAX) });
                }
            }
        }
    }
    if pages.is_empty() {
        return Err(PdfError::Damaged { detail: "it has no pages".into() });
    }
    // PDFium trusts a positive /Count: a tree that disagrees would show it other pages.
    if let Some(count) = doc.get_dictionary(root).ok().and_then(|d| d.get(b"Count").ok()).and_then(|c| c.as_i64().ok())
        && usize::try_from(count).ok() != Some(pages.len())
    {
        return Err(PdfError::Malformed { what: "its page count disagrees with its page tree" });
    }
    // Every page's /Parent chain must climb to the root without a loop: PDFium follows it for
    // inherited attributes.
    for &page in &pages {
        let mut at = page;
        let mut chain = HashSet::new();
        loop {
            budget.node("its page tree")?;
            if !chain.insert(at) || chain.len() > MAX_TREE_DEPTH + 1 {
                return Err(PdfError::Malformed { what: "a page's /Parent chain loops" });
            }
            match doc.get_dictionary(at).ok().and_then(|d| d.get(b"Parent").ok()).and_then(|p| p.as_reference().ok()) {
                Some(parent) => at = parent,
                None => break,
            }
        }
    }
    Ok(pages)
}

// ---------------------------------------------------------------------------------------------
// The field trees PDFium will walk

/// Walks every field tree the way PDFium's `CPDF_InteractiveForm` will: from each `/Fields`
/// root, into every dictionary kid (it recurses on any `/Kids`, with no visited set, to depth
/// 32), and from every page's widget up its `/Parent` chain to the root field it loads
/// from there. A node met twice within a tree, a loop in a `/Parent` chain, or a tree deeper
/// than 32 is refused; this walk does not depend on what `form` later makes of the fields.
fn field_trees(doc: &Document, acro_form: &Dictionary, pages: &[ObjectId], budget: &Budget) -> Result<(), PdfError> {
    let mut walked: HashSet<ObjectId> = HashSet::new();
    if let Some(Object::Array(fields)) = get(doc, acro_form, b"Fields") {
        for root in fields {
            if let Ok(id) = root.as_reference() {
                field_subtree(doc, id, &mut walked, budget)?;
            }
        }
    }
    for &page in pages {
        let Ok(page) = doc.get_dictionary(page) else { continue };
        let Some(Object::Array(annots)) = get(doc, page, b"Annots") else { continue };
        for annot in annots {
            budget.node("its annotations")?;
            let Ok(mut at) = annot.as_reference() else { continue };
            let mut chain = HashSet::new();
            loop {
                budget.node("its form")?;
                if !chain.insert(at) || chain.len() > MAX_TREE_DEPTH {
                    return Err(PdfError::Malformed { what: "a widget's /Parent chain loops" });
                }
                match doc.get_dictionary(at).ok().and_then(|d| d.get(b"Parent").ok()).and_then(|p| p.as_reference().ok()) {
                    Some(parent) => at = parent,
                    None => break,
                }
            }
            field_subtree(doc, at, &mut walked, budget)?;
        }
    }
    Ok(())
}

/// One field tree from `root`, unless already walked. PDFium's handling of one field is
/// quadratic in its widgets, so a tree is also limited to [`MAX_FIELD_PARTS`] nodes.
fn field_subtree(doc: &Document, root: ObjectId, walked: &mut HashSet<ObjectId>, budget: &Budget) -> Result<(), PdfError> {
    if walked.contains(&root) {
        return Ok(());
    }
    let mut stack = vec![(root, 0usize)];
    let mut parts = 0usize;
    while let Some((id, depth)) = stack.pop() {
        budget.node("its form")?;
        parts += 1;
        if parts > MAX_FIELD_PARTS {
            return Err(PdfError::Malformed { what: "a field tree with more than 10,000 parts" });
        }
        if !walked.insert(id) {
            return Err(PdfError::Malformed { what: "its form lists a field twice (or in a loop)" });
        }
        if depth > MAX_FIELD_DEPTH {
            return Err(PdfError::Malformed { what: "its form's field tree is too deep" });
        }
        let Ok(node) = doc.get_dictionary(id) else { continue };
        if let Some(Object::Array(kids)) = get(doc, node, b"Kids") {
            for kid in kids {
                match kid {
                    Object::Reference(kid) => stack.push((*kid, depth + 1)),
                    // A direct kid is a dictionary PDFium may recurse into: no object number
                    // to track, so it is refused rather than followed.
                    Object::Dictionary(_) => {
                        return Err(PdfError::Malformed { what: "its form holds a field that is not an object" });
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Readers

/// The document catalog (the trailer's /Root).
pub(super) fn catalog(doc: &Document) -> Option<&Dictionary> {
    doc.trailer.get(b"Root").ok().and_then(|r| resolve_dict(doc, r))
}

/// `object`, references followed (lopdf stops long chains).
pub(super) fn resolve<'d>(doc: &'d Document, object: &'d Object) -> Option<&'d Object> {
    doc.dereference(object).ok().map(|(_, o)| o)
}

/// `object` as a dictionary (a stream's dictionary too), references followed.
pub(super) fn resolve_dict<'d>(doc: &'d Document, object: &'d Object) -> Option<&'d Dictionary> {
    match resolve(doc, object)? {
        Object::Dictionary(dict) => Some(dict),
        Object::Stream(stream) => Some(&stream.dict),
        _ => None,
    }
}

/// `dict[key]`, references followed.
pub(super) fn get<'d>(doc: &'d Document, dict: &'d Dictionary, key: &[u8]) -> Option<&'d Object> {
    resolve(doc, dict.get(key).ok()?)
}

/// `dict[key]` as a dictionary, references followed.
pub(super) fn get_dict<'d>(doc: &'d Document, dict: &'d Dictionary, key: &[u8]) -> Option<&'d Dictionary> {
    resolve_dict(doc, dict.get(key).ok()?)
}

/// A number (integer or real), finite.
pub(super) fn number(object: &Object) -> Option<f64> {
    let n = match object {
        Object::Integer(i) => *i as f64,
        Object::Real(r) => f64::from(*r),
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// Whether `object` is the name `wanted`.
pub(super) fn is_name(object: &Object, wanted: &[u8]) -> bool {
    matches!(object, Object::Name(n) if n == wanted)
}

/// The file's bytes, written as one revision with a classic cross-reference table.
pub(super) fn save(doc: &mut Document) -> Result<Vec<u8>, PdfError> {
    let mut out = Vec::new();
    // A classic table, whatever the original used: readable by every viewer, and what the
    // checks after a fill look for.
    doc.reference_table.cross_reference_type = lopdf::xref::XrefType::CrossReferenceTable;
    doc.save_to(&mut out).map_err(|err| PdfError::SaveFailed { detail: format!("writing it failed: {err}") })?;
    Ok(out)
}
