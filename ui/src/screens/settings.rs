//! Settings: who answers the chat, the model provider, the external AG-UI agent, Hearth's
//! own AG-UI endpoint, the web search page, the computer, the owner's paired devices, the
//! tools of the owner's MCP servers, the accounts whose mail and calendar the agent reads, and
//! the owner's data (backups and restore).
//!
//! Every `settings_*` command answers the whole view, which replaces the one shown here.
//! The forms start from the view once and again after their own Save, so a change in one
//! section never wipes what the owner is typing in another. Secrets are never shown back.

mod accounts;
mod agent_mode;
mod computer;
mod data;
mod devices;
mod endpoint;
mod harness;
mod home_link;
mod model_provider;
mod tools;
mod undo_window;
mod web_search;

use std::future::Future;

use hearth_protocol::IpcError;
use hearth_protocol::settings::SettingsView;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::request::{Reply, action_failure};
use accounts::AccountsSection;
use agent_mode::AgentSection;
use computer::ComputerSection;
use data::DataSection;
use devices::DevicesSection;
use endpoint::EndpointSection;
use harness::HarnessSection;
use home_link::HomeLinkSection;
use model_provider::ModelSection;
use tools::ToolsSection;
use undo_window::UndoWindowSection;
use web_search::WebSearchSection;

/// The Settings screen.
#[component]
pub fn SettingsScreen() -> impl IntoView {
    // Working through the Hearth at home: its settings are changed there.
    if ipc::transport() == ipc::Transport::Home {
        return view! {
            <section class="settings page" data-screen="settings">
                <header class="settings-header page-header">
                    <h1>"Settings"</h1>
                </header>
                <div class="settings-body">
                    <HomeLinkSection />
                </div>
            </section>
        }
        .into_any();
    }
    // `None` until the first view arrives; the sections write the views their changes answer.
    let settings = RwSignal::new(None::<SettingsView>);
    // Loads the view the sections start from (and again from "Try again").
    let load = Action::new_local(move |()| async move { ipc::settings_get().await.map(|view| settings.set(Some(view))) });
    load.dispatch_local(());
    let error = move || action_failure(load).map(|why| format!("Settings could not be loaded: {why}"));
    // The sections mount once, when the first view arrives.
    let loaded = Memo::new(move |_| settings.with(Option::is_some));

    view! {
        <section class="settings page" data-screen="settings">
            <header class="settings-header page-header">
                <h1>"Settings"</h1>
            </header>
            {move || error().map(|message| view! {
                <p class="error settings-error settings-load-error">
                    {message} " " <button type="button" data-action="reload" on:click=move |_| { load.dispatch_local(()); }>"Try again"</button>
                </p>
            })}
            <div class="settings-body">
                {move || if loaded.get() {
                    view! {
                        <AgentSection settings />
                        <ModelSection settings />
                        <HarnessSection settings />
                        <EndpointSection settings />
                        <UndoWindowSection settings />
                        <WebSearchSection />
                        <ComputerSection />
                        <DevicesSection />
                        <ToolsSection />
                        <HomeLinkSection />
                        <AccountsSection />
                        <DataSection />
                    }.into_any()
                } else {
                    view! { <p class="empty">"Loading settings…"</p> }.into_any()
                }}
            </div>
        </section>
    }
    .into_any()
}

/// Awaits one settings change. The view it answers replaces the shown one; a refusal
/// re-notifies the view's readers, so a control the backend refused (a radio, a toggle) goes
/// back to the setting in force, and is the action's `Err` for its section to show.
async fn settings_change<T: Send + Sync + 'static>(settings: RwSignal<Option<T>>, change: impl Future<Output = Reply<T>>) -> Reply<()> {
    match change.await {
        Ok(view) => {
            settings.set(Some(view));
            Ok(())
        }
        Err(err) => {
            settings.update(|_| ());
            Err(err)
        }
    }
}

/// Sends one settings change unless one is in flight. The view it answers replaces the shown
/// one; a refusal shows its message and re-notifies the view's readers, so a control the
/// backend refused (a radio, a toggle) goes back to the setting in force.
///
/// Accounts keeps this hand-rolled form: its sign-in shares `busy` and, when the owner stops
/// waiting, frees it while the request still runs, which an action's `pending` cannot do.
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
    // Kept for Accounts only (see above).
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
