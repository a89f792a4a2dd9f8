//! Accounts: the sample mailbox and connected Google accounts, which one the agent's mail and
//! calendar tools use, connect (read, or read and write), grant write access, disconnect; and
//! the owner's own Google OAuth client. The section keeps its own view (`accounts_get`):
//! a sign-in can take minutes at Google's consent page and must not hold the other sections.

use hearth_protocol::IpcError;
use hearth_protocol::accounts::{AccountAccess, AccountView, AccountsView, ConnectBegun, GoogleClientParams};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::apply_change;
use crate::clock::Clock;
use crate::ipc;
use crate::state::accounts::{access_label, can_disconnect, can_grant_write, provider_label, scope_label, sync_label};

/// The Accounts section.
#[component]
pub fn AccountsSection() -> impl IntoView {
    let view = RwSignal::new(None::<AccountsView>);
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    // The sign-in waiting for Google, with the address to open by hand if no browser opened.
    let waiting = RwSignal::new(None::<ConnectBegun>);
    let clock = Clock::from_context();

    // The same rule as every Settings section: one change at a time, its answer replaces the
    // view, a refusal shows its message and puts a refused radio back.
    let apply = move |change: std::pin::Pin<Box<dyn std::future::Future<Output = Result<AccountsView, IpcError>>>>| {
        apply_change(busy, error, view, change);
    };
    apply(Box::pin(ipc::accounts_get()));

    let connect = move |access: AccountAccess| {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        // Kept: the sign-in can be abandoned while it still runs, which an action's pending cannot say.
        spawn_local(async move {
            let begun = match ipc::account_connect_begin(access).await {
                Ok(begun) => begun,
                Err(err) => {
                    busy.set(false);
                    error.set(Some(err.message));
                    return;
                }
            };
            let attempt = begun.attempt_id.clone();
            waiting.set(Some(begun));
            let reply = ipc::account_connect_finish(attempt.clone()).await;
            // Cancelled meanwhile: no error for a sign-in the owner gave up on, but one that
            // landed after all is shown.
            if waiting.with_untracked(|w| w.as_ref().map(|b| b.attempt_id.as_str()) != Some(attempt.as_str())) {
                if let Ok(next) = reply {
                    view.set(Some(next));
                }
                return;
            }
            waiting.set(None);
            busy.set(false);
            match reply {
                Ok(next) => view.set(Some(next)),
                Err(err) => error.set(Some(err.message)),
            }
        });
    };

    // The owner stops waiting: the window is free again; a late answer is ignored (the sign-in
    // stays possible in the browser until it expires, and refreshes the list when it lands).
    let abandon = move |()| {
        waiting.set(None);
        busy.set(false);
        apply(Box::pin(ipc::accounts_get()));
    };

    let client_id = RwSignal::new(String::new());
    let client_secret = RwSignal::new(String::new());
    // The form starts from the stored client once.
    Effect::new(move |seeded: Option<bool>| {
        if seeded == Some(true) {
            return true;
        }
        match view.with(|v| v.as_ref().map(|v| v.client.client_id.clone())) {
            Some(stored) => {
                client_id.set(stored.unwrap_or_default());
                true
            }
            None => false,
        }
    });
    let save_client = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let secret = client_secret.get_untracked();
        let params = GoogleClientParams {
            client_id: client_id.get_untracked().trim().to_owned(),
            // Empty keeps the stored secret: a secret is never shown back to edit.
            client_secret: (!secret.is_empty()).then_some(secret),
        };
        client_secret.set(String::new());
        apply(Box::pin(ipc::accounts_client_set(params)));
    };

    let accounts = Memo::new(move |_| view.with(|v| v.as_ref().map(|v| v.accounts.clone()).unwrap_or_default()));
    let chosen = move || view.with(|v| v.as_ref().map(|v| v.chosen.clone()).unwrap_or_default());
    let has_secret = Memo::new(move |_| view.with(|v| v.as_ref().is_some_and(|v| v.client.has_secret)));

    view! {
        <section class="settings-section settings-accounts">
            <h2>"Accounts"</h2>
            <p class="settings-note">
                "The mail and calendar the agent reads. Sending mail or changing an event always waits for your approval."
            </p>
            <div class="accounts-list" role="radiogroup" aria-label="Account the agent uses">
                <For each=move || accounts.get() key=|a| (a.connection_id.clone(), a.access, a.last_sync) let:account>
                    <AccountRow account chosen=Signal::derive(chosen) busy clock
                        on_choose=Callback::new(move |id: String| apply(Box::pin(ipc::account_choose(id))))
                        on_disconnect=Callback::new(move |id: String| apply(Box::pin(ipc::account_disconnect(id))))
                        on_grant=Callback::new(move |()| connect(AccountAccess::ReadWrite))
                    />
                </For>
            </div>
            <div class="settings-actions accounts-connect">
                <button type="button" data-action="connect-read" disabled=move || busy.get() on:click=move |_| connect(AccountAccess::Read)>
                    "Connect a Google account"
                </button>
                <button type="button" data-action="connect-write" disabled=move || busy.get() on:click=move |_| connect(AccountAccess::ReadWrite)>
                    "Connect with write access"
                </button>
            </div>
            {move || waiting.get().map(|begun| view! {
                <div class="settings-note accounts-waiting">
                    <p>"Waiting for Google… Finish signing in in your browser. If it did not open, copy this address into it:"</p>
                    // Text, not a link: the consent page must open in the owner's browser, never in
                    // Hearth's window.
                    <code class="consent-url">{begun.consent_url}</code>
                    <button type="button" data-action="cancel-sign-in" on:click=move |_| abandon(())>"Cancel"</button>
                </div>
            })}
            {move || view.with(|v| v.as_ref().and_then(|v| v.notice.clone())).map(|notice| view! {
                <p class="settings-note accounts-notice">{notice}</p>
            })}
            <form class="settings-form accounts-client" on:submit=save_client>
                <h3>"Google client"</h3>
                <p class="settings-note">
                    "Hearth signs in with your own Google Cloud OAuth client (type \"Desktop app\"); see the README."
                </p>
                <label class="settings-field" for="google-client-id">"Client id"</label>
                <input id="google-client-id" type="text" spellcheck="false" autocomplete="off"
                    prop:value=move || client_id.get()
                    on:input=move |ev| client_id.set(event_target_value(&ev))
                />
                <label class="settings-field" for="google-client-secret">"Client secret"</label>
                <input id="google-client-secret" type="password" autocomplete="off"
                    placeholder=move || if has_secret.get() { "stored — type to replace" } else { "" }
                    prop:value=move || client_secret.get()
                    on:input=move |ev| client_secret.set(event_target_value(&ev))
                />
                <button type="submit" data-action="save-google-client" disabled=move || busy.get()>"Save"</button>
            </form>
            {move || error.get().map(|message| view! { <p class="error settings-error accounts-error">{message}</p> })}
        </section>
    }
}

/// One account: a radio to use it, what it is and may do, and its actions.
#[component]
fn AccountRow(
    account: AccountView,
    chosen: Signal<String>,
    busy: RwSignal<bool>,
    clock: Clock,
    on_choose: Callback<String>,
    on_disconnect: Callback<String>,
    on_grant: Callback<()>,
) -> impl IntoView {
    let id = account.connection_id.clone();
    let is_chosen = {
        let id = id.clone();
        move || chosen.get() == id
    };
    let choose_id = id.clone();
    let disconnect_id = id.clone();
    let last_sync = account.last_sync;
    let scopes = account.scopes.iter().map(|s| scope_label(s).to_owned()).collect::<Vec<_>>().join(", ");
    view! {
        <div class="account-row" data-connection-id=id data-provider=provider_label(account.provider)>
            <label class="settings-radio account-choice">
                <input type="radio" name="account" value=id.clone()
                    prop:checked=is_chosen
                    disabled=move || busy.get()
                    on:change=move |_| on_choose.run(choose_id.clone())
                />
                <span class="settings-radio-label account-address">{account.account.clone()}</span>
                <span class="settings-radio-note">
                    <span class="account-provider">{provider_label(account.provider)}</span>
                    " · "
                    <span class="account-access">{access_label(account.access)}</span>
                    {can_disconnect(&account).then(|| view! {
                        " · " <span class="account-sync">{move || sync_label(last_sync, clock.now.get())}</span>
                    })}
                </span>
                {(!scopes.is_empty()).then(|| view! {
                    <span class="settings-radio-note account-scopes">"Scopes: " {scopes.clone()}</span>
                })}
            </label>
            <div class="account-actions">
                {can_grant_write(&account).then(|| view! {
                    <button type="button" data-action="grant-write" disabled=move || busy.get() on:click=move |_| on_grant.run(())>
                        "Grant write access"
                    </button>
                })}
                {can_disconnect(&account).then(|| view! {
                    <button type="button" data-action="disconnect" disabled=move || busy.get()
                        on:click=move |_| on_disconnect.run(disconnect_id.clone())
                    >"Disconnect"</button>
                })}
            </div>
        </div>
    }
}
