//! The browser card: the page the agent opened (title, address, the picture it took) and what
//! page_act did on it.

use hearth_protocol::browser::{ActReceipt, PageView};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::take_control::TakeControl;
use crate::ipc;
use crate::state::cards::{act_line, download_line, page_meta};

/// browse_web / read_web: the page, with its picture when one was taken.
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
                <span class="card-kind">"Web page"</span>
            </header>
            <p class="browser-title">{title}</p>
            <p class="browser-url">{meta}</p>
            {page.screenshot_id.clone().map(|id| view! { <Screenshot id /> })}
            {page.download.as_ref().map(|d| view! { <p class="browser-download">{download_line(d)}</p> })}
            <details class="browser-text">
                <summary>"What the page says"</summary>
                <p>{excerpt}</p>
            </details>
            <footer class="card-footer">
                <button class="take-control-open" on:click=move |_| controlling.set(true)>"Take control"</button>
            </footer>
            {move || controlling.get().then(|| {
                let profile = profile.clone();
                view! { <TakeControl profile on_close=Callback::new(move |()| controlling.set(false)) /> }
            })}
        </article>
    }
}

/// The picture, fetched by its id once the card shows.
#[component]
fn Screenshot(id: String) -> impl IntoView {
    let picture = RwSignal::new(None::<Result<String, String>>);
    let wanted = id.clone();
    spawn_local(async move {
        let reply = ipc::browser_screenshot(&wanted).await;
        picture.set(Some(reply.map(|r| format!("data:image/png;base64,{}", r.png_base64)).map_err(|e| e.message)));
    });
    move || match picture.get() {
        None => view! { <p class="empty browser-shot-loading">"Loading the picture…"</p> }.into_any(),
        Some(Ok(src)) => view! { <img class="browser-shot" data-shot-id=id.clone() src=src alt="The page as the agent saw it" /> }.into_any(),
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
