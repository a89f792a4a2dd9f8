//! Model provider: kind, base URL, model name and API key, with Save, Remove key and Test
//! connection. The key input is never pre-filled; left empty, Save keeps the stored key.
//! "On this computer" takes a GGUF file's path instead, and Check file shows what the file is
//! (name, size, parameters, context, template, memory) before it is kept.

use hearth_protocol::settings::{
    ConnectionTestResponse, LocalModelInfo, MAX_UNLOAD_MINUTES, ModelSettingsParams, ProviderKind, SettingsView,
};
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
    Checking,
    Choosing,
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
    let checked_file = RwSignal::new(None::<LocalModelInfo>);
    let check = Action::new_local(move |path: &String| {
        let path = path.clone();
        async move {
            match ipc::settings_local_model_inspect(&path).await {
                Ok(info) => checked_file.set(Some(info)),
                Err(err) => error.set(Some(err.message)),
            }
        }
    });
    // The system's file chooser; a chosen file goes in the path field and is checked at once.
    let choose = Action::new_local(move |()| async move {
        match ipc::local_model_choose_file().await {
            Ok(Some(path)) => {
                form.update(|f| f.base_url = path.clone());
                check.dispatch_local(path);
            }
            Ok(None) => {}
            Err(err) => error.set(Some(err.message)),
        }
    });
    let test = Action::new_local(move |()| async move {
        // A refused test reads like a failed one.
        let reply = ipc::settings_model_test().await;
        tested.set(Some(reply.unwrap_or_else(|err| ConnectionTestResponse { ok: false, message: err.message })));
    });
    // What is on its way, read from the actions (a store's input is there until it lands).
    let busy = Memo::new(move |_| {
        if test.pending().get() {
            Some(Busy::Testing)
        } else if check.pending().get() {
            Some(Busy::Checking)
        } else if choose.pending().get() {
            Some(Busy::Choosing)
        } else {
            store.input().with(|sent| sent.as_ref().map(|(_, action)| *action))
        }
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
    let check_file = move |_| {
        if busy.get_untracked().is_some() {
            return;
        }
        error.set(None);
        checked_file.set(None);
        check.dispatch_local(form.with_untracked(|f| f.base_url.clone()));
    };
    let choose_file = move |_| {
        if busy.get_untracked().is_some() {
            return;
        }
        error.set(None);
        checked_file.set(None);
        choose.dispatch_local(());
    };
    let is_busy = move || busy.get().is_some();
    let local = move || form.with(ModelForm::is_local);
    let local_stored =
        Memo::new(move |_| settings.with(|s| s.as_ref().and_then(|s| s.model.as_ref()).is_some_and(|m| m.kind == ProviderKind::Local)));

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
                <Show when=local>
                    <label class="settings-field" for="model-file">"Model file (.gguf)"</label>
                    <div class="settings-secret">
                        <input
                            id="model-file"
                            type="text"
                            spellcheck="false"
                            autocomplete="off"
                            placeholder="/home/you/models/qwen2.5-1.5b-instruct-q4_k_m.gguf"
                            prop:value=move || form.with(|f| f.base_url.clone())
                            on:input=move |ev| {
                                checked_file.set(None);
                                form.update(|f| f.base_url = event_target_value(&ev));
                            }
                        />
                        <button type="button" data-action="choose-model-file" disabled=is_busy on:click=choose_file>
                            {move || if busy.get() == Some(Busy::Choosing) { "Choosing…" } else { "Choose…" }}
                        </button>
                        <button type="button" data-action="check-model-file" disabled=is_busy on:click=check_file>
                            {move || if busy.get() == Some(Busy::Checking) { "Checking…" } else { "Check file" }}
                        </button>
                    </div>
                    <p class="settings-note">"Runs on this computer with Hearth's built-in engine: nothing is downloaded and nothing leaves it."</p>
                    {move || checked_file.get().map(|info| view! { <LocalModelFacts info /> })}
                    <label class="settings-field" for="model-unload-minutes">"Leave memory after (idle minutes)"</label>
                    <input
                        id="model-unload-minutes"
                        type="number"
                        min="0"
                        max=MAX_UNLOAD_MINUTES
                        step="1"
                        prop:value=move || form.with(|f| f.unload_after_minutes.to_string())
                        on:input=move |ev| {
                            // A number input reads as empty while what is typed is no number:
                            // the last number stays until it is one again.
                            if let Ok(minutes) = event_target_value(&ev).trim().parse() {
                                form.update(|f| f.unload_after_minutes = minutes);
                            }
                        }
                    />
                    <p class="settings-note">"The model gives its memory back after this long without a question, and loads again (a second or so) for the next one. 0 keeps it loaded while Hearth runs."</p>
                </Show>
                <Show when=move || !local()>
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
                </Show>
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
            {move || local_stored.get().then(|| view! { <LocalModelProbe settings /> })}
            {move || tested.get().map(|result| view! {
                <p class="settings-test-result" data-ok=if result.ok { "true" } else { "false" }>{result.message}</p>
            })}
            {move || error.get().map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}

/// What a checked model file is, as the owner decides whether to keep it.
#[component]
fn LocalModelFacts(info: LocalModelInfo) -> impl IntoView {
    let gb = |bytes: u64| format!("{:.2} GB", bytes as f64 / 1e9);
    let params = if info.parameters >= 1_000_000_000 {
        format!("{:.1} billion", info.parameters as f64 / 1e9)
    } else {
        format!("{} million", info.parameters / 1_000_000)
    };
    view! {
        <dl class="settings-model-facts" data-testid="local-model-facts">
            <dt>"Name"</dt><dd>{info.name}</dd>
            <dt>"Size"</dt><dd>{gb(info.file_bytes)}</dd>
            <dt>"Parameters"</dt><dd>{params}" ("{info.architecture}")"</dd>
            <dt>"Context"</dt><dd>{format!("{} tokens (trained for {})", info.context, info.trained_context)}</dd>
            <dt>"Chat template"</dt><dd><code>{info.chat_template}</code></dd>
            <dt>"Memory"</dt><dd>{format!("about {}", gb(info.memory_bytes))}</dd>
        </dl>
    }
}

/// The stored local model's probe: run it, see its score per family, let it act untested.
#[component]
fn LocalModelProbe(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let run = Action::new_local(move |()| async move {
        match ipc::settings_local_model_probe().await {
            Ok(view) => settings.set(Some(view)),
            Err(err) => error.set(Some(err.message)),
        }
    });
    let allow = Action::new_local(move |act: &bool| {
        let act = *act;
        async move {
            match ipc::settings_local_model_override(act).await {
                Ok(view) => settings.set(Some(view)),
                Err(err) => error.set(Some(err.message)),
            }
        }
    });
    let model = move || settings.with(|s| s.as_ref().and_then(|s| s.model.clone()));
    let busy = move || run.pending().get() || allow.pending().get();
    // Asked again every second while the suite runs.
    let clock = crate::clock::Clock::from_context();
    let progress = LocalResource::new(move || {
        let tick = if run.pending().get() { Some(clock.now.get()) } else { None };
        async move {
            match tick {
                Some(_) => ipc::local_model_probe_progress().await.ok().flatten(),
                None => None,
            }
        }
    });
    view! {
        <div class="settings-probe" data-testid="local-model-probe">
            <p class="settings-note">
                "Before a model on this computer may prepare mail, events or forms, or start tasks, it is tested on Hearth's own tasks. \
                 Reading (mail, calendar, pages) is always allowed."
            </p>
            <button type="button" data-action="probe-model" disabled=busy on:click=move |_| {
                if !busy() {
                    error.set(None);
                    run.dispatch_local(());
                }
            }>
                {move || if run.pending().get() { "Testing…" } else { "Test on Hearth's tasks" }}
            </button>
            <Show when=move || run.pending().get()>
                {move || match progress.get().flatten() {
                    Some(p) => view! {
                        <progress class="settings-progress" aria-label="Testing the model on Hearth's tasks" max=p.total value=p.done></progress>
                        <span class="settings-note" data-testid="probe-progress">{format!("{} of {} tasks", p.done, p.total)}</span>
                    }.into_any(),
                    // Before the first answer: how far is not known yet.
                    None => view! { <progress class="settings-progress" aria-label="Testing the model on Hearth's tasks"></progress> }.into_any(),
                }}
            </Show>
            {move || model().and_then(|m| m.probe).map(|probe| view! {
                <table class="settings-probe-scores">
                    <tr><th>"Task"</th><th>"Passed"</th><th>"May act"</th></tr>
                    {probe.families.into_iter().map(|f| view! {
                        <tr data-allowed=if f.allowed { "true" } else { "false" }>
                            <td>{f.label}</td>
                            <td>{format!("{} of {}", f.passed, f.total)}</td>
                            <td>{if f.allowed { "yes" } else { "no" }}</td>
                        </tr>
                    }).collect_view()}
                </table>
                <details class="settings-probe-answers">
                    <summary>"What it answered"</summary>
                    <ol>
                        {probe.answers.into_iter().map(|a| view! {
                            <li data-passed=if a.passed { "true" } else { "false" }>
                                <span class="settings-note">{a.family}": "{a.prompt}</span>
                                <code>{a.answered}</code>
                                <span>{if a.passed { "passed" } else { "failed" }}</span>
                            </li>
                        }).collect_view()}
                    </ol>
                </details>
            })}
            <label class="settings-toggle">
                <input
                    type="checkbox"
                    data-action="act-untested"
                    disabled=busy
                    prop:checked=move || model().is_some_and(|m| m.act_untested)
                    on:change=move |ev| { allow.dispatch_local(event_target_checked(&ev)); }
                />
                <span>"Let it prepare and act in tasks it did not pass"</span>
            </label>
            <p class="settings-note warning">"A model that failed these tasks may pick the wrong tool or follow instructions hidden in what it reads. Every send still waits for your approval."</p>
            {move || error.get().map(|message| view! { <p class="error settings-error">{message}</p> })}
        </div>
    }
}
