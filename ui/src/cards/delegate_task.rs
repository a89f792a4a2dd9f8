//! The `delegate_task` card: the durable task's title and status.

use hearth_protocol::ipc::DelegateTaskResult;
use leptos::prelude::*;

use super::status_label;
use crate::state::chat::ToolCallView;

/// Shows the task the agent handed to the task engine.
#[component]
pub fn DelegateTaskCard(call: ToolCallView) -> impl IntoView {
    let result: Option<DelegateTaskResult> = call.result.as_deref().and_then(|r| serde_json::from_str(r).ok());
    let title = result.as_ref().map(|r| r.title.clone()).unwrap_or_else(|| title_from_args(&call.args));
    let task_status = result.as_ref().map_or("starting", |r| r.status.as_str());
    view! {
        <article class="card card-delegate-task" data-tool="delegate_task" data-status=status_label(call.status)>
            <header>
                <span class="card-kind">"Task"</span>
                <span class=format!("task-status task-status-{task_status}")>{task_status.replace('_', " ")}</span>
            </header>
            <p class="task-title">{title}</p>
            {result.map(|r| view! { <p class="task-id">"Task " {r.task_id.chars().take(12).collect::<String>()}</p> })}
        </article>
    }
}

fn title_from_args(args: &str) -> String {
    serde_json::from_str::<serde_json::Value>(args)
        .ok()
        .and_then(|v| v.get("title").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "New task".to_owned())
}
