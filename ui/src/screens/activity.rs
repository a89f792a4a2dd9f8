//! Activity: the schedules, every task Hearth works on, live, and the selected one's detail
//! and controls; below them the failures, each opening its run's timeline.
//!
//! Updates come only from the app-wide task watch; nothing here polls.

mod failures;
mod mandates;
mod schedules;
mod task_controls;
mod task_detail;
mod task_list;

use leptos::prelude::*;

use crate::live_tasks::LiveTasks;
use crate::navigation::Navigation;
use crate::request::action_failure;
use failures::Failures;
use schedules::Schedules;
use task_detail::TaskDetailPane;
use task_list::TaskList;

/// The Activity screen: the task list beside the selected task.
#[component]
pub fn ActivityScreen() -> impl IntoView {
    let (Some(live), Some(nav)) = (LiveTasks::from_context(), Navigation::from_context()) else {
        return view! { <p class="error">"Tasks are not available in this window. Reload the app."</p> }.into_any();
    };
    // Re-mount the detail pane only when another task is selected, keeping a typed answer.
    let selected = Memo::new(move |_| nav.selected_task.get());
    view! {
        <section class="activity page">
            <header class="activity-header page-header">
                <h1>"Activity"</h1>
                <StatementForm live nav />
            </header>
            {move || live.error.get().map(|message| view! { <p class="error" id="activity-error">{message}</p> })}
            <Schedules live />
            <div class="activity-body">
                <TaskList live nav />
                {move || match selected.get() {
                    Some(task_id) => view! { <TaskDetailPane live task_id /> }.into_any(),
                    None => view! { <p class="task-detail-empty">"Select a task to see its plan, runs and events."</p> }.into_any(),
                }}
            </div>
            <Failures live />
        </section>
    }
    .into_any()
}

/// "Summarize a statement": paste a bank statement's CSV; a finance task adds it up.
#[component]
fn StatementForm(live: LiveTasks, nav: Navigation) -> impl IntoView {
    let open = RwSignal::new(false);
    let csv = RwSignal::new(String::new());
    let summarize = Action::new_local(move |text: &String| {
        let text = text.clone();
        async move {
            let task = crate::ipc::finance_start(&text).await?;
            let id = task.id.clone();
            live.store.update(|store| {
                store.upsert(task);
            });
            csv.set(String::new());
            open.set(false);
            nav.open_task(id);
            Ok(())
        }
    });
    let start = move || {
        // One task per press: a second submit before the answer sends nothing.
        if summarize.pending().get_untracked() {
            return;
        }
        summarize.dispatch_local(csv.get_untracked());
    };
    let error = move || action_failure(summarize);
    view! {
        <button class="statement-open" data-action="statement" on:click=move |_| open.update(|o| *o = !*o)>"Summarize a statement"</button>
        <Show when=move || open.get()>
            <form class="statement-form" on:submit=move |ev| { ev.prevent_default(); start(); }>
                <textarea name="csv" placeholder="date,description,amount,category" prop:value=csv
                    on:input=move |ev| csv.set(event_target_value(&ev))></textarea>
                {move || error().map(|message| view! { <p class="error statement-error">{message}</p> })}
                <button type="submit" data-action="summarize" disabled=move || summarize.pending().get()>"Summarize"</button>
            </form>
        </Show>
    }
}
