//! Removing active content from a filled PDF: every action but GoTo, scripts, embedded
//! files, and multimedia annotations.
//!
//! PDFium's public API can read JavaScript and additional actions but cannot delete a
//! dictionary entry (there is no call that removes `/OpenAction` or `/Names /JavaScript` from
//! the catalog, or `/AA` from a field), so this module works on the bytes PDFium saved (and
//! `direct` applies the same [`clean`] to the objects it writes):
//!
//! 1. PDFium's full save (`FPDF_SaveAsCopy` without `FPDF_INCREMENTAL`) writes every object
//!    uncompressed (`N G obj … endobj`) with one classic cross-reference table. That output is
//!    parsed here with a small tokenizer (strings, names, numbers, arrays, dictionaries,
//!    references, streams by `/Length`). Anything else — an xref stream, an incremental
//!    section, an object that does not parse — is refused, never passed through.
//! 2. In every dictionary (stream dictionaries included):
//!    - always removed: `/AA` (additional actions of the catalog, pages, fields and
//!      annotations), `/OpenAction`, `/JavaScript` (the name tree of document scripts), `/JS`,
//!      `/EmbeddedFiles` (the name tree of attachments), `/EF` and `/RF` (a file
//!      specification's embedded file streams), `/AF` (associated files), `/Renditions` and
//!      `/AlternatePresentations` (name trees of media and slide shows), `/RichMediaContent`,
//!      `/RichMediaSettings`, `/3DD` (what RichMedia and 3D annotations play), and
//!      `/NeedAppearances` (appearances were just regenerated);
//!    - `/A` and `/PA` (the action of a link, widget, field or outline item) are kept only
//!      when they are a GoTo action (internal navigation); any other action (Launch, URI,
//!      SubmitForm, ResetForm, ImportData, GoToR, GoToE, JavaScript, Rendition, Sound,
//!      Movie, Hide, Named, SetOCGState, Trans, GoTo3DView, RichMediaExecute, or none
//!      recognisable) goes;
//!    - `/Next` (the actions chained after one) keeps only its GoTo actions;
//!    - `/Annots` loses FileAttachment, RichMedia, Screen, Movie, Sound and 3D annotations,
//!      and the pop-ups attached to them.
//! 3. Objects no longer reachable from the trailer (the removed actions, scripts, files and
//!    annotations among them) are dropped, so none of them stays in the file.
//! 4. The file is written back: untouched objects byte for byte, changed ones re-serialized
//!    from their original tokens (strings and numbers are copied verbatim, so an encrypted
//!    string stays valid under its object number), a fresh cross-reference table, the
//!    trailer's `/Root`, `/Info`, `/ID`.

use std::collections::{BTreeMap, BTreeSet};

/// Why the saved bytes could not be cleaned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SanitizeError(pub(super) &'static str);

type Result<T> = std::result::Result<T, SanitizeError>;

const MAX_DEPTH: usize = 256;

/// A PDF value, keeping the original bytes of everything that is copied through unchanged.
#[derive(Debug, Clone)]
pub(super) enum Obj<'a> {
    /// A number, a string (`(…)` or `<…>`), `true`, `false` or `null`, verbatim.
    Raw(&'a [u8]),
    /// A name, without its slash, as written (possibly with `#xx` escapes).
    Name(&'a [u8]),
    Array(Vec<Obj<'a>>),
    Dict(Dict<'a>),
    Ref(u32, u16),
}

pub(super) type Dict<'a> = Vec<(&'a [u8], Obj<'a>)>;

#[derive(Debug)]
struct Entry<'a> {
    generation: u16,
    /// `N G obj … endobj` as PDFium wrote it.
    raw: &'a [u8],
    value: Obj<'a>,
    /// Stream data (between `stream` EOL and `endstream`), when the object is a stream.
    stream: Option<&'a [u8]>,
    changed: bool,
}

/// Returns `pdf` without active content (see the module doc).
pub(super) fn strip_active_content(pdf: &[u8]) -> Result<Vec<u8>> {
    let (mut objects, trailer) = parse_file(pdf)?;
    let policy = Policy::new(objects.iter().filter(|(_, e)| e.stream.is_none()).map(|(n, e)| (*n, &e.value)));
    let numbers: Vec<u32> = objects.keys().copied().collect();
    for number in numbers {
        let Some(entry) = objects.get(&number) else { continue };
        let mut value = entry.value.clone();
        if clean_object(number, &mut value, &policy)?
            && let Some(entry) = objects.get_mut(&number)
        {
            entry.value = value;
            entry.changed = true;
        }
    }
    if objects.keys().next_back().is_some_and(|&n| n > 8_388_607) {
        return Err(SanitizeError("object numbers past PDF's limit"));
    }
    let reachable = reachable(&objects, &trailer)?;
    Ok(write_file(pdf, &objects, &reachable, &trailer))
}

// ---------------------------------------------------------------------------------------------
// Cleaning

pub(super) fn name_is(raw: &[u8], wanted: &[u8]) -> bool {
    if !raw.contains(&b'#') {
        return raw == wanted;
    }
    decode_name(raw) == wanted
}

pub(super) fn decode_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#'
            && i + 2 < raw.len()
            && let (Some(h), Some(l)) = (hex_value(raw[i + 1]), hex_value(raw[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

pub(super) fn get<'o, 'a>(dict: &'o Dict<'a>, key: &[u8]) -> Option<&'o Obj<'a>> {
    dict.iter().find(|(k, _)| name_is(k, key)).map(|(_, v)| v)
}

/// Keys removed from every dictionary, whatever their value (see the module doc).
const ALWAYS_REMOVED: [&[u8]; 14] = [
    b"AA",
    b"OpenAction",
    b"JavaScript",
    b"JS",
    b"EmbeddedFiles",
    b"EF",
    b"RF",
    b"AF",
    b"Renditions",
    b"AlternatePresentations",
    b"RichMediaContent",
    b"RichMediaSettings",
    b"3DD",
    b"NeedAppearances",
];

/// Annotations that embed files or play media; they leave every `/Annots`.
const REMOVED_ANNOTATIONS: [&[u8]; 6] = [b"FileAttachment", b"RichMedia", b"Screen", b"Movie", b"Sound", b"3D"];

/// What [`clean`] must know about the document's other objects, since actions and annotations
/// are usually references: which objects are GoTo actions (the only action kept), which
/// annotations go, and which objects are `/Annots` arrays.
#[derive(Debug, Default)]
pub(super) struct Policy {
    goto: BTreeSet<u32>,
    removed_annotations: BTreeSet<u32>,
    annots_arrays: BTreeSet<u32>,
}

impl Policy {
    /// From the document's objects (streams left out: no action or annotation is a stream).
    pub(super) fn new<'o, 'a: 'o>(objects: impl IntoIterator<Item = (u32, &'o Obj<'a>)>) -> Self {
        let objects: Vec<(u32, &Obj<'_>)> = objects.into_iter().collect();
        let mut policy = Self::default();
        for &(number, value) in &objects {
            let Obj::Dict(dict) = value else { continue };
            if is_goto_action_dict(value) {
                policy.goto.insert(number);
            }
            if is_removed_annotation(dict) {
                policy.removed_annotations.insert(number);
            }
            if let Some(Obj::Ref(n, _)) = get(dict, b"Annots") {
                policy.annots_arrays.insert(*n);
            }
        }
        // A pop-up belongs to its parent annotation and goes with it.
        for &(number, value) in &objects {
            let Obj::Dict(dict) = value else { continue };
            if matches!(get(dict, b"Subtype"), Some(Obj::Name(s)) if name_is(s, b"Popup"))
                && matches!(get(dict, b"Parent"), Some(Obj::Ref(p, _)) if policy.removed_annotations.contains(p))
            {
                policy.removed_annotations.insert(number);
            }
        }
        policy
    }

    /// Whether an action value (a dictionary or a reference) is a GoTo action.
    fn is_goto(&self, value: &Obj<'_>) -> bool {
        match value {
            Obj::Ref(n, _) => self.goto.contains(n),
            Obj::Dict(_) => is_goto_action_dict(value),
            Obj::Array(_) | Obj::Raw(_) | Obj::Name(_) => false,
        }
    }

    /// Whether an `/Annots` item is an annotation that goes.
    fn removes_annotation(&self, value: &Obj<'_>) -> bool {
        match value {
            Obj::Ref(n, _) => self.removed_annotations.contains(n),
            Obj::Dict(dict) => is_removed_annotation(dict),
            Obj::Array(_) | Obj::Raw(_) | Obj::Name(_) => false,
        }
    }
}

/// A GoTo action: internal navigation, the one action a filled copy keeps.
fn is_goto_action_dict(value: &Obj<'_>) -> bool {
    let Obj::Dict(dict) = value else { return false };
    matches!(get(dict, b"S"), Some(Obj::Name(s)) if name_is(s, b"GoTo"))
}

fn is_removed_annotation(dict: &Dict<'_>) -> bool {
    matches!(get(dict, b"Subtype"), Some(Obj::Name(s)) if REMOVED_ANNOTATIONS.iter().any(|r| name_is(s, r)))
}

/// [`clean`] for the top-level object `number` (an `/Annots` array may be an object of its own).
pub(super) fn clean_object(number: u32, value: &mut Obj<'_>, policy: &Policy) -> Result<bool> {
    let mut changed = false;
    if policy.annots_arrays.contains(&number)
        && let Obj::Array(items) = value
    {
        let before = items.len();
        items.retain(|item| !policy.removes_annotation(item));
        changed |= items.len() != before;
    }
    Ok(clean(value, policy, 0)? | changed)
}

/// Removes active entries from `value` and everything nested in it; true if anything changed.
fn clean(value: &mut Obj<'_>, policy: &Policy, depth: usize) -> Result<bool> {
    if depth > MAX_DEPTH {
        return Err(SanitizeError("objects nested too deeply"));
    }
    let mut changed = false;
    match value {
        Obj::Dict(dict) => {
            let before = dict.len();
            dict.retain(|(key, v)| {
                if ALWAYS_REMOVED.iter().any(|k| name_is(key, k)) {
                    return false;
                }
                if name_is(key, b"A") || name_is(key, b"PA") || (name_is(key, b"Next") && !matches!(v, Obj::Array(_))) {
                    return policy.is_goto(v);
                }
                true
            });
            for (key, v) in dict.iter_mut() {
                if let Obj::Array(items) = v {
                    let before = items.len();
                    if name_is(key, b"Next") {
                        items.retain(|item| policy.is_goto(item));
                    } else if name_is(key, b"Annots") {
                        items.retain(|item| !policy.removes_annotation(item));
                    }
                    changed |= items.len() != before;
                }
            }
            dict.retain(|(key, v)| !(name_is(key, b"Next") && matches!(v, Obj::Array(items) if items.is_empty())));
            changed |= dict.len() != before;
            for (_, v) in dict.iter_mut() {
                changed |= clean(v, policy, depth + 1)?;
            }
        }
        Obj::Array(items) => {
            for v in items.iter_mut() {
                changed |= clean(v, policy, depth + 1)?;
            }
        }
        Obj::Raw(_) | Obj::Name(_) | Obj::Ref(..) => {}
    }
    Ok(changed)
}

/// Object numbers reachable from the trailer.
fn reachable(objects: &BTreeMap<u32, Entry<'_>>, trailer: &Dict<'_>) -> Result<Vec<u32>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<u32> = Vec::new();
    for (_, v) in trailer.iter() {
        refs(v, &mut stack, 0)?;
    }
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        if let Some(entry) = objects.get(&n) {
            refs(&entry.value, &mut stack, 0)?;
        }
    }
    Ok(seen.into_iter().collect())
}

pub(super) fn refs(value: &Obj<'_>, out: &mut Vec<u32>, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(SanitizeError("objects nested too deeply"));
    }
    match value {
        Obj::Ref(n, _) => out.push(*n),
        Obj::Array(items) => {
            for v in items {
                refs(v, out, depth + 1)?;
            }
        }
        Obj::Dict(dict) => {
            for (_, v) in dict {
                refs(v, out, depth + 1)?;
            }
        }
        Obj::Raw(_) | Obj::Name(_) => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Writing

fn write_file(pdf: &[u8], objects: &BTreeMap<u32, Entry<'_>>, keep: &[u32], trailer: &Dict<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(pdf.len());
    // The header (`%PDF-1.x` and PDFium's binary comment) up to the first object.
    let first = objects.values().map(|e| e.raw.as_ptr() as usize - pdf.as_ptr() as usize).min().unwrap_or(0);
    out.extend_from_slice(&pdf[..first]);
    let size = keep.last().map_or(1, |n| n + 1);
    let mut offsets: Vec<Option<(usize, u16)>> = vec![None; size as usize];
    for &n in keep {
        let Some(entry) = objects.get(&n) else { continue };
        offsets[n as usize] = Some((out.len(), entry.generation));
        if entry.changed {
            out.extend_from_slice(format!("{n} {} obj\r\n", entry.generation).as_bytes());
            write_obj(&entry.value, &mut out);
            if let Some(data) = entry.stream {
                out.extend_from_slice(b"stream\r\n");
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\nendstream");
            }
            out.extend_from_slice(b"\r\nendobj\r\n");
        } else {
            out.extend_from_slice(entry.raw);
            out.extend_from_slice(b"\r\n");
        }
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\r\n0 {size}\r\n").as_bytes());
    // Free entries form a list from object 0 through every unused number back to 0.
    let free: Vec<usize> = (1..size as usize).filter(|&n| offsets[n].is_none()).collect();
    let mut next_free = free.iter().copied().chain(std::iter::once(0));
    out.extend_from_slice(format!("{:010} 65535 f\r\n", next_free.next().unwrap_or(0)).as_bytes());
    for slot in offsets.iter().skip(1) {
        match slot {
            Some((offset, generation)) => out.extend_from_slice(format!("{offset:010} {generation:05} n\r\n").as_bytes()),
            None => out.extend_from_slice(format!("{:010} 00001 f\r\n", next_free.next().unwrap_or(0)).as_bytes()),
        }
    }
    out.extend_from_slice(format!("trailer\r\n<</Size {size}").as_bytes());
    for (key, value) in trailer {
        if [&b"Size"[..], b"Prev", b"XRefStm"].iter().any(|k| name_is(key, k)) {
            continue;
        }
        out.push(b'/');
        out.extend_from_slice(key);
        out.push(b' ');
        write_obj(value, &mut out);
    }
    out.extend_from_slice(format!(">>\r\nstartxref\r\n{xref}\r\n%%EOF\r\n").as_bytes());
    out
}

pub(super) fn write_obj(value: &Obj<'_>, out: &mut Vec<u8>) {
    match value {
        Obj::Raw(raw) => out.extend_from_slice(raw),
        Obj::Name(raw) => {
            out.push(b'/');
            out.extend_from_slice(raw);
        }
        Obj::Ref(n, g) => out.extend_from_slice(format!("{n} {g} R").as_bytes()),
        Obj::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                write_obj(v, out);
            }
            out.push(b']');
        }
        Obj::Dict(dict) => {
            out.extend_from_slice(b"<<");
            for (key, v) in dict {
                out.push(b'/');
                out.extend_from_slice(key);
                out.push(b' ');
                write_obj(v, out);
            }
            out.extend_from_slice(b">>");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn parse_file(pdf: &[u8]) -> Result<(BTreeMap<u32, Entry<'_>>, Dict<'_>)> {
    let tail_start = pdf.len().saturating_sub(1024);
    let at = rfind(&pdf[tail_start..], b"startxref").ok_or(SanitizeError("no startxref"))? + tail_start;
    let mut lexer = Lexer { bytes: pdf, pos: at + b"startxref".len() };
    let xref = lexer.integer()?;
    let mut lexer = Lexer { bytes: pdf, pos: usize::try_from(xref).map_err(|_| SanitizeError("bad startxref"))? };
    if !lexer.keyword(b"xref") {
        return Err(SanitizeError("not a classic cross-reference table"));
    }
    let mut slots: Vec<(u32, usize, u16)> = Vec::new();
    loop {
        if lexer.keyword(b"trailer") {
            break;
        }
        let start = u32::try_from(lexer.integer()?).map_err(|_| SanitizeError("bad xref"))?;
        let count = u32::try_from(lexer.integer()?).map_err(|_| SanitizeError("bad xref"))?;
        for i in 0..count {
            let offset = usize::try_from(lexer.integer()?).map_err(|_| SanitizeError("bad xref"))?;
            let generation = u16::try_from(lexer.integer()?).map_err(|_| SanitizeError("bad xref"))?;
            if lexer.keyword(b"n") {
                slots.push((start + i, offset, generation));
            } else if !lexer.keyword(b"f") {
                return Err(SanitizeError("bad xref entry"));
            }
        }
    }
    let Obj::Dict(trailer) = lexer.value(0)? else { return Err(SanitizeError("bad trailer")) };
    if get(&trailer, b"Prev").is_some() || get(&trailer, b"XRefStm").is_some() {
        return Err(SanitizeError("an incremental update"));
    }
    let mut objects = BTreeMap::new();
    for (number, offset, generation) in slots {
        let entry = parse_object(pdf, number, offset, generation)?;
        objects.insert(number, entry);
    }
    Ok((objects, trailer))
}

fn parse_object(pdf: &[u8], number: u32, offset: usize, generation: u16) -> Result<Entry<'_>> {
    let mut lexer = Lexer { bytes: pdf, pos: offset };
    if lexer.integer()? != i64::from(number) || lexer.integer()? != i64::from(generation) || !lexer.keyword(b"obj") {
        return Err(SanitizeError("an object is not where the table says"));
    }
    let value = lexer.value(0)?;
    let mut stream = None;
    if lexer.keyword(b"stream") {
        let Obj::Dict(dict) = &value else { return Err(SanitizeError("a stream without a dictionary")) };
        let Some(Obj::Raw(length)) = get(dict, b"Length") else {
            return Err(SanitizeError("a stream without a direct length"));
        };
        let length: usize = std::str::from_utf8(length)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or(SanitizeError("a stream with a bad length"))?;
        // `stream` is followed by CRLF or LF.
        if pdf.get(lexer.pos) == Some(&b'\r') {
            lexer.pos += 1;
        }
        if pdf.get(lexer.pos) != Some(&b'\n') {
            return Err(SanitizeError("a stream keyword without an end of line"));
        }
        lexer.pos += 1;
        let end = lexer.pos.checked_add(length).filter(|&e| e <= pdf.len()).ok_or(SanitizeError("a stream past the end"))?;
        stream = Some(&pdf[lexer.pos..end]);
        lexer.pos = end;
        if !lexer.keyword(b"endstream") {
            return Err(SanitizeError("a stream without endstream"));
        }
    }
    if !lexer.keyword(b"endobj") {
        return Err(SanitizeError("an object without endobj"));
    }
    Ok(Entry { generation, raw: &pdf[offset..lexer.pos], value, stream, changed: false })
}

pub(super) fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

pub(super) struct Lexer<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

fn is_white(b: u8) -> bool {
    matches!(b, b'\0' | b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn is_delimiter(b: u8) -> bool {
    matches!(b, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

impl<'a> Lexer<'a> {
    pub(super) fn skip_white(&mut self) {
        // An offset read from a damaged file may point past the end.
        self.pos = self.pos.min(self.bytes.len());
        while let Some(&b) = self.bytes.get(self.pos) {
            if is_white(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(&c) = self.bytes.get(self.pos) {
                    if c == b'\r' || c == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// A run of regular characters (a number or a keyword).
    pub(super) fn regular(&mut self) -> &'a [u8] {
        self.skip_white();
        let start = self.pos;
        while let Some(&b) = self.bytes.get(self.pos) {
            if is_white(b) || is_delimiter(b) {
                break;
            }
            self.pos += 1;
        }
        &self.bytes[start..self.pos]
    }

    /// Consumes `word` if it is the next token.
    pub(super) fn keyword(&mut self, word: &[u8]) -> bool {
        let saved = self.pos;
        if self.regular() == word {
            return true;
        }
        self.pos = saved;
        false
    }

    pub(super) fn integer(&mut self) -> Result<i64> {
        let token = self.regular();
        std::str::from_utf8(token).ok().and_then(|s| s.parse().ok()).ok_or(SanitizeError("expected an integer"))
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Obj<'a>> {
        if depth > MAX_DEPTH {
            return Err(SanitizeError("objects nested too deeply"));
        }
        self.skip_white();
        let start = self.pos;
        match self.bytes.get(self.pos) {
            None => Err(SanitizeError("unexpected end")),
            Some(b'/') => {
                self.pos += 1;
                let name_start = self.pos;
                while let Some(&b) = self.bytes.get(self.pos) {
                    if is_white(b) || is_delimiter(b) {
                        break;
                    }
                    self.pos += 1;
                }
                Ok(Obj::Name(&self.bytes[name_start..self.pos]))
            }
            Some(b'(') => {
                self.literal_string()?;
                Ok(Obj::Raw(&self.bytes[start..self.pos]))
            }
            Some(b'<') if self.bytes.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                let mut dict = Vec::new();
                loop {
                    self.skip_white();
                    match self.bytes.get(self.pos) {
                        Some(b'>') if self.bytes.get(self.pos + 1) == Some(&b'>') => {
                            self.pos += 2;
                            return Ok(Obj::Dict(dict));
                        }
                        Some(b'/') => {
                            let Obj::Name(key) = self.value(depth + 1)? else {
                                return Err(SanitizeError("bad dictionary key"));
                            };
                            let value = self.value(depth + 1)?;
                            dict.push((key, value));
                        }
                        _ => return Err(SanitizeError("bad dictionary")),
                    }
                }
            }
            Some(b'<') => {
                let end = self.bytes[self.pos..].iter().position(|&b| b == b'>').ok_or(SanitizeError("open hex string"))?;
                self.pos += end + 1;
                Ok(Obj::Raw(&self.bytes[start..self.pos]))
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_white();
                    if self.bytes.get(self.pos) == Some(&b']') {
                        self.pos += 1;
                        return Ok(Obj::Array(items));
                    }
                    items.push(self.value(depth + 1)?);
                }
            }
            Some(_) => {
                let token = self.regular();
                if token.is_empty() {
                    return Err(SanitizeError("unexpected delimiter"));
                }
                if matches!(token, b"true" | b"false" | b"null") {
                    return Ok(Obj::Raw(token));
                }
                if !token.iter().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.')) {
                    return Err(SanitizeError("unexpected keyword"));
                }
                // `N G R` is a reference; otherwise the number stands alone.
                if token.iter().all(u8::is_ascii_digit) {
                    let saved = self.pos;
                    let generation = self.regular();
                    if !generation.is_empty() && generation.iter().all(u8::is_ascii_digit) && self.regular() == b"R" {
                        let n = std::str::from_utf8(token).ok().and_then(|s| s.parse().ok());
                        let g = std::str::from_utf8(generation).ok().and_then(|s| s.parse().ok());
                        if let (Some(n), Some(g)) = (n, g) {
                            return Ok(Obj::Ref(n, g));
                        }
                        return Err(SanitizeError("bad reference"));
                    }
                    self.pos = saved;
                }
                Ok(Obj::Raw(token))
            }
        }
    }

    /// Skips `( … )`, with nested parentheses and backslash escapes.
    fn literal_string(&mut self) -> Result<()> {
        let mut depth = 0usize;
        while let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(SanitizeError("open string"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A tiny PDF in PDFium's save layout, with offsets computed.
    fn build(objects: &[&str], trailer: &str) -> Vec<u8> {
        let mut out = b"%PDF-1.7\r\n%\xa1\xb3\xc5\xd7\r\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\r\n{body}\r\nendobj\r\n", i + 1).as_bytes());
        }
        let xref = out.len();
        out.extend_from_slice(format!("xref\r\n0 {}\r\n0000000000 65535 f\r\n", objects.len() + 1).as_bytes());
        for offset in offsets {
            out.extend_from_slice(format!("{offset:010} 00000 n\r\n").as_bytes());
        }
        out.extend_from_slice(format!("trailer\r\n{trailer}\r\nstartxref\r\n{xref}\r\n%%EOF\r\n").as_bytes());
        out
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn scripts_and_automatic_actions_go_and_their_objects_with_them() {
        let pdf = build(
            &[
                "<</Type/Catalog/Pages 2 0 R/OpenAction 4 0 R/AA<</WC 4 0 R>>/Names<</JavaScript 5 0 R/Dests 7 0 R>>/AcroForm<</Fields[3 0 R]/NeedAppearances true>>>>",
                "<</Type/Pages/Kids[]/Count 0>>",
                "<</FT/Tx/T(name \\(x\\))/V<FEFF0041>/AA<</K 4 0 R>>/A<</S/URI/URI(https://example.org)/Next[4 0 R]>>/Parent<</A 4 0 R>>>>",
                "<</S/JavaScript/JS(app.alert\\(1\\))>>",
                "<</Names[(x)4 0 R]>>",
                "<</Length 5>>stream\r\nhello\r\nendstream",
                "<</Names[]>>",
            ],
            "<</Size 8/Root 1 0 R/ID[<00><01>]>>",
        );
        let clean = strip_active_content(&pdf).unwrap();
        let s = text(&clean);
        for gone in ["/OpenAction", "/AA", "/JavaScript", "/JS", "app.alert", "/NeedAppearances", "/Next"] {
            assert!(!s.contains(gone), "{gone} left in:\n{s}");
        }
        // What is not active stays, verbatim.
        assert!(s.contains("/T (name \\(x\\))"), "{s}");
        assert!(s.contains("/V <FEFF0041>"), "{s}");
        // A link's URI action is active content too.
        assert!(!s.contains("/URI") && !s.contains("example.org"), "{s}");
        assert!(s.contains("/Dests 7 0 R"), "{s}");
        // The unreferenced stream went, the cleaned file parses again and is stable.
        assert!(!s.contains("hello"));
        let again = strip_active_content(&clean).unwrap();
        assert_eq!(text(&again), s);
    }

    #[test]
    fn only_goto_actions_stay_and_files_and_media_go() {
        let pdf = build(
            &[
                "<</Type/Catalog/Pages 2 0 R/Names<</EmbeddedFiles 9 0 R/Dests 11 0 R>>/Outlines 12 0 R/AF[8 0 R]>>",
                "<</Type/Pages/Kids[3 0 R]/Count 1>>",
                "<</Type/Page/Parent 2 0 R/Annots 4 0 R>>",
                "[5 0 R 6 0 R 7 0 R 13 0 R<</Subtype/Screen/A<</S/Rendition>>>>]",
                "<</Subtype/Link/A<</S/GoTo/D[3 0 R/Fit]/Next[<</S/Launch/F(calc.exe)>> 10 0 R]>>>>",
                "<</Subtype/Link/A<</S/Named/N/Print>>/PA<</S/URI/URI(https://example.org)>>>>",
                "<</Subtype/FileAttachment/FS 8 0 R/Popup 13 0 R>>",
                "<</Type/Filespec/F(a.exe)/EF<</F 14 0 R>>>>",
                "<</Names[(a.exe)8 0 R]>>",
                "<</S/GoTo/D[3 0 R/Fit]/Next<</S/SubmitForm/F(https://example.org)>>>>",
                "<</Names[]>>",
                "<</First 15 0 R/Last 15 0 R>>",
                "<</Subtype/Popup/Parent 7 0 R>>",
                "<</Type/EmbeddedFile/Length 7>>stream\r\npayload\r\nendstream",
                "<</Title(x)/Parent 12 0 R/A<</S/GoToR/F(other.pdf)/D[0/Fit]>>>>",
            ],
            "<</Size 16/Root 1 0 R>>",
        );
        let clean = strip_active_content(&pdf).unwrap();
        let s = text(&clean);
        for gone in [
            "/Launch", "/Named", "/URI", "/SubmitForm", "/GoToR", "/Rendition", "/Screen", "/FileAttachment", "/Popup",
            "/EmbeddedFile", "/EF", "/AF", "payload", "a.exe", "calc.exe",
        ] {
            assert!(!s.contains(gone), "{gone} left in:\n{s}");
        }
        // Internal navigation stays: the GoTo link, its GoTo successor, the outline item.
        assert!(s.contains("/A <</S /GoTo/D [3 0 R /Fit]/Next [10 0 R]>>"), "{s}");
        assert!(s.contains("10 0 obj\r\n<</S /GoTo/D [3 0 R /Fit]>>"), "{s}");
        assert!(s.contains("[5 0 R 6 0 R]"), "{s}");
        assert!(s.contains("/Title (x)") && s.contains("/Dests 11 0 R"), "{s}");
        let again = strip_active_content(&clean).unwrap();
        assert_eq!(text(&again), s);
    }

    #[test]
    fn escaped_names_are_recognised() {
        let pdf = build(&["<</Type/Catalog/Open#41ction 2 0 R/#41A<<>>>>", "<</S/Java#53cript/J#53(x)>>"], "<</Size 3/Root 1 0 R>>");
        let s = text(&strip_active_content(&pdf).unwrap());
        assert!(!s.contains("ction") && !s.contains("#41A") && !s.contains("2 0 obj"), "{s}");
    }

    #[test]
    fn what_it_cannot_read_is_refused() {
        assert!(strip_active_content(b"%PDF-1.7\nnothing").is_err());
        let pdf = build(&["<</Type/Catalog"], "<</Size 2/Root 1 0 R>>");
        assert!(strip_active_content(&pdf).is_err());
        let xref_stream = b"%PDF-1.7\r\n1 0 obj\r\n<</Type/XRef>>stream\r\n\r\nendstream\r\nendobj\r\nstartxref\r\n10\r\n%%EOF";
        assert!(strip_active_content(xref_stream).is_err());
    }
}
