//! The terminal pane: a command line, the runs with their output as it arrives, and Stop.

use hearth_protocol::computer::ComputerRunParams;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::state::computer::{RunState, TerminalRun, output_text, push_output, settle, status_label, summary};

/// Commands, newest last, and the line to type the next one.
#[component]
pub fn TerminalPane(on_ran: Callback<()>) -> impl IntoView {
    let runs = RwSignal::new(Vec::<TerminalRun>::new());
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let running = move || runs.with(|r| r.iter().any(TerminalRun::is_running));
    let run = move || {
        let command = draft.get_untracked();
        if command.trim().is_empty() || running() {
            return;
        }
        let id = super::operation_id("term");
        let params = ComputerRunParams { command: command.clone(), cwd: None, operation_id: id.clone() };
        runs.update(|r| r.push(TerminalRun::started(id.clone(), command)));
        draft.set(String::new());
        error.set(None);
        spawn_local(async move {
            let chunk_id = id.clone();
            let answer = ipc::computer_run(&params, move |chunk| runs.update(|r| push_output(r, &chunk_id, &chunk))).await;
            runs.update(|r| settle(r, &id, answer.map_err(|e| e.message)));
            on_ran.run(());
        });
    };
    let stop = move |id: String| {
        spawn_local(async move {
            if let Err(err) = ipc::computer_run_stop(&id).await {
                error.set(Some(err.message));
            }
        });
    };

    view! {
        <div class="terminal-pane">
            <h2>"Terminal"</h2>
            <div class="terminal-runs" id="terminal-runs">
                <For each=move || runs.get() key=|r| (r.id.clone(), r.live.len(), matches!(r.state, RunState::Running)) let(entry)>
                    <RunView entry stop />
                </For>
            </div>
            {move || error.get().map(|message| view! { <p class="error terminal-error">{message}</p> })}
            <form class="terminal-line" on:submit=move |ev| { ev.prevent_default(); run(); }>
                <span class="prompt">"$"</span>
                <input
                    id="terminal-input"
                    type="text"
                    placeholder="A command, run in /workspace"
                    autocomplete="off"
                    prop:value=move || draft.get()
                    on:input=move |ev| draft.set(event_target_value(&ev))
                />
                <button id="terminal-run" type="submit" disabled=running>"Run"</button>
            </form>
        </div>
    }
}

/// One command: its line, its output, and how it ended (or Stop).
#[component]
fn RunView(entry: TerminalRun, stop: impl Fn(String) + Copy + 'static) -> impl IntoView {
    let (status, body, footer) = match &entry.state {
        RunState::Running => ("running", entry.live.clone(), None),
        RunState::Finished(receipt) => (status_label(receipt.status), output_text(receipt), Some(summary(receipt))),
        RunState::InDoubt(message) => ("interrupted", format!("{}\n{message}", entry.live), None),
        RunState::Refused(message) => ("not run", message.clone(), None),
    };
    let id = entry.id.clone();
    view! {
        <div class="terminal-run" data-status=status.replace(' ', "-") data-operation=entry.id>
            <pre class="terminal-command">"$ " {entry.command.clone()}</pre>
            <pre class="terminal-output" data-role="output">{body}</pre>
            <div class="terminal-run-footer">
                <span class=format!("status status-{}", status.replace(' ', "-"))>{status}</span>
                {footer.map(|text| view! { <span class="terminal-summary">{text}</span> })}
                {entry.is_running().then(|| view! {
                    <button class="stop" data-action="stop-command" on:click=move |_| stop(id.clone())>"Stop"</button>
                })}
            </div>
        </div>
    }
}
