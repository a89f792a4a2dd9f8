//! read_calendar's card: the events in the range, with titles and local times. The model
//! ([`CalendarList`]) is built and tested in `state::calendar`; this only renders it.
//! Event text can come from other people's invitations, so it is rendered as text only.

use leptos::prelude::*;

use crate::state::calendar::{CalendarEntry, CalendarList};

/// The events read, the range asked for, and a note when the tool left some out.
#[component]
pub fn CalendarCard(list: CalendarList) -> impl IntoView {
    view! {
        <article class="card calendar-card" data-tool="read_calendar">
            <header>
                <span class="card-kind">"Calendar"</span>
                {list.range.map(|range| view! { <span class="calendar-range">{range}</span> })}
            </header>
            <p class="calendar-count">{list.count}</p>
            <ul class="calendar-events">
                {list.events.into_iter().map(|entry| view! { <EventRow entry /> }).collect_view()}
            </ul>
            {list.truncated_note.map(|note| view! { <p class="calendar-note">{note}</p> })}
        </article>
    }
}

#[component]
fn EventRow(entry: CalendarEntry) -> impl IntoView {
    view! {
        <li class="calendar-event" class:all-day=entry.all_day data-event-id=entry.id>
            <span class="calendar-title">{entry.title}</span>
            <span class="calendar-when">{entry.when}</span>
            {entry.location.map(|location| view! { <span class="calendar-location">{location}</span> })}
        </li>
    }
}
