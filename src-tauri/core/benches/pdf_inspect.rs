//! The fixed PDF benchmark: the 2-page, 6-field permission form (benches/data), 200 runs each of
//! - inspect;
//! - load → fill with benches/data/permission-form.fill.json → save, as `fill` does it: the
//!   direct path, including PDFium opening the output and reading every value back;
//! - the same through PDFium's form-fill module (the fallback), for comparison.
//!
//! Prints median and p95 of each, and the load average before and after (the machine may be
//! shared); asserts only that the work was done and which path `fill` took.
//!
//! `cargo bench -p hearth-core --bench pdf_inspect` (needs libpdfium: scripts/setup.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::pdf::{
    FieldValues, FillPath, PdfEngine, default_library_path, fill_with_pdfium, fill_with_report, inspect,
};

const RUNS: usize = 200;
const FORM: &[u8] = include_bytes!("data/permission-form.pdf");
/// Field name → text (a string) or checkbox state (a boolean): the shape of `FieldValues`.
const VALUES: &str = include_str!("data/permission-form.fill.json");

fn main() {
    let engine = PdfEngine::load(&default_library_path()).unwrap();
    let values: FieldValues = serde_json::from_str(VALUES).unwrap();
    println!("load average before: {}", load_average());

    // HEARTH_BENCH_ONLY=inspect runs only the first measurement (for profiling).
    let only_inspect = std::env::var("HEARTH_BENCH_ONLY").is_ok_and(|v| v == "inspect");
    let inspect_times = measure(|| {
        let info = inspect(&engine, FORM).unwrap();
        assert_eq!(info.fields.len(), 6);
    });
    report("inspect (load + 6 fields with values, 2 pages)", inspect_times);
    if only_inspect {
        return;
    }

    let fill_times = measure(|| {
        let (filled, path) = fill_with_report(&engine, FORM, &values).unwrap();
        assert_eq!(path, FillPath::Direct);
        assert!(filled.len() > FORM.len() / 2);
    });
    report("fill, direct (load + fill 6 fields + save + PDFium read-back)", fill_times);

    let pdfium_times = measure(|| {
        let filled = fill_with_pdfium(&engine, FORM, &values).unwrap();
        assert!(filled.len() > FORM.len() / 2);
    });
    report("fill, PDFium form-fill fallback (load + fill 6 fields + save + clean)", pdfium_times);
    println!("load average after: {}", load_average());
}

/// Ten warm-up runs (the first load maps PDFium's code and fonts), then `RUNS` timed ones.
fn measure(mut run: impl FnMut()) -> Vec<Duration> {
    for _ in 0..10 {
        run();
    }
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect()
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    println!("{what}, {RUNS} runs: median {:?}, p95 {:?}", times[RUNS / 2], times[RUNS * 95 / 100]);
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
