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

use hearth_core::pdf::{FieldValues, FillPath, PdfEngine, default_library_path, fill_with_pdfium, fill_with_report, inspect};

#[path = "support/figure.rs"]
mod figure;

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
    let inspect_ms = report("inspect (load + 6 fields with values, 2 pages)", inspect_times);
    if only_inspect {
        return;
    }

    let fill_times = measure(|| {
        let (filled, path) = fill_with_report(&engine, FORM, &values).unwrap();
        assert_eq!(path, FillPath::Direct);
        assert!(filled.len() > FORM.len() / 2);
    });
    let fill_ms = report("fill, direct (load + fill 6 fields + save + PDFium read-back)", fill_times);

    let pdfium_times = measure(|| {
        let filled = fill_with_pdfium(&engine, FORM, &values).unwrap();
        assert!(filled.len() > FORM.len() / 2);
    });
    report("fill, PDFium form-fill fallback (load + fill 6 fields + save + clean)", pdfium_times);
    println!("load average after: {}", load_average());

    // pdf-lib 1.17.1 (the TypeScript stack OpenMuse uses) on the same bytes, in the same run.
    let pdf_lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pdf_lib");
    let out = figure::run_reference(&pdf_lib, "run.mjs", &[]).unwrap_or_default();
    let median_of = |what: &str| out.lines().find(|l| l.contains(what)).and_then(|l| figure::number_after(l, "median"));
    for (what, hearth, key) in
        [("PDF inspect (6-field form)", inspect_ms, "pdf-lib inspect"), ("PDF load → fill → save", fill_ms, "pdf-lib fill")]
    {
        let reference = median_of(key);
        let faster = reference.map_or_else(|| "no reference".to_owned(), |r| format!("{:.1}× faster", r / hearth));
        figure::figure(
            what,
            &format!("{hearth:.3} ms ({faster})"),
            &reference.map_or_else(|| "pdf-lib: not run".to_owned(), |r| format!("pdf-lib 1.17.1: {r:.3} ms")),
            "≥ 5× faster than pdf-lib",
        );
    }
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

/// Prints the median and p95, and returns the median in milliseconds.
fn report(what: &str, mut times: Vec<Duration>) -> f64 {
    times.sort();
    println!("{what}, {RUNS} runs: median {:?}, p95 {:?}", times[RUNS / 2], times[RUNS * 95 / 100]);
    times[RUNS / 2].as_secs_f64() * 1000.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
