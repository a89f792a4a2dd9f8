//! Goals: each with its milestones (done or not, and the task that did it), Pause and Resume
//! (which take its tasks and schedules with it), and a form to make one.

use hearth_protocol::goals::{GoalAction, GoalCreateParams, GoalStatus, GoalView, MilestoneChange};
use leptos::prelude::*;

use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::navigation::Navigation;
use crate::request::{Reply, action_failure, last_loaded, load_failure};

/// One change to the goals. Every button and form on the screen sends one through the same
/// action, so that action's latest reply is the screen's one error line.
#[derive(Debug, Clone)]
enum GoalEdit {
    Control(String, GoalAction),
    Milestones(String, MilestoneChange),
    Create(GoalCreateParams),
}

/// The Goals screen.
#[component]
pub fn GoalsScreen() -> impl IntoView {
    // A task finishing may mark a milestone: the list reloads on task changes.
    let live = LiveTasks::from_context();
    let newest = Memo::new(move |_| {
        live.map(|live| {
            live.store.with(|s| {
                let ids = s.ids_by_recency();
                let first = ids.first().and_then(|id| s.get(id)).map(|t| (t.id.clone(), t.updated_at));
                (ids.len(), first)
            })
        })
    });
    let list = LocalResource::new(move || {
        // Read, not `track()`: tracking a memo does not compute it, so it would never learn its
        // sources and task changes would never reload the list.
        newest.with(|_| ());
        ipc::goal_list()
    });
    let loaded = last_loaded(list);
    let goals = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.goals.clone()).unwrap_or_default()));
    let (title, milestones) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let edit = Action::new_local(move |edit: &GoalEdit| {
        let edit = edit.clone();
        async move {
            let reply: Reply<GoalView> = match edit {
                GoalEdit::Control(id, action) => ipc::goal_control(&id, action).await,
                GoalEdit::Milestones(id, change) => ipc::goal_milestones(&id, change).await,
                GoalEdit::Create(params) => {
                    let made = ipc::goal_create(&params).await;
                    if made.is_ok() {
                        title.set(String::new());
                        milestones.set(String::new());
                    }
                    made
                }
            };
            if reply.is_ok() {
                list.refetch();
            }
            reply.map(drop)
        }
    });
    let control = move |id: String, action: GoalAction| {
        edit.dispatch_local(GoalEdit::Control(id, action));
    };
    // A new goal or milestone waits for the answer to the last change: a second click before it
    // (a double click) would make a second row.
    let busy = edit.pending();
    let change = move |id: String, change: MilestoneChange| {
        if !busy.get_untracked() {
            edit.dispatch_local(GoalEdit::Milestones(id, change));
        }
    };
    let create = move || {
        if busy.get_untracked() {
            return;
        }
        let params = GoalCreateParams {
            title: title.get_untracked(),
            description: String::new(),
            category: String::new(),
            milestones: milestones.get_untracked().lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect(),
        };
        edit.dispatch_local(GoalEdit::Create(params));
    };
    let error = move || load_failure(list, "Goals").or_else(|| action_failure(edit));
    let nav = Navigation::from_context();
    view! {
        <section class="goals page">
            <header class="goals-header page-header"><h1>"Goals"</h1></header>
            <div class="page-content">
            {move || error().map(|message| view! { <p class="error goals-error">{message}</p> })}
            <form class="goal-form" on:submit=move |ev| { ev.prevent_default(); create(); }>
                <input name="title" placeholder="A goal" prop:value=title on:input=move |ev| title.set(event_target_value(&ev)) />
                <textarea name="milestones" placeholder="Milestones, one per line" prop:value=milestones
                    on:input=move |ev| milestones.set(event_target_value(&ev))></textarea>
                <button type="submit" data-action="create-goal" disabled=move || busy.get()>"Add goal"</button>
            </form>
            <Show when=move || goals.with(Vec::is_empty)>
                <p class="empty">"No goals yet. Tell Hearth what you are working towards, or add one here."</p>
            </Show>
            <ul class="goal-list">
                {move || goals.get().into_iter().map(|goal| {
                    let done = goal.milestones.iter().filter(|m| m.done_at.is_some()).count();
                    let total = goal.milestones.len();
                    let id = goal.id.clone();
                    let paused = goal.status == GoalStatus::Paused;
                    view! {
                        <li class="goal" data-goal-id=goal.id.clone() data-status=goal.status.as_str()>
                            <div class="goal-head">
                                <span class="goal-title">{goal.title.clone()}</span>
                                {(!goal.category.is_empty()).then(|| view! { <span class="goal-category">{goal.category.clone()}</span> })}
                                <span class="goal-progress">{format!("{done} of {total} milestones · {} open tasks", goal.open_tasks)}</span>
                                <button class="goal-action" data-action=if paused { "resume" } else { "pause" }
                                    on:click=move |_| control(id.clone(), if paused { GoalAction::Resume } else { GoalAction::Pause })>
                                    {if paused { "Resume" } else { "Pause" }}
                                </button>
                            </div>
                            <ol class="milestones">
                                {goal.milestones.into_iter().map(|m| {
                                    let edited = RwSignal::new(m.title.clone());
                                    let position = m.position;
                                    let (rename_id, remove_id) = (goal.id.clone(), goal.id.clone());
                                    view! {
                                        <li class="milestone" class:done=m.done_at.is_some() data-position=m.position>
                                            <input class="milestone-title" prop:value=edited on:input=move |ev| edited.set(event_target_value(&ev)) />
                                            <button class="milestone-rename" data-action="rename-milestone"
                                                on:click=move |_| change(rename_id.clone(), MilestoneChange::Rename { position, title: edited.get_untracked() })>"Save"</button>
                                            {m.done_at.is_none().then(|| view! {
                                                <button class="milestone-remove" data-action="remove-milestone"
                                                    on:click=move |_| change(remove_id.clone(), MilestoneChange::Remove { position })>"Remove"</button>
                                            })}
                                            {m.task_id.clone().zip(nav).map(|(task_id, nav)| view! {
                                                <button class="milestone-task" on:click=move |_| nav.open_task(task_id.clone())>"task"</button>
                                            })}
                                        </li>
                                    }
                                }).collect_view()}
                            </ol>
                            {
                                let added = RwSignal::new(String::new());
                                let add_id = goal.id.clone();
                                view! {
                                    <form class="milestone-add" on:submit=move |ev| {
                                        ev.prevent_default();
                                        change(add_id.clone(), MilestoneChange::Add { title: added.get_untracked() });
                                        added.set(String::new());
                                    }>
                                        <input class="milestone-new" placeholder="Another milestone" prop:value=added
                                            on:input=move |ev| added.set(event_target_value(&ev)) />
                                        <button type="submit" data-action="add-milestone">"Add"</button>
                                    </form>
                                }
                            }
                        </li>
                    }
                }).collect_view()}
            </ul>
            </div>
        </section>
    }
}
