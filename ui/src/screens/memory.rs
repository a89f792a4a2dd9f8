//! Memory: the facts Hearth keeps, to read, correct and forget, and which of them went into
//! which model request.

use hearth_protocol::memory::{MemorySaveParams, MemorySource, MemoryView};
use leptos::prelude::*;

use crate::clock::local_time;
use crate::ipc;
use crate::request::{Reply, action_failure, last_loaded, load_failure};

/// One change to the facts. The add form and every fact's buttons send theirs through one
/// action, so its latest reply is the screen's one error line.
#[derive(Debug, Clone)]
enum MemoryEdit {
    /// A new fact; the add form empties once it is kept.
    Add(MemorySaveParams),
    /// A corrected fact; its row leaves editing once it is kept.
    Correct(MemorySaveParams, RwSignal<bool>),
    Forget(i64),
}

/// The Memory screen.
#[component]
pub fn MemoryScreen() -> impl IntoView {
    let reply = LocalResource::new(ipc::memory_list);
    let list = last_loaded(reply);
    let draft = RwSignal::new(String::new());
    let edit = Action::new_local(move |edit: &MemoryEdit| {
        let edit = edit.clone();
        async move {
            let done: Reply<()> = match edit {
                MemoryEdit::Add(params) => ipc::memory_save(&params).await.map(|_| draft.set(String::new())),
                MemoryEdit::Correct(params, editing) => ipc::memory_save(&params).await.map(|_| editing.set(false)),
                MemoryEdit::Forget(id) => ipc::memory_forget(id).await.map(drop),
            };
            if done.is_ok() {
                reply.refetch();
            }
            done
        }
    });
    let add = move || {
        edit.dispatch_local(MemoryEdit::Add(MemorySaveParams { id: None, text: draft.get_untracked() }));
    };
    let error = move || load_failure(reply, "Memory").or_else(|| action_failure(edit));
    let facts = Memo::new(move |_| list.with(|l| l.as_ref().map(|l| l.memories.clone()).unwrap_or_default()));
    let text_of = move |id: i64| list.with(|l| l.as_ref().and_then(|l| l.memories.iter().find(|m| m.id == id).map(|m| m.text.clone())));
    view! {
        <section class="memory page">
            <header class="memory-header page-header"><h1>"Memory"</h1></header>
            <div class="page-content">
            <p class="memory-note">"Only the facts that share words with what you ask go into a request (at most 8, 2,000 characters). Forget removes one from every later request at once."</p>
            {move || error().map(|message| view! { <p class="error memory-error">{message}</p> })}
            <form class="memory-add" on:submit=move |ev| { ev.prevent_default(); add(); }>
                <input name="fact" placeholder="Something Hearth should remember" prop:value=draft on:input=move |ev| draft.set(event_target_value(&ev)) />
                <button type="submit" data-action="remember">"Remember"</button>
            </form>
            <ul class="memory-list">
                <For each=move || facts.get() key=|m| (m.id, m.updated_at) let(fact)>
                    <Fact fact edit />
                </For>
            </ul>
            <h2>"Used in requests"</h2>
            <ul class="memory-uses">
                {move || list.with(|l| l.as_ref().map(|l| l.uses.clone()).unwrap_or_default()).into_iter().map(|u| view! {
                    <li class="memory-use" data-request-id=u.request_id>
                        <span class="memory-use-time">{local_time(u.at)}</span>
                        <span class="memory-use-where">{if u.task_id.is_some() { "a task" } else { "a chat" }}</span>
                        <ul>{u.memory_ids.iter().filter_map(|id| text_of(*id)).map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
                    </li>
                }).collect_view()}
            </ul>
            </div>
        </section>
    }
}

/// One fact, to correct (its text becomes an input) or forget.
#[component]
fn Fact(fact: MemoryView, edit: Action<MemoryEdit, Reply<()>>) -> impl IntoView {
    let editing = RwSignal::new(false);
    let text = RwSignal::new(fact.text.clone());
    let id = fact.id;
    let save = move || {
        edit.dispatch_local(MemoryEdit::Correct(MemorySaveParams { id: Some(id), text: text.get_untracked() }, editing));
    };
    let forget = move |_| {
        edit.dispatch_local(MemoryEdit::Forget(id));
    };
    let source = match fact.source {
        MemorySource::Owner => "you",
        MemorySource::Agent => "the agent, from chat",
    };
    view! {
        <li class="fact" data-memory-id=id>
            <Show when=move || editing.get() fallback=move || view! { <span class="fact-text">{text.get()}</span> }>
                <input class="fact-edit" prop:value=text on:input=move |ev| text.set(event_target_value(&ev)) />
                <button data-action="save" on:click=move |_| save()>"Save"</button>
            </Show>
            <span class="fact-meta">{format!("kept by {source}, {}", local_time(fact.updated_at))}</span>
            <button data-action="edit" on:click=move |_| editing.update(|e| *e = !*e)>"Edit"</button>
            <button data-action="forget" on:click=forget>"Forget"</button>
        </li>
    }
}
