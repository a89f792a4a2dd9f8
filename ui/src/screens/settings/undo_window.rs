//! Undo send: how long an approved email or event change waits, with Undo on its card and
//! in the Inbox, before it leaves. 0 sends at once.

use hearth_protocol::settings::{MAX_UNDO_WINDOW_SECONDS, SettingsView};
use leptos::prelude::*;

use super::settings_change;
use crate::ipc;
use crate::request::settled_failure;

/// The undo window section.
#[component]
pub fn UndoWindowSection(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let shown = move || settings.with(|s| s.as_ref().map_or(0, |s| s.undo_window_seconds));
    // What the owner typed; starts from the view and again after each Save.
    let typed = RwSignal::new(shown().to_string());
    let save = Action::new_local(move |seconds: &u32| {
        let seconds = *seconds;
        async move {
            let saved = settings_change(settings, ipc::settings_undo_window_set(seconds)).await;
            if saved.is_ok() {
                typed.set(shown().to_string());
            }
            saved
        }
    });
    let busy = save.pending();
    let invalid = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        match typed.get_untracked().trim().parse::<u32>() {
            Ok(seconds) if seconds <= MAX_UNDO_WINDOW_SECONDS => {
                invalid.set(None);
                save.dispatch_local(seconds);
            }
            Ok(_) | Err(_) => invalid.set(Some(format!("Enter a whole number of seconds from 0 to {MAX_UNDO_WINDOW_SECONDS}."))),
        }
    };
    view! {
        <section class="settings-section settings-undo-window">
            <h2>"Undo send"</h2>
            <p class="settings-note">
                "An email or event change you approve waits this long, with Undo on its card and in the Inbox, before it \
                 leaves. If Hearth stops in that time, nothing is sent and it comes back to you for review. 0 sends at once."
            </p>
            <form class="settings-form" on:submit=submit>
                <label class="settings-field" for="undo-window-seconds">"Seconds"</label>
                <input
                    id="undo-window-seconds"
                    type="number"
                    min="0"
                    max=MAX_UNDO_WINDOW_SECONDS.to_string()
                    step="1"
                    prop:value=move || typed.get()
                    on:input=move |ev| typed.set(event_target_value(&ev))
                />
                <button type="submit" data-action="save-undo-window" disabled=move || busy.get()>"Save"</button>
            </form>
            <p class="settings-note undo-window-now">{move || match shown() {
                0 => "Approved sends leave at once.".to_owned(),
                seconds => format!("Approved sends wait {seconds} s."),
            }}</p>
            {move || invalid.get().or_else(|| settled_failure(save)).map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}
