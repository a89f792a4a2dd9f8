//! Pause, Resume, Cancel, Retry, Retry after review and Answer for the selected task.
//!
//! Only the controls `allowed_controls` lists for the displayed status are shown, and each
//! is sent with that status as `expected_status`, so a task that moved on meanwhile is a
//! conflict rather than a surprise.

use hearth_protocol::ErrorCode;
use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskView};
use leptos::prelude::*;

use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::state::tasks::{accepts_answer, available_actions, control_failure_message, needs_review};

/// What a button here asks of the task.
#[derive(Debug, Clone)]
enum TaskRequest {
    /// A control, sent with the status it was shown for.
    Control(TaskControlParams),
    /// A monitor's "Check now".
    CheckNow(TaskId),
}

/// The controls for `current`; `on_changed` re-fetches the detail after a control or a conflict.
#[component]
pub fn TaskControls(live: LiveTasks, current: Memo<Option<TaskView>>, on_changed: Callback<()>) -> impl IntoView {
    let answer = RwSignal::new(String::new());
    // The action's value is the message of its latest failure (`Err`), already worded.
    let request = Action::new_local(move |request: &TaskRequest| {
        let request = request.clone();
        async move {
            match request {
                TaskRequest::Control(params) => {
                    let is_answer = matches!(params.control, TaskControl::Answer { .. });
                    let reply = ipc::task_control(&params).await;
                    let history_moved = match &reply {
                        Ok(_) => true,
                        Err(err) => err.code == ErrorCode::Conflict,
                    };
                    let done = match reply {
                        Ok(task) => {
                            live.store.update(|store| {
                                store.upsert(task);
                            });
                            if is_answer {
                                answer.set(String::new());
                            }
                            Ok(())
                        }
                        Err(err) => Err(control_failure_message(&err)),
                    };
                    if history_moved {
                        on_changed.try_run(());
                    }
                    done
                }
                TaskRequest::CheckNow(task_id) => match ipc::monitor_check_now(&task_id).await {
                    Ok(task) => {
                        live.store.update(|store| {
                            store.upsert(task);
                        });
                        Ok(())
                    }
                    Err(err) => Err(err.message),
                },
            }
        }
    });
    // A control is on its way: the control buttons wait for its answer (Check now does not).
    let sent = request.input();
    let busy = move || sent.with(|sent| matches!(sent, Some(TaskRequest::Control(_))));
    // A control being sent clears the last failure, as its answer will say anew.
    let error = move || if busy() { None } else { request.value().with(|done| done.clone().and_then(Result::err)) };

    let send = move |control: TaskControl| {
        let Some(task) = current.get_untracked() else { return };
        if untrack(busy) {
            return;
        }
        let params = TaskControlParams { task_id: task.id, expected_status: task.status, expected_attempts: task.attempts, control };
        request.dispatch_local(TaskRequest::Control(params));
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
                    <button id="monitor-check-now" class="task-control" disabled=busy on:click=move |_| {
                        request.dispatch_local(TaskRequest::CheckNow(task_id.clone()));
                    }>"Check now"</button>
                })}
                {move || actions.get().into_iter().map(|action| view! {
                    <button
                        id=action.element_id()
                        class=format!("task-control {}", action.element_id())
                        disabled=busy
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
                            <button class="task-choice" data-choice=option disabled=busy
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
                    <button id="task-answer-send" type="submit" disabled=busy>"Answer"</button>
                </form>
            </Show>
            {move || error().map(|message| view! { <p class="error task-control-error" id="task-control-error">{message}</p> })}
        </div>
    }
}
