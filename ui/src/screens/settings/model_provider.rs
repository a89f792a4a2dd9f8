//! Model provider: kind, base URL, model name and API key, with Save, Remove key and Test
//! connection. The key input is never pre-filled; left empty, Save keeps the stored key.

use hearth_protocol::settings::{ConnectionTestResponse, ModelSettingsParams, ProviderKind, SettingsView};
use leptos::prelude::*;

use crate::ipc;
use crate::request::send_checked;
use crate::state::settings::{ModelForm, kind_from_slug, kind_slug, remove_key_params, secret_placeholder};

/// What the section is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    Saving,
    Removing,
    Testing,
}

/// The Model provider section.
#[component]
pub fn ModelSection(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let form = RwSignal::new(settings.with_untracked(|s| ModelForm::from_settings(s.as_ref().and_then(|s| s.model.as_ref()))));
    let error = RwSignal::new(None::<String>);
    let notice = RwSignal::new(None::<&'static str>);
    let tested = RwSignal::new(None::<ConnectionTestResponse>);
    let has_key = Memo::new(move |_| settings.with(|s| s.as_ref().and_then(|s| s.model.as_ref()).is_some_and(|m| m.has_api_key)));
    let configured = Memo::new(move |_| settings.with(|s| s.as_ref().is_some_and(|s| s.model.is_some())));
    let unsaved = Memo::new(move |_| settings.with(|s| form.with(|f| f.is_unsaved(s.as_ref().and_then(|s| s.model.as_ref())))));

    // Stores `params`; on success the view (and, for Save, the form) start from the reply.
    let store = Action::new_local(move |(params, action): &(ModelSettingsParams, Busy)| {
        let (params, action) = (params.clone(), *action);
        async move {
            match ipc::settings_model_set(&params).await {
                Ok(view) => {
                    match action {
                        Busy::Removing => form.update(|f| f.api_key.clear()),
                        _ => form.set(ModelForm::from_settings(view.model.as_ref())),
                    }
                    notice.set(Some(if action == Busy::Removing { "Key removed." } else { "Saved." }));
                    tested.set(None);
                    settings.set(Some(view));
                }
                Err(err) => error.set(Some(err.message)),
            }
        }
    });
    let test = Action::new_local(move |()| async move {
        // A refused test reads like a failed one.
        let reply = ipc::settings_model_test().await;
        tested.set(Some(reply.unwrap_or_else(|err| ConnectionTestResponse { ok: false, message: err.message })));
    });
    // What is on its way, read from the two actions (a store's input is there until it lands).
    let busy = Memo::new(move |_| {
        if test.pending().get() { Some(Busy::Testing) } else { store.input().with(|sent| sent.as_ref().map(|(_, action)| *action)) }
    });
    let send = move |params: ModelSettingsParams, action: Busy| {
        if busy.get_untracked().is_some() {
            return;
        }
        let checked = params.validate();
        send_checked(store, (params, action), checked, error, notice);
    };
    let save = move |_| send(form.with_untracked(ModelForm::params), Busy::Saving);
    let remove = move |_| {
        if let Some(stored) = settings.with_untracked(|s| s.as_ref().and_then(|s| s.model.as_ref().map(remove_key_params))) {
            send(stored, Busy::Removing);
        }
    };
    let test = move |_| {
        if busy.get_untracked().is_some() {
            return;
        }
        tested.set(None);
        notice.set(None);
        test.dispatch_local(());
    };
    let is_busy = move || busy.get().is_some();

    view! {
        <section class="settings-section settings-model">
            <h2>"Model provider"</h2>
            <form class="settings-form" on:submit=|ev| ev.prevent_default()>
                <label class="settings-field" for="model-kind">"Provider"</label>
                <select
                    id="model-kind"
                    on:change=move |ev| {
                        if let Some(kind) = kind_from_slug(&event_target_value(&ev)) {
                            form.update(|f| f.set_kind(kind));
                        }
                    }
                >
                    {ProviderKind::ALL.iter().copied().map(|kind| view! {
                        <option value=kind_slug(kind) selected=move || form.with(|f| f.kind) == kind>{kind.label()}</option>
                    }).collect_view()}
                </select>
                <label class="settings-field" for="model-base-url">"Base URL"</label>
                <input
                    id="model-base-url"
                    type="url"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder="http://localhost:11434/v1"
                    prop:value=move || form.with(|f| f.base_url.clone())
                    on:input=move |ev| form.update(|f| f.base_url = event_target_value(&ev))
                />
                <label class="settings-field" for="model-name">"Model"</label>
                <input
                    id="model-name"
                    type="text"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder="gpt-4o-mini, llama3.2, claude-sonnet-4-5…"
                    prop:value=move || form.with(|f| f.model.clone())
                    on:input=move |ev| form.update(|f| f.model = event_target_value(&ev))
                />
                <label class="settings-field" for="model-api-key">"API key"</label>
                <div class="settings-secret">
                    <input
                        id="model-api-key"
                        type="password"
                        autocomplete="off"
                        spellcheck="false"
                        placeholder=move || secret_placeholder(has_key.get())
                        prop:value=move || form.with(|f| f.api_key.clone())
                        on:input=move |ev| form.update(|f| f.api_key = event_target_value(&ev))
                    />
                    <Show when=move || has_key.get()>
                        <button type="button" data-action="remove-key" disabled=is_busy on:click=remove>
                            {move || if busy.get() == Some(Busy::Removing) { "Removing…" } else { "Remove key" }}
                        </button>
                    </Show>
                </div>
                <label class="settings-toggle">
                    <input
                        type="checkbox"
                        id="model-accepts-images"
                        prop:checked=move || form.with(|f| f.accepts_images)
                        on:change=move |ev| form.update(|f| f.accepts_images = event_target_checked(&ev))
                    />
                    <span>"This model reads images"</span>
                </label>
                <p class="settings-note">"Then the agent may look at the browser's page: its picture goes to the model with the request."</p>
                <div class="settings-actions">
                    <button type="submit" class="settings-primary" data-action="save-model" disabled=is_busy on:click=save>
                        {move || if busy.get() == Some(Busy::Saving) { "Saving…" } else { "Save" }}
                    </button>
                    <button
                        type="button"
                        data-action="test-model"
                        disabled=move || is_busy() || !configured.get()
                        title=move || (!configured.get()).then_some("Save a provider first.")
                        on:click=test
                    >
                        {move || if busy.get() == Some(Busy::Testing) { "Testing…" } else { "Test connection" }}
                    </button>
                    {move || notice.get().map(|text| view! { <span class="settings-saved">{text}</span> })}
                    {move || (configured.get() && unsaved.get()).then(|| view! {
                        <span class="settings-note">"Test connection uses the saved settings."</span>
                    })}
                </div>
            </form>
            {move || tested.get().map(|result| view! {
                <p class="settings-test-result" data-ok=if result.ok { "true" } else { "false" }>{result.message}</p>
            })}
            {move || error.get().map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}
