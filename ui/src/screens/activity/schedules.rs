//! Activity's schedules: each with its rule, next run and last runs, Pause/Resume, Run now
//! and Delete, and a form to make one. Refreshed on open, after each control, and whenever a
//! task changes (a run a schedule made shows up as a task change).

use hearth_protocol::ids::{OperationId, ScheduleId};
use hearth_protocol::schedules::{
    MissedRuns, ScheduleAction, ScheduleControlParams, ScheduleCreateParams, ScheduleStatus, ScheduleView, ScheduledJob, Weekday,
};
use leptos::prelude::*;

use crate::clock::local_time;
use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::request::{action_failure, failure, last_loaded, load_failure};
use crate::state::schedules::{RuleKind, ScheduleForm, job_label, outcome_label};

/// The schedules section.
#[component]
pub fn Schedules(live: LiveTasks) -> impl IntoView {
    // Any task change moves the newest task (or its time): a run made, started or ended.
    let newest = Memo::new(move |_| {
        live.store.with(|s| {
            let ids = s.ids_by_recency();
            let first = ids.first().and_then(|id| s.get(id)).map(|t| (t.id.clone(), t.updated_at, t.status));
            (ids.len(), first)
        })
    });
    let list = LocalResource::new(move || {
        // Read, not `track()`: tracking a memo does not compute it, so it would never learn its
        // sources and task changes would never reload the list.
        newest.with(|_| ());
        ipc::schedule_list()
    });
    let loaded = last_loaded(list);
    let schedules = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.schedules.clone()).unwrap_or_default()));
    // Run now's operation id: made once per press, and kept while that press has no answer,
    // so a second click before it comes (a double click) sends the same id and makes no
    // second run.
    let pending_run = StoredValue::new(None::<(ScheduleId, OperationId)>);
    let act = Action::new_local(move |params: &ScheduleControlParams| {
        let params = params.clone();
        async move {
            let sent = params.operation_id.clone();
            let reply = ipc::schedule_control(&params).await;
            if reply.is_ok() {
                if sent.is_some() && pending_run.get_value().map(|(_, id)| id) == sent {
                    pending_run.set_value(None);
                }
                list.refetch();
            }
            reply.map(drop)
        }
    });
    let control = move |schedule_id: ScheduleId, action: ScheduleAction| {
        let operation_id = (action == ScheduleAction::RunNow).then(|| match pending_run.get_value() {
            Some((pending, id)) if pending == schedule_id => id,
            _ => {
                let id = crate::screens::computer::operation_id("run-now");
                pending_run.set_value(Some((schedule_id.clone(), id.clone())));
                id
            }
        });
        act.dispatch_local(ScheduleControlParams { schedule_id, action, operation_id });
    };
    let error = move || load_failure(list, "Schedules").or_else(|| action_failure(act));
    let creating = RwSignal::new(false);
    view! {
        <section class="schedules">
            <header class="schedules-header">
                <h2>"Schedules"</h2>
                <button class="schedule-new" data-action="new-schedule" on:click=move |_| creating.update(|c| *c = !*c)>
                    {move || if creating.get() { "Close" } else { "New schedule" }}
                </button>
            </header>
            {move || error().map(|message| view! { <p class="error schedules-error">{message}</p> })}
            <Show when=move || creating.get()>
                <NewSchedule on_made=Callback::new(move |()| {
                    creating.set(false);
                    list.refetch();
                }) />
            </Show>
            <Show when=move || schedules.with(Vec::is_empty) && !creating.get()>
                <p class="empty">"Nothing repeats yet. Ask in Chat (\"remind me every morning…\") or make one here."</p>
            </Show>
            <ul class="schedule-list">
                <For each=move || schedules.get() key=|s| (s.id.clone(), s.status, s.next_run_at, s.last_runs.first().map(|r| (r.due_at, r.task_status))) let(schedule)>
                    <ScheduleRow schedule control />
                </For>
            </ul>
        </section>
    }
}

#[component]
fn ScheduleRow(schedule: ScheduleView, control: impl Fn(ScheduleId, ScheduleAction) + Copy + Send + Sync + 'static) -> impl IntoView {
    let id = schedule.id.clone();
    let paused = schedule.status == ScheduleStatus::Paused;
    let button = move |label: &'static str, slug: &'static str, action: ScheduleAction| {
        let id = id.clone();
        view! { <button class="schedule-action" data-action=slug on:click=move |_| control(id.clone(), action)>{label}</button> }
    };
    view! {
        <li class="schedule" data-schedule-id=schedule.id.to_string() data-status=schedule.status.as_str()>
            <div class="schedule-head">
                <span class="schedule-title">{schedule.title.clone()}</span>
                <span class="schedule-job">{job_label(schedule.job)}</span>
                <span class="schedule-rule">{format!("{} ({})", schedule.repeat.describe(), schedule.time_zone)}</span>
            </div>
            <div class="schedule-next">
                {match schedule.next_run_at {
                    Some(at) => format!("Next: {}", local_time(at)),
                    None if paused => "Paused".to_owned(),
                    None => "No further runs".to_owned(),
                }}
                " · " {schedule.missed.label()}
            </div>
            <ul class="schedule-runs">
                {schedule.last_runs.iter().map(|run| view! {
                    <li class="schedule-run" data-outcome=run.outcome.as_str()>
                        {local_time(run.due_at)} " " {outcome_label(run.outcome)}
                        {run.task_status.map(|s| format!(" → {}", s.as_str()))}
                    </li>
                }).collect_view()}
            </ul>
            <div class="schedule-actions">
                {if paused { button("Resume", "resume", ScheduleAction::Resume) } else { button("Pause", "pause", ScheduleAction::Pause) }}
                {button("Run now", "run-now", ScheduleAction::RunNow)}
                {button("Delete", "delete", ScheduleAction::Delete)}
            </div>
        </li>
    }
}

#[component]
fn NewSchedule(on_made: Callback<()>) -> impl IntoView {
    let form = RwSignal::new(ScheduleForm::default());
    // A form that does not make a schedule says why before anything is sent.
    let invalid = RwSignal::new(None::<String>);
    let create = Action::new_local(move |params: &ScheduleCreateParams| {
        let params = params.clone();
        async move {
            let made = ipc::schedule_create(&params).await;
            if made.is_ok() {
                form.set(ScheduleForm::default());
                on_made.run(());
            }
            made.map(drop)
        }
    });
    let busy = create.pending();
    let submit = move |_| {
        if busy.get_untracked() {
            return;
        }
        match form.with_untracked(ScheduleForm::to_params) {
            Ok(params) => {
                invalid.set(None);
                create.dispatch_local(params);
            }
            Err(message) => invalid.set(Some(message)),
        }
    };
    let error = move || invalid.get().or_else(|| create.value().with(|made| failure(made.as_ref())));
    let text = move |get: fn(&ScheduleForm) -> &String, set: fn(&mut ScheduleForm, String)| {
        (move || form.with(|f| get(f).clone()), move |ev| form.update(|f| set(f, event_target_value(&ev))))
    };
    let (title, on_title) = text(|f| &f.title, |f, v| f.title = v);
    let (instructions, on_instructions) = text(|f| &f.instructions, |f, v| f.instructions = v);
    let (at, on_at) = text(|f| &f.at, |f, v| f.at = v);
    let (day, on_day) = text(|f| &f.day, |f, v| f.day = v);
    let (minutes, on_minutes) = text(|f| &f.minutes, |f, v| f.minutes = v);
    let (zone, on_zone) = text(|f| &f.time_zone, |f, v| f.time_zone = v);
    let kind = Memo::new(move |_| form.with(|f| f.kind));
    view! {
        <form class="schedule-form" on:submit=move |ev| { ev.prevent_default(); submit(()); }>
            <label>"Title" <input name="title" prop:value=title on:input=on_title /></label>
            <label>"What it does"
                <select name="job" on:change=move |ev| {
                    let job = if event_target_value(&ev) == "agent" { ScheduledJob::Agent } else { ScheduledJob::Reminder };
                    form.update(|f| f.job = job);
                }>
                    // A statement summary names a file, which the chat's summarize_statement and
                    // schedule_task pick from Files: this form makes the two kinds that take text.
                    {[ScheduledJob::Reminder, ScheduledJob::Agent].into_iter().map(|job| view! {
                        <option value=job.as_str() selected=move || form.with(|f| f.job == job)>{job_label(job)}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Text or instructions" <textarea name="instructions" prop:value=instructions on:input=on_instructions></textarea></label>
            <label>"Repeats"
                <select name="rule" on:change=move |ev| {
                    if let Some(kind) = RuleKind::from_slug(&event_target_value(&ev)) { form.update(|f| f.kind = kind); }
                }>
                    {RuleKind::ALL.into_iter().map(|k| view! {
                        <option value=k.slug() selected=move || kind.get() == k>{k.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <Show when=move || kind.get() == RuleKind::Week>
                <fieldset class="schedule-days">
                    {Weekday::ALL.iter().copied().enumerate().map(|(i, d)| view! {
                        <label class="schedule-day">
                            <input type="checkbox" name=d.short() prop:checked=move || form.with(|f| f.days[i])
                                on:change=move |ev| { let on = event_target_checked(&ev); form.update(|f| f.days[i] = on); } />
                            {d.short()}
                        </label>
                    }).collect_view()}
                </fieldset>
            </Show>
            <Show when=move || kind.get() == RuleKind::Month>
                <label>"Day of the month" <input name="day" prop:value=day on:input=on_day /></label>
            </Show>
            <Show when=move || kind.get() != RuleKind::Interval>
                <label>"At (HH:MM)" <input name="at" prop:value=at on:input=on_at /></label>
            </Show>
            <Show when=move || kind.get() == RuleKind::Interval>
                <label>"Every (minutes)" <input name="minutes" prop:value=minutes on:input=on_minutes /></label>
            </Show>
            <label>"Time zone" <input name="time_zone" placeholder="this computer's zone" prop:value=zone on:input=on_zone /></label>
            <label>"Missed runs"
                <select name="missed" on:change=move |ev| {
                    if let Some(m) = MissedRuns::parse(&event_target_value(&ev)) { form.update(|f| f.missed = m); }
                }>
                    {MissedRuns::ALL.iter().copied().map(|m| view! {
                        <option value=m.as_str() selected=move || form.with(|f| f.missed == m)>{m.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            {move || error().map(|message| view! { <p class="error schedule-form-error">{message}</p> })}
            <button type="submit" class="schedule-create" data-action="create-schedule" disabled=move || busy.get()>"Create schedule"</button>
        </form>
    }
}
