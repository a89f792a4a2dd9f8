//! The browser card: the page the agent opened (title, address, the picture it took) and what
//! page_act did on it.

use hearth_protocol::browser::{ActReceipt, PageView, ProfileTarget, UseProfileParams};
use hearth_protocol::ids::ThreadId;
use leptos::prelude::*;

use super::take_control::TakeControl;
use crate::ipc;
use crate::request::failure;
use crate::state::cards::{act_line, download_line, made_room_line, page_meta};

/// The chat a card is shown in (none in replays outside a chat).
#[derive(Clone, Copy)]
pub struct ChatThread(pub Signal<Option<ThreadId>>);

/// browse_web / read_web / look_page: the page, with its picture when one was taken (look_page's
/// is the very picture the model was shown, and it read no text).
#[component]
pub fn BrowserCard(page: PageView, tool: &'static str) -> impl IntoView {
    let meta = page_meta(&page);
    let title = if page.title.is_empty() { page.final_url.clone() } else { page.title.clone() };
    let excerpt: String = page.text.chars().take(600).collect();
    let controlling = RwSignal::new(false);
    let profile = page.profile.clone();
    view! {
        <article class="card browser-card" data-tool=tool data-profile=page.profile>
            <header>
                <span class="card-kind">{if tool == "look_page" { "Page shown to the model" } else { "Web page" }}</span>
            </header>
            <p class="browser-title">{title}</p>
            <p class="browser-url">{meta}</p>
            {page.screenshot_id.clone().map(|id| view! { <Screenshot id /> })}
            {page.download.as_ref().map(|d| view! { <p class="browser-download">{download_line(d)}</p> })}
            {page.made_room.as_ref().map(|gone| view! { <p class="browser-made-room">{made_room_line(gone)}</p> })}
            {(!excerpt.is_empty()).then(|| view! {
                <details class="browser-text">
                    <summary>"What the page says"</summary>
                    <p>{excerpt}</p>
                </details>
            })}
            <footer class="card-footer">
                <button class="take-control-open" on:click=move |_| controlling.set(true)>"Take control"</button>
                <ProfilePicker current=page.profile.clone() />
            </footer>
            {move || controlling.get().then(|| {
                let profile = profile.clone();
                view! { <TakeControl profile on_close=Callback::new(move |()| controlling.set(false)) /> }
            })}
        </article>
    }
}

/// "Browse in…": the owner points this chat at another saved profile (one with the logins
/// it needs), or back at its own. The list is fetched when the owner opens the picker.
#[component]
fn ProfilePicker(current: String) -> impl IntoView {
    let Some(ChatThread(thread)) = use_context::<ChatThread>() else { return ().into_any() };
    let fetch = Action::new_local(|()| ipc::browser_list());
    // `None` until the list arrives: the picker is a button until then.
    let choices = move || {
        fetch
            .value()
            .with(|list| list.as_ref().and_then(|l| l.as_ref().ok()).map(|l| l.profiles.iter().map(|p| p.id.clone()).collect::<Vec<_>>()))
    };
    let open = move |_| {
        fetch.dispatch_local(());
    };
    // Its answer, in words: where the chat browses now, or why not.
    let choose = Action::new_local(|params: &UseProfileParams| {
        let params = params.clone();
        async move {
            match ipc::browser_use_profile(&params).await {
                Ok(()) => match params.profile {
                    Some(id) => format!("This chat now browses in {id}."),
                    None => "This chat browses in its own profile again.".to_owned(),
                },
                Err(err) => err.message,
            }
        }
    });
    let pick = move |ev: leptos::ev::Event| {
        let Some(thread_id) = thread.get_untracked() else { return };
        let value = event_target_value(&ev);
        let profile = (!value.is_empty()).then_some(value);
        choose.dispatch_local(UseProfileParams { target: ProfileTarget::Thread(thread_id), profile });
    };
    let said = move || choose.value().get().or_else(|| fetch.value().with(|list| failure(list.as_ref())));
    view! {
        <span class="profile-picker">
            {move || match choices() {
                None => view! { <button class="browse-in-open" on:click=open>"Browse in…"</button> }.into_any(),
                Some(list) => {
                    let current = current.clone();
                    // Hearth names a chat's own profile `thread-<its id>`.
                    let own = thread.get_untracked().is_some_and(|id| current == format!("thread-{id}"));
                    view! {
                        <select class="browse-in" on:change=pick>
                            <option value="" selected=own>"This chat's own profile"</option>
                            {list.into_iter().map(|id| {
                                let selected = id == current;
                                let label = id.clone();
                                view! { <option value=id selected=selected>{label}</option> }
                            }).collect_view()}
                        </select>
                    }.into_any()
                }
            }}
            {move || said().map(|message| view! { <span class="browse-in-said">{message}</span> })}
        </span>
    }
    .into_any()
}

/// The picture, fetched by its id once the card shows.
#[component]
fn Screenshot(id: String) -> impl IntoView {
    let picture = {
        let wanted = id.clone();
        LocalResource::new(move || {
            let wanted = wanted.clone();
            async move {
                let reply = ipc::browser_screenshot(&wanted).await;
                reply.map(|r| format!("data:image/png;base64,{}", r.png_base64)).map_err(|e| e.message)
            }
        })
    };
    move || match picture.get() {
        None => view! { <p class="empty browser-shot-loading">"Loading the picture…"</p> }.into_any(),
        Some(Ok(src)) => {
            view! { <img class="browser-shot" data-shot-id=id.clone() src=src alt="The page as the agent saw it" /> }.into_any()
        }
        Some(Err(message)) => view! { <p class="empty browser-shot-missing">{message}</p> }.into_any(),
    }
}

/// page_act: the action and where the page went.
#[component]
pub fn PageActCard(receipt: ActReceipt) -> impl IntoView {
    let line = act_line(&receipt);
    view! {
        <article class="card browser-card page-act-card" data-tool="page_act">
            <header>
                <span class="card-kind">"Web page"</span>
            </header>
            <p class="browser-act">{line}</p>
            <p class="browser-url">{receipt.title_after}</p>
            {receipt.download.as_ref().map(|d| view! { <p class="browser-download">{download_line(d)}</p> })}
        </article>
    }
}
