//! The one-line figures `scripts/bench.sh` collects into its summary, and the reading of a
//! reference's printed median. Included by each bench with `#[path]` (a bench is a crate of
//! its own, and a crate only for this would be heavier than these few lines).
#![allow(dead_code, clippy::print_stdout)]

use std::path::Path;
use std::process::Command;

/// Prints `FIGURE | what | hearth | reference | target`: what the summary shows. A figure
/// with no reference or no target says so in words, never leaves the column empty.
pub fn figure(what: &str, hearth: &str, reference: &str, target: &str) {
    println!("FIGURE | {what} | {hearth} | {reference} | {target}");
}

/// The number after `key` in `line` (`median 1.23ms` → 1.23), for reading a reference's output.
pub fn number_after(line: &str, key: &str) -> Option<f64> {
    let rest = &line[line.find(key)? + key.len()..];
    let digits: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    digits.parse().ok()
}

/// Runs a reference (`node <script> <args…>` in `dir`) when its npm project is installed,
/// echoing what it prints; `None` (with the command that installs it) when it is not.
pub fn run_reference(dir: &Path, script: &str, args: &[&str]) -> Option<String> {
    if !dir.join("node_modules").exists() {
        println!("reference not installed: (cd {} && npm ci)", dir.display());
        return None;
    }
    let out = match Command::new("node").arg(script).args(args).current_dir(dir).output() {
        Ok(out) => out,
        Err(err) => {
            println!("reference {script} did not start: {err}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{text}");
    if !out.status.success() {
        println!("reference {script} failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(text)
}

/// `a / b` as `0.76×`, or `no reference`.
pub fn ratio(hearth: f64, reference: Option<f64>) -> String {
    match reference {
        Some(r) if r > 0.0 => format!("{:.2}×", hearth / r),
        _ => "no reference".into(),
    }
}
