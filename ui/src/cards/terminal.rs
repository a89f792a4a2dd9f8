//! The terminal card for run_computer_command: the command, its output, status, exit code and
//! duration, and Stop while it runs (Stop of the chat run it belongs to).

use leptos::prelude::*;

use crate::state::computer::{CommandCard, output_text, status_label, summary};

/// Stop for the chat run a card belongs to, provided by the chat screen.
#[derive(Clone, Copy)]
pub struct RunStop(pub Callback<()>);

/// The command as a prompt line, then its output or what happened.
#[component]
pub fn TerminalCard(card: CommandCard, live: String) -> impl IntoView {
    let status = match (&card.receipt, card.running) {
        (_, true) => "running",
        (Some(receipt), false) => status_label(receipt.status),
        // Ended with neither a receipt nor a refusal: Stop ended its run.
        (None, false) if card.problem.is_none() => "stopped",
        (None, false) if card.in_doubt => "interrupted",
        (None, false) => "not run",
    };
    let stop = card.running.then(use_context::<RunStop>).flatten();
    let body = match (&card.receipt, &card.problem) {
        (Some(receipt), _) => output_text(receipt),
        (None, Some(problem)) => problem.clone(),
        (None, None) => live,
    };
    let footer = card.receipt.as_ref().map(summary);
    view! {
        <article class="card terminal-card" data-tool="run_computer_command" data-status=status>
            <header>
                <span class="card-kind">"Terminal"</span>
                <span class=format!("status status-{}", status.replace(' ', "-"))>{status}</span>
            </header>
            <pre class="terminal-command">"$ " {card.command}</pre>
            <pre class="terminal-output" data-role="output">{body}</pre>
            <footer class="card-footer">
                {footer.map(|text| view! { <p class="terminal-summary">{text}</p> })}
                {stop.map(|RunStop(stop)| view! {
                    <button class="stop" data-action="stop-command" on:click=move |_| stop.run(())>"Stop"</button>
                })}
            </footer>
        </article>
    }
}
