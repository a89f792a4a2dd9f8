//! Browser: the agent's browser profiles (one per chat thread and per task), which run now,
//! and Close or Delete (a deleted profile takes its cookies and logins with it).

use hearth_protocol::IpcError;
use hearth_protocol::browser::{BrowserListResponse, ProfileView};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::latest_only::latest_only;

/// The Browser screen.
#[component]
pub fn BrowserScreen() -> impl IntoView {
    // `None` until the first list arrives.
    let profiles = RwSignal::new(None::<Vec<ProfileView>>);
    let error = RwSignal::new(None::<String>);
    let land = move |reply: Result<BrowserListResponse, IpcError>| match reply {
        Ok(list) => {
            profiles.set(Some(list.profiles));
            error.set(None);
        }
        Err(err) => error.set(Some(err.message)),
    };
    let reload = latest_only(ipc::browser_list, land);
    reload.run(());
    let close = Callback::new(move |id: String| spawn_local(async move { land(ipc::browser_close(&id).await) }));
    let delete = Callback::new(move |id: String| spawn_local(async move { land(ipc::browser_delete_profile(&id).await) }));
    view! {
        <section class="browser-screen page" data-screen="browser">
            <header class="browser-header page-header"><h1>"Browser"</h1></header>
            <div class="page-content">
            <p class="hint">
                "Each chat and each task browses in a profile of its own. At most three run at once; one unused for 30 minutes is closed. A web page card in a chat has Take control, and Browse in… to point that chat at another profile (one with the logins it needs)."
            </p>
            {move || error.get().map(|message| view! { <p class="error">{message}</p> })}
            {move || match profiles.get() {
                None => view! { <p class="empty">"Loading…"</p> }.into_any(),
                Some(list) if list.is_empty() => view! { <p class="empty">"No profile yet: the agent makes one the first time it opens a page."</p> }.into_any(),
                Some(list) => view! {
                    <ul class="profile-list">
                        {list.into_iter().map(|profile| view! { <ProfileRow profile close delete /> }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            </div>
        </section>
    }
}

#[component]
fn ProfileRow(profile: ProfileView, close: Callback<String>, delete: Callback<String>) -> impl IntoView {
    let confirming = RwSignal::new(false);
    let (close_id, delete_id) = (profile.id.clone(), profile.id.clone());
    view! {
        <li class="profile" data-profile=profile.id.clone() data-running=profile.running.to_string()>
            <span class="profile-id">{profile.id.clone()}</span>
            <span class="profile-state">{if profile.running { "running" } else { "closed" }}</span>
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
