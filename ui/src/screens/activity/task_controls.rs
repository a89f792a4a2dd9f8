//! Pause, Resume, Cancel, Retry, Retry after review and Answer for the selected task.
//!
//! Only the controls `allowed_controls` lists for the displayed status are shown, and each
//! is sent with that status as `expected_status`, so a task that moved on meanwhile is a
//! conflict rather than a surprise.

use hearth_protocol::ErrorCode;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskView};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::state::tasks::{accepts_answer, available_actions, control_failure_message, needs_review};

/// The controls for `current`; `on_changed` re-fetches the detail after a control or a conflict.
#[component]
pub fn TaskControls(live: LiveTasks, current: Memo<Option<TaskView>>, on_changed: Callback<()>) -> impl IntoView {
    let answer = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);

    let send = move |control: TaskControl| {
        let Some(task) = current.get_untracked() else { return };
        if busy.get_untracked() {
            return;
        }
        let is_answer = matches!(control, TaskControl::Answer { .. });
        let params = TaskControlParams { task_id: task.id, expected_status: task.status, expected_attempts: task.attempts, control };
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            let reply = ipc::task_control(&params).await;
            busy.set(false);
            let history_moved = match reply {
                Ok(task) => {
                    live.store.update(|store| {
                        store.upsert(task);
                    });
                    if is_answer {
                        answer.set(String::new());
                    }
                    true
                }
                Err(err) => {
                    error.set(Some(control_failure_message(&err)));
                    err.code == ErrorCode::Conflict
                }
            };
            if history_moved {
                on_changed.try_run(());
            }
        });
    };
    let actions = Memo::new(move |_| current.with(|task| task.as_ref().map(available_actions).unwrap_or_default()));
    let review = Memo::new(move |_| current.with(|task| task.as_ref().is_some_and(needs_review)));
    let answerable = Memo::new(move |_| current.with(|task| task.as_ref().is_some_and(accepts_answer)));

    view! {
        <div class="task-controls">
            <Show when=move || review.get()>
                <p class="task-review-note">
                    "Hearth stopped while an action was in progress; check what happened before retrying."
                </p>
            </Show>
            <div class="task-buttons">
                {move || current.with(|task| task.as_ref().filter(|t| t.kind == hearth_protocol::tasks::TaskKind::Monitor && t.status == hearth_protocol::tasks::TaskStatus::Scheduled).map(|t| t.id.clone())).map(|task_id| view! {
                    <button id="monitor-check-now" class="task-control" disabled=move || busy.get() on:click=move |_| {
                        let task_id = task_id.clone();
                        spawn_local(async move {
                            match ipc::monitor_check_now(&task_id).await {
                                Ok(task) => live.store.update(|store| { store.upsert(task); }),
                                Err(err) => error.set(Some(err.message)),
                            }
                        });
                    }>"Check now"</button>
                })}
                {move || actions.get().into_iter().map(|action| view! {
                    <button
                        id=action.element_id()
                        class=format!("task-control {}", action.element_id())
                        disabled=move || busy.get()
                        on:click=move |_| send(action.control())
                    >{action.label()}</button>
                }).collect_view()}
            </div>
            <Show when=move || answerable.get()>
                <div class="task-choices">
                    {move || current.with(|task| task.as_ref().map(|t| t.choices.clone()).unwrap_or_default()).into_iter().map(|option| {
                        let pick = option.clone();
                        let label = option.clone();
                        view! {
                            <button class="task-choice" data-choice=option disabled=move || busy.get()
                                on:click=move |_| send(TaskControl::Answer { text: pick.clone() })>{label}</button>
                        }
                    }).collect_view()}
                </div>
                <form class="task-answer" on:submit=move |ev| {
                    ev.prevent_default();
                    send(TaskControl::Answer { text: answer.get_untracked() });
                }>
                    <textarea
                        id="task-answer-text"
                        placeholder="Your answer"
                        prop:value=move || answer.get()
                        on:input=move |ev| answer.set(event_target_value(&ev))
                    ></textarea>
                    <button id="task-answer-send" type="submit" disabled=move || busy.get()>"Answer"</button>
                </form>
            </Show>
            {move || error.get().map(|message| view! { <p class="error task-control-error" id="task-control-error">{message}</p> })}
        </div>
    }
}
