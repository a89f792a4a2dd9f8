//! What the AG-UI tests need from outside Rust, so `cargo test -p hearth-protocol -p hearth-core`
//! works on a fresh clone without `scripts/test.sh` having run first.
//!
//! - The conformance tests (`agui_server.rs`) run the official TypeScript client in
//!   `tests/agui_client`. Its `node_modules` lives in the clone, so a fresh clone lacks it: the
//!   first test that needs it runs `npm ci` once for the whole binary, in a staging folder that
//!   is renamed into place, so no process or thread ever sees a half-installed client.
//! - The harness tests (`harness.rs`) run `tests/agui_server/server.py` in a Python venv that is
//!   a machine cache outside the clone (`/var/tmp/hearth-py`, like libpdfium), shared with other
//!   clones and `scripts/test.sh`. A venv cannot be built elsewhere and renamed into place, so
//!   the tests do not build it; they name the one command that does.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The command that installs the TypeScript client by hand (from the repository root).
const CLIENT_FIX: &str = "(cd tests/agui_client && npm ci)";

/// The command that builds the harness tests' Python venv (from the repository root).
const PYTHON_FIX: &str = "bash -c 'source scripts/common.sh && install_python_agui'";

fn agui_client_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui_client");
    dir.canonicalize().unwrap_or(dir)
}

/// `tests/agui_client/run.mjs`, with `@ag-ui/client` installed next to it.
///
/// The first caller installs it (`npm ci`, tens of seconds with a network) while the others
/// wait; a failure is remembered, so every conformance test fails with the same message
/// instead of running npm again. Blocking: call it from `spawn_blocking` in async code.
pub fn agui_client_script() -> PathBuf {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let dir = agui_client_dir();
    if let Err(why) = READY.get_or_init(|| install_agui_client(&dir)) {
        panic!("{why}");
    }
    dir.join("run.mjs")
}

/// Whether `modules` holds a finished install of `lock`: npm writes its hidden lockfile
/// (`node_modules/.package-lock.json`) last, and an older one is an install of an older lock —
/// the same test `install_agui_client` in scripts/common.sh makes.
fn installed(modules: &Path, lock: &Path) -> bool {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let finished = match (modified(&modules.join(".package-lock.json")), modified(lock)) {
        (Some(done), Some(lock)) => done >= lock,
        _ => false,
    };
    finished && modules.join("@ag-ui").join("client").join("package.json").is_file()
}

fn install_agui_client(dir: &Path) -> Result<(), String> {
    let lock = dir.join("package-lock.json");
    let target = dir.join("node_modules");
    if installed(&target, &lock) {
        return Ok(());
    }
    for tool in ["node", "npm"] {
        if let Err(err) = Command::new(tool).arg("--version").output() {
            return Err(format!(
                "the AG-UI conformance tests need `{tool}` ({err}): install Node.js with npm \
                 (Debian: apt-get install nodejs npm), then run `{CLIENT_FIX}` from the repository root"
            ));
        }
    }
    eprintln!("installing @ag-ui/client (npm ci) in {} for the AG-UI conformance tests", dir.display());
    // One staging folder per process; threads of this process are serialised by the OnceLock.
    let staging = dir.join(format!(".npm-ci-{}", std::process::id()));
    let result = stage_and_publish(dir, &staging, &lock, &target);
    // Best effort: what is left is a folder nothing reads.
    let _ = std::fs::remove_dir_all(&staging);
    result.map_err(|why| format!("{why}\nRun `{CLIENT_FIX}` from the repository root, then the tests again."))
}

/// Runs `npm ci` in `staging` (a copy of the manifest and lock) and renames its `node_modules`
/// over `target`: a rename within one folder is atomic, so a reader sees no client or a whole one.
fn stage_and_publish(dir: &Path, staging: &Path, lock: &Path, target: &Path) -> Result<(), String> {
    let io = |what: &str, path: &Path, err: std::io::Error| format!("could not {what} {}: {err}", path.display());
    let _ = std::fs::remove_dir_all(staging);
    std::fs::create_dir(staging).map_err(|e| io("create", staging, e))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(dir.join(file), staging.join(file)).map_err(|e| io("copy", &dir.join(file), e))?;
    }
    let output = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(staging)
        .output()
        .map_err(|e| io("run npm ci in", staging, e))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // npm's own words without its JavaScript stack trace.
        let words: Vec<&str> =
            stderr.lines().filter(|line| !line.trim_start_matches("npm error").trim_start().starts_with("at ")).take(20).collect();
        return Err(format!("`npm ci` for tests/agui_client failed ({}):\n{}", output.status, words.join("\n")));
    }
    let built = staging.join("node_modules");
    if !installed(&built, &staging.join("package-lock.json")) {
        return Err("`npm ci` for tests/agui_client finished but installed no @ag-ui/client".to_owned());
    }
    if installed(target, lock) {
        return Ok(()); // another process published first
    }
    // A partial or stale install is moved into the staging folder, which is removed afterwards.
    match std::fs::rename(target, staging.join("stale_node_modules")) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(io("move aside the old", target, err)),
    }
    match std::fs::rename(&built, target) {
        Ok(()) => Ok(()),
        Err(_) if installed(target, lock) => Ok(()), // another process published first
        Err(err) => Err(io("move the new client into", target, err)),
    }
}

/// The Python for `tests/agui_server/server.py`: `HEARTH_PYTHON`, else the venv
/// `install_python_agui` in scripts/common.sh builds. Fails with the command that builds it.
pub fn agui_python() -> PathBuf {
    let python = std::env::var_os("HEARTH_PYTHON").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/var/tmp/hearth-py/bin/python"));
    assert!(
        python.exists(),
        "no Python for the AG-UI test agent at {}: run `{PYTHON_FIX}` from the repository root \
         (a venv with ag-ui-protocol, fastapi and uvicorn at /var/tmp/hearth-py), or set HEARTH_PYTHON",
        python.display()
    );
    python
}
