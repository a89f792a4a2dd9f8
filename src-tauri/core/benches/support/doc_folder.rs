//! The generated document folder the doc_index tests and bench share: 200 files, a third each
//! PDF, Markdown and plain text, some in a subfolder, each with its own marker word and every
//! tenth with "orchard". Included with `#[path]` by `tests/suite/doc_index.rs` and
//! `benches/doc_index.rs`.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// Files in the folder.
pub const FILES: usize = 200;

/// A one-page PDF of `lines` (Helvetica, so PDFium reads the text back as written; the content
/// stream is not compressed).
pub fn text_pdf(lines: &[String]) -> Vec<u8> {
    let shown: Vec<String> =
        lines.iter().map(|line| format!("({}) Tj T*", line.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)"))).collect();
    let content = format!("BT /F1 10 Tf 12 TL 72 760 Td {} ET", shown.join(" "));
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
    ];
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f\r\n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n\r\n").as_bytes());
    }
    out.extend_from_slice(format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes());
    out
}

/// The first line of file `i`: its own marker, and "orchard" in every tenth file.
pub fn words_of(i: usize) -> String {
    let shared = if i.is_multiple_of(10) { " The orchard needs pruning before spring." } else { "" };
    format!("Document number {i} mentions marker{i} and the weekly shopping list.{shared}")
}

/// `n` lines of filler that differ by file and line (so the index has real vocabulary).
pub fn filler(i: usize, n: usize) -> Vec<String> {
    const WORDS: [&str; 16] = [
        "invoice",
        "garden",
        "meeting",
        "holiday",
        "receipt",
        "insurance",
        "contract",
        "school",
        "recipe",
        "doctor",
        "mortgage",
        "travel",
        "warranty",
        "letter",
        "budget",
        "library",
    ];
    (0..n)
        .map(|l| format!("Line {l} of file {i}: the {} about the {} was filed.", WORDS[(i + l) % 16], WORDS[(i * 7 + l * 3) % 16]))
        .collect()
}

/// Writes the folder into `dir`, each file with `extra` lines of filler after its first.
pub fn generate(dir: &Path, extra: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    (0..FILES)
        .map(|i| {
            let folder = if i.is_multiple_of(4) { dir.join("sub") } else { dir.to_path_buf() };
            let mut lines = vec![words_of(i)];
            lines.extend(filler(i, extra));
            let (path, bytes) = match i % 3 {
                0 => (folder.join(format!("file{i:03}.pdf")), text_pdf(&lines)),
                1 => (folder.join(format!("file{i:03}.md")), format!("# Note {i}\n\n{}\n", lines.join("\n")).into_bytes()),
                _ => (folder.join(format!("file{i:03}.txt")), lines.join("\n").into_bytes()),
            };
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}
