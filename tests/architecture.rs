//! The dependency rules of docs/ARCHITECTURE.md, checked on every test run so the rooms
//! cannot quietly merge: protocol stays pure (wasm-safe), the core never sees tauri or a
//! webview, the UI reaches the backend only through the protocol and `ui/src/ipc.rs`,
//! SQL stays in `core::store`, and every IPC command is declared once (in the protocol) and
//! registered and granted exactly as declared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Package name → names of its normal (non-dev, non-build) dependencies, resolved.
fn graph(meta: &Value) -> HashMap<String, Vec<String>> {
    let names: HashMap<&str, &str> =
        meta["packages"].as_array().unwrap().iter().map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap())).collect();
    meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            let deps = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null()))
                .map(|d| names[d["pkg"].as_str().unwrap()].to_owned())
                .collect();
            (names[node["id"].as_str().unwrap()].to_owned(), deps)
        })
        .collect()
}

fn closure(graph: &HashMap<String, Vec<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(name) = stack.pop() {
        if seen.insert(name.clone()) {
            stack.extend(graph.get(&name).into_iter().flatten().cloned());
        }
    }
    seen
}

#[test]
fn protocol_depends_on_small_pure_crates_only() {
    let graph = graph(&metadata());
    let direct: BTreeSet<_> = graph["hearth-protocol"].iter().cloned().collect();
    let allowed: BTreeSet<String> = ["serde", "serde_json", "thiserror", "memchr"].map(String::from).into();
    assert!(direct.is_subset(&allowed), "hearth-protocol depends on {direct:?}; allowed: {allowed:?}");
}

#[test]
fn the_core_never_sees_tauri_or_a_webview() {
    let graph = graph(&metadata());
    let forbidden: Vec<_> = closure(&graph, "hearth-core")
        .into_iter()
        .filter(|n| n.starts_with("tauri") || n.starts_with("wry") || n.contains("webkit") || n.starts_with("gtk"))
        .collect();
    assert!(forbidden.is_empty(), "hearth-core pulls in {forbidden:?}");
}

#[test]
fn the_ui_reaches_hearth_only_through_the_protocol() {
    let graph = graph(&metadata());
    let hearth: Vec<_> = graph["hearth-ui"].iter().filter(|n| n.starts_with("hearth")).collect();
    assert_eq!(hearth, ["hearth-protocol"]);
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

fn files_mentioning(dir: &str, needle: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    rust_files(&root.join(dir))
        .into_iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains(needle))
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

#[test]
fn sql_lives_only_in_the_store() {
    let outside: Vec<_> =
        files_mentioning("src-tauri/core/src", "sqlx::").into_iter().filter(|f| !f.starts_with("src-tauri/core/src/store/")).collect();
    assert!(outside.is_empty(), "sqlx used outside core::store: {outside:?}");
    assert!(files_mentioning("src-tauri/src", "sqlx").is_empty(), "the shell runs SQL");
}

#[test]
fn only_the_ipc_module_talks_to_tauri_from_the_ui() {
    let callers = files_mentioning("ui/src", "__TAURI__");
    assert_eq!(callers, ["ui/src/ipc.rs"]);
}

#[test]
fn outbound_http_lives_only_in_providers_the_harness_client_and_workspace() {
    let allowed = ["src-tauri/core/src/providers/", "src-tauri/core/src/agent/harness/", "src-tauri/core/src/workspace/"];
    let outside: Vec<_> =
        files_mentioning("src-tauri/core/src", "reqwest").into_iter().filter(|f| !allowed.iter().any(|a| f.starts_with(a))).collect();
    assert!(outside.is_empty(), "reqwest used outside {allowed:?}: {outside:?}");
}

/// Asserts `needle` appears in the core only under `module` (a folder) and nowhere in the shell.
fn lives_only_in(needle: &str, module: &str) {
    let outside: Vec<_> = files_mentioning("src-tauri/core/src", needle).into_iter().filter(|f| !f.starts_with(module)).collect();
    assert!(outside.is_empty(), "{needle} used outside {module}: {outside:?}");
    assert!(files_mentioning("src-tauri/src", needle).is_empty(), "the shell uses {needle}");
}

#[test]
fn the_docker_api_lives_only_in_the_computer() {
    lives_only_in("bollard", "src-tauri/core/src/computer/");
}

/// The browser's way out is one place: only `core::browser` resolves names for it or opens
/// client connections with hyper, so no other path can reach an address the policy did not
/// check.
#[test]
fn the_browsers_egress_lives_only_in_the_browser() {
    for needle in ["hickory_resolver", "hyper::client", "chromiumoxide"] {
        lives_only_in(needle, "src-tauri/core/src/browser/");
    }
}

/// The one IPC contract: the commands `hearth_protocol::commands` declares are exactly the
/// handlers the shell registers and the permissions the window's capability grants (the ACL
/// manifest is built from the declaration itself, and the UI can only name declared ones).
#[test]
fn every_ipc_command_is_declared_once_registered_and_granted() {
    use hearth_protocol::commands::ALL;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let declared: BTreeSet<String> = ALL.iter().map(|c| c.name().to_owned()).collect();

    let lib = std::fs::read_to_string(root.join("src-tauri/src/lib.rs")).unwrap();
    let start = lib.find("generate_handler![").expect("the shell registers its handlers with generate_handler!");
    let list = &lib[start..start + lib[start..].find(']').unwrap()];
    let registered: BTreeSet<String> = list
        .split(',')
        .filter_map(|item| item.trim().rsplit("::").next())
        .filter(|n| !n.is_empty() && !n.contains('['))
        .map(str::to_owned)
        .collect();
    assert_eq!(registered, declared, "handlers registered in src-tauri/src/lib.rs vs commands declared in the protocol");

    let conf: Value = serde_json::from_str(&std::fs::read_to_string(root.join("tauri.conf.json")).unwrap()).unwrap();
    let capability = conf["app"]["security"]["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["identifier"] == "main-window")
        .expect("the main window's capability");
    let granted: BTreeSet<String> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|p| p.starts_with("allow-"))
        .map(str::to_owned)
        .collect();
    let wanted: BTreeSet<String> = ALL.iter().map(|c| c.permission()).collect();
    assert_eq!(granted, wanted, "allow- permissions in tauri.conf.json vs commands declared in the protocol");

    // The UI names no command by a string of its own.
    let ipc = std::fs::read_to_string(root.join("ui/src/ipc.rs")).unwrap();
    for command in ALL {
        assert!(!ipc.contains(&format!("\"{}\"", command.name())), "ui/src/ipc.rs spells {} as a string; use cmd::", command.name());
    }
}
