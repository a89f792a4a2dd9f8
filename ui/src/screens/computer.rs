//! The Computer screen: where the computer stands (Start, Stop), its terminal (commands with
//! live output, receipts and Stop) and its workspace files (a tree and a text editor).
//!
//! Commands and saves go through the backend's journal: each carries an operation id made
//! here, so a repeated click or a retry performs once.

mod terminal;
mod workspace;

use hearth_protocol::computer::{ComputerState, ComputerStatusView};
use hearth_protocol::ids::OperationId;
use leptos::prelude::*;

use crate::ipc;
use crate::request::{failure, last_loaded, settled_failure};
use terminal::TerminalPane;
use workspace::WorkspacePane;

/// The Computer screen.
#[component]
pub fn ComputerScreen() -> impl IntoView {
    // The newest status: loaded on open and after each command, and replaced by the one Start
    // and Stop answer.
    let loaded = LocalResource::new(ipc::computer_status);
    let status = last_loaded(loaded);
    let power = Action::new_local(move |start: &bool| {
        let start = *start;
        async move {
            let view = if start { ipc::computer_start().await } else { ipc::computer_stop().await }?;
            loaded.set(Some(Ok(view)));
            Ok(())
        }
    });
    let busy = power.pending();
    // Start or Stop on its way clears the last word; then its refusal, else a failed load.
    let error = move || if busy.get() { None } else { settled_failure(power).or_else(|| loaded.with(|reply| failure(reply.as_ref()))) };
    let act = move |start: bool| {
        if !busy.get_untracked() {
            power.dispatch_local(start);
        }
    };
    let state = move || status.with(|s| s.as_ref().map(|s| s.state));
    let available = move || !matches!(state(), None | Some(ComputerState::Unavailable));

    view! {
        <section class="computer page" data-screen="computer">
            <header class="computer-header page-header">
                <h1>"Computer"</h1>
                <span class="computer-state" data-state=move || state().map(state_slug)>
                    {move || state().map_or("checking…", state_label)}
                </span>
                <span class="computer-meta">{move || status.with(|s| s.as_ref().map(meta_line))}</span>
                <button data-action="start-computer" disabled=move || busy.get() || !available() on:click=move |_| act(true)>"Start"</button>
                <button data-action="stop-computer" disabled=move || busy.get() || state() != Some(ComputerState::Running) on:click=move |_| act(false)>"Stop computer"</button>
            </header>
            <div class="page-content">
            {move || status.with(|s| s.as_ref().and_then(|s| s.note.clone())).map(|note| view! { <p class="computer-note">{note}</p> })}
            {move || error().map(|message| view! { <p class="error computer-error">{message}</p> })}
            <div class="computer-body">
                <TerminalPane on_ran=Callback::new(move |()| loaded.refetch()) />
                <WorkspacePane />
            </div>
            </div>
        </section>
    }
}

/// The state in words.
pub const fn state_label(state: ComputerState) -> &'static str {
    match state {
        ComputerState::Unavailable => "unavailable",
        ComputerState::Absent => "not created yet",
        ComputerState::Stopped => "stopped",
        ComputerState::Running => "running",
    }
}

/// The state's hook for tests and CSS.
pub const fn state_slug(state: ComputerState) -> &'static str {
    match state {
        ComputerState::Unavailable => "unavailable",
        ComputerState::Absent => "absent",
        ComputerState::Stopped => "stopped",
        ComputerState::Running => "running",
    }
}

/// Engine, image and size, as one line.
pub fn meta_line(status: &ComputerStatusView) -> String {
    let engine = status.engine_version.as_deref().map_or_else(|| "no engine".to_owned(), |v| format!("Docker {v}"));
    let size = status.image_bytes.map_or_else(String::new, |b| format!(" ({} MB)", b / 1_000_000));
    format!("{engine} · {}{size}", status.image)
}

/// An operation id for one click: time and randomness, unique enough for one window. The
/// window mints it, from a fixed prefix and digits, so it is a valid id by construction.
pub fn operation_id(prefix: &'static str) -> OperationId {
    let now = js_sys::Date::now() as u64;
    let random = (js_sys::Math::random() * 1e9) as u64;
    OperationId::trusted(format!("{prefix}-{now}-{random}"))
}
