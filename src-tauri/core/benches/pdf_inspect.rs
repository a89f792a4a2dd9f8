//! Inspecting the 2-page, 6-field permission form (the fixed benchmark input), 200 times;
//! prints the median. The fill benchmark joins it when filling lands (issue 4).
//!
//! `cargo bench -p hearth-core --bench pdf_inspect` (needs libpdfium: scripts/setup.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::pdf::{PdfEngine, default_library_path, inspect};
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;

const RUNS: usize = 200;

fn main() {
    let engine = PdfEngine::load(&default_library_path()).unwrap();
    // Warm-up: the first load maps PDFium's code and fonts.
    for _ in 0..10 {
        inspect(&engine, PERMISSION_FORM_PDF).unwrap();
    }
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let info = inspect(&engine, PERMISSION_FORM_PDF).unwrap();
            let elapsed = started.elapsed();
            assert_eq!(info.fields.len(), 6);
            elapsed
        })
        .collect();
    times.sort();
    println!(
        "inspect (load + list 6 fields, 2 pages), {RUNS} runs: median {:?}, p95 {:?}",
        times[RUNS / 2],
        times[RUNS * 95 / 100]
    );
}
