//! The terminal card for run_computer_command: the command, its output as it arrives, status,
//! exit code and duration, and Stop while it runs (Stop of the chat run it belongs to).
//!
//! The chat mounts it once per call and hands it the call as a signal, so the card (and its
//! Stop button) stays the same element while output streams in; only its text changes.

use leptos::prelude::*;

use crate::state::chat::{ToolCallView, ToolStatus};
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

/// The status of `call`, whose card model is `card` (`None` while, or when, its arguments are
/// not a command yet).
pub fn call_status(call: &ToolCallView, card: Option<&CommandCard>) -> &'static str {
    match (card, call.status) {
        (Some(card), _) => card_status(card),
        (None, ToolStatus::Running) => "running",
        (None, ToolStatus::Complete | ToolStatus::Error) if call.result.is_some() => "not run",
        (None, ToolStatus::Complete | ToolStatus::Error) => "stopped",
    }
}

/// The command as a prompt line, then its output or what happened. `call` is the live call.
#[component]
pub fn TerminalCard(call: Signal<ToolCallView>) -> impl IntoView {
    let card = Memo::new(move |_| call.with(command_card));
    let status = move || call.with(|c| card.with(|card| call_status(c, card.as_ref())));
    let command = move || card.with(|c| c.as_ref().map(|c| c.command.clone()).unwrap_or_default());
    let body = move || {
        let live = call.with(|c| c.live.clone());
        card.with(|c| match c {
            Some(CommandCard { receipt: Some(receipt), .. }) => output_text(receipt),
            Some(CommandCard { problem: Some(problem), .. }) => problem.clone(),
            Some(_) => live,
            // Arguments that never became a command: what the call answered, if anything.
            None => call.with(|c| c.result.clone().unwrap_or(live)),
        })
    };
    let footer = move || card.with(|c| c.as_ref().and_then(|c| c.receipt.as_ref().map(summary)));
    // Stop only while the call itself runs: a dead card must not stop a later run.
    let running = move || call.with(|c| c.status == ToolStatus::Running);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(status: ToolStatus, args: &str, result: Option<&str>) -> ToolCallView {
        ToolCallView {
            id: "c".into(),
            name: "run_computer_command".into(),
            args: args.into(),
            status,
            result: result.map(str::to_owned),
            live: String::new(),
        }
    }

    #[test]
    fn a_call_whose_arguments_never_parsed_is_not_shown_running() {
        let partial = r#"{"comm"#;
        assert_eq!(call_status(&call(ToolStatus::Running, partial, None), None), "running");
        // Stopped while the model was still sending the arguments.
        assert_eq!(call_status(&call(ToolStatus::Error, partial, None), None), "stopped");
        // Refused arguments.
        assert_eq!(call_status(&call(ToolStatus::Error, "{}", Some(r#"{"error":"bad"}"#)), None), "not run");
        let whole = call(ToolStatus::Running, r#"{"command":"ls","operationId":"o"}"#, None);
        assert_eq!(call_status(&whole, command_card(&whole).as_ref()), "running");
    }
}
