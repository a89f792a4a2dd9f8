//! Settings → Web search: the search page search_web opens in Hearth's browser — a preset
//! (DuckDuckGo's HTML page by default) or the owner's own address with `{query}` where the
//! query goes. The core checks the address when it is saved and says why it refused one.

use hearth_protocol::web_search::SearchPreset;
use leptos::prelude::*;

use crate::ipc;
use crate::request::{failure, load_failure};
use crate::state::web_search::{WebSearchForm, preset_of_value, preset_value};

/// The section.
#[component]
pub fn WebSearchSection() -> impl IntoView {
    let loaded = LocalResource::new(ipc::settings_web_search_get);
    let form = RwSignal::new(WebSearchForm::default());
    // The field starts from the stored template once it arrives, then is the owner's.
    Effect::new(move |started: Option<bool>| {
        if started == Some(true) {
            return true;
        }
        match loaded.with(|reply| reply.as_ref().and_then(|r| r.as_ref().ok()).map(WebSearchForm::from_view)) {
            Some(stored) => {
                form.set(stored);
                true
            }
            None => false,
        }
    });
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let save = Action::new_local(|params: &hearth_protocol::web_search::WebSearchSetParams| {
        let params = params.clone();
        async move { ipc::settings_web_search_set(&params).await }
    });
    let busy = save.pending();
    Effect::new(move |_| {
        save.value().with(|reply| match reply {
            Some(Ok(view)) => {
                form.set(WebSearchForm::from_view(view));
                error.set(None);
                saved.set(true);
            }
            Some(Err(_)) => {
                error.set(failure(reply.as_ref()));
                saved.set(false);
            }
            None => {}
        });
    });
    let send = move |_| {
        if busy.get_untracked() {
            return;
        }
        saved.set(false);
        match form.with_untracked(WebSearchForm::params) {
            Ok(params) => {
                error.set(None);
                save.dispatch_local(params);
            }
            Err(refused) => error.set(Some(refused.message)),
        }
    };
    let pick = move |ev: leptos::ev::Event| {
        saved.set(false);
        form.update(|f| f.pick(preset_of_value(&event_target_value(&ev))));
    };

    view! {
        <section class="settings-section settings-web-search" data-section="web-search">
            <h2>"Web search"</h2>
            <p class="settings-note">
                "search_web opens this page in Hearth's own browser, under the same rules as any page it opens, and reads the results. No key is needed."
            </p>
            <form class="settings-form" on:submit=|ev| ev.prevent_default()>
                <label class="settings-field" for="web-search-preset">"Search page"</label>
                <select id="web-search-preset" disabled=move || busy.get() on:change=pick>
                    {SearchPreset::ALL.into_iter().map(|preset| view! {
                        <option
                            value=preset_value(preset)
                            prop:selected=move || form.with(|f| f.preset() == preset)
                        >{preset.label()}</option>
                    }).collect_view()}
                </select>
                <label class="settings-field" for="web-search-template">"Address"</label>
                <input
                    id="web-search-template"
                    type="url"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder="https://html.duckduckgo.com/html/?q={query}"
                    prop:value=move || form.with(|f| f.template.clone())
                    on:input=move |ev| {
                        saved.set(false);
                        form.update(|f| f.template = event_target_value(&ev));
                    }
                />
                <p class="hint">"{query} is replaced by what the agent searches for. https:// only."</p>
                <div class="settings-actions">
                    <button type="submit" class="settings-primary" data-action="save-web-search" disabled=move || busy.get() on:click=send>
                        {move || if busy.get() { "Saving…" } else { "Save" }}
                    </button>
                    {move || saved.get().then(|| view! { <span class="settings-saved">"Saved"</span> })}
                </div>
            </form>
            {move || load_failure(loaded, "The search page").map(|message| view! { <p class="error settings-error">{message}</p> })}
            {move || error.get().map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}
