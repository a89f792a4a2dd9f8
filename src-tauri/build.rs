//! Builds the Tauri context and the ACL for Hearth's own commands.
//!
//! Listing the commands in the app manifest makes them ACL-gated: the window may call only
//! those its capability in tauri.conf.json grants (see SECURITY.md).

#[path = "build_support/relocations.rs"]
mod relocations;

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&[
        "app_info",
        "app_painted",
        "run_start",
        "run_stop",
        "thread_list",
        "thread_history",
        "task_list",
        "task_get",
        "task_control",
        "task_watch",
        "schedule_list",
        "schedule_create",
        "schedule_control",
        "monitor_check_now",
        "idea_list",
        "idea_accept",
        "idea_dismiss",
        "notification_list",
        "notification_read",
        "notification_watch",
        "notification_open_watch",
        "finance_start",
        "goal_list",
        "goal_create",
        "goal_control",
        "memory_list",
        "memory_save",
        "memory_forget",
        "mandate_list",
        "mandate_grant",
        "mandate_revoke",
        "approval_list",
        "approval_get",
        "approval_decide",
        "approval_recheck",
        "file_list",
        "file_get",
        "file_render",
        "file_fill",
        "mail_thread_get",
        "accounts_get",
        "accounts_client_set",
        "account_connect_begin",
        "account_connect_finish",
        "account_choose",
        "account_disconnect",
        "settings_get",
        "settings_mode_set",
        "settings_model_set",
        "settings_model_test",
        "settings_harness_set",
        "settings_endpoint_set",
        "settings_endpoint_regenerate",
        "computer_status",
        "computer_enable",
        "computer_start",
        "computer_stop",
        "computer_reset",
        "computer_recreate",
        "computer_rebuild",
        "computer_run",
        "computer_run_stop",
        "computer_list",
        "computer_read",
        "computer_write",
        "browser_screenshot",
        "browser_list",
        "browser_close",
        "browser_use_profile",
        "browser_delete_profile",
        "browser_control_start",
        "browser_control_input",
        "browser_control_stop",
        "browser_control_release_all",
    ]);
    freedesktop_cfg();
    relocations::pack_relative_relocations();
    if let Err(err) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        // A build script has no other way to report.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("tauri-build failed: {err:#}");
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
