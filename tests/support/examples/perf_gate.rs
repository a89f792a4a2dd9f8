//! `perf_gate check|update <gungraun home> <baseline.json>` — see `hearth_testkit::perf_gate`.
//! Exit status: 0 when every hot path is within the limit (or the baseline was written),
//! 1 when the gate fails, 2 on bad input.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::ExitCode;

use hearth_testkit::perf_gate::{Baseline, baseline_json, compare, read_baseline, read_measured, report};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, home, baseline_path] = args.as_slice() else {
        eprintln!("usage: perf_gate check|update <gungraun home> <baseline.json>");
        return ExitCode::from(2);
    };
    let (home, baseline_path) = (PathBuf::from(home), PathBuf::from(baseline_path));
    let rustc = std::env::var("HEARTH_RUSTC_VERSION").unwrap_or_else(|_| "unknown".into());
    let measured = match read_measured(&home) {
        Ok(measured) => measured,
        Err(err) => {
            eprintln!("perf gate: {err}");
            return ExitCode::from(2);
        }
    };
    match mode.as_str() {
        "check" => {
            let baseline = match read_baseline(&baseline_path) {
                Ok(baseline) => baseline,
                Err(err) => {
                    eprintln!("perf gate: {err}");
                    return ExitCode::from(2);
                }
            };
            let rows = compare(&baseline, &measured);
            print!("{}", report(&baseline, &rows, &rustc));
            if rows.iter().any(|row| row.verdict.fails()) { ExitCode::from(1) } else { ExitCode::SUCCESS }
        }
        "update" => {
            let limit_pct = read_baseline(&baseline_path).map_or(5.0, |old| old.limit_pct);
            let baseline = Baseline { limit_pct, rustc, instructions: measured };
            if let Err(err) = std::fs::write(&baseline_path, baseline_json(&baseline)) {
                eprintln!("perf gate: cannot write {}: {err}", baseline_path.display());
                return ExitCode::from(2);
            }
            print!("{}", report(&baseline, &compare(&baseline, &baseline.instructions), &baseline.rustc));
            println!("wrote {}; commit it with the reason for the change", baseline_path.display());
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("perf gate: unknown mode {other:?}; use check or update");
            ExitCode::from(2)
        }
    }
}
