//! The per-change performance gate: instruction counts measured by callgrind (gungraun, in
//! `src-tauri/core/benches/instructions.rs`) against the counts committed in
//! `src-tauri/core/benches/instructions.baseline.json`.
//!
//! Why our own comparison rather than gungraun's baselines: gungraun keeps a baseline as the
//! full callgrind output files of a previous run in its home folder — megabytes per bench,
//! unreadable in a diff, and tied to one machine's target folder. The committed baseline here
//! is one number per hot path, so a change to it is a reviewable one-line diff, and updating
//! it is an explicit step (`scripts/perf-gate.sh --update`) that a commit records.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The committed baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The growth (in percent) above which a count fails the gate.
    pub limit_pct: f64,
    /// The compiler the counts were measured with (counts move with the compiler; a new one
    /// is a reason to re-measure, which the report says).
    pub rustc: String,
    /// Instructions per benchmark (`function.id`).
    pub instructions: BTreeMap<String, u64>,
}

/// What went wrong reading the inputs. Each says which file and what to do.
#[derive(Debug)]
pub enum GateError {
    /// A file could not be read.
    Read { path: PathBuf, error: std::io::Error },
    /// A file is not what gungraun or the baseline format writes.
    Format { path: PathBuf, detail: String },
    /// The measured folder held no summaries (the bench did not run, or ran without
    /// `--save-summary=json`).
    NoSummaries { dir: PathBuf },
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            Self::Format { path, detail } => write!(f, "{} is not in the expected format: {detail}", path.display()),
            Self::NoSummaries { dir } => write!(
                f,
                "no gungraun summary.json under {}: run the instructions bench with --save-summary=json --home={}",
                dir.display(),
                dir.display()
            ),
        }
    }
}

impl std::error::Error for GateError {}

/// One benchmark's line in the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Within the limit (growth or shrink in percent).
    Within(f64),
    /// Grew past the limit (growth in percent).
    Regressed(f64),
    /// Shrank past the limit (in percent): a gain the baseline must record, or the room it
    /// leaves would let a later regression through — and a bench that stopped measuring its
    /// work looks like this too.
    Improved(f64),
    /// Measured, but the baseline has no count for it: the baseline must be updated.
    NotInBaseline,
    /// In the baseline, but not measured: the bench was removed or failed to run.
    NotMeasured,
}

impl Verdict {
    /// Whether this line fails the gate.
    pub fn fails(&self) -> bool {
        match self {
            Self::Within(_) => false,
            Self::Regressed(_) | Self::Improved(_) | Self::NotInBaseline | Self::NotMeasured => true,
        }
    }
}

/// A row of the before/after table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `function.id`.
    pub bench: String,
    /// The committed count.
    pub before: Option<u64>,
    /// The measured count.
    pub after: Option<u64>,
    /// What the gate says.
    pub verdict: Verdict,
}

/// Reads the committed baseline.
pub fn read_baseline(path: &Path) -> Result<Baseline, GateError> {
    let text = std::fs::read_to_string(path).map_err(|error| GateError::Read { path: path.to_owned(), error })?;
    let format = |detail: &str| GateError::Format { path: path.to_owned(), detail: detail.to_owned() };
    let value: Value = serde_json::from_str(&text).map_err(|e| format(&e.to_string()))?;
    let limit_pct = value["limit_pct"].as_f64().filter(|l| *l > 0.0).ok_or_else(|| format("limit_pct must be a positive number"))?;
    let rustc = value["rustc"].as_str().ok_or_else(|| format("rustc must be a string"))?.to_owned();
    let counts = value["instructions"].as_object().ok_or_else(|| format("instructions must be an object"))?;
    let mut instructions = BTreeMap::new();
    for (bench, count) in counts {
        let count = count.as_u64().ok_or_else(|| format(&format!("instructions.{bench} must be a whole number")))?;
        instructions.insert(bench.clone(), count);
    }
    Ok(Baseline { limit_pct, rustc, instructions })
}

/// The baseline file's text (stable key order, one count per line).
pub fn baseline_json(baseline: &Baseline) -> String {
    let value = serde_json::json!({
        "limit_pct": baseline.limit_pct,
        "rustc": baseline.rustc,
        "instructions": baseline.instructions,
    });
    // serde_json's pretty printer; the map is a BTreeMap, so the order is the benches' names.
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// Collects `function.id → instructions` from every gungraun `summary.json` under `dir`.
pub fn read_measured(dir: &Path) -> Result<BTreeMap<String, u64>, GateError> {
    let mut files = Vec::new();
    collect_summaries(dir, &mut files)?;
    if files.is_empty() {
        return Err(GateError::NoSummaries { dir: dir.to_owned() });
    }
    let mut measured = BTreeMap::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|error| GateError::Read { path: path.clone(), error })?;
        let (bench, count) = parse_summary(&text).map_err(|detail| GateError::Format { path: path.clone(), detail })?;
        measured.insert(bench, count);
    }
    Ok(measured)
}

fn collect_summaries(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), GateError> {
    let entries = std::fs::read_dir(dir).map_err(|error| GateError::Read { path: dir.to_owned(), error })?;
    for entry in entries {
        let path = entry.map_err(|error| GateError::Read { path: dir.to_owned(), error })?.path();
        if path.is_dir() {
            collect_summaries(&path, out)?;
        } else if path.file_name().is_some_and(|name| name == "summary.json") {
            out.push(path);
        }
    }
    Ok(())
}

/// One gungraun summary: its bench name and the total instructions (Ir) over every thread.
pub fn parse_summary(text: &str) -> Result<(String, u64), String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let function = value["function_name"].as_str().ok_or("no function_name")?;
    let bench = match value["id"].as_str() {
        Some(id) => format!("{function}.{id}"),
        None => function.to_owned(),
    };
    let profiles = value["profiles"].as_array().ok_or("no profiles")?;
    let callgrind = profiles.iter().find(|p| p["tool"] == "Callgrind").ok_or("no Callgrind profile")?;
    let count = callgrind["data"]["total"]["metrics"]["Ir"]["values"]["new"].as_u64().ok_or("no total Ir count")?;
    Ok((bench, count))
}

/// Compares the measured counts with the baseline: one row per bench in either.
pub fn compare(baseline: &Baseline, measured: &BTreeMap<String, u64>) -> Vec<Row> {
    let mut names: Vec<&String> = baseline.instructions.keys().chain(measured.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|bench| {
            let before = baseline.instructions.get(bench).copied();
            let after = measured.get(bench).copied();
            let verdict = match (before, after) {
                (Some(before), Some(after)) => {
                    let change = (after as f64 - before as f64) * 100.0 / before.max(1) as f64;
                    if change > baseline.limit_pct {
                        Verdict::Regressed(change)
                    } else if change < -baseline.limit_pct {
                        Verdict::Improved(change)
                    } else {
                        Verdict::Within(change)
                    }
                }
                (None, Some(_)) => Verdict::NotInBaseline,
                (Some(_), None) | (None, None) => Verdict::NotMeasured,
            };
            Row { bench: bench.clone(), before, after, verdict }
        })
        .collect()
}

/// The before/after table, and what to do when it fails.
pub fn report(baseline: &Baseline, rows: &[Row], rustc_now: &str) -> String {
    let mut out = String::new();
    let count = |n: Option<u64>| n.map_or_else(|| "—".to_owned(), |n| n.to_string());
    let _ = writeln!(out, "{:<34} {:>14} {:>14} {:>9}  verdict (limit ±{}%)", "hot path", "baseline", "now", "change", baseline.limit_pct);
    for row in rows {
        let (change, verdict) = match &row.verdict {
            Verdict::Within(pct) => (format!("{pct:+.2}%"), "ok"),
            Verdict::Regressed(pct) => (format!("{pct:+.2}%"), "REGRESSED"),
            Verdict::Improved(pct) => (format!("{pct:+.2}%"), "IMPROVED: record it"),
            Verdict::NotInBaseline => ("".to_owned(), "not in the baseline"),
            Verdict::NotMeasured => ("".to_owned(), "not measured"),
        };
        let _ = writeln!(out, "{:<34} {:>14} {:>14} {:>9}  {verdict}", row.bench, count(row.before), count(row.after), change);
    }
    if rows.iter().any(|r| r.verdict.fails()) {
        let _ = writeln!(
            out,
            "The instruction-count gate failed. Find the cause (callgrind output under the bench's --home \
             folder; `callgrind_annotate` reads it), or, if the change is intended (a gain, or a cost worth paying), run \
             `scripts/perf-gate.sh --update` and commit the new baseline with the reason."
        );
    }
    if rustc_now != baseline.rustc {
        let _ = writeln!(
            out,
            "note: the baseline was measured with {}, this run with {rustc_now}; counts move with the compiler",
            baseline.rustc
        );
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn baseline(counts: &[(&str, u64)]) -> Baseline {
        Baseline { limit_pct: 5.0, rustc: "rustc 1.95.0".into(), instructions: counts.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect() }
    }

    fn measured(counts: &[(&str, u64)]) -> BTreeMap<String, u64> {
        counts.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn growth_past_the_limit_fails_and_growth_within_it_passes() {
        let base = baseline(&[("a", 1_000_000), ("b", 1_000_000), ("c", 1_000_000)]);
        let rows = compare(&base, &measured(&[("a", 1_050_001), ("b", 1_050_000), ("c", 950_000)]));
        assert_eq!(rows[0].verdict, Verdict::Regressed(5.0001));
        assert_eq!(rows[1].verdict, Verdict::Within(5.0));
        assert_eq!(rows[2].verdict, Verdict::Within(-5.0));
        assert_eq!(rows.iter().filter(|r| r.verdict.fails()).count(), 1);
        let text = report(&base, &rows, "rustc 1.95.0");
        assert!(text.contains("REGRESSED") && text.contains("scripts/perf-gate.sh --update"), "{text}");
        assert!(!text.contains("note:"), "same compiler, no note: {text}");
    }

    #[test]
    fn a_gain_past_the_limit_fails_until_the_baseline_records_it() {
        let base = baseline(&[("turn", 13_000_000)]);
        let rows = compare(&base, &measured(&[("turn", 11_600_000)]));
        assert!(matches!(rows[0].verdict, Verdict::Improved(pct) if (pct + 10.769).abs() < 0.01), "{:?}", rows[0].verdict);
        assert!(rows[0].verdict.fails());
        assert!(report(&base, &rows, "rustc 1.95.0").contains("IMPROVED: record it"));
    }

    #[test]
    fn a_bench_missing_on_either_side_fails() {
        let rows = compare(&baseline(&[("gone", 10)]), &measured(&[("new", 10)]));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].verdict, Verdict::NotMeasured);
        assert_eq!(rows[1].verdict, Verdict::NotInBaseline);
        assert!(rows.iter().all(|r| r.verdict.fails()));
    }

    #[test]
    fn a_gungraun_summary_gives_its_name_and_total_instructions() {
        let text = r#"{"function_name":"pdf_fill","id":"form","profiles":[
            {"tool":"Callgrind","data":{"parts":[],"total":{"metrics":{"Ir":{"values":{"new":7140667,"old":null}}}}}}]}"#;
        assert_eq!(parse_summary(text), Ok(("pdf_fill.form".to_owned(), 7_140_667)));
        let plain = r#"{"function_name":"agui","id":null,"profiles":[
            {"tool":"Callgrind","data":{"total":{"metrics":{"Ir":{"values":{"new":5}}}}}}]}"#;
        assert_eq!(parse_summary(plain), Ok(("agui".to_owned(), 5)));
        assert_eq!(parse_summary(r#"{"function_name":"x","profiles":[]}"#), Err("no Callgrind profile".to_owned()));
    }

    #[test]
    fn the_baseline_round_trips_and_bad_files_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        let base = baseline(&[("z", 3), ("a", 1)]);
        std::fs::write(&path, baseline_json(&base)).unwrap();
        assert_eq!(read_baseline(&path).unwrap(), base);
        std::fs::write(&path, r#"{"limit_pct": 0, "rustc": "r", "instructions": {}}"#).unwrap();
        let err = read_baseline(&path).unwrap_err().to_string();
        assert!(err.contains("limit_pct must be a positive number"), "{err}");
        assert!(matches!(read_measured(dir.path()), Err(GateError::NoSummaries { .. })));
    }

    #[test]
    fn a_new_compiler_is_noted() {
        let base = baseline(&[("a", 1)]);
        let text = report(&base, &compare(&base, &measured(&[("a", 1)])), "rustc 1.96.0");
        assert!(text.contains("measured with rustc 1.95.0, this run with rustc 1.96.0"), "{text}");
    }
}
