//! The selected task: summary, controls, plan, result, runs and events.
//!
//! The detail (runs and events) is fetched when the task is selected and again whenever the
//! store's revision for it moves, i.e. when the watch says it changed. The summary shows the
//! newer of the store's view and the fetched one, so the status never goes backwards.

use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskEventView, TaskRunView, TaskStatus, TaskView};
use leptos::prelude::*;

use super::task_controls::TaskControls;
use crate::cards::approval::ApprovalCard;
use crate::clock::local_time;
use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::request::{failure, last_loaded};
use crate::state::tasks::{attempts_label, newest, run_status_label, status_label, step_status_label};

/// The detail pane for `task_id`.
#[component]
pub fn TaskDetailPane(live: LiveTasks, task_id: TaskId) -> impl IntoView {
    let revision = {
        let task_id = task_id.clone();
        Memo::new(move |_| live.store.with(|store| store.revision(&task_id)))
    };
    // Fetched again whenever the watch moves the task's revision; the resource lets only the
    // newest fetch land, so an older reply arriving late never overwrites a newer detail.
    let fetched = {
        let task_id = task_id.clone();
        LocalResource::new(move || {
            // Read, not `track()`: tracking a memo does not compute it, so it would never learn
            // its sources and the watch's changes would never re-fetch the detail.
            revision.with(|_| ());
            let task_id = task_id.clone();
            async move { ipc::task_get(&task_id).await }
        })
    };
    let detail = last_loaded(fetched);
    let fetch_error = move || fetched.with(|reply| failure(reply.as_ref()));
    let refetch = Callback::new(move |()| fetched.refetch());
    let current = {
        let task_id = task_id.clone();
        Memo::new(move |_| detail.with(|fetched| live.store.with(|store| newest(store.get(&task_id), fetched.as_ref().map(|d| &d.task)))))
    };
    // The card re-mounts only when the task waits on another proposal; it follows the task's
    // changes itself.
    let proposal_id = Memo::new(move |_| current.with(|task| task.as_ref().and_then(|t| t.proposal_id.clone())));

    let mandates_for = task_id.clone();
    view! {
        <section class="task-detail" data-task-id=task_id.into_string()>
            {move || fetch_error().map(|message| view! { <p class="error task-detail-error">{message}</p> })}
            {move || match current.get() {
                Some(task) => view! { <TaskSummary task /> }.into_any(),
                None => view! { <p class="empty">"Loading the task…"</p> }.into_any(),
            }}
            <TaskControls live current on_changed=refetch />
            <super::mandates::TaskMandates task_id=mandates_for />
            {move || proposal_id.get().map(|proposal_id| view! {
                <div class="task-approval">
                    <h3>"Approval"</h3>
                    <ApprovalCard proposal_id />
                </div>
            })}
            {move || current.get().map(|task| view! { <TaskOutcome task /> })}
            {move || detail.get().and_then(|fetched| fetched.finance).map(|summary| view! { <FinanceChart summary /> })}
            {move || detail.get().map(|fetched| view! {
                <TaskRuns runs=fetched.runs />
                <TaskEvents events=fetched.events />
            })}
        </section>
    }
}

/// A finance task's tracker: totals, and spending by category and by month as bars.
#[component]
fn FinanceChart(summary: hearth_protocol::finance::FinanceSummary) -> impl IntoView {
    use hearth_protocol::finance::{Total, money};
    let bars = |title: &'static str, slug: &'static str, totals: Vec<Total>| {
        let top = totals.iter().map(|t| t.cents).max().unwrap_or(1).max(1);
        view! {
            <div class=format!("finance-bars finance-{slug}")>
                <h4>{title}</h4>
                {totals.into_iter().map(|t| {
                    // Widths from integer cents: no float reaches a total.
                    let percent = t.cents.saturating_mul(100) / top;
                    view! {
                        <div class="finance-bar" data-name=t.name>
                            <span class="finance-bar-name">{t.name.clone()}</span>
                            <span class="finance-bar-track"><span class="finance-bar-fill" style=format!("width: {percent}%")></span></span>
                            <span class="finance-bar-value">{money(t.cents)}</span>
                        </div>
                    }
                }).collect_view()}
            </div>
        }
    };
    view! {
        <section class="finance" data-count=summary.count>
            <h3>"Statement"</h3>
            <p class="finance-totals">
                {format!("Income {} · Spending {} · Saved {}", money(summary.income_cents), money(summary.spending_cents), money(summary.saved_cents))}
            </p>
            {bars("Spending by category", "categories", summary.categories)}
            {bars("Spending by month", "months", summary.months)}
        </section>
    }
}

/// Title, status, kind, attempts, question and plan.
#[component]
fn TaskSummary(task: TaskView) -> impl IntoView {
    let status = task.status.as_str();
    let question = task.question.filter(|_| task.status == TaskStatus::WaitingInput);
    view! {
        <header class="task-detail-header">
            <h2 class="task-detail-title">{task.title}</h2>
            <span class=format!("task-status task-status-{status}")>{status_label(task.status)}</span>
        </header>
        <p class="task-meta">
            <span class="task-kind">{task.kind.as_str()}</span>
            <span class="task-attempts">{attempts_label(task.attempts)}</span>
            <span class="task-updated">"Updated " {local_time(task.updated_at)}</span>
        </p>
        {question.map(|question| view! {
            <div class="task-question">
                <span class="task-section-label">"Hearth asks"</span>
                <p>{question}</p>
            </div>
        })}
        {(!task.plan.is_empty()).then(|| view! {
            <h3>"Plan"</h3>
            <ol class="task-plan">
                {task.plan.into_iter().map(|step| {
                    let status = step_status_label(step.status);
                    view! {
                        <li class=format!("task-step task-step-{status}") data-status=status>
                            <span class="task-step-title">{step.title}</span>
                            <span class="task-step-status">{status}</span>
                        </li>
                    }
                }).collect_view()}
            </ol>
        })}
    }
}

/// The result, or why the task failed.
#[component]
fn TaskOutcome(task: TaskView) -> impl IntoView {
    view! {
        {task.result.map(|result| view! {
            <h3>"Result"</h3>
            <p class="task-result">{result}</p>
        })}
        {task.error.map(|error| view! {
            <h3>"Error"</h3>
            <p class="task-failure">{error}</p>
        })}
    }
}

/// The runs the task keeps (one per attempt), oldest first: a task that ran more than 100
/// times keeps its newest 100, and older ones only if interrupted or still holding an effect.
#[component]
fn TaskRuns(runs: Vec<TaskRunView>) -> impl IntoView {
    let dropped = runs.iter().map(|run| run.attempt).min().is_some_and(|first| first > 1)
        || runs.windows(2).any(|pair| pair[1].attempt > pair[0].attempt + 1);
    (!runs.is_empty()).then(|| {
        view! {
            <h3>"Runs"</h3>
            {dropped.then(|| view! { <p class="task-runs-note">"Older runs that ended cleanly are not kept (a task keeps its newest 100)."</p> })}
            <ol class="task-runs">
                {runs.into_iter().map(|run| {
                    let status = run_status_label(run.status);
                    view! {
                        <li class="task-run" data-status=status>
                            <span class="task-run-attempt">"Attempt " {run.attempt}</span>
                            <span class=format!("task-run-status task-run-status-{status}")>{status}</span>
                            <span class="task-run-time">
                                "Started " {local_time(run.started_at)}
                                {run.finished_at.map(|at| format!(" · finished {}", local_time(at)))}
                            </span>
                            {run.reason.map(|reason| view! { <span class="task-run-reason">{reason}</span> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        }
    })
}

/// What happened, oldest first (the newest 200).
#[component]
fn TaskEvents(events: Vec<TaskEventView>) -> impl IntoView {
    (!events.is_empty()).then(|| {
        view! {
            <h3>"Events"</h3>
            <ol class="task-events">
                {events.into_iter().map(|event| {
                    let kind = event.kind.as_str();
                    view! {
                        <li class="task-event" data-kind=kind>
                            <span class="task-event-kind">{kind}</span>
                            <span class="task-event-message">{event.message}</span>
                            <time class="task-event-time">{local_time(event.at)}</time>
                        </li>
                    }
                }).collect_view()}
            </ol>
        }
    })
}
