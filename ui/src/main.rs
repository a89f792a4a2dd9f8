//! Hearth's window, compiled to wasm and mounted into the webview.

mod app;
mod cards;
mod clipboard;
mod clock;
mod ipc;
mod live_inbox;
mod live_tasks;
mod marks;
mod navigation;
mod request;
mod screens;
mod state;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
