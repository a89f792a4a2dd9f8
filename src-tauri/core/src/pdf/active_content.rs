//! Removing active content from a filled copy: every action but GoTo, scripts, embedded files,
//! and multimedia annotations. Both fill paths end here (the form writer on its own objects,
//! PDFium's form filler on the bytes PDFium saved, loaded again with lopdf), because PDFium's
//! API can read scripts and actions but cannot delete a dictionary entry.
//!
//! In every dictionary (stream dictionaries included):
//! - always removed: `/AA` (additional actions of the catalog, pages, fields and annotations),
//!   `/OpenAction`, `/JavaScript` (the name tree of document scripts), `/JS`, `/EmbeddedFiles`
//!   (the name tree of attachments), `/EF` and `/RF` (a file specification's embedded file
//!   streams), `/AF` (associated files), `/Renditions` and `/AlternatePresentations` (name
//!   trees of media and slide shows), `/RichMediaContent`, `/RichMediaSettings`, `/3DD` (what
//!   RichMedia and 3D annotations play), and `/NeedAppearances` (appearances were just
//!   regenerated);
//! - `/A` and `/PA` (the action of a link, widget, field or outline item) are kept only when
//!   they are a GoTo action (internal navigation); any other action (Launch, URI, SubmitForm,
//!   ResetForm, ImportData, GoToR, GoToE, JavaScript, Rendition, Sound, Movie, Hide, Named,
//!   SetOCGState, Trans, GoTo3DView, RichMediaExecute, or none recognisable) goes;
//! - `/Next` (the actions chained after one) keeps only its GoTo actions;
//! - `/Annots` loses FileAttachment, RichMedia, Screen, Movie, Sound and 3D annotations, and
//!   the pop-ups attached to them.
//!
//! Then [`keep_reachable`] drops every object no longer reachable from the trailer (the
//! removed actions, scripts, files and annotations among them), so none of them stays in the
//! file, and the trailer keeps only `/Root`, `/Info` and `/ID`.

use std::collections::{BTreeSet, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::appearance::Unsupported;
use super::budget::Budget;
use super::objects::is_name;
use super::{PdfError, objects};

const MAX_DEPTH: usize = 256;

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

/// What cleaning must know about the document's other objects, since actions and annotations
/// are usually references.
#[derive(Debug, Default)]
struct Policy {
    goto: BTreeSet<ObjectId>,
    removed_annotations: BTreeSet<ObjectId>,
    annots_arrays: BTreeSet<ObjectId>,
}

impl Policy {
    fn new(doc: &Document) -> Self {
        let mut policy = Self::default();
        for (&id, object) in &doc.objects {
            let Object::Dictionary(dict) = object else { continue };
            if is_goto_action(dict) {
                policy.goto.insert(id);
            }
            if is_removed_annotation(dict) {
                policy.removed_annotations.insert(id);
            }
            if let Ok(Object::Reference(annots)) = dict.get(b"Annots") {
                policy.annots_arrays.insert(*annots);
            }
        }
        // A pop-up belongs to its parent annotation and goes with it.
        for (&id, object) in &doc.objects {
            let Object::Dictionary(dict) = object else { continue };
            if dict.get(b"Subtype").is_ok_and(|s| is_name(s, b"Popup"))
                && dict.get(b"Parent").is_ok_and(|p| p.as_reference().is_ok_and(|p| policy.removed_annotations.contains(&p)))
            {
                policy.removed_annotations.insert(id);
            }
        }
        policy
    }

    /// Whether an action value (a dictionary or a reference) is a GoTo action.
    fn is_goto(&self, value: &Object) -> bool {
        match value {
            Object::Reference(id) => self.goto.contains(id),
            Object::Dictionary(dict) => is_goto_action(dict),
            _ => false,
        }
    }

    /// Whether an `/Annots` item is an annotation that goes.
    fn removes_annotation(&self, value: &Object) -> bool {
        match value {
            Object::Reference(id) => self.removed_annotations.contains(id),
            Object::Dictionary(dict) => is_removed_annotation(dict),
            _ => false,
        }
    }
}

/// A GoTo action: internal navigation, the one action a filled copy keeps.
fn is_goto_action(dict: &Dictionary) -> bool {
    dict.get(b"S").is_ok_and(|s| is_name(s, b"GoTo"))
}

fn is_removed_annotation(dict: &Dictionary) -> bool {
    dict.get(b"Subtype").is_ok_and(|s| REMOVED_ANNOTATIONS.iter().any(|r| is_name(s, r)))
}

/// Removes active content from every object of `doc` (see the module doc).
pub(super) fn strip(doc: &mut Document, budget: &Budget) -> Result<(), PdfError> {
    let policy = Policy::new(doc);
    for (id, object) in doc.objects.iter_mut() {
        budget.node("its objects")?;
        if policy.annots_arrays.contains(id)
            && let Object::Array(items) = object
        {
            items.retain(|item| !policy.removes_annotation(item));
        }
        clean(object, &policy, 0)?;
    }
    clean_dict(&mut doc.trailer, &policy, 0)?;
    Ok(())
}

fn clean(value: &mut Object, policy: &Policy, depth: usize) -> Result<(), PdfError> {
    if depth > MAX_DEPTH {
        return Err(PdfError::Malformed { what: "objects nested too deeply" });
    }
    match value {
        Object::Dictionary(dict) => clean_dict(dict, policy, depth),
        Object::Stream(stream) => clean_dict(&mut stream.dict, policy, depth),
        Object::Array(items) => items.iter_mut().try_for_each(|v| clean(v, policy, depth + 1)),
        Object::Null
        | Object::Boolean(_)
        | Object::Integer(_)
        | Object::Real(_)
        | Object::Name(_)
        | Object::String(..)
        | Object::Reference(_) => Ok(()),
    }
}

fn clean_dict(dict: &mut Dictionary, policy: &Policy, depth: usize) -> Result<(), PdfError> {
    let map = dict.as_hashmap_mut();
    map.retain(|key, v| {
        if ALWAYS_REMOVED.contains(&key.as_slice()) {
            return false;
        }
        if key == b"A" || key == b"PA" || (key == b"Next" && !matches!(v, Object::Array(_))) {
            return policy.is_goto(v);
        }
        true
    });
    for (key, v) in map.iter_mut() {
        if let Object::Array(items) = v {
            if key == b"Next" {
                items.retain(|item| policy.is_goto(item));
            } else if key == b"Annots" {
                items.retain(|item| !policy.removes_annotation(item));
            }
        }
    }
    map.retain(|key, v| !(key == b"Next" && matches!(v, Object::Array(items) if items.is_empty())));
    for v in map.values_mut() {
        clean(v, policy, depth + 1)?;
    }
    Ok(())
}

/// Keeps only the objects reachable from the trailer's `/Root`, `/Info` and `/ID`, and only
/// those trailer entries. A reference to an object the document does not have is legal (it
/// reads as null) but is also what a damaged file PDFium repairs looks like: `Err(reason)`.
pub(super) fn keep_reachable(doc: &mut Document, budget: &Budget) -> Result<Result<(), Unsupported>, PdfError> {
    let trailer = &mut doc.trailer;
    trailer.as_hashmap_mut().retain(|key, _| matches!(key.as_slice(), b"Root" | b"Info" | b"ID"));
    let mut stack: Vec<ObjectId> = Vec::new();
    for value in doc.trailer.as_hashmap().values() {
        references(value, &mut stack, 0)?;
    }
    let mut keep = HashSet::new();
    while let Some(id) = stack.pop() {
        if keep.contains(&id) {
            continue;
        }
        budget.node("its objects")?;
        let Some(object) = doc.objects.get(&id) else {
            return Ok(Err("a reference to an object the file does not have"));
        };
        references(object, &mut stack, 0)?;
        keep.insert(id);
    }
    doc.objects.retain(|id, _| keep.contains(id));
    Ok(Ok(()))
}

fn references(value: &Object, out: &mut Vec<ObjectId>, depth: usize) -> Result<(), PdfError> {
    if depth > MAX_DEPTH {
        return Err(PdfError::Malformed { what: "objects nested too deeply" });
    }
    match value {
        Object::Reference(id) => out.push(*id),
        Object::Array(items) => items.iter().try_for_each(|v| references(v, out, depth + 1))?,
        Object::Dictionary(dict) => dict.iter().try_for_each(|(_, v)| references(v, out, depth + 1))?,
        Object::Stream(stream) => stream.dict.iter().try_for_each(|(_, v)| references(v, out, depth + 1))?,
        Object::Null | Object::Boolean(_) | Object::Integer(_) | Object::Real(_) | Object::Name(_) | Object::String(..) => {}
    }
    Ok(())
}

/// PDFium's saved bytes without active content: loaded with lopdf, cleaned, written again.
pub(super) fn strip_saved(saved: &[u8], budget: &Budget) -> Result<Vec<u8>, PdfError> {
    let mut loaded = objects::load_output(saved, budget)?;
    let doc = &mut loaded.doc;
    strip(doc, budget)?;
    if let Err(reason) = keep_reachable(doc, budget)? {
        return Err(PdfError::SaveFailed { detail: format!("cleaning it failed: {reason}") });
    }
    if doc.objects.keys().next_back().is_some_and(|&(n, _)| n > objects::MAX_OBJECT) {
        return Err(PdfError::SaveFailed { detail: "object numbers past PDF's limit".into() });
    }
    objects::save(doc)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use lopdf::{Stream, dictionary};

    use super::*;

    fn name(n: &str) -> Object {
        Object::Name(n.as_bytes().to_vec())
    }

    /// A document with one of each kind of active content, and the GoTo navigation that stays.
    fn loaded_with_everything() -> (Document, ObjectId, ObjectId) {
        let mut doc = Document::with_version("1.7");
        let goto = doc.add_object(dictionary! { "S" => name("GoTo"), "D" => Object::Array(vec![]) });
        let script = doc.add_object(dictionary! { "S" => name("JavaScript"), "JS" => Object::string_literal("app.alert(1)") });
        let launch = doc.add_object(dictionary! { "S" => name("Launch"), "F" => Object::string_literal("calc.exe") });
        let file = doc.add_object(Stream::new(dictionary! { "Type" => name("EmbeddedFile") }, b"MZ payload".to_vec()));
        let spec = doc.add_object(dictionary! { "Type" => name("Filespec"), "EF" => dictionary! { "F" => file } });
        let attachment = doc.add_object(dictionary! { "Type" => name("Annot"), "Subtype" => name("FileAttachment"), "FS" => spec });
        let popup = doc.add_object(dictionary! { "Type" => name("Annot"), "Subtype" => name("Popup"), "Parent" => attachment });
        let uri_link = doc.add_object(dictionary! {
            "Type" => name("Annot"), "Subtype" => name("Link"),
            "A" => dictionary! { "S" => name("URI"), "URI" => Object::string_literal("https://evil.example") },
        });
        let goto_link = doc.add_object(dictionary! {
            "Type" => name("Annot"), "Subtype" => name("Link"), "A" => goto,
            "Next" => Object::Array(vec![Object::Reference(goto), Object::Reference(script)]),
        });
        let annots = doc.add_object(Object::Array(vec![
            Object::Reference(attachment),
            Object::Reference(popup),
            Object::Reference(uri_link),
            Object::Reference(goto_link),
        ]));
        let widget = doc.add_object(dictionary! {
            "Type" => name("Annot"), "Subtype" => name("Widget"), "T" => Object::string_literal("f"),
            "AA" => dictionary! { "K" => script }, "PA" => launch,
            "A" => dictionary! { "S" => name("SubmitForm"), "F" => Object::string_literal("https://evil.example") },
        });
        let page = doc.add_object(dictionary! { "Type" => name("Page"), "Annots" => annots, "AA" => dictionary! { "O" => script } });
        let pages = doc.add_object(dictionary! { "Type" => name("Pages"), "Kids" => vec![Object::Reference(page)], "Count" => 1 });
        let outline = doc.add_object(dictionary! { "Title" => Object::string_literal("x"), "A" => dictionary! { "S" => name("GoToR"), "F" => Object::string_literal("other.pdf") } });
        let catalog = doc.add_object(dictionary! {
            "Type" => name("Catalog"), "Pages" => pages, "OpenAction" => launch,
            "Names" => dictionary! { "JavaScript" => dictionary! { "Names" => vec![Object::string_literal("s"), Object::Reference(script)] },
                                     "EmbeddedFiles" => dictionary! { "Names" => vec![Object::string_literal("f"), Object::Reference(spec)] } },
            "Outlines" => dictionary! { "First" => outline },
            "AcroForm" => dictionary! { "Fields" => vec![Object::Reference(widget)], "NeedAppearances" => true },
            "AF" => vec![Object::Reference(spec)],
        });
        doc.trailer.set("Root", catalog);
        (doc, goto_link, goto)
    }

    #[test]
    fn every_active_kind_goes_and_goto_navigation_stays() {
        let (mut doc, goto_link, goto) = loaded_with_everything();
        let budget = Budget::standard();
        strip(&mut doc, &budget).unwrap();
        assert!(keep_reachable(&mut doc, &budget).unwrap().is_ok());
        let saved = objects::save(&mut doc).unwrap();
        let count = |needle: &[u8]| saved.windows(needle.len()).filter(|w| *w == needle).count();
        for gone in [
            &b"/JavaScript"[..],
            b"/JS",
            b"app.alert",
            b"/Launch",
            b"calc.exe",
            b"/OpenAction",
            b"/AA",
            b"/EmbeddedFile",
            b"MZ payload",
            b"/FileAttachment",
            b"/Popup",
            b"/URI",
            b"/SubmitForm",
            b"/GoToR",
            b"/AF",
            b"/NeedAppearances",
        ] {
            assert_eq!(count(gone), 0, "{} survived", String::from_utf8_lossy(gone));
        }
        // The GoTo link keeps its action and the GoTo part of its /Next chain.
        let link = doc.get_dictionary(goto_link).unwrap();
        assert_eq!(link.get(b"A").unwrap().as_reference().unwrap(), goto);
        assert_eq!(link.get(b"Next").unwrap().as_array().unwrap(), &vec![Object::Reference(goto)]);
        assert_eq!(count(b"/GoTo"), 1);
    }

    #[test]
    fn stripping_twice_changes_nothing_more() {
        let (mut doc, _, _) = loaded_with_everything();
        let budget = Budget::standard();
        strip(&mut doc, &budget).unwrap();
        assert!(keep_reachable(&mut doc, &budget).unwrap().is_ok());
        let once = objects::save(&mut doc).unwrap();
        strip(&mut doc, &budget).unwrap();
        assert!(keep_reachable(&mut doc, &budget).unwrap().is_ok());
        assert_eq!(objects::save(&mut doc).unwrap(), once);
    }

    #[test]
    fn a_reference_to_a_missing_object_is_not_written_over() {
        let mut doc = Document::with_version("1.7");
        let catalog = doc.add_object(dictionary! { "Type" => name("Catalog"), "Pages" => Object::Reference((99, 0)) });
        doc.trailer.set("Root", catalog);
        assert!(keep_reachable(&mut doc, &Budget::standard()).unwrap().is_err());
    }
}
