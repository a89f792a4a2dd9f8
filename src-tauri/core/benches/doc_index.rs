//! Search over the owner's documents: indexing throughput (files/s and MB/s of a first pass
//! over the generated folder: walk, read, hash, extract — PDFs through PDFium — and the FTS5
//! insert) and query latency p50/p95 (`Hearth::document_search`: the query built, bm25,
//! snippet), beside ripgrep searching the same folder for the same words in the same run —
//! or, where ripgrep is not installed, `grep -r`, and the figure says so. Figures only.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hearth_core::{Config, Hearth};
use hearth_protocol::documents::{DocFolderAddParams, DocSearchParams};

#[path = "support/doc_folder.rs"]
mod doc_folder;
#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;

/// Filler lines per file: about 12 KB of text a file.
const EXTRA_LINES: usize = 200;
/// First passes timed (a fresh Hearth each), the median reported.
const PASSES: usize = 3;
const QUERIES: usize = 300;

fn quantiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.50), at(0.95))
}

fn folder_bytes(dir: &Path) -> u64 {
    walk(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

/// The reference searcher: ripgrep if installed, else grep -r (named in the figure).
fn reference() -> (&'static str, Vec<&'static str>) {
    match Command::new("rg").arg("--version").output() {
        Ok(out) if out.status.success() => ("ripgrep", vec!["rg", "-l", "-i", "-F", "--no-messages"]),
        _ => ("grep -r (ripgrep not installed)", vec!["grep", "-r", "-l", "-i", "-F"]),
    }
}

fn search_with(reference: &[&str], word: &str, dir: &Path) -> usize {
    let out = Command::new(reference[0]).args(&reference[1..]).arg(word).arg(dir).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn word(n: usize) -> String {
    match n % 3 {
        0 => format!("marker{}", (n * 37) % doc_folder::FILES),
        1 => "orchard".to_owned(),
        _ => ["invoice", "warranty", "mortgage", "holiday"][n % 4].to_owned(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    let docs = tempfile::tempdir().unwrap();
    doc_folder::generate(docs.path(), EXTRA_LINES);
    let bytes = folder_bytes(docs.path());
    let files = doc_folder::FILES as f64;
    println!("folder: {} files, {:.2} MB", doc_folder::FILES, bytes as f64 / 1e6);

    let mut passes = Vec::new();
    let mut kept = None;
    for _ in 0..PASSES {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path());
        config.start_workers = false;
        let hearth = Hearth::open(config).await.unwrap();
        let at = Instant::now();
        hearth.document_folder_add(&DocFolderAddParams { path: docs.path().to_string_lossy().into_owned() }).await.unwrap();
        passes.push(at.elapsed());
        let listed = hearth.document_folder_list().await.unwrap().folders;
        assert_eq!(listed[0].files, doc_folder::FILES as u64, "{:?}", listed[0].skipped);
        if let Some((old, _)) = kept.replace((hearth, dir)) {
            old.shutdown().await;
        }
    }
    passes.sort();
    let pass = passes[PASSES / 2].as_secs_f64();
    let (files_s, mb_s) = (files / pass, bytes as f64 / 1e6 / pass);
    println!("first pass (median of {PASSES}): {:.1} ms = {files_s:.0} files/s, {mb_s:.1} MB/s", pass * 1e3);
    let (hearth, _dir) = kept.unwrap();

    let at = Instant::now();
    let again = hearth.documents().rescan().await.unwrap();
    let rescan_ms = at.elapsed().as_secs_f64() * 1e3;
    assert_eq!(again.indexed, 0);
    println!("a pass with nothing changed: {rescan_ms:.1} ms");

    let (name, reference) = reference();
    let (mut ours, mut theirs) = (Vec::with_capacity(QUERIES), Vec::with_capacity(QUERIES));
    for n in 0..QUERIES {
        let word = word(n);
        let at = Instant::now();
        let hits = hearth.document_search(&DocSearchParams { query: word.clone(), limit: Some(10) }).await.unwrap().hits;
        ours.push(at.elapsed());
        assert!(!hits.is_empty(), "{word}");
        let at = Instant::now();
        let found = search_with(&reference, &word, docs.path());
        theirs.push(at.elapsed());
        assert!(found > 0, "{name} found no {word}");
    }
    let ((h50, h95), (r50, r95)) = (quantiles(ours), quantiles(theirs));
    println!("query through Hearth (FTS5, bm25, snippet, top 10): p50 {h50:.3} ms, p95 {h95:.3} ms");
    println!("{name} over the same folder: p50 {r50:.3} ms, p95 {r95:.3} ms");
    let scan_mb_s = bytes as f64 / 1e6 / (r50 / 1e3);
    figure::figure(
        "document indexing, first pass over 200 files (PDF, Markdown, text)",
        &format!("{files_s:.0} files/s, {mb_s:.1} MB/s"),
        &format!("{name} reads the same folder at {scan_mb_s:.0} MB/s per query (no index)"),
        "no target: a figure",
    );
    figure::figure(
        "document search latency, p50 (p95)",
        &format!("{h50:.3} ms ({h95:.3})"),
        &format!("{name}: {r50:.3} ms ({r95:.3})"),
        "no target: a figure",
    );
    hearth.shutdown().await;
    println!("load average after: {}", scripted::load_average());
}
