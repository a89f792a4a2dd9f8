//! Inbox: every notice, newest first; opening one shows what it is about.

use leptos::prelude::*;

use crate::clock::local_time;
use crate::live_inbox::LiveInbox;
use crate::navigation::Navigation;

/// The Inbox screen.
#[component]
pub fn InboxScreen() -> impl IntoView {
    let (Some(live), Some(nav)) = (LiveInbox::from_context(), Navigation::from_context()) else {
        return view! { <p class="error">"The inbox is not available in this window. Reload the app."</p> }.into_any();
    };
    let notices = Memo::new(move |_| live.inbox.with(|inbox| inbox.notices.clone()));
    view! {
        <section class="inbox">
            <header class="inbox-header">
                <h1>"Inbox"</h1>
                <button class="inbox-read-all" data-action="read-all" on:click=move |_| live.read_all()>"Mark all read"</button>
            </header>
            {move || live.error.get().map(|message| view! { <p class="error inbox-error">{message}</p> })}
            <Show when=move || notices.with(Vec::is_empty)>
                <p class="empty">"Nothing yet. Finished tasks, questions, reviews and reminders show up here."</p>
            </Show>
            <ul class="inbox-list">
                <For each=move || notices.get() key=|n| (n.id, n.read) let(notice)>
                    {
                        let open = notice.clone();
                        view! {
                            <li>
                                <button
                                    class="notice"
                                    class:unread=!notice.read
                                    data-notice-id=notice.id
                                    data-kind=notice.kind.as_str()
                                    on:click=move |_| live.open(nav, &open)
                                >
                                    <span class="notice-kind">{notice.kind.label()}</span>
                                    <span class="notice-title">{notice.title.clone()}</span>
                                    <span class="notice-body">{notice.body.clone()}</span>
                                    <span class="notice-time">{local_time(notice.created_at)}</span>
                                </button>
                            </li>
                        }
                    }
                </For>
            </ul>
        </section>
    }
    .into_any()
}
