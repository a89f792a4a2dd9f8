//! Shown when the core could not open (damaged or locked database, unwritable folder).

use leptos::prelude::*;

/// The start-up error screen.
#[component]
pub fn StartupError(message: String) -> impl IntoView {
    view! {
        <section id="startup-error" class="startup-error">
            <h1>"Hearth could not start"</h1>
            <p class="message">{message}</p>
            <p>"Fix the problem above, then close and reopen Hearth."</p>
        </section>
    }
}
