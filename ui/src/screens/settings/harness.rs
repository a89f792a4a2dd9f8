//! External agent (AG-UI): its URL and bearer token, with Save and Remove token. The token
//! input is never pre-filled; left empty, Save keeps the stored token.

use hearth_protocol::settings::{HarnessSettingsParams, SettingsView};
use leptos::prelude::*;

use crate::ipc;
use crate::request::send_checked;
use crate::state::settings::{HarnessForm, remove_token_params, secret_placeholder};

/// The External agent section.
#[component]
pub fn HarnessSection(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let form = RwSignal::new(settings.with_untracked(|s| HarnessForm::from_settings(s.as_ref().and_then(|s| s.harness.as_ref()))));
    let error = RwSignal::new(None::<String>);
    let notice = RwSignal::new(None::<&'static str>);
    let has_token = Memo::new(move |_| settings.with(|s| s.as_ref().and_then(|s| s.harness.as_ref()).is_some_and(|h| h.has_token)));

    // Stores `params` (`removing`: only the token goes); on success the view (and, for Save,
    // the form) start from the reply.
    let store = Action::new_local(move |(params, removing): &(HarnessSettingsParams, bool)| {
        let (params, removing) = (params.clone(), *removing);
        async move {
            match ipc::settings_harness_set(&params).await {
                Ok(view) => {
                    if removing {
                        form.update(|f| f.token.clear());
                    } else {
                        form.set(HarnessForm::from_settings(view.harness.as_ref()));
                    }
                    notice.set(Some(if removing { "Token removed." } else { "Saved." }));
                    settings.set(Some(view));
                }
                Err(err) => error.set(Some(err.message)),
            }
        }
    });
    // Some(true) while removing the token, Some(false) while saving (the input is there until
    // the answer lands).
    let busy = Memo::new(move |_| store.input().with(|sent| sent.as_ref().map(|(_, removing)| *removing)));
    let send = move |params: HarnessSettingsParams, removing: bool| {
        if busy.get_untracked().is_some() {
            return;
        }
        let checked = params.validate();
        send_checked(store, (params, removing), checked, error, notice);
    };
    let save = move |_| send(form.with_untracked(HarnessForm::params), false);
    let remove = move |_| {
        if let Some(params) = settings.with_untracked(|s| s.as_ref().and_then(|s| s.harness.as_ref().map(remove_token_params))) {
            send(params, true);
        }
    };
    let is_busy = move || busy.get().is_some();

    view! {
        <section class="settings-section settings-harness">
            <h2>"External agent (AG-UI)"</h2>
            <p class="settings-note">"An agent that speaks AG-UI, given Hearth's tools."</p>
            <form class="settings-form" on:submit=|ev| ev.prevent_default()>
                <label class="settings-field" for="harness-url">"URL"</label>
                <input
                    id="harness-url"
                    type="url"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder="http://127.0.0.1:8000/"
                    prop:value=move || form.with(|f| f.url.clone())
                    on:input=move |ev| form.update(|f| f.url = event_target_value(&ev))
                />
                <label class="settings-field" for="harness-token">"Bearer token"</label>
                <div class="settings-secret">
                    <input
                        id="harness-token"
                        type="password"
                        autocomplete="off"
                        spellcheck="false"
                        placeholder=move || secret_placeholder(has_token.get())
                        prop:value=move || form.with(|f| f.token.clone())
                        on:input=move |ev| form.update(|f| f.token = event_target_value(&ev))
                    />
                    <Show when=move || has_token.get()>
                        <button type="button" data-action="remove-token" disabled=is_busy on:click=remove>
                            {move || if busy.get() == Some(true) { "Removing…" } else { "Remove token" }}
                        </button>
                    </Show>
                </div>
                <div class="settings-actions">
                    <button type="submit" class="settings-primary" data-action="save-harness" disabled=is_busy on:click=save>
                        {move || if busy.get() == Some(false) { "Saving…" } else { "Save" }}
                    </button>
                    {move || notice.get().map(|text| view! { <span class="settings-saved">{text}</span> })}
                </div>
            </form>
            {move || error.get().map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}
