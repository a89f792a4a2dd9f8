//! Agent: who answers the chat, as a radio group. The backend refuses Model and External
//! agent until they are configured; its message is shown and the radios go back to the
//! mode in force.

use hearth_protocol::settings::{AgentMode, SettingsView};
use leptos::prelude::*;

use super::settings_change;
use crate::ipc;
use crate::request::settled_failure;
use crate::state::settings::{MODES, mode_label, mode_note, mode_ready, mode_slug};

/// The Agent section.
#[component]
pub fn AgentSection(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let change = Action::new_local(move |mode: &AgentMode| settings_change(settings, ipc::settings_mode_set(*mode)));
    let busy = change.pending();
    let choose = move |mode: AgentMode| {
        if !busy.get_untracked() {
            change.dispatch_local(mode);
        }
    };

    view! {
        <section class="settings-section settings-agent">
            <h2>"Agent"</h2>
            <p class="settings-note">"Who answers in Chat."</p>
            <div class="settings-radios" role="radiogroup" aria-label="Agent">
                {MODES.into_iter().map(|mode| {
                    // Read the signal itself, not a memo, so a refused switch re-checks the radio.
                    let current = move || settings.with(|s| s.as_ref().map(|s| s.mode)) == Some(mode);
                    let unready = move || settings.with(|s| s.as_ref().is_some_and(|s| !mode_ready(s, mode)));
                    view! {
                        <label class="settings-radio" data-mode=mode_slug(mode)>
                            <input
                                type="radio"
                                name="agent-mode"
                                value=mode_slug(mode)
                                prop:checked=current
                                disabled=move || busy.get()
                                on:change=move |_| choose(mode)
                            />
                            <span class="settings-radio-label">{mode_label(mode)}</span>
                            <span class="settings-radio-note">
                                {mode_note(mode)}
                                {move || unready().then_some(" Set it up below first.")}
                            </span>
                        </label>
                    }
                }).collect_view()}
            </div>
            {move || settled_failure(change).map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}
