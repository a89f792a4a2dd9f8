//! Browser: the agent's browser profiles (one per chat thread and per task, and the owner's
//! own), which run now, and Take control (which opens a closed one), Close or Delete (a deleted
//! profile takes its cookies and logins with it).

use hearth_protocol::browser::ProfileView;
use leptos::prelude::*;

use crate::cards::take_control::TakeControl;
use crate::ipc;
use crate::request::{failure, last_loaded};

/// The owner's own profile: where they log in to sites to hand a chat or task (Browse in…).
const OWNER_PROFILE: &str = "owner";

/// Close or Delete a profile; each answers the new list.
#[derive(Debug, Clone)]
enum ProfileChange {
    Close(String),
    Delete(String),
}

/// The Browser screen.
#[component]
pub fn BrowserScreen() -> impl IntoView {
    // The newest list: loaded on open and after Take control closes, and replaced by the one
    // Close and Delete answer.
    let list = LocalResource::new(ipc::browser_list);
    // `None` until the first list arrives; a failure keeps the list shown beside its message.
    let loaded = last_loaded(list);
    let profiles = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.profiles.clone())));
    let error = move || list.with(|reply| failure(reply.as_ref()));
    let change = Action::new_local(move |change: &ProfileChange| {
        let change = change.clone();
        async move {
            let reply = match change {
                ProfileChange::Close(id) => ipc::browser_close(&id).await,
                ProfileChange::Delete(id) => ipc::browser_delete_profile(&id).await,
            };
            list.set(Some(reply));
        }
    });
    let close = Callback::new(move |id: String| {
        change.dispatch_local(ProfileChange::Close(id));
    });
    let delete = Callback::new(move |id: String| {
        change.dispatch_local(ProfileChange::Delete(id));
    });
    // The profile under the owner's control here, if any (one at a time).
    let controlling = RwSignal::new(None::<String>);
    let control = Callback::new(move |id: String| controlling.set(Some(id)));
    let has_owner = move || profiles.with(|list| list.as_ref().is_some_and(|l| l.iter().any(|p| p.id == OWNER_PROFILE)));
    view! {
        <section class="browser-screen page" data-screen="browser">
            <header class="browser-header page-header"><h1>"Browser"</h1></header>
            <div class="page-content">
            <p class="hint">
                "Each chat and each task browses in a profile of its own. At most three run at once; one unused for 30 minutes is closed. A web page card in a chat has Take control, and Browse in… to point that chat at another profile (one with the logins it needs)."
            </p>
            {move || error().map(|message| view! { <p class="error">{message}</p> })}
            {move || controlling.get().map(|profile| view! {
                <TakeControl profile on_close=Callback::new(move |()| {
                    controlling.set(None);
                    list.refetch();
                }) />
            })}
            {move || (!has_owner()).then(|| view! {
                <p class="owner-profile">
                    <button data-action="open-owner-profile" on:click=move |_| control.run(OWNER_PROFILE.to_owned())>"Open my own browser"</button>
                    " — log in to sites there, then point a chat at it with Browse in…"
                </p>
            })}
            {move || match profiles.get() {
                None => view! { <p class="empty">"Loading…"</p> }.into_any(),
                Some(list) if list.is_empty() => view! { <p class="empty">"No profile yet: the agent makes one the first time it opens a page."</p> }.into_any(),
                Some(list) => view! {
                    <ul class="profile-list">
                        {list.into_iter().map(|profile| view! { <ProfileRow profile close delete control /> }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            </div>
        </section>
    }
}

#[component]
fn ProfileRow(profile: ProfileView, close: Callback<String>, delete: Callback<String>, control: Callback<String>) -> impl IntoView {
    let confirming = RwSignal::new(false);
    let (close_id, delete_id, control_id) = (profile.id.clone(), profile.id.clone(), profile.id.clone());
    view! {
        <li class="profile" data-profile=profile.id.clone() data-running=profile.running.to_string()>
            <span class="profile-id">{profile.id.clone()}</span>
            <span class="profile-state">{if profile.running { "running" } else { "closed" }}</span>
            <button class="control-profile" data-action="take-control" on:click=move |_| control.run(control_id.clone())>
                {if profile.running { "Take control" } else { "Open" }}
            </button>
            {profile.running.then(|| view! { <button class="close-profile" on:click=move |_| close.run(close_id.clone())>"Close"</button> })}
            {move || if confirming.get() {
                let id = delete_id.clone();
                view! {
                    <span class="confirm">
                        "Delete this profile with its cookies and logins? "
                        <button class="danger confirm-delete-profile" on:click=move |_| delete.run(id.clone())>"Delete"</button>
                        <button on:click=move |_| confirming.set(false)>"Keep"</button>
                    </span>
                }.into_any()
            } else {
                view! { <button class="delete-profile" on:click=move |_| confirming.set(true)>"Delete…"</button> }.into_any()
            }}
        </li>
    }
}
