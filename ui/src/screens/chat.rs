//! The chat: transcript, composer, Stop, and deleting the chat shown.

mod thinking;

use hearth_protocol::ErrorCode;
use hearth_protocol::agui::Event;
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::{RunStartParams, ThreadHistoryResponse};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::cards::ToolCard;
use crate::ipc::{self, RunSubscription};
use crate::marks;
use crate::state::chat::{ChatItem, ChatState, NoticeKind, PAGE};
use crate::state::settings::local_model_line;
use thinking::ThinkingBlock;

/// The chat screen. Opens the most recent conversation on start.
#[component]
pub fn ChatScreen() -> impl IntoView {
    let chat = RwSignal::new(ChatState::default());
    let thread_id = RwSignal::new(None::<ThreadId>);
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    // The first row shown: a long thread opens on its newest rows, "Show earlier" pages back,
    // and rows a run adds are always shown.
    let first_shown = RwSignal::new(0usize);
    // The thread's events loaded so far (history pages, then what streamed since), oldest
    // first, and the cursor of the history page before them: "Show earlier" fetches that page
    // and replays the whole with it in front.
    let loaded = StoredValue::new_local(Vec::<Event>::new());
    let earlier = RwSignal::new(None::<i64>);
    // Keeps the live channel's handler alive for the run; replaced by the next run.
    let subscription = StoredValue::new_local(None::<RunSubscription>);

    // Delete's second step is open (the chat shown is asked about once more).
    let confirming = RwSignal::new(false);
    // Shows a conversation's newest page, or (`None`) an empty new chat; a Delete asked about
    // the chat shown before is closed.
    let show = move |history: Option<ThreadHistoryResponse>| match history {
        Some(history) => {
            confirming.set(false);
            let state = ChatState::replay_pages(&history.events, history.starts_inside_run);
            thread_id.set(Some(history.thread_id));
            earlier.set(history.earlier);
            loaded.set_value(history.events);
            first_shown.set(state.first_page_start());
            chat.set(state);
        }
        None => {
            confirming.set(false);
            thread_id.set(None);
            first_shown.set(0);
            earlier.set(None);
            loaded.set_value(Vec::new());
            chat.set(ChatState::default());
        }
    };

    // Kept: the history replay feeds several chat signals and a stored event log at once.
    spawn_local(async move {
        match load_latest().await {
            Ok(Some(history)) => {
                show(Some(history));
                marks::after_next_frame(|| marks::mark(marks::HISTORY_SHOWN));
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
        // Kept: starts a run whose events stream into the chat through a live channel.
        spawn_local(async move {
            let on_event = move |event: Event| {
                chat.update(|state| state.apply(&event));
                loaded.update_value(|events| events.push(event));
            };
            match ipc::run_start(&params, on_event).await {
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
        // Kept: fire-and-forget; the stopped run reports itself through its event stream.
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
        show(None);
    };
    // Delete: asked once more before it goes; once gone, the most recent chat left is shown
    // (or a new one). A refusal says what to do; one about actions in doubt offers to delete
    // anyway once the owner has read it.
    //
    // A refusal is kept with the chat it was for, and forgotten when the confirm step opens
    // again or a reply starts: "Delete anyway" acknowledges only the doubt the owner just read,
    // about this chat, with no run since that could have added more.
    let refusal = RwSignal::new(None::<(ThreadId, hearth_protocol::IpcError)>);
    let remove = Action::new_local(move |(id, acknowledge): &(ThreadId, bool)| {
        let (id, acknowledge) = (id.clone(), *acknowledge);
        async move {
            if let Err(err) = ipc::thread_delete(&id, acknowledge).await {
                refusal.set(Some((id, err)));
                return;
            }
            refusal.set(None);
            confirming.set(false);
            error.set(None);
            // The chat list as it is now (the deleted chat is no longer in it): its most recent
            // chat takes the deleted one's place, unless the owner has moved on meanwhile.
            let next = load_latest().await;
            if thread_id.get_untracked().as_deref() == Some(id.as_str()) {
                match next {
                    Ok(next) => show(next),
                    Err(message) => {
                        show(None);
                        error.set(Some(message));
                    }
                }
            }
        }
    });
    let deleting = remove.pending();
    let delete_chat = move |acknowledge: bool| {
        if let Some(id) = thread_id.get_untracked() {
            remove.dispatch_local((id, acknowledge));
        }
    };
    let running = Memo::new(move |_| chat.with(ChatState::is_running));
    Effect::new(move || {
        // On the start of a reply, not on each of its tokens.
        if running.get() && refusal.with_untracked(Option::is_some) {
            refusal.set(None);
        }
    });
    // The refusal for the chat shown, once nothing is on its way.
    let shown_refusal = move || {
        let current = thread_id.get();
        refusal.with(|r| r.as_ref().filter(|(id, _)| Some(id) == current.as_ref()).map(|(_, err)| err.clone())).filter(|_| !deleting.get())
    };
    let delete_refusal = move || shown_refusal().map(|err| err.message);
    let in_doubt = move || shown_refusal().is_some_and(|err| err.code == ErrorCode::NeedsReview);
    let show_earlier = move |_| {
        if first_shown.get_untracked() > 0 {
            first_shown.update(|first| *first = first.saturating_sub(PAGE));
            return;
        }
        let (Some(before), Some(id)) = (earlier.get_untracked(), thread_id.get_untracked()) else { return };
        // Kept: a page prepended to the replayed log, dropped if the chat moved on meanwhile.
        spawn_local(async move {
            match ipc::thread_history(&id, Some(before)).await {
                // A second click's answer, or one for a chat since left, changes nothing.
                Ok(page) if earlier.get_untracked() == Some(before) && thread_id.get_untracked().as_deref() == Some(id.as_str()) => {
                    let rows_before = chat.with_untracked(|s| s.items.len());
                    loaded.update_value(|events| {
                        let newer = std::mem::replace(events, page.events);
                        events.extend(newer);
                    });
                    let state = loaded.with_value(|events| ChatState::replay_pages(events, page.starts_inside_run));
                    earlier.set(page.earlier);
                    first_shown.set((state.items.len() - rows_before.min(state.items.len())).saturating_sub(PAGE));
                    chat.set(state);
                }
                Ok(_) => {}
                Err(err) => error.set(Some(err.message)),
            }
        });
    };

    view! {
        <section class="chat page">
            <header class="chat-header page-header">
                <h1>"Chat"</h1>
                <LocalModelBadge running />
                <div class="chat-actions">
                <button id="new-chat" on:click=new_chat disabled=move || chat.with(ChatState::is_running)>"New chat"</button>
                <Show when=move || thread_id.with(Option::is_some) && !confirming.get()>
                    <button
                        id="delete-chat"
                        data-action="delete-chat"
                        disabled=move || chat.with(ChatState::is_running)
                        on:click=move |_| {
                            refusal.set(None);
                            confirming.set(true);
                        }
                    >
                        "Delete chat…"
                    </button>
                </Show>
                </div>
            </header>
            <Show when=move || confirming.get() && thread_id.with(Option::is_some)>
                <div class="chat-delete confirm" id="delete-chat-confirm">
                    <p>"This deletes the chat's messages and its own browser profile, with its cookies and logins (a profile you picked for a chat or task stays)."</p>
                    <button
                        class="danger"
                        data-action="confirm-delete-chat"
                        disabled=move || deleting.get() || chat.with(ChatState::is_running)
                        on:click=move |_| delete_chat(false)
                    >
                        "Delete chat"
                    </button>
                    <button data-action="cancel-delete-chat" on:click=move |_| confirming.set(false)>"Cancel"</button>
                    <Show when=in_doubt>
                        <button class="danger" data-action="delete-chat-anyway" disabled=move || deleting.get() on:click=move |_| delete_chat(true)>
                            "Delete anyway (their records are kept)"
                        </button>
                    </Show>
                </div>
                {move || delete_refusal().map(|message| view! { <p class="error" id="delete-chat-error">{message}</p> })}
            </Show>
            <div class="transcript" id="transcript">
                <Show when=move || chat.with(|s| s.items.is_empty())>
                    <p class="empty">"Say hello, ask me to plan your day, or give me a job."</p>
                </Show>
                <Show when=move || { first_shown.get() > 0 || earlier.with(Option::is_some) }>
                    <button id="show-earlier" class="show-earlier" type="button" on:click=show_earlier>
                        "Show earlier messages"
                    </button>
                </Show>
                // Keyed by the row's key alone; the position only tells a new row where to
                // look for itself first.
                <For
                    each=move || {
                        let first = first_shown.get();
                        chat.with(|s| s.items.iter().enumerate().skip(first).map(|(at, item)| (item.key(), at)).collect::<Vec<_>>())
                    }
                    key=|(key, _)| key.clone()
                    let((key, at))
                >
                    <ChatRow chat item_key=key at />
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
fn ChatRow(chat: RwSignal<ChatState>, item_key: String, at: usize) -> impl IntoView {
    // Where this row was last found (first: where it was when it was mounted): it is looked up
    // on every change of the transcript. (Atomic only because a memo's closure must be `Sync`;
    // the UI has one thread.)
    let at = std::sync::atomic::AtomicUsize::new(at);
    let item = Memo::new(move |_| {
        chat.with(|s| {
            s.row_near(&item_key, at.load(std::sync::atomic::Ordering::Relaxed)).map(|(index, item)| {
                at.store(index, std::sync::atomic::Ordering::Relaxed);
                item.clone()
            })
        })
    });
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

/// The newest page of the most recent conversation, if there is one.
async fn load_latest() -> Result<Option<ThreadHistoryResponse>, String> {
    marks::mark(marks::HISTORY_REQUESTED);
    let threads = ipc::thread_list().await.map_err(|e| e.message)?;
    let Some(latest) = threads.threads.into_iter().next() else { return Ok(None) };
    ipc::thread_history(&latest.id, None).await.map(Some).map_err(|e| e.message)
}

/// The model on this computer, while it answers the chat: its name and what it is doing
/// (waiting its turn, reading the prompt with the seconds so far, writing), then its last
/// speed and first-token time. Asked again every second while an answer runs.
#[component]
fn LocalModelBadge(running: Memo<bool>) -> impl IntoView {
    let clock = crate::clock::Clock::from_context();
    let activity = LocalResource::new(move || {
        let tick = if running.get() { clock.now.get() } else { 0 };
        async move {
            let _asked_at = tick;
            ipc::local_model_activity().await.ok().flatten()
        }
    });
    move || {
        activity.get().flatten().map(|a| {
            view! { <span class="local-model-badge" data-testid="local-model-badge">{local_model_line(&a)}</span> }
        })
    }
}
