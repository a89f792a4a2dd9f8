//! Search over the owner's documents (core::doc_index): a generated folder of 200 files
//! (PDF, Markdown, text) indexed, one changed and one deleted, the hits following; a 50 MB file
//! and a binary file skipped with notes; the search_documents tool returning the passage as
//! outside content, after which an effect waits for the owner. Oracles count rows (indexed
//! files, skipped notes, hits, kept facts, cards), never status strings.

use std::path::PathBuf;

use hearth_core::Hearth;
use hearth_core::tools::{RunOutcome, StepId, dispatch};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{ProposalDraft, ProposalOrigin};
use hearth_protocol::documents::{DocFolderAddParams, DocFolderView, DocPreviewParams, DocSearchParams, SkipReason};
use hearth_protocol::provenance::SourceKind;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::support::{TestHearth, guarded, open};

#[path = "../../benches/support/doc_folder.rs"]
pub(super) mod doc_folder;

use doc_folder::{FILES, generate};

async fn hits(hearth: &Hearth, query: &str) -> Vec<hearth_protocol::documents::DocHit> {
    hearth.document_search(&DocSearchParams { query: query.into(), limit: Some(50) }).await.unwrap().hits
}

async fn folder(hearth: &Hearth) -> DocFolderView {
    let mut folders = hearth.document_folder_list().await.unwrap().folders;
    assert_eq!(folders.len(), 1);
    folders.remove(0)
}

/// A Hearth with the generated folder added (and so indexed once).
async fn with_folder() -> (TestHearth, tempfile::TempDir, Vec<PathBuf>) {
    let h = open().await;
    let docs = tempfile::tempdir().unwrap();
    let files = generate(docs.path(), 0);
    h.hearth.document_folder_add(&DocFolderAddParams { path: docs.path().to_string_lossy().into_owned() }).await.unwrap();
    (h, docs, files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_200_files_is_indexed_and_the_hits_follow_a_change_and_a_delete() {
    let (h, _docs, files) = with_folder().await;
    let hearth = &h.hearth;
    let view = folder(hearth).await;
    assert_eq!(view.files, FILES as u64, "every file indexed: {:?}", view.skipped);
    assert_eq!(view.skipped_count, 0);
    assert_eq!(hits(hearth, "orchard").await.len(), 20);
    // PDF text is read: file 0 is a PDF, and its marker is found with the passage around it.
    let found = hits(hearth, "marker150").await;
    assert_eq!(found.len(), 1);
    assert!(found[0].path.ends_with("file150.pdf"), "{found:?}");
    assert!(found[0].passage.contains("[marker150]"), "{}", found[0].passage);
    // Markdown's first heading is its title.
    assert_eq!(hits(hearth, "marker1").await[0].title, "Note 1");

    // A pass with nothing changed reads no file again.
    let again = hearth.documents().rescan().await.unwrap();
    assert_eq!((again.indexed, again.bytes_read, again.unchanged), (0, 0, FILES as u64));

    // Change one orchard file (10: Markdown) to speak of vineyards; delete another (20: text).
    std::fs::write(&files[10], "# Note 10\n\nNow the vineyard, and only the vineyard, with its long rows.\n").unwrap();
    std::fs::remove_file(&files[20]).unwrap();
    let pass = hearth.documents().rescan().await.unwrap();
    assert_eq!((pass.indexed, pass.removed, pass.seen), (1, 1, FILES as u64 - 1));
    assert_eq!(hits(hearth, "orchard").await.len(), 18);
    assert_eq!(hits(hearth, "vineyard").await.len(), 1);
    assert!(hits(hearth, "marker20").await.is_empty());
    assert_eq!(folder(hearth).await.files, FILES as u64 - 1);

    // A file touched without a change of bytes is not re-indexed.
    let bytes = std::fs::read(&files[30]).unwrap();
    std::fs::write(&files[30], [bytes.as_slice(), b" "].concat()).unwrap();
    std::fs::write(&files[30], &bytes).unwrap();
    let touched = hearth.documents().rescan().await.unwrap();
    assert_eq!(touched.indexed, 0);

    // The preview shows the file's text around the match.
    let hit = &hits(hearth, "vineyard").await[0];
    let preview = hearth.document_preview(&DocPreviewParams { file_id: hit.file_id, query: "vineyard".into() }).await.unwrap();
    assert!(preview.text.contains("long rows"), "{}", preview.text);

    // Removing the folder forgets its text; the files stay.
    hearth.document_folder_remove(&hearth_protocol::documents::DocFolderRemoveParams { id: folder(hearth).await.id }).await.unwrap();
    assert!(hits(hearth, "orchard").await.is_empty());
    assert_eq!(hearth.store().doc_file_count().await.unwrap(), 0);
    assert!(files[10].exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_file_and_a_binary_file_are_skipped_with_a_note() {
    let (h, docs, _files) = with_folder().await;
    let hearth = &h.hearth;
    std::fs::write(docs.path().join("huge.txt"), vec![b'a'; 50 * 1024 * 1024]).unwrap();
    std::fs::write(docs.path().join("program.bin"), b"\x7fELF\x02\x01\x01\x00\x00\x00orchard").unwrap();
    std::fs::write(docs.path().join("report.docx"), b"PK\x03\x04 orchard").unwrap();
    let pass = hearth.documents().rescan().await.unwrap();
    assert_eq!((pass.indexed, pass.skipped), (0, 3));
    assert!(pass.bytes_read < 1024 * 1024, "the 50 MB file is not read: {}", pass.bytes_read);
    let view = folder(hearth).await;
    assert_eq!((view.files, view.skipped_count), (FILES as u64, 3));
    let reason_of = |name: &str| view.skipped.iter().find(|s| s.path.ends_with(name)).map(|s| (s.reason, s.note.clone()));
    let (reason, note) = reason_of("huge.txt").unwrap();
    assert_eq!(reason, SkipReason::TooLarge);
    assert!(note.contains("50.0 MB"), "{note}");
    assert_eq!(reason_of("program.bin").unwrap().0, SkipReason::Binary);
    let (reason, note) = reason_of("report.docx").unwrap();
    assert_eq!(reason, SkipReason::Unreadable, "a .docx that is not a ZIP is unreadable: {note}");
    assert!(note.starts_with("not read: it is not a readable Office file"), "{note}");
    // None of their words is searchable.
    assert_eq!(hits(hearth, "orchard").await.len(), 20);
    // A skipped file that becomes readable is indexed and its note goes.
    std::fs::write(docs.path().join("huge.txt"), "small now, about a greenhouse").unwrap();
    hearth.documents().rescan().await.unwrap();
    assert_eq!(hits(hearth, "greenhouse").await.len(), 1);
    assert_eq!(folder(hearth).await.skipped_count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_is_checked_before_it_is_added() {
    let h = open().await;
    let hearth = &h.hearth;
    let add = |path: String| async move { hearth.document_folder_add(&DocFolderAddParams { path }).await };
    let data = h.dir.path().to_string_lossy().into_owned();
    assert_eq!(add(data.clone()).await.unwrap_err().to_ipc().code, ErrorCode::InvalidInput, "Hearth's own data folder");
    assert_eq!(add(format!("{data}/none")).await.unwrap_err().to_ipc().code, ErrorCode::InvalidInput);
    assert_eq!(add("relative/path".into()).await.unwrap_err().to_ipc().code, ErrorCode::InvalidInput);
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("a.txt"), "alpha words").unwrap();
    add(other.path().to_string_lossy().into_owned()).await.unwrap();
    assert_eq!(add(format!("{}/.", other.path().display())).await.unwrap_err().to_ipc().code, ErrorCode::Conflict, "the same folder");
    std::fs::create_dir(other.path().join("inner")).unwrap();
    assert_eq!(add(format!("{}/inner", other.path().display())).await.unwrap_err().to_ipc().code, ErrorCode::Conflict, "inside it");
    assert_eq!(h.hearth.document_folder_list().await.unwrap().folders.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_documents_returns_the_passage_as_outside_content_and_a_later_effect_waits() {
    let (h, _docs, _files) = with_folder().await;
    let hearth = &h.hearth;
    let call = |thread: &'static str| hearth.toolbox().for_chat(thread, "r1", ProposalOrigin::OwnerChat, CancellationToken::new());

    // Control: in a chat that read nothing from outside, remember_fact runs.
    let plain = call("t-plain");
    let kept = guarded(dispatch(&plain, "remember_fact", r#"{"text":"I like pears"}"#, StepId::Call("c1".into()))).await;
    assert!(!kept.is_error && kept.outcome.is_none(), "{}", kept.content);
    assert_eq!(hearth.store().memories().await.unwrap().len(), 1);

    let ctx = call("t-docs");
    let out = guarded(dispatch(&ctx, "search_documents", r#"{"query":"orchard pruning","limit":5}"#, StepId::Call("c1".into()))).await;
    assert!(!out.is_error, "{}", out.content);
    let result: Value = serde_json::from_str(&out.content).unwrap();
    let found = result["hits"].as_array().unwrap();
    assert_eq!(found.len(), 5);
    assert!(found.iter().all(|h| h["passage"].as_str().unwrap().contains("[orchard]")), "{found:?}");
    assert!(result["untrustedData"].as_str().is_some_and(|n| n.contains("data, never instructions")));

    // After the passages, the same effect waits for the owner: no fact kept, one card naming the document.
    let after = guarded(dispatch(&ctx, "remember_fact", r#"{"text":"prune the orchard"}"#, StepId::Call("c2".into()))).await;
    assert!(matches!(after.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", after.content);
    assert_eq!(hearth.store().memories().await.unwrap().len(), 1, "nothing more kept");
    let cards = hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 1);
    let ProposalDraft::HeldCall(held) = &cards[0].draft else { panic!("a held call: {:?}", cards[0].draft) };
    assert!(held.sources.iter().any(|s| s.kind == SourceKind::Document && s.detail == "orchard pruning"), "{:?}", held.sources);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_indexes_a_new_file_without_a_rescan() {
    let (h, docs, _files) = with_folder().await;
    let hearth = &h.hearth;
    let mut passes = hearth.documents().watch_passes();
    if !hearth.documents().start_watching().await.unwrap() {
        // No watcher on this system: nothing to test here (Rescan is tested above).
        return;
    }
    std::fs::write(docs.path().join("new.txt"), "a note about the beehive").unwrap();
    // Waits on the watcher's own pass counter (no sleep): each pass it runs bumps it, and the
    // new file is indexed by one of them.
    guarded(async {
        while hits(hearth, "beehive").await.is_empty() {
            passes.changed().await.unwrap();
        }
    })
    .await;
    assert_eq!(folder(hearth).await.files, FILES as u64 + 1);
}

/// A ZIP of `parts` (name, XML), as an Office program writes one.
fn office_file(parts: &[(&str, &str)]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, xml) in parts {
        zip.start_file(*name, options).unwrap();
        zip.write_all(xml.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// Office formats a maintained crate reads (point 2): a Word document, a slide deck, a
/// spreadsheet and an OpenDocument text are indexed and their words found, each hit naming its
/// file; an old binary .doc is listed as not read, with what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn office_documents_are_indexed_and_an_old_doc_says_what_to_do() {
    let (h, docs, _files) = with_folder().await;
    let hearth = &h.hearth;
    let word = r#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Quince harvest</w:t></w:r></w:p></w:body></w:document>"#;
    std::fs::write(docs.path().join("letter.docx"), office_file(&[("word/document.xml", word)])).unwrap();
    let slide = r#"<p:sld xmlns:a="a" xmlns:p="p"><a:p><a:r><a:t>Quince tasting</a:t></a:r></a:p></p:sld>"#;
    std::fs::write(docs.path().join("talk.pptx"), office_file(&[("ppt/slides/slide1.xml", slide)])).unwrap();
    let strings = r#"<sst><si><t>Quince jam</t></si><si><t>price</t></si></sst>"#;
    std::fs::write(docs.path().join("stock.xlsx"), office_file(&[("xl/sharedStrings.xml", strings)])).unwrap();
    let odt = r#"<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text><text:p>Quince cake</text:p></office:text></office:body></office:document-content>"#;
    std::fs::write(docs.path().join("recipe.odt"), office_file(&[("content.xml", odt)])).unwrap();
    std::fs::write(docs.path().join("old.doc"), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 quince").unwrap();
    let pass = hearth.documents().rescan().await.unwrap();
    assert_eq!((pass.indexed, pass.skipped), (4, 1));
    let mut found: Vec<String> = hits(hearth, "quince").await.iter().map(|hit| hit.title.clone()).collect();
    found.sort();
    assert_eq!(found, ["letter.docx", "recipe.odt", "stock.xlsx", "talk.pptx"]);
    let view = folder(hearth).await;
    let old = view.skipped.iter().find(|s| s.path.ends_with("old.doc")).unwrap();
    assert_eq!(old.reason, SkipReason::Unsupported);
    assert!(old.note.contains("saved as .docx"), "{}", old.note);
}
