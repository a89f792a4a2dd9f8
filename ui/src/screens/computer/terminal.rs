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
        runs.update(|r| r.push(TerminalRun::started(id.to_string(), command)));
        draft.set(String::new());
        error.set(None);
        // Kept: a command whose output streams into its row while it runs.
        spawn_local(async move {
            let chunk_id = id.clone();
            let answer = ipc::computer_run(&params, move |chunk| runs.update(|r| push_output(r, &chunk_id, &chunk))).await;
            runs.update(|r| settle(r, &id, answer.map_err(|e| e.message)));
            on_ran.run(());
        });
    };
    let stop = move |id: String| {
        // Kept: fire-and-forget; the stopped run settles through its own stream.
        spawn_local(async move {
            // `false`: the backend had not registered the run yet; it keeps the Stop, and the
            // run starts stopped.
            if let Err(err) = ipc::computer_run_stop(&id).await {
                error.set(Some(err.message));
            }
        });
    };

    view! {
        <div class="terminal-pane">
            <h2>"Terminal"</h2>
            <div class="terminal-runs" id="terminal-runs">
                // Keyed by id only: a row (and its Stop button) stays the same element while its
                // output grows, so a click on Stop lands.
                <For each=move || runs.with(|r| r.iter().map(|run| run.id.clone()).collect::<Vec<_>>()) key=|id| id.clone() let(id)>
                    <RunView runs id stop />
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

/// One command: its line, its output, and how it ended (or Stop). Only its text and status
/// follow the run; the element stays.
#[component]
fn RunView(runs: RwSignal<Vec<TerminalRun>>, id: String, stop: impl Fn(String) + Copy + 'static) -> impl IntoView {
    let key = id.clone();
    let run = Memo::new(move |_| runs.with(|r| r.iter().find(|run| run.id == key).cloned()));
    let status = move || {
        run.with(|r| match r.as_ref().map(|r| &r.state) {
            Some(RunState::Running) | None => "running",
            Some(RunState::Finished(receipt)) => status_label(receipt.status),
            Some(RunState::InDoubt(_)) => "interrupted",
            Some(RunState::Refused(_)) => "not run",
        })
    };
    let body = move || {
        run.with(|r| match r {
            None => String::new(),
            Some(r) => match &r.state {
                RunState::Running => r.live.clone(),
                RunState::Finished(receipt) => output_text(receipt),
                RunState::InDoubt(message) => format!("{}\n{message}", r.live),
                RunState::Refused(message) => message.clone(),
            },
        })
    };
    let footer = move || {
        run.with(|r| r.as_ref().and_then(|r| if let RunState::Finished(receipt) = &r.state { Some(summary(receipt)) } else { None }))
    };
    let command = run.with_untracked(|r| r.as_ref().map(|r| r.command.clone()).unwrap_or_default());
    let running = move || run.with(|r| r.as_ref().is_some_and(TerminalRun::is_running));
    let operation = id.clone();
    view! {
        <div class="terminal-run" data-status=move || status().replace(' ', "-") data-operation=operation>
            <pre class="terminal-command">"$ " {command}</pre>
            <pre class="terminal-output" data-role="output">{body}</pre>
            <div class="terminal-run-footer">
                <span class=move || format!("status status-{}", status().replace(' ', "-"))>{status}</span>
                {move || footer().map(|text| view! { <span class="terminal-summary">{text}</span> })}
                <button class="stop" data-action="stop-command" class:hidden=move || !running() on:click=move |_| stop(id.clone())>"Stop"</button>
            </div>
        </div>
    }
}
