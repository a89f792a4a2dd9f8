//! The mail cards: search_mail's matches (each opens its thread) and read_mail_thread's
//! thread. Mail is written by other people, so every part of it is rendered as text only.

use hearth_protocol::mail::{MailMatch, MailSearchResult, MailThread, ThreadMessage};
use leptos::prelude::*;

use crate::clock::local_time;
use crate::ipc;
use crate::state::files::size_label;

/// The matches of a mail search; clicking one opens its thread below the list.
#[component]
pub fn MailSearchCard(result: MailSearchResult) -> impl IntoView {
    let open_thread = RwSignal::new(None::<String>);
    let opened = Memo::new(move |_| open_thread.get());
    let count = match (result.matches.len(), result.truncated) {
        (0, _) => "No messages matched.".to_owned(),
        (1, false) => "1 message".to_owned(),
        (n, false) => format!("{n} messages"),
        (n, true) => format!("The newest {n} messages; more matched"),
    };
    view! {
        <article class="card mail-card" data-tool="search_mail">
            <header>
                <span class="card-kind">"Mail search"</span>
                <span class="mail-query">{result.query}</span>
            </header>
            <p class="mail-count">{count}</p>
            <ul class="mail-matches">
                {result.matches.into_iter().map(|found| view! { <li><MatchRow found open_thread /></li> }).collect_view()}
            </ul>
            {move || opened.get().map(|thread_id| view! { <ThreadLoader thread_id /> })}
        </article>
    }
}

/// One match: from, subject, snippet, date. Clicking toggles its thread.
#[component]
fn MatchRow(found: MailMatch, open_thread: RwSignal<Option<String>>) -> impl IntoView {
    let thread_id = found.thread_id.clone();
    let selected = {
        let thread_id = thread_id.clone();
        Memo::new(move |_| open_thread.with(|open| open.as_deref() == Some(thread_id.as_str())))
    };
    let toggle = {
        let thread_id = thread_id.clone();
        move |_| open_thread.update(|open| *open = if selected.get_untracked() { None } else { Some(thread_id.clone()) })
    };
    view! {
        <button
            class="mail-match"
            class:selected=move || selected.get()
            data-thread-id=thread_id
            data-message-id=found.message_id
            on:click=toggle
        >
            <span class="mail-from">{found.from}</span>
            <time class="mail-date">{local_time(found.sent_at)}</time>
            <span class="mail-subject">{found.subject}</span>
            <span class="mail-snippet">{found.snippet}</span>
            {(found.attachments > 0).then(|| view! { <span class="mail-attachment-count">{attachments_label(found.attachments)}</span> })}
        </button>
    }
}

/// Fetches a thread and shows it; the error when it cannot.
#[component]
fn ThreadLoader(thread_id: String) -> impl IntoView {
    let thread = LocalResource::new(move || {
        let thread_id = thread_id.clone();
        async move { ipc::mail_thread_get(&thread_id).await }
    });
    move || match thread.get() {
        None => view! { <p class="empty">"Loading the conversation…"</p> }.into_any(),
        Some(Ok(thread)) => view! { <MailThreadView thread /> }.into_any(),
        Some(Err(err)) => view! { <p class="mail-error">{err.message}</p> }.into_any(),
    }
}

/// read_mail_thread's result.
#[component]
pub fn MailThreadCard(thread: MailThread) -> impl IntoView {
    view! {
        <article class="card mail-card" data-tool="read_mail_thread">
            <header>
                <span class="card-kind">"Mail thread"</span>
            </header>
            <MailThreadView thread />
        </article>
    }
}

/// A conversation, oldest message first.
#[component]
pub fn MailThreadView(thread: MailThread) -> impl IntoView {
    view! {
        <section class="mail-thread" data-thread-id=thread.thread_id>
            {thread.truncated.then(|| view! { <p class="mail-note">"Older messages are not shown."</p> })}
            {thread.messages.is_empty().then(|| view! { <p class="empty">"This conversation has no messages."</p> })}
            {thread.messages.into_iter().map(|message| view! { <Message message /> }).collect_view()}
        </section>
    }
}

#[component]
fn Message(message: ThreadMessage) -> impl IntoView {
    view! {
        <article class="mail-message" data-message-id=message.id data-folder=message.folder>
            <dl class="mail-headers">
                <dt>"From"</dt>
                <dd class="mail-from">{message.from}</dd>
                <dt>"To"</dt>
                <dd class="mail-to">{message.to.join(", ")}</dd>
                {(!message.cc.is_empty()).then(|| view! { <dt>"Cc"</dt><dd class="mail-cc">{message.cc.join(", ")}</dd> })}
                <dt>"Subject"</dt>
                <dd class="mail-subject">{message.subject}</dd>
                <dt>"Date"</dt>
                <dd class="mail-date">{local_time(message.sent_at)}</dd>
            </dl>
            <pre class="mail-body">{message.body}</pre>
            {message.body_truncated.then(|| view! { <p class="mail-note">"The rest of this message is not shown."</p> })}
            {(!message.attachments.is_empty()).then(|| view! {
                <ul class="mail-attachments">
                    {message.attachments.into_iter().map(|a| view! {
                        <li class="mail-attachment" data-attachment-id=a.id>
                            {format!("{} · {} · {}", a.filename, a.mime_type, size_label(a.size))}
                        </li>
                    }).collect_view()}
                </ul>
            })}
        </article>
    }
}

fn attachments_label(count: u16) -> String {
    if count == 1 { "1 attachment".to_owned() } else { format!("{count} attachments") }
}
