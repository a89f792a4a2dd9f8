//! The chat: transcript, composer, Stop.

mod thinking;

use hearth_protocol::ipc::RunStartParams;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::cards::ToolCard;
use crate::ipc::{self, RunSubscription};
use crate::state::chat::{ChatItem, ChatState, NoticeKind};
use thinking::ThinkingBlock;

/// The chat screen. Opens the most recent conversation on start.
#[component]
pub fn ChatScreen() -> impl IntoView {
    let chat = RwSignal::new(ChatState::default());
    let thread_id = RwSignal::new(None::<String>);
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    // Keeps the live channel's handler alive for the run; replaced by the next run.
    let subscription = StoredValue::new_local(None::<RunSubscription>);

    spawn_local(async move {
        match load_latest().await {
            Ok(Some((id, state))) => {
                thread_id.set(Some(id));
                chat.set(state);
            }
            Ok(None) => {}
            Err(message) => error.set(Some(message)),
        }
    });

    let send_text = move |text: String| {
        if text.trim().is_empty() || chat.with_untracked(ChatState::is_running) {
            return;
        }
        let params = RunStartParams { thread_id: thread_id.get_untracked(), text };
        error.set(None);
        spawn_local(async move {
            match ipc::run_start(&params, move |event| chat.update(|state| state.apply(&event))).await {
                Ok((started, sub)) => {
                    draft.set(String::new());
                    thread_id.set(Some(started.thread_id));
                    subscription.set_value(Some(sub));
                }
                Err(err) => error.set(Some(err.message)),
            }
        });
    };
    let send = move || send_text(draft.get_untracked());
    // A choice card answers with the owner's pick, as their next message.
    provide_context(crate::cards::choices::ChatReply(Callback::new(move |text: String| send_text(text))));
    let stop_run = move || {
        let Some(run_id) = chat.with_untracked(|s| s.active_run.clone()) else { return };
        spawn_local(async move {
            if let Err(err) = ipc::run_stop(&run_id).await {
                error.set(Some(err.message));
            }
        });
    };
    let stop = move |_| stop_run();
    // A running command's card offers the same Stop.
    provide_context(crate::cards::terminal::RunStop(Callback::new(move |()| stop_run())));
    // The browser card offers to pick the profile this chat browses in.
    provide_context(crate::cards::browser::ChatThread(thread_id.into()));
    let new_chat = move |_| {
        if chat.with_untracked(ChatState::is_running) {
            return;
        }
        thread_id.set(None);
        chat.set(ChatState::default());
    };

    view! {
        <section class="chat">
            <header class="chat-header">
                <h1>"Chat"</h1>
                <button id="new-chat" on:click=new_chat disabled=move || chat.with(ChatState::is_running)>"New chat"</button>
            </header>
            <div class="transcript" id="transcript">
                <Show when=move || chat.with(|s| s.items.is_empty())>
                    <p class="empty">"Say hello, ask me to plan your day, or give me a job."</p>
                </Show>
                <For
                    each=move || chat.with(|s| s.items.iter().map(ChatItem::key).collect::<Vec<_>>())
                    key=|key| key.clone()
                    let(key)
                >
                    <ChatRow chat item_key=key />
                </For>
            </div>
            {move || error.get().map(|message| view! { <p class="error" id="chat-error">{message}</p> })}
            <form class="composer" on:submit=move |ev| { ev.prevent_default(); send(); }>
                <textarea
                    id="composer"
                    placeholder="Message Hearth"
                    prop:value=move || draft.get()
                    on:input=move |ev| draft.set(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <Show
                    when=move || chat.with(ChatState::is_running)
                    fallback=move || view! { <button id="send" type="submit">"Send"</button> }
                >
                    <button id="stop" type="button" class="stop" on:click=stop>"Stop"</button>
                </Show>
            </form>
        </section>
    }
}

/// One transcript row, re-rendered only when that row changes.
#[component]
fn ChatRow(chat: RwSignal<ChatState>, item_key: String) -> impl IntoView {
    let item = Memo::new(move |_| chat.with(|s| s.items.iter().find(|i| i.key() == item_key).cloned()));
    // A key names one kind of row for its life. A reasoning row keeps one `<details>` while
    // it streams, so a block the owner opened stays open as its text grows; the arm below
    // would build a new, closed one on every delta.
    if matches!(item.get_untracked(), Some(ChatItem::Reasoning { .. })) {
        let thinking = Signal::derive(move || match item.get() {
            Some(ChatItem::Reasoning { text, streaming, .. }) => (text, streaming),
            _ => (String::new(), false),
        });
        return view! { <ThinkingBlock thinking /> }.into_any();
    }
    // A command's card is mounted once and follows its call, so its Stop stays clickable while
    // output streams in.
    if let Some(ChatItem::Tool(first)) = item.get_untracked()
        && first.name == hearth_protocol::ToolName::RunComputerCommand.as_str()
    {
        let call = Signal::derive(move || match item.get() {
            Some(ChatItem::Tool(call)) => call,
            _ => first.clone(),
        });
        return view! { <crate::cards::terminal::TerminalCard call /> }.into_any();
    }
    (move || {
        item.get().map(|item| match item {
            ChatItem::User { text, .. } => view! { <div class="msg msg-user">{text}</div> }.into_any(),
            ChatItem::Assistant { text, streaming, .. } => view! {
                <div class="msg msg-assistant" class:streaming=streaming>{text}</div>
            }
            .into_any(),
            ChatItem::Reasoning { text, streaming, .. } => {
                view! { <ThinkingBlock thinking=Signal::stored((text, streaming)) /> }.into_any()
            }
            ChatItem::Tool(call) => view! { <ToolCard call /> }.into_any(),
            ChatItem::Notice { kind, text, .. } => {
                let class = match kind {
                    NoticeKind::Cancelled => "notice run-cancelled",
                    NoticeKind::Error => "notice run-error",
                };
                view! { <div class=class>{text}</div> }.into_any()
            }
        })
    })
    .into_any()
}

async fn load_latest() -> Result<Option<(String, ChatState)>, String> {
    let threads = ipc::thread_list().await.map_err(|e| e.message)?;
    let Some(latest) = threads.threads.into_iter().next() else { return Ok(None) };
    let history = ipc::thread_history(&latest.id).await.map_err(|e| e.message)?;
    Ok(Some((history.thread_id, ChatState::replay(&history.events))))
}
