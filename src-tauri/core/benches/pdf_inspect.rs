//! The fixed PDF benchmark: the 2-page, 6-field permission form (benches/data), inspected 200
//! times, then loaded, filled with benches/data/permission-form.fill.json and saved 200 times.
//! Prints median and p95 of each; asserts only that the work was done.
//!
//! `cargo bench -p hearth-core --bench pdf_inspect` (needs libpdfium: scripts/setup.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::pdf::{FieldValues, PdfEngine, default_library_path, fill, inspect};

const RUNS: usize = 200;
const FORM: &[u8] = include_bytes!("data/permission-form.pdf");
/// Field name → text (a string) or checkbox state (a boolean): the shape of `FieldValues`.
const VALUES: &str = include_str!("data/permission-form.fill.json");

fn main() {
    let engine = PdfEngine::load(&default_library_path()).unwrap();
    let values: FieldValues = serde_json::from_str(VALUES).unwrap();

    let inspect_times = measure(|| {
        let info = inspect(&engine, FORM).unwrap();
        assert_eq!(info.fields.len(), 6);
    });
    report("inspect (load + 6 fields with values, 2 pages)", inspect_times);

    let fill_times = measure(|| {
        let filled = fill(&engine, FORM, &values).unwrap();
        assert!(filled.len() > FORM.len() / 2);
    });
    report("fill (load + fill 6 fields + save + clean)", fill_times);
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
