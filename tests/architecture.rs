//! The dependency rules of docs/ARCHITECTURE.md, checked on every test run so the rooms
//! cannot quietly merge: protocol stays pure (wasm-safe), the core never sees tauri or a
//! webview, the UI reaches the backend only through the protocol and `ui/src/ipc.rs`,
//! SQL stays in `core::store`, and every IPC command is declared once (in the protocol) and
//! registered and granted exactly as declared.
//! No import circles: no file, and no top-level module, of the core or the protocol reaches
//! itself through its imports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
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
    let allowed: BTreeSet<String> = ["serde", "serde_json", "thiserror", "memchr", "strum"].map(String::from).into();
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
fn outbound_http_lives_only_in_providers_the_harness_client_workspace_and_mcp() {
    let allowed =
        ["src-tauri/core/src/providers/", "src-tauri/core/src/agent/harness/", "src-tauri/core/src/workspace/", "src-tauri/core/src/mcp/"];
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

// ---- No import circles ----------------------------------------------------------------------
//
// Each file of a crate's `src` is a node. Its `use` trees and the paths in its code that start
// at `crate::`, `super::`, `self::` or a module it declares are resolved to the file that
// defines the name, following the `use`s of the file they pass through (so a name re-exported
// by a folder's `mod.rs` leads to the file it comes from). A file naming one of its own
// ancestors (its folder's `mod.rs`, theirs, `lib.rs`) draws no arrow: those declare it, and
// hold what their children share. Comments and literals are not read; test modules are.

/// A crate's import graph: file → file it imports → the names it takes from it.
type Imports = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// `src` as code only: comments, strings and char literals blanked (a lifetime stays).
fn code_of(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, ch)| c.get(i + k) == Some(&ch));
    let ident = |i: usize| i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let (mut out, mut i) = (String::new(), 0);
    while i < c.len() {
        let raw_hashes = if (c[i] == 'r' || at(i, "br")) && !ident(i) {
            let from = i + if c[i] == 'b' { 2 } else { 1 };
            let hashes = c[from..].iter().take_while(|&&ch| ch == '#').count();
            (c.get(from + hashes) == Some(&'"')).then_some((from + hashes + 1, hashes))
        } else {
            None
        };
        if at(i, "//") {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            while i < c.len() {
                if at(i, "/*") {
                    (depth, i) = (depth + 1, i + 2);
                } else if at(i, "*/") {
                    (depth, i) = (depth - 1, i + 2);
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some((body, hashes)) = raw_hashes {
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i = body;
            while i < c.len() && !at(i, &close) {
                i += 1;
            }
            i += close.chars().count();
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            i += 3;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The paths a `use` tree brings in, each with the name it is known by (`*` for a glob).
fn use_tree(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let segments = |s: &str| s.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect::<Vec<_>>();
    let tree = tree.trim();
    if let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) {
        let head = [prefix, segments(&tree[..open]).as_slice()].concat();
        let (mut depth, mut start) = (0, open + 1);
        for (k, ch) in tree.char_indices().filter(|&(k, _)| k > open && k < close) {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree(&tree[start..k], &head, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        use_tree(&tree[start..close], &head, out);
    } else if !tree.is_empty() {
        let (path, alias) = tree.split_once(" as ").map_or((tree, None), |(p, a)| (p, Some(a.trim())));
        let mut path = [prefix, segments(path).as_slice()].concat();
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let name = alias.or(path.last().map(String::as_str)).unwrap_or_default().to_owned();
        out.push((path, name));
    }
}

/// Module path → file, for every `.rs` file under `src` (a `#[path]` file under its `mod`).
fn modules(src: &Path) -> BTreeMap<Vec<String>, String> {
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        let mut path: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
        if path.last().is_some_and(|last| last == "mod" || last == "lib") {
            path.pop();
        }
        files.insert(rel, path);
    }
    for (rel, module) in files.clone() {
        let raw = std::fs::read_to_string(src.join(&rel)).unwrap();
        for attr in raw.split("#[path = \"").skip(1) {
            let (target, after) = attr.split_once('"').unwrap();
            let name = after.split("mod ").nth(1).unwrap().split(|ch: char| !ch.is_alphanumeric() && ch != '_').next().unwrap();
            let dir = Path::new(&rel).parent().unwrap().join(target).to_string_lossy().replace('\\', "/");
            files.insert(dir, [module.as_slice(), &[name.to_owned()]].concat());
        }
    }
    files.into_iter().map(|(rel, path)| (path, rel)).collect()
}

/// The import graph of the crate whose sources are under `src`.
fn import_graph(src: &Path) -> Imports {
    let modules = modules(src);
    let mut uses: BTreeMap<&String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut references: Vec<(&String, Vec<String>)> = Vec::new();
    for (module, file) in &modules {
        let code: Vec<char> = code_of(&std::fs::read_to_string(src.join(file)).unwrap()).chars().collect();
        let word_at = |i: usize| code[i..].iter().take_while(|ch| ch.is_alphanumeric() || **ch == '_').collect::<String>();
        let skip_space = |mut i: usize| {
            while code.get(i).is_some_and(|ch| ch.is_whitespace()) {
                i += 1;
            }
            i
        };
        let absolute = |segments: &[String], here: &[String]| -> Option<Vec<String>> {
            match segments.first()?.as_str() {
                "crate" => Some(segments[1..].to_vec()),
                "super" | "self" => {
                    let mut base = here.to_vec();
                    let rest: Vec<_> = segments.iter().skip_while(|s| *s == "super" || *s == "self").cloned().collect();
                    for s in segments.iter().take_while(|s| *s == "super" || *s == "self") {
                        if s == "super" {
                            base.pop()?;
                        }
                    }
                    Some([base, rest].concat())
                }
                first => {
                    let child = [here, &[first.to_owned()]].concat();
                    modules.contains_key(&child).then(|| [here, segments].concat())
                }
            }
        };
        // Inline `mod name {` blocks (by brace depth), so `super::` inside one means its parent.
        let (mut inline, mut depth, mut i) = (Vec::<(String, usize)>::new(), 0, 0);
        while i < code.len() {
            let ch = code[i];
            let here = [module.as_slice(), &inline.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()].concat();
            if ch == '{' {
                depth += 1;
                i += 1;
            } else if ch == '}' {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
                i += 1;
            } else if ch.is_alphabetic() || ch == '_' {
                let word = word_at(i);
                i += word.chars().count();
                // (`use<..>` after an `impl Trait` is precise capturing, not an import.)
                if word == "use" && code.get(skip_space(i)) != Some(&'<') {
                    let end = i + code[i..].iter().position(|&ch| ch == ';').unwrap();
                    let mut trees = Vec::new();
                    use_tree(&code[i..end].iter().collect::<String>().split_whitespace().collect::<Vec<_>>().join(" "), &[], &mut trees);
                    for (path, name) in trees {
                        let Some(path) = absolute(&path, &here) else { continue };
                        if depth == 0 && name != "*" {
                            uses.entry(file).or_default().insert(name, path.clone());
                        }
                        references.push((file, path));
                    }
                    i = end;
                } else if word == "mod" {
                    let name_at = skip_space(i);
                    let name = word_at(name_at);
                    let after = skip_space(name_at + name.chars().count());
                    if code.get(after) == Some(&'{') {
                        (depth, i) = (depth + 1, after + 1);
                        inline.push((name, depth));
                    }
                } else {
                    let mut path = vec![word];
                    while code.get(skip_space(i)) == Some(&':') && code.get(skip_space(i) + 1) == Some(&':') {
                        let next = skip_space(skip_space(i) + 2);
                        let segment = word_at(next);
                        if segment.is_empty() {
                            break;
                        }
                        i = next + segment.chars().count();
                        path.push(segment);
                    }
                    if let Some(path) = (path.len() > 1).then(|| absolute(&path, &here)).flatten() {
                        references.push((file, path));
                    }
                }
            } else {
                i += 1;
            }
        }
    }
    let files: BTreeMap<&String, &Vec<String>> = modules.iter().map(|(module, file)| (file, module)).collect();
    let mut graph = Imports::new();
    for (from, path) in references {
        let (mut path, mut hops) = (path, 0);
        let (to, name) = loop {
            let len = (0..=path.len()).rev().find(|&len| modules.contains_key(&path[..len])).unwrap();
            let file = &modules[&path[..len]];
            let via = path.get(len).and_then(|name| uses.get(file)?.get(name)).filter(|via| via[..] != path[..=len]);
            match via {
                Some(via) if hops < 8 => (path, hops) = ([&via[..], &path[len + 1..]].concat(), hops + 1),
                _ => break (file, path.get(len).cloned().unwrap_or_else(|| "the module".into())),
            }
        };
        let ancestor = files[from].starts_with(files[to]);
        if !ancestor {
            graph.entry(from.clone()).or_default().entry(to.clone()).or_default().insert(name);
        }
    }
    graph
}

/// Every circle a depth-first walk of `graph` meets, each as the path that closes it
/// (`[a, b, a]`). A plain walk because petgraph is not in Cargo.lock, and these few lines do
/// not call for a new dependency.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn walk<'g>(
        node: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        seen: &mut BTreeSet<&'g str>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = path.iter().position(|&n| n == node) {
            found.push(path[at..].iter().chain([&node]).map(|n| (*n).to_owned()).collect());
            return;
        }
        if !seen.insert(node) {
            return;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            walk(next, graph, path, seen, found);
        }
        path.pop();
    }
    let (mut seen, mut found) = (BTreeSet::new(), Vec::new());
    for node in graph.keys() {
        walk(node, graph, &mut Vec::new(), &mut seen, &mut found);
    }
    found
}

/// The circles of `graph`, one a line, each arrow with the names that tie it.
fn circles_of(graph: &Imports) -> Vec<String> {
    let files: BTreeMap<String, BTreeSet<String>> = graph.iter().map(|(file, to)| (file.clone(), to.keys().cloned().collect())).collect();
    cycles(&files)
        .iter()
        .map(|cycle| {
            let arrows = cycle.windows(2).map(|w| {
                let names: Vec<_> = graph[&w[0]][&w[1]].iter().map(String::as_str).collect();
                format!("{} -> {} ({})", w[0], w[1], names.join(", "))
            });
            arrows.collect::<Vec<_>>().join("; ")
        })
        .collect()
}

#[test]
fn no_file_imports_itself_through_others() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in ["src-tauri/core/src", "src-tauri/protocol/src"] {
        let graph = import_graph(&root.join(src));
        let arrows: usize = graph.values().map(BTreeMap::len).sum();
        assert!(arrows > 20, "{src}: only {arrows} imports between files were read; the reader is broken");
        let circles = circles_of(&graph);
        assert!(
            circles.is_empty(),
            "{src}: files import one another in a circle; move what they share into a file both import, \
             or invert one arrow (a narrow trait):\n{}",
            circles.join("\n")
        );
    }
}

/// The import graph between the crate's top-level modules (a folder, or a file beside
/// `lib.rs`): a file's arrows count for the module it stands in. Two modules can import each
/// other with no circle of files — `a/x.rs -> b.rs -> a/y.rs` — and still be one tangle a reader
/// cannot take apart, so modules are checked as well as files.
fn module_graph(files: &Imports) -> Imports {
    let module = |file: &str| file.split('/').next().unwrap_or(file).trim_end_matches(".rs").to_owned();
    let mut graph = Imports::new();
    for (from, to) in files {
        for (to, names) in to {
            let (from, to) = (module(from), module(to));
            if from != to && from != "lib" {
                graph.entry(from).or_default().entry(to).or_default().extend(names.iter().cloned());
            }
        }
    }
    graph
}

#[test]
fn no_module_imports_itself_through_others() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in ["src-tauri/core/src", "src-tauri/protocol/src"] {
        let graph = module_graph(&import_graph(&root.join(src)));
        assert!(graph.len() > 5, "{src}: only {} modules import others; the reader is broken", graph.len());
        let circles = circles_of(&graph);
        assert!(
            circles.is_empty(),
            "{src}: modules import one another in a circle; move what both use below both (its own module), \
             or give the lower one its own type (a narrow trait, its own error):\n{}",
            circles.join("\n")
        );
    }
}

#[test]
fn modules_in_a_circle_are_found_when_their_files_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\n");
    write("a/mod.rs", "pub mod x;\npub mod y;\n");
    write("a/x.rs", "use crate::b::Middle;\npub struct Top;\n");
    write("a/y.rs", "pub struct Bottom;\n");
    write("b.rs", "use crate::a::y::Bottom;\npub struct Middle;\n");
    let files = import_graph(dir.path());
    assert!(circles_of(&files).is_empty(), "no file reaches itself: {files:?}");
    assert_eq!(circles_of(&module_graph(&files)), ["a -> b (Middle); b -> a (Bottom)"]);
}

#[test]
fn the_cycle_finder_reports_a_circle() {
    let graph = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph.entry((*from).to_owned()).or_default().insert((*to).to_owned());
        }
        graph
    };
    assert_eq!(cycles(&graph(&[("a", "b"), ("b", "a")])), [["a", "b", "a"]]);
    assert_eq!(cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])), [["a", "b", "c", "a"]]);
    assert!(cycles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty(), "a diamond is no circle");
}

#[test]
fn the_reader_finds_a_circle_through_use_super_and_a_re_export() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\n// use crate::b::Nothing;\n");
    write("a/mod.rs", "mod inner;\npub use inner::Shared;\npub fn uses_b() { crate::b::helper(); }\n");
    write("a/inner.rs", "use super::super::b::Other; /* crate::a::Shared */\npub struct Shared;\n");
    write(
        "b.rs",
        "use crate::a::Shared;\npub fn helper() { let _ = \"crate::a::uses_b\"; }\npub struct Other;\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    let graph = import_graph(dir.path());
    assert_eq!(circles_of(&graph), ["a/inner.rs -> b.rs (Other); b.rs -> a/inner.rs (Shared)"], "{graph:?}");
    assert!(!graph.contains_key("lib.rs"), "a crate root or mod.rs naming its own children draws no circle: {graph:?}");
}
