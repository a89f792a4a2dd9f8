//! The terminal card for run_computer_command: the command, its output as it arrives, status,
//! exit code and duration, and Stop while it runs (Stop of the chat run it belongs to).
//!
//! The chat mounts it once per call and hands it the call as a signal, so the card (and its
//! Stop button) stays the same element while output streams in; only its text changes.

use leptos::prelude::*;

use crate::state::chat::ToolCallView;
use crate::state::computer::{CommandCard, command_card, output_text, status_label, summary};

/// Stop for the chat run a card belongs to, provided by the chat screen.
#[derive(Clone, Copy)]
pub struct RunStop(pub Callback<()>);

/// The card's status word.
pub fn card_status(card: &CommandCard) -> &'static str {
    match (&card.receipt, card.running) {
        (_, true) => "running",
        (Some(receipt), false) => status_label(receipt.status),
        // Ended with neither a receipt nor a refusal: Stop ended its run.
        (None, false) if card.problem.is_none() => "stopped",
        (None, false) if card.in_doubt => "interrupted",
        (None, false) => "not run",
    }
}

/// The command as a prompt line, then its output or what happened. `call` is the live call.
#[component]
pub fn TerminalCard(call: Signal<ToolCallView>) -> impl IntoView {
    let card = Memo::new(move |_| call.with(command_card));
    let status = move || card.with(|c| c.as_ref().map_or("running", card_status));
    let command = move || card.with(|c| c.as_ref().map(|c| c.command.clone()).unwrap_or_default());
    let body = move || {
        let live = call.with(|c| c.live.clone());
        card.with(|c| match c {
            Some(CommandCard { receipt: Some(receipt), .. }) => output_text(receipt),
            Some(CommandCard { problem: Some(problem), .. }) => problem.clone(),
            _ => live,
        })
    };
    let footer = move || card.with(|c| c.as_ref().and_then(|c| c.receipt.as_ref().map(summary)));
    let running = move || card.with(|c| c.as_ref().is_none_or(|c| c.running));
    let stop = use_context::<RunStop>();
    view! {
        <article class="card terminal-card" data-tool="run_computer_command" data-status=move || status().replace(' ', "-")>
            <header>
                <span class="card-kind">"Terminal"</span>
                <span class=move || format!("status status-{}", status().replace(' ', "-"))>{status}</span>
            </header>
            <pre class="terminal-command">"$ " {command}</pre>
            <pre class="terminal-output" data-role="output">{body}</pre>
            <footer class="card-footer">
                {move || footer().map(|text| view! { <p class="terminal-summary">{text}</p> })}
                {stop.map(|RunStop(stop)| view! {
                    <button class="stop" data-action="stop-command" class:hidden=move || !running() on:click=move |_| stop.run(())>"Stop"</button>
                })}
            </footer>
        </article>
    }
}
