//! Hearth's Tauri shell: opens the core, registers the IPC commands, and adapts streams.
//!
//! Nothing here knows about the domain; every command is a one-line delegation to
//! `hearth_core::Hearth` (see docs/ARCHITECTURE.md).

mod commands;
mod desktop_notices;
mod headless;
mod ipc;
mod memory;
mod restore_cli;
mod state;
mod streams;

use tauri::{Manager, Runtime};

pub use state::AppState;

/// Runs the app (desktop and mobile).
#[cfg_attr(mobile, tauri::mobile_entry_point)]
pub fn run() {
    // The hidden worker mode: llama.cpp runs in a process of its own (core::local_model), never
    // in the app's, so a model file that makes it abort ends only that process.
    #[cfg(feature = "local-model")]
    if std::env::args_os().nth(1).is_some_and(|arg| arg == hearth_core::local_model::WORKER_FLAG) {
        std::process::exit(hearth_core::local_model::run_worker());
    }
    init_tracing();
    // `hearth --restore FILE --data-dir FOLDER`: a backup into a new folder, then exit.
    if std::env::args_os().nth(1).is_some_and(|arg| arg == restore_cli::RESTORE) {
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        std::process::exit(restore_cli::run(&args));
    }
    // `hearth serve`: the core with no window, the home server for paired devices.
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|arg| arg == headless::SERVE) {
        // Lossy: an argument that is not UTF-8 is then refused by the parser with its words.
        let rest: Vec<String> = args.map(|arg| arg.to_string_lossy().into_owned()).collect();
        std::process::exit(headless::run(&rest));
    }
    let app = build(tauri::Builder::default()).build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(|handle, event| {
            if let tauri::RunEvent::Exit = event {
                // A core still opening is waited for, then shut down like an open one: its
                // workers may have started.
                let state = handle.state::<AppState>().inner().clone();
                tauri::async_runtime::block_on(async move {
                    if let Ok(hearth) = state.ready().await {
                        hearth.shutdown().await;
                    }
                });
            }
        }),
        Err(err) => tracing::error!(error = %err, "Hearth could not start its window"),
    }
}

/// Adds Hearth's state and commands to a builder (also used by the shell's tests).
pub fn build<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    #[cfg(not(freedesktop))]
    let builder = builder.plugin(tauri_plugin_notification::init());
    builder
        .plugin(tauri_plugin_opener::init())
        // For the shell's own file chooser (local_model_choose_file); the window's capability
        // grants none of the plugin's commands.
        .plugin(tauri_plugin_dialog::init())
        // A page that (re)loads has lost its channels; a click until it subscribes again is
        // held for it (desktop_notices.rs).
        .on_page_load(|webview, payload| {
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                if let Some(requests) = webview.try_state::<desktop_notices::OpenRequests>() {
                    requests.unsubscribe();
                }
                // So has what it streamed from a Hearth at home: those streams end there too.
                // Counted now, before the new page's first request can be made.
                if let Some(hearth) = webview.try_state::<AppState>().and_then(|state| state.now()) {
                    hearth.window_reloaded();
                }
            }
        })
        .setup(|app| {
            // The core opens beside the window (state.rs says why); commands wait for it.
            let (state, opening) = AppState::opening();
            app.manage(state);
            app.manage(desktop_notices::OpenRequests::default());
            let handle = app.handle().clone();
            // On a blocking thread of its own: the core's opening future is not `Send` for
            // every lifetime the runtime's `spawn` asks of it (it ran under `block_on` before).
            tauri::async_runtime::spawn_blocking(move || {
                tauri::async_runtime::block_on(async move {
                    if let Some(hearth) = opening.open(&handle).await {
                        desktop_notices::show(handle, hearth.notification_watch_since_open());
                    }
                });
            });
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::app::app_info,
            commands::app::app_painted,
            commands::chat::run_start,
            commands::chat::run_stop,
            commands::chat::thread_list,
            commands::chat::thread_history,
            commands::chat::thread_delete,
            commands::tasks::task_list,
            commands::tasks::task_get,
            commands::tasks::task_control,
            commands::tasks::task_watch,
            commands::failures::failure_list,
            commands::failures::failure_timeline,
            commands::tasks::finance_start,
            commands::inbox::schedule_list,
            commands::inbox::schedule_create,
            commands::inbox::schedule_control,
            commands::inbox::monitor_check_now,
            commands::inbox::idea_list,
            commands::inbox::idea_accept,
            commands::inbox::idea_dismiss,
            commands::inbox::notification_list,
            commands::inbox::notification_read,
            commands::inbox::notification_watch,
            commands::inbox::notification_open_watch,
            commands::goals::goal_list,
            commands::goals::goal_create,
            commands::goals::goal_control,
            commands::goals::goal_milestones,
            commands::memory::memory_list,
            commands::memory::memory_save,
            commands::memory::memory_forget,
            commands::devices::device_list,
            commands::devices::device_pair_offer,
            commands::devices::device_revoke,
            commands::host_link::host_link_status,
            commands::host_link::host_link_pair,
            commands::host_link::host_link_forget,
            commands::host_link::host_call,
            commands::host_link::host_stream,
            commands::mcp::mcp_server_list,
            commands::mcp::mcp_server_save,
            commands::mcp::mcp_server_test,
            commands::mcp::mcp_server_enable,
            commands::mcp::mcp_server_remove,
            commands::mcp::mcp_server_log,
            commands::mcp::mcp_tool_policy,
            commands::documents::document_folder_list,
            commands::documents::document_folder_add,
            commands::documents::document_folder_remove,
            commands::documents::document_rescan,
            commands::documents::document_search,
            commands::documents::document_preview,
            commands::mandates::mandate_list,
            commands::mandates::mandate_grant,
            commands::mandates::mandate_revoke,
            commands::approvals::approval_list,
            commands::approvals::approval_get,
            commands::approvals::approval_decide,
            commands::approvals::approval_recheck,
            commands::approvals::approval_leaving,
            commands::files::file_list,
            commands::files::file_get,
            commands::files::file_render,
            commands::files::file_fill,
            commands::files::file_import,
            commands::files::file_delete,
            commands::mail::mail_thread_get,
            commands::accounts::accounts_get,
            commands::accounts::accounts_client_set,
            commands::accounts::account_connect_begin,
            commands::accounts::account_connect_finish,
            commands::accounts::account_choose,
            commands::accounts::account_disconnect,
            commands::settings::settings_get,
            commands::settings::settings_mode_set,
            commands::settings::settings_model_set,
            commands::settings::settings_model_test,
            commands::settings::settings_local_model_inspect,
            commands::settings::settings_local_model_probe,
            commands::settings::settings_local_model_override,
            commands::settings::local_model_activity,
            commands::settings::local_model_probe_progress,
            commands::settings::local_model_choose_file,
            commands::settings::settings_harness_set,
            commands::settings::settings_endpoint_set,
            commands::settings::settings_endpoint_regenerate,
            commands::settings::settings_undo_window_set,
            commands::web_search::settings_web_search_get,
            commands::web_search::settings_web_search_set,
            commands::backup::backup_settings_get,
            commands::backup::backup_schedule_set,
            commands::backup::backup_create,
            commands::backup::backup_restore,
            commands::computer::computer_status,
            commands::computer::computer_enable,
            commands::computer::computer_start,
            commands::computer::computer_stop,
            commands::computer::computer_reset,
            commands::computer::computer_recreate,
            commands::computer::computer_rebuild,
            commands::computer::computer_run,
            commands::computer::computer_run_stop,
            commands::computer::computer_list,
            commands::computer::computer_read,
            commands::computer::computer_write,
            commands::browser::browser_screenshot,
            commands::browser::browser_list,
            commands::browser::browser_close,
            commands::browser::browser_use_profile,
            commands::browser::browser_delete_profile,
            commands::browser::browser_control_start,
            commands::browser::browser_control_input,
            commands::browser::browser_control_stop,
            commands::browser::browser_control_release_all,
        ])
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second init (tests) is harmless; ignore it.
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
