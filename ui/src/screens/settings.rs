//! Settings: who answers the chat, the model provider, the external AG-UI agent, Hearth's
//! own AG-UI endpoint, the computer, and the accounts whose mail and calendar the agent reads.
//!
//! Every `settings_*` command answers the whole view, which replaces the one shown here.
//! The forms start from the view once and again after their own Save, so a change in one
//! section never wipes what the owner is typing in another. Secrets are never shown back.

mod accounts;
mod agent_mode;
mod computer;
mod endpoint;
mod harness;
mod model_provider;

use std::future::Future;

use hearth_protocol::IpcError;
use hearth_protocol::settings::SettingsView;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::latest_only::latest_only;
use accounts::AccountsSection;
use agent_mode::AgentSection;
use computer::ComputerSection;
use endpoint::EndpointSection;
use harness::HarnessSection;
use model_provider::ModelSection;

/// The Settings screen.
#[component]
pub fn SettingsScreen() -> impl IntoView {
    // `None` until the first view arrives.
    let settings = RwSignal::new(None::<SettingsView>);
    let error = RwSignal::new(None::<String>);
    let reload = latest_only(ipc::settings_get, move |reply| match reply {
        Ok(view) => {
            settings.set(Some(view));
            error.set(None);
        }
        Err(err) => error.set(Some(format!("Settings could not be loaded: {}", err.message))),
    });
    reload.run(());
    // The sections mount once, when the first view arrives.
    let loaded = Memo::new(move |_| settings.with(Option::is_some));

    view! {
        <section class="settings page" data-screen="settings">
            <header class="settings-header page-header">
                <h1>"Settings"</h1>
            </header>
            {move || error.get().map(|message| view! {
                <p class="error settings-error settings-load-error">
                    {message} " " <button type="button" data-action="reload" on:click=move |_| reload.run(())>"Try again"</button>
                </p>
            })}
            <div class="settings-body">
                {move || if loaded.get() {
                    view! {
                        <AgentSection settings />
                        <ModelSection settings />
                        <HarnessSection settings />
                        <EndpointSection settings />
                        <ComputerSection />
                        <AccountsSection />
                    }.into_any()
                } else {
                    view! { <p class="empty">"Loading settings…"</p> }.into_any()
                }}
            </div>
        </section>
    }
}

/// Sends one settings change unless one is in flight. The view it answers replaces the shown
/// one; a refusal shows its message and re-notifies the view's readers, so a control the
/// backend refused (a radio, a toggle) goes back to the setting in force.
fn apply_change<T: Send + Sync + 'static>(
    busy: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    settings: RwSignal<Option<T>>,
    change: impl Future<Output = Result<T, IpcError>> + 'static,
) {
    if busy.get_untracked() {
        return;
    }
    busy.set(true);
    error.set(None);
    spawn_local(async move {
        let reply = change.await;
        busy.set(false);
        match reply {
            Ok(view) => settings.set(Some(view)),
            Err(err) => {
                error.set(Some(err.message));
                settings.update(|_| ());
            }
        }
    });
}
