//! Desktop entry point.
// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    prefer_shared_memory_rendering_without_a_gpu();
    hearth_app::run();
}

/// WebKitGTK's DMA-BUF renderer costs ≈ 80 MB more resident memory in the web process when
/// there is no GPU to hand buffers to (VMs, Xvfb, remote desktops), for no gain. Turn it off
/// only there, and never over the owner's own setting.
fn prefer_shared_memory_rendering_without_a_gpu() {
    const VAR: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
    if !cfg!(target_os = "linux") || std::env::var_os(VAR).is_some() {
        return;
    }
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    });
    if !has_render_node {
        #[expect(unsafe_code, reason = "set before any thread starts; nothing reads the environment concurrently")]
        // SAFETY: main has not spawned a thread yet, so no other code reads the environment.
        unsafe {
            std::env::set_var(VAR, "1");
        }
    }
}
