//! The live task list, most recently updated first.

use hearth_protocol::ids::TaskId;
use leptos::prelude::*;

use crate::clock::local_time;
use crate::live_tasks::LiveTasks;
use crate::navigation::Navigation;
use crate::state::tasks::{TaskStore, attempts_label, status_label};

/// Every task; clicking one selects it.
#[component]
pub fn TaskList(live: LiveTasks, nav: Navigation) -> impl IntoView {
    let ids = Memo::new(move |_| live.store.with(TaskStore::ids_by_recency));
    view! {
        <div class="task-list">
            <Show when=move || live.store.with(TaskStore::is_empty)>
                <p class="empty">"No tasks yet. Ask Hearth for a job in Chat and it shows up here."</p>
            </Show>
            <ul>
                <For each=move || ids.get() key=|id| id.clone() let(task_id)>
                    <TaskRow live nav task_id />
                </For>
            </ul>
        </div>
    }
}

/// One row, re-rendered only when its task changes.
#[component]
fn TaskRow(live: LiveTasks, nav: Navigation, task_id: TaskId) -> impl IntoView {
    let task = {
        let task_id = task_id.clone();
        Memo::new(move |_| live.store.with(|store| store.get(&task_id).cloned()))
    };
    let selected = Memo::new(move |_| nav.selected_task.with(|selected| selected.as_deref() == Some(task_id.as_str())));
    move || {
        task.get().map(|task| {
            let status = task.status.as_str();
            let id = task.id.clone();
            view! {
                <li>
                    <button
                        class="task-row"
                        class:selected=move || selected.get()
                        data-task-id=task.id.into_string()
                        data-status=status
                        on:click=move |_| nav.selected_task.set(Some(id.clone()))
                    >
                        <span class="task-row-title">{task.title}</span>
                        <span class=format!("task-status task-status-{status}")>{status_label(task.status)}</span>
                        <span class="task-row-meta">
                            <span class="task-kind">{task.kind.as_str()}</span>
                            <span class="task-attempts">{attempts_label(task.attempts)}</span>
                            <span class="task-updated">{local_time(task.updated_at)}</span>
                        </span>
                    </button>
                </li>
            }
        })
    }
}
