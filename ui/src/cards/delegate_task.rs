//! The `delegate_task` card: the durable task's title, its live status, and Open.

use hearth_protocol::ids::TaskId;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::TaskStatus;
use leptos::prelude::*;

use super::status_label;
use crate::live_tasks::LiveTasks;
use crate::navigation::Navigation;
use crate::state::chat::ToolCallView;
use crate::state::tasks;

/// Shows the task the agent handed to the task engine. The status is the store's live one
/// when the task is known there, else the one the tool reported when it returned.
#[component]
pub fn DelegateTaskCard(call: ToolCallView) -> impl IntoView {
    let result: Option<DelegateTaskResult> = call.result.as_deref().and_then(|r| serde_json::from_str(r).ok());
    let title = result.as_ref().map(|r| r.title.clone()).unwrap_or_else(|| title_from_args(&call.args));
    let task_id = result.as_ref().map(|r| r.task_id.clone());
    let status = live_status(task_id.clone(), result.as_ref().map(|r| r.status));
    view! {
        <article class="card card-delegate-task" data-tool="delegate_task" data-status=status_label(call.status)>
            <header>
                <span class="card-kind">"Task"</span>
                {move || match status.get() {
                    Some(status) => view! {
                        <span class=format!("task-status task-status-{}", status.as_str())>{tasks::status_label(status)}</span>
                    }.into_any(),
                    None => view! { <span class="task-status task-status-starting">"starting"</span> }.into_any(),
                }}
            </header>
            <p class="task-title">{title}</p>
            {task_id.map(|task_id| view! {
                <footer class="card-footer">
                    <p class="task-id">"Task " {task_id.chars().take(12).collect::<String>()}</p>
                    <OpenTaskButton task_id />
                </footer>
            })}
        </article>
    }
}

/// Opens the task in Activity.
#[component]
fn OpenTaskButton(task_id: TaskId) -> impl IntoView {
    Navigation::from_context().map(|nav| {
        view! { <button class="open-task" on:click=move |_| nav.open_task(task_id.clone())>"Open"</button> }
    })
}

/// The task's status from the live store, falling back to `reported`.
fn live_status(task_id: Option<TaskId>, reported: Option<TaskStatus>) -> Memo<Option<TaskStatus>> {
    let live = LiveTasks::from_context();
    Memo::new(move |_| {
        let held = task_id.as_deref().zip(live).and_then(|(id, live)| live.store.with(|s| s.get(id).map(|t| t.status)));
        held.or(reported)
    })
}

fn title_from_args(args: &str) -> String {
    serde_json::from_str::<serde_json::Value>(args)
        .ok()
        .and_then(|v| v.get("title").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "New task".to_owned())
}
