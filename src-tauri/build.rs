//! Builds the Tauri context and the ACL for Hearth's own commands.
//!
//! Listing the commands in the app manifest makes them ACL-gated: the window may call only
//! those its capability in tauri.conf.json grants (see SECURITY.md).

#[path = "build_support/relocations.rs"]
mod relocations;

fn main() {
    // Every command of the window, from its one declaration (hearth_protocol::commands).
    let manifest = tauri_build::AppManifest::new().commands(hearth_protocol::commands::NAMES);
    freedesktop_cfg();
    shipped_ui_only();
    relocations::pack_relative_relocations();
    if let Err(err) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        // A build script has no other way to report.
        #[expect(clippy::print_stderr, reason = "a build script reports only on stderr")]
        {
            eprintln!("tauri-build failed: {err:#}");
        }
        std::process::exit(1);
    }
}

/// A release build embeds `ui/dist` as it finds it: refuse the test command's build of the UI
/// there (profile wasm-test, stamped by `build_ui` in scripts/common.sh), which is the same
/// code without its size optimization. `scripts/setup.sh` and `scripts/bundle.sh` build the
/// shipped one first.
fn shipped_ui_only() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let stamp = std::path::Path::new(&root).join("ui/dist/.profile");
    println!("cargo::rerun-if-changed={}", stamp.display());
    let profile = std::fs::read_to_string(&stamp).unwrap_or_default();
    if std::env::var("PROFILE").as_deref() == Ok("release") && profile.trim() == "wasm-test" {
        #[expect(clippy::print_stderr, reason = "a build script reports only on stderr")]
        {
            eprintln!(
                "ui/dist holds the test command's build of the UI (wasm-test); run `scripts/setup.sh` or `scripts/bundle.sh`, which build the shipped one"
            );
        }
        std::process::exit(1);
    }
}

/// `cfg(freedesktop)`: the targets whose desktops speak the freedesktop Notifications protocol,
/// where the shell shows notices itself (src-tauri/src/desktop_notices.rs) — the same list as
/// the `zbus` target table in Cargo.toml, which cannot name a cfg of its own.
fn freedesktop_cfg() {
    println!("cargo::rustc-check-cfg=cfg(freedesktop)");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(target_os.as_str(), "linux" | "dragonfly" | "freebsd" | "netbsd" | "openbsd") {
        println!("cargo::rustc-cfg=freedesktop");
    }
}
