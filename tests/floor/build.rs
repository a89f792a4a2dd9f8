//! Builds the floor's Tauri context (tauri.conf.json beside this file).
fn main() {
    tauri_build::build();
}
