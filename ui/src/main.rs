//! Hearth's window, compiled to wasm and mounted into the webview.

mod app;
mod cards;
mod clipboard;
mod clock;
mod ipc;
mod latest_only;
mod live_inbox;
mod live_tasks;
mod marks;
mod navigation;
mod screens;
mod state;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
    // The frame holding the mounted window: the moment the footprint bench calls first paint,
    // for Hearth and for the Tauri floor alike (tests/floor/ui).
    marks::after_next_frame(|| leptos::task::spawn_local(ipc::app_painted()));
}
