//! Hearth's own AG-UI endpoint: on or off; while on, its URL and the bearer token clients
//! must send, each with Copy, and "Regenerate token" (the old token stops working at once).
//! The token field selects itself on focus, for when the clipboard is unavailable.

use hearth_protocol::settings::SettingsView;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::settings_change;
use crate::clipboard::copy_text;
use crate::ipc;
use crate::request::settled_failure;

/// What the section asks of the endpoint; each answers the whole settings view.
#[derive(Debug, Clone, Copy)]
enum EndpointChange {
    Enable(bool),
    Regenerate,
}

/// The endpoint section.
#[component]
pub fn EndpointSection(settings: RwSignal<Option<SettingsView>>) -> impl IntoView {
    let change = Action::new_local(move |request: &EndpointChange| {
        let request = *request;
        async move {
            match request {
                EndpointChange::Enable(on) => settings_change(settings, ipc::settings_endpoint_set(on)).await,
                EndpointChange::Regenerate => settings_change(settings, ipc::settings_endpoint_regenerate()).await,
            }
        }
    });
    let busy = change.pending();
    let send = move |request: EndpointChange| {
        if !busy.get_untracked() {
            change.dispatch_local(request);
        }
    };
    // Read the signal itself, not a memo, so a refused toggle re-checks the box.
    let enabled = move || settings.with(|s| s.as_ref().is_some_and(|s| s.endpoint.enabled));
    let url = Memo::new(move |_| settings.with(|s| s.as_ref().and_then(|s| s.endpoint.url.clone())));
    let token = Memo::new(move |_| settings.with(|s| s.as_ref().and_then(|s| s.endpoint.token.clone())));
    let toggle = move |on: bool| send(EndpointChange::Enable(on));
    let regenerate = move |_| send(EndpointChange::Regenerate);

    let select_all = |ev: leptos::ev::FocusEvent| event_target::<web_sys::HtmlInputElement>(&ev).select();

    view! {
        <section class="settings-section settings-endpoint">
            <h2>"Hearth's AG-UI endpoint"</h2>
            <label class="settings-toggle">
                <input
                    type="checkbox"
                    id="endpoint-enabled"
                    prop:checked=enabled
                    disabled=move || busy.get()
                    on:change=move |ev| toggle(event_target_checked(&ev))
                />
                <span>"Let AG-UI clients use Hearth's agent"</span>
            </label>
            <p class="settings-note">"It listens on this machine only (127.0.0.1), and every client must send the token."</p>
            <Show when=move || enabled()>
                <div class="settings-form endpoint-details">
                    <span class="settings-field">"URL"</span>
                    <div class="settings-copy">
                        <code class="endpoint-url">{move || url.get().unwrap_or_default()}</code>
                        <CopyButton action="copy-url" text=Signal::derive(move || url.get()) />
                    </div>
                    <label class="settings-field" for="endpoint-token">"Token"</label>
                    <div class="settings-copy">
                        <input
                            id="endpoint-token"
                            class="endpoint-token"
                            type="text"
                            readonly=true
                            spellcheck="false"
                            prop:value=move || token.get().unwrap_or_default()
                            on:focus=select_all
                        />
                        <CopyButton action="copy-token" text=Signal::derive(move || token.get()) />
                    </div>
                    <div class="settings-regenerate">
                        <button
                            type="button"
                            data-action="regenerate-token"
                            disabled=move || busy.get()
                            on:click=regenerate
                        >"Regenerate token"</button>
                        <span class="settings-note">"Clients still using the old token are refused from now on."</span>
                    </div>
                </div>
            </Show>
            {move || settled_failure(change).map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}

/// Copy, then briefly "Copied" (or a hint to copy by hand).
#[component]
fn CopyButton(action: &'static str, text: Signal<Option<String>>) -> impl IntoView {
    let outcome = RwSignal::new(None::<bool>);
    let copy = move |_| {
        let Some(value) = text.get_untracked() else {
            return;
        };
        // Kept: a clipboard write, not an IPC request; its outcome is a one-off note.
        spawn_local(async move {
            let copied = copy_text(&value).await;
            outcome.set(Some(copied));
        });
    };
    view! {
        <button type="button" data-action=action disabled=move || text.with(Option::is_none) on:click=copy>"Copy"</button>
        {move || outcome.get().map(|copied| view! {
            <span class="settings-copied" data-ok=if copied { "true" } else { "false" }>
                {if copied { "Copied." } else { "Could not copy; select it and copy by hand." }}
            </span>
        })}
    }
}
