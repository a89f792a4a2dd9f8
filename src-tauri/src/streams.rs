//! Adapts the core's streams to the window's `Channel`s.

use hearth_core::{Hearth, RunEvents};
use hearth_protocol::agui::Event;
use hearth_protocol::ids::RunId;
use hearth_protocol::tasks::{TaskChanged, TaskView};
use tauri::ipc::Channel;
use tokio::sync::mpsc;

/// Forwards every run event; when the window stops listening, the run is stopped.
pub fn forward(hearth: Hearth, run_id: RunId, mut events: RunEvents, channel: Channel<Event>) {
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

/// Forwards task changes until the window stops listening.
pub fn forward_tasks(mut changes: mpsc::Receiver<TaskView>, channel: Channel<TaskChanged>) {
    tauri::async_runtime::spawn(async move {
        while let Some(task) = changes.recv().await {
            if channel.send(TaskChanged { task }).is_err() {
                break;
            }
        }
    });
}

/// Forwards new notices to the window's inbox.
pub fn forward_notices(
    mut notices: mpsc::Receiver<hearth_protocol::notifications::NotificationView>,
    channel: Channel<hearth_protocol::notifications::NotificationView>,
) {
    tauri::async_runtime::spawn(async move {
        while let Some(notice) = notices.recv().await {
            if channel.send(notice).is_err() {
                break;
            }
        }
    });
}

/// Forwards Take control's frames until the core's session ends (Give back, a crash). A
/// window that went away without giving back is not noticed here (Tauri's channel accepts
/// sends to a closed window); the window ends its session when it closes the view or loads.
pub fn forward_frames(
    mut frames: mpsc::Receiver<hearth_protocol::browser::ControlFrame>,
    channel: Channel<hearth_protocol::browser::ControlFrame>,
) {
    tauri::async_runtime::spawn(async move {
        while let Some(frame) = frames.recv().await {
            if channel.send(frame).is_err() {
                break;
            }
        }
    });
}

/// A sink for a terminal command's output that forwards each chunk to the window. When the
/// window stops listening the chunks are dropped; the command goes on (Stop is its own
/// command) and its receipt has the output.
pub fn forward_output(channel: Channel<hearth_protocol::computer::CommandOutput>) -> hearth_core::computer::OutputSink {
    let (tx, mut rx) = mpsc::unbounded_channel();
    tauri::async_runtime::spawn(async move {
        while let Some(chunk) = rx.recv().await {
            if channel.send(chunk).is_err() {
                break;
            }
        }
    });
    tx
}
