//! The floor Hearth's footprint is measured against: Tauri v2 with one window showing a
//! Leptos page, and nothing else. Built with the workspace's toolchain and release profile.
//!
//! Its window reports its first frame the way Hearth's does (`app_painted` after two animation
//! frames), so `scripts/footprint.sh` times both apps from process start to the same moment.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// The window drew its first frame. The bench reads this line on stderr; Hearth logs the same
/// words through its tracing (commands::app::app_painted).
#[tauri::command]
fn app_painted() {
    #[expect(clippy::print_stderr, reason = "the bench reads this line on stderr")]
    {
        eprintln!("the window painted its first frame");
    }
}

fn main() {
    let app = tauri::Builder::default().invoke_handler(tauri::generate_handler![app_painted]).build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(|_, _| {}),
        Err(err) => {
            #[expect(clippy::print_stderr, reason = "the floor app reports a failed start on stderr")]
            {
                eprintln!("the floor app could not start its window: {err}");
            }
            std::process::exit(1);
        }
    }
}
