//! The `schedule_task` card: what repeats, when it runs next, and a way to Activity, where
//! the owner can pause, run now or delete it.

use hearth_protocol::schedules::ScheduleTaskResult;
use leptos::prelude::*;

use crate::clock::local_time;
use crate::navigation::Navigation;
use crate::screens::Screen;

/// The schedule the agent made.
#[component]
pub fn ScheduleCard(made: ScheduleTaskResult) -> impl IntoView {
    let nav = Navigation::from_context();
    view! {
        <article class="card card-schedule" data-tool="schedule_task" data-schedule-id=made.schedule_id.into_string()>
            <header><span class="card-kind">"Schedule"</span></header>
            <p class="schedule-title">{made.title.clone()}</p>
            <p class="schedule-rule">{format!("{} ({})", made.when, made.time_zone)}</p>
            <p class="schedule-next">{made.next_run_at.map_or_else(|| "No run is due.".to_owned(), |at| format!("Next: {}", local_time(at)))}</p>
            {nav.map(|nav| view! {
                <footer class="card-footer">
                    <button class="open-schedules" on:click=move |_| nav.screen.set(Screen::Activity)>"Open in Activity"</button>
                </footer>
            })}
        </article>
    }
}
