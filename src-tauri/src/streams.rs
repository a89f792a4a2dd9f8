//! Adapts a core run's event receiver to the window's `Channel`.

use hearth_core::{Hearth, RunEvents};
use hearth_protocol::agui::Event;
use tauri::ipc::Channel;

/// Forwards every event; when the window stops listening, the run is stopped.
pub fn forward(hearth: Hearth, run_id: String, mut events: RunEvents, channel: Channel<Event>) {
    tauri::async_runtime::spawn(async move {
        while let Some(event) = events.recv().await {
            if channel.send(event).is_err() {
                hearth.stop_run(&run_id);
                // Keep draining so the driver can record the cancelled ending.
                while events.recv().await.is_some() {}
                break;
            }
        }
    });
}
