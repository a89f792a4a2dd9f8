//! Desktop entry point.
// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

// WebKitGTK's DMA-BUF renderer costs ≈ 80 MB more resident memory when there is no GPU
// (measured under Xvfb), but turning it off there (WEBKIT_DISABLE_DMABUF_RENDERER=1, or
// WEBKIT_DISABLE_COMPOSITING_MODE=1) makes WebKitWebDriver's screenshots hang, so Hearth
// leaves WebKit's default alone. The owner can still set either variable.
fn main() {
    hearth_app::run();
}
