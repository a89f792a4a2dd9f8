//! Hostile PDFs (issue 10): each is refused or bounded with a clear message, within the
//! budget, asserted from the budget's counters (never from wall-clock time), and a second PDF
//! operation completes while a hostile one is being refused.
//!
//! The files are built here, object by object with a correct cross-reference table, so each
//! test says exactly what is hostile about its file.

use std::io::Write as _;
use std::sync::{Arc, Mutex, mpsc};

use hearth_core::pdf::{Budget, Limits, PdfEngine, PdfError, default_library_path, fill_within, inspect, inspect_within};
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;
use tokio_util::sync::CancellationToken;

fn engine() -> PdfEngine {
    PdfEngine::load(&default_library_path()).expect("libpdfium (scripts/test.sh installs it)")
}

/// A PDF of `objects` (object n is `objects[n - 1]`, written as given) with a classic xref
/// table and a trailer whose /Root is 1.
fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    pdf_with_trailer(objects, "/Root 1 0 R")
}

fn pdf_with_trailer(objects: &[Vec<u8>], trailer: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        writeln!(out, "{} 0 obj", i + 1).unwrap();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f\r\n", objects.len() + 1).unwrap();
    for offset in offsets {
        write!(out, "{offset:010} 00000 n\r\n").unwrap();
    }
    write!(out, "trailer\n<</Size {} {trailer}>>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).unwrap();
    out
}

/// Where the last cross-reference table starts (found in the bytes: the header's binary
/// comment is not UTF-8).
fn last_xref(bytes: &[u8]) -> usize {
    bytes.windows(7).rposition(|w| w == b"xref\n0 ").unwrap()
}

fn obj(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

const PAGE: &str = "<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>";

#[test]
fn a_doubled_page_tree_is_refused_after_a_handful_of_nodes_not_2_pow_63_walks() {
    // Node k (k = 2..64) lists node k+1 twice; node 65 is the page.
    let mut objects = vec![obj("<</Type/Catalog/Pages 2 0 R>>")];
    for k in 2..=64 {
        objects.push(obj(&format!("<</Type/Pages/Kids[{n} 0 R {n} 0 R]/Count 1>>", n = k + 1)));
    }
    objects.push(obj("<</Type/Page/Parent 64 0 R/MediaBox[0 0 200 200]>>"));
    let bytes = pdf(&objects);
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &bytes, &budget).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("twice")), "{err}");
    // 65 objects loaded, then the walk meets node 65's second listing after at most 64 + 2 nodes.
    assert!(budget.spent().nodes < 200, "{:?}", budget.spent());
    assert!(err.to_string().contains("Ask the sender"));
}

#[test]
fn a_huge_count_is_refused_before_the_tree_is_walked() {
    let bytes = pdf(&[obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 2147483647>>"), obj(PAGE)]);
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &bytes, &budget).unwrap_err();
    assert!(matches!(err, PdfError::TooManyPages { .. }), "{err}");
    // The three objects loaded and their three cross-reference entries checked; no tree node.
    assert_eq!(budget.spent().nodes, 6);
}

#[test]
fn a_cyclic_parent_chain_is_refused() {
    // Page 3's /Parent is 4, whose /Parent is 3: a loop PDFium would follow for inherited
    // attributes.
    let bytes = pdf(&[
        obj("<</Type/Catalog/Pages 2 0 R>>"),
        obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"),
        obj("<</Type/Page/Parent 4 0 R/MediaBox[0 0 200 200]>>"),
        obj("<</Type/Pages/Parent 3 0 R/Kids[3 0 R]/Count 1>>"),
    ]);
    let err = inspect(&engine(), &bytes).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("/Parent")), "{err}");
}

#[test]
fn a_field_tree_that_loops_is_refused() {
    let bytes = pdf(&[
        obj("<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[4 0 R]>>>>"),
        obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"),
        obj(PAGE),
        obj("<</T(a)/FT/Tx/Kids[5 0 R]>>"),
        obj("<</T(b)/Kids[4 0 R]>>"),
    ]);
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &bytes, &budget).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("field")), "{err}");
    assert!(budget.spent().nodes < 20, "{:?}", budget.spent());
}

#[test]
fn a_cyclic_prev_chain_is_read_once() {
    // Two cross-reference sections whose /Prev point at each other.
    let objects = [obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"), obj(PAGE)];
    // The first section's /Prev is a fixed-width placeholder, patched once the second
    // section's offset is known, so no offset moves.
    let mut bytes = pdf_with_trailer(&objects, "/Root 1 0 R/Prev 0000000000");
    let first_xref = last_xref(&bytes);
    let second_xref = bytes.len();
    write!(bytes, "xref\n0 1\n0000000000 65535 f\r\ntrailer\n<</Size 4/Root 1 0 R/Prev {first_xref}>>\nstartxref\n{second_xref}\n%%EOF\n")
        .unwrap();
    let at = bytes.windows(16).position(|w| w == b"/Prev 0000000000").unwrap() + 6;
    bytes[at..at + 10].copy_from_slice(format!("{second_xref:010}").as_bytes());
    let budget = Budget::standard();
    let info = inspect_within(&engine(), &bytes, &budget).unwrap();
    assert_eq!(info.pages, 1);
    assert!(budget.spent().nodes < 20, "{:?}", budget.spent());
}

#[test]
fn a_truncated_xref_is_refused_or_repaired_never_hung() {
    let whole = pdf(&[obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"), obj(PAGE)]);
    let xref = last_xref(&whole);
    for cut in [xref + 10, xref + 30, whole.len() - 10] {
        let budget = Budget::standard();
        match inspect_within(&engine(), &whole[..cut], &budget) {
            // lopdf rebuilds a lost table by scanning for objects: the one page is found.
            Ok(info) => assert_eq!(info.pages, 1),
            Err(err) => assert!(matches!(err, PdfError::Damaged { .. }), "cut at {cut}: {err}"),
        }
        assert!(budget.spent().nodes < 20, "{:?}", budget.spent());
    }
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A file of `streams` object streams, each inflating to `inflated` bytes (one tiny object,
/// then spaces).
fn object_stream_bomb(streams: usize, inflated: usize) -> Vec<u8> {
    let mut data = b"10 0 ".to_vec();
    data.extend_from_slice(b"42");
    data.resize(inflated, b' ');
    let packed = deflate(&data);
    let mut objects = vec![obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"), obj(PAGE)];
    for _ in 0..streams {
        let mut body = format!("<</Type/ObjStm/N 1/First 5/Filter/FlateDecode/Length {}>>\nstream\n", packed.len()).into_bytes();
        body.extend_from_slice(&packed);
        body.extend_from_slice(b"\nendstream");
        objects.push(body);
    }
    pdf(&objects)
}

#[test]
fn an_object_stream_bomb_stops_at_the_inflate_budget() {
    // 40 streams of 8 MiB each: 320 MiB if inflated, from a file of about 330 KB.
    let bytes = object_stream_bomb(40, 8 * 1024 * 1024);
    assert!(bytes.len() < 1024 * 1024, "{} bytes", bytes.len());
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &bytes, &budget).unwrap_err();
    assert!(matches!(err, PdfError::TooComplex { what: "its compressed streams", .. }), "{err}");
    let spent = budget.spent();
    assert!(spent.inflated_bytes <= Limits::STANDARD.inflated_bytes, "{spent:?}");
    assert!(spent.inflated_bytes >= 15 * 8 * 1024 * 1024, "it really inflated up to the limit: {spent:?}");
    // A small budget is honoured exactly the same way.
    let small = Budget::new(Limits { inflated_bytes: 20 * 1024 * 1024, ..Limits::STANDARD }, None);
    assert!(matches!(inspect_within(&engine(), &bytes, &small), Err(PdfError::TooComplex { .. })));
    assert!(small.spent().inflated_bytes <= 20 * 1024 * 1024);
}

#[test]
fn a_stop_ends_the_walk_of_a_hostile_file_at_its_next_node() {
    let bytes = object_stream_bomb(40, 1024 * 1024);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let budget = Budget::with_probe(
        Limits::STANDARD,
        Some(cancel),
        Arc::new(move |spent| {
            if spent.nodes == 6 {
                stop.cancel();
            }
        }),
    );
    let err = fill_within(&engine(), &bytes, &Default::default(), &budget).unwrap_err();
    assert!(matches!(err, PdfError::Stopped), "{err}");
    assert_eq!(budget.spent().nodes, 6, "nothing was counted after the Stop (lopdf drops, unparsed into the document, every later object)");
}

#[test]
fn a_second_pdf_operation_completes_while_a_hostile_one_is_being_refused() {
    let mut objects = vec![obj("<</Type/Catalog/Pages 2 0 R>>")];
    for k in 2..=64 {
        objects.push(obj(&format!("<</Type/Pages/Kids[{n} 0 R {n} 0 R]/Count 1>>", n = k + 1)));
    }
    objects.push(obj("<</Type/Page/Parent 64 0 R/MediaBox[0 0 200 200]>>"));
    let hostile = pdf(&objects);
    // The hostile walk stops at its 70th node (in its page tree) until the second operation
    // has finished.
    let (reached_tx, reached) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let budget = Budget::with_probe(
        Limits::STANDARD,
        None,
        Arc::new(move |spent| {
            if spent.nodes == 70 {
                reached_tx.send(()).unwrap();
                release_rx.lock().unwrap().recv().unwrap();
            }
        }),
    );
    let engine = engine();
    let held = {
        let engine = engine.clone();
        std::thread::spawn(move || inspect_within(&engine, &hostile, &budget))
    };
    reached.recv().unwrap();
    // Both take the PDFium lock: neither could finish if the held walk had it.
    let second = inspect(&engine, PERMISSION_FORM_PDF).unwrap();
    assert_eq!(second.fields.len(), 6);
    let text = hearth_core::pdf::extract_text(&engine, PERMISSION_FORM_PDF).unwrap();
    assert_eq!(text.len(), 2);
    let page = hearth_core::pdf::render_page(&engine, PERMISSION_FORM_PDF, 1, 0.5).unwrap();
    assert!(page.png.starts_with(b"\x89PNG"));
    release.send(()).unwrap();
    assert!(matches!(held.join().unwrap(), Err(PdfError::Malformed { .. })));
}

/// PDFs in the data folder's files directory.
fn pdf_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "pdf")).count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_pdf_work_saves_nothing_and_the_retry_imports_once() {
    let t = super::support::open().await;
    let files = t.hearth.files();
    let dir = t.hearth.config().files_dir();
    let (info, bytes) = t.hearth.mail().fetch_attachment("att-permission-form").await.unwrap();
    // The import's PDF work stops at its 5th node until released, and says when it goes on.
    let (reached_tx, reached_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (resumed_tx, resumed_rx) = mpsc::channel::<()>();
    let hold = Mutex::new(Some((reached_tx, release_rx, resumed_tx)));
    files.set_pdf_probe(Some(Arc::new(move |spent| {
        if spent.nodes == 5
            && let Some((reached, release, resumed)) = hold.lock().unwrap().take()
        {
            reached.send(()).unwrap();
            release.recv().unwrap();
            resumed.send(()).unwrap();
        }
    })));
    let cancel = CancellationToken::new();
    let import = {
        let (files, bytes, name, source, cancel) = (files.clone(), bytes.clone(), info.filename.clone(), info.id.clone(), cancel.clone());
        tokio::spawn(async move { files.import_unless_stopped("stopped-form", bytes, &name, &source, &cancel).await })
    };
    tokio::task::spawn_blocking(move || reached_rx.recv().unwrap()).await.unwrap();
    cancel.cancel();
    // Stop answers while the PDF work is still held in the middle of its walk.
    let stopped = import.await.unwrap().unwrap_err();
    assert!(matches!(stopped, hearth_core::error::CoreError::Stopped(_)), "{stopped}");
    assert_eq!(pdf_files(&dir), 0);
    assert!(files.list().await.unwrap().is_empty());
    // The held work goes on, sees the Stop at its next node, and writes nothing.
    release_tx.send(()).unwrap();
    tokio::task::spawn_blocking(move || resumed_rx.recv().unwrap()).await.unwrap();
    files.set_pdf_probe(None);
    // The Retry imports the file once.
    let row = files.import("stopped-form", bytes, &info.filename, &info.id).await.unwrap();
    assert_eq!(row.id, "stopped-form");
    assert_eq!(pdf_files(&dir), 1);
    assert_eq!(files.list().await.unwrap().len(), 1);
}

#[test]
fn a_doubled_tree_under_a_node_typed_page_is_refused() {
    // PDFium treats any node with /Kids as internal, whatever its /Type: so does Hearth.
    let mut objects = vec![obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 1>>")];
    objects.push(obj("<</Type/Page/Parent 2 0 R/Kids[4 0 R 4 0 R]>>"));
    for k in 4..=40 {
        objects.push(obj(&format!("<</Type/Pages/Kids[{n} 0 R {n} 0 R]>>", n = k + 1)));
    }
    objects.push(obj(PAGE));
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &pdf(&objects), &budget).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { .. }), "{err}");
    assert!(budget.spent().nodes < 200, "{:?}", budget.spent());
}

#[test]
fn a_doubled_field_tree_of_nameless_nodes_is_refused_before_pdfium_walks_it() {
    // /Kids of nodes with neither /T nor a widget: PDFium's LoadField recurses into them all.
    let mut objects =
        vec![obj("<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[4 0 R]>>>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"), obj(PAGE)];
    for k in 4..=34 {
        objects.push(obj(&format!("<</Kids[{n} 0 R {n} 0 R]>>", n = k + 1)));
    }
    objects.push(obj("<</T(x)/FT/Tx>>"));
    let bytes = pdf(&objects);
    let budget = Budget::standard();
    let err = inspect_within(&engine(), &bytes, &budget).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("field")), "{err}");
    assert!(budget.spent().nodes < 200, "{:?}", budget.spent());
    // Rendering checks the same trees before PDFium sees the file.
    assert!(matches!(hearth_core::pdf::render_page(&engine(), &bytes, 1, 1.0), Err(PdfError::Malformed { .. })));
}

#[test]
fn a_widget_parent_loop_is_refused() {
    let bytes = pdf(&[
        obj("<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[]>>>>"),
        obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"),
        obj("<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Annots[4 0 R]>>"),
        obj("<</Type/Annot/Subtype/Widget/Rect[0 0 10 10]/Parent 5 0 R>>"),
        obj("<</T(a)/Parent 4 0 R>>"),
    ]);
    let err = inspect(&engine(), &bytes).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("/Parent")), "{err}");
}

#[test]
fn an_entry_whose_object_says_another_number_is_refused() {
    // Entry 5 points at a second "2 0 obj": lopdf would keep one tree, PDFium another.
    let mut bytes = pdf(&[
        obj("<</Type/Catalog/Pages 2 0 R>>"),
        obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"),
        obj(PAGE),
        obj("<</Filler true>>"),
        obj("<</Type/Pages/Kids[3 0 R]/Count 1>>"),
    ]);
    let at = bytes.windows(8).rposition(|w| w == b"5 0 obj\n").unwrap();
    bytes[at] = b'2';
    let err = inspect(&engine(), &bytes).unwrap_err();
    assert!(matches!(err, PdfError::Damaged { .. }), "{err}");
}

#[test]
fn a_count_that_disagrees_with_the_tree_is_refused() {
    let bytes = pdf(&[obj("<</Type/Catalog/Pages 2 0 R>>"), obj("<</Type/Pages/Kids[3 0 R]/Count 7>>"), obj(PAGE)]);
    let err = inspect(&engine(), &bytes).unwrap_err();
    assert!(matches!(err, PdfError::Malformed { what } if what.contains("count")), "{err}");
}
