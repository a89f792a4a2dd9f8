//! Reading the owner's Google Calendar through its REST API (`calendar/v3`): the events of a
//! calendar in a window, recurring events expanded into their single occurrences, ordered by
//! start, within the local calendar's bounds (20 events, a window of at most 366 days).
//!
//! Event text is untrusted (anyone who invites the owner writes it); the tools mark it as data.

use chrono::{DateTime, SecondsFormat, Utc};
use hearth_protocol::approvals::EventTiming;
use serde::Deserialize;

use super::oauth::GoogleAuth;
use crate::error::{CoreError, Result};
use crate::store::workspace::CalendarEvent;
use crate::workspace::{CalendarPage, MAX_CALENDAR_DAYS, MAX_CALENDAR_EVENTS};

/// Google Calendar's API.
pub const CALENDAR_BASE_URL: &str = "https://www.googleapis.com";

/// Characters kept of an event's title, place and notes (the local calendar's events are short;
/// an invitation can carry a novel).
const MAX_TEXT_CHARS: usize = 4_000;

/// One connection's calendars.
#[derive(Clone)]
pub struct Calendar {
    http: reqwest::Client,
    base_url: String,
    auth: GoogleAuth,
    connection_id: String,
}

impl std::fmt::Debug for Calendar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calendar").field("base_url", &self.base_url).field("connection_id", &self.connection_id).finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventList {
    /// The calendar's own zone: an all-day event's dates are days there.
    #[serde(default)]
    time_zone: String,
    #[serde(default)]
    items: Vec<Event>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct Event {
    id: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    location: String,
    #[serde(default)]
    description: String,
    start: When,
    end: When,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct When {
    /// All day: `YYYY-MM-DD`.
    #[serde(default)]
    date: Option<String>,
    /// Timed: RFC 3339 with an offset.
    #[serde(default)]
    date_time: Option<String>,
}

impl Calendar {
    /// `connection_id`'s calendars at `base_url` ([`CALENDAR_BASE_URL`]; tests give the fixture's).
    pub fn new(auth: GoogleAuth, connection_id: &str, base_url: &str) -> Result<Self> {
        // The access token goes there.
        super::check_endpoint(base_url, "Google Calendar's")?;
        let http = super::http_client("Google Calendar")?;
        Ok(Self { http, base_url: base_url.trim_end_matches('/').to_owned(), auth, connection_id: connection_id.to_owned() })
    }

    /// The events of `calendar_id` (`primary`, or a calendar's address) overlapping
    /// `[from, to)` (Unix ms), each occurrence of a recurring event on its own, by start, at
    /// most 20; cancelled occurrences left out.
    pub async fn events(&self, calendar_id: &str, from: i64, to: i64) -> Result<CalendarPage> {
        if to <= from || to - from > MAX_CALENDAR_DAYS * 24 * 3_600_000 {
            return Err(CoreError::InvalidInput(format!("Ask for a window of up to {MAX_CALENDAR_DAYS} days that ends after it starts.")));
        }
        if calendar_id.is_empty() || calendar_id.len() > 200 || calendar_id.chars().any(char::is_control) {
            return Err(CoreError::InvalidInput("That is not a calendar id (primary, or a calendar's address).".into()));
        }
        let time = |ms: i64| {
            DateTime::<Utc>::from_timestamp_millis(ms)
                .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
                .ok_or_else(|| CoreError::InvalidInput("That time is out of range.".into()))
        };
        let mut url = reqwest::Url::parse(&format!("{}/calendar/v3/calendars", self.base_url))
            .map_err(|_| CoreError::InvalidInput("That Google Calendar address does not parse.".into()))?;
        // The id is one path segment, escaped as one (a group calendar's address has '@' and '#').
        url.path_segments_mut()
            .map_err(|()| CoreError::InvalidInput("That Google Calendar address does not parse.".into()))?
            .push(calendar_id)
            .push("events");
        let limit = (MAX_CALENDAR_EVENTS + 1).to_string();
        url.query_pairs_mut()
            .append_pair("timeMin", &time(from)?)
            .append_pair("timeMax", &time(to)?)
            .append_pair("singleEvents", "true")
            .append_pair("orderBy", "startTime")
            .append_pair("maxResults", &limit);
        let token = self.auth.access_token(&self.connection_id).await?;
        let api = super::Api {
            name: "Google Calendar",
            not_found: "Google Calendar has no such calendar; use primary, or the address of one of the owner's calendars.",
        };
        let list: EventList = super::get_json(&self.http, url, &token, &api).await?;
        let more = list.items.len() > MAX_CALENDAR_EVENTS || list.next_page_token.is_some();
        let zone = if list.time_zone.is_empty() { "UTC" } else { list.time_zone.as_str() };
        let mut events = Vec::new();
        for event in list.items.into_iter().filter(|e| e.status != "cancelled") {
            events.push(local_event(event, calendar_id, zone)?);
        }
        // Google orders by start already; the window's order is this code's promise, not theirs.
        events.sort_by_key(|e| (e.starts_at, e.ends_at));
        let truncated = more || events.len() > MAX_CALENDAR_EVENTS;
        events.truncate(MAX_CALENDAR_EVENTS);
        Ok(CalendarPage { events, truncated })
    }
}

/// An event as the calendar tools show every event: start and end in Unix ms (an all-day
/// event's days begin at midnight in the calendar's zone), text cut to a bound.
fn local_event(event: Event, calendar_id: &str, zone: &str) -> Result<CalendarEvent> {
    let unreadable = || CoreError::Unavailable("Google Calendar sent an event whose times Hearth cannot read.".into());
    let timing = match (event.start.date, event.start.date_time, event.end.date, event.end.date_time) {
        (_, Some(start), _, Some(end)) => EventTiming::Timed { start, end },
        (Some(start_date), None, Some(end_date), None) => EventTiming::AllDay { start_date, end_date },
        _ => return Err(unreadable()),
    };
    let (starts_at, ends_at) = crate::approvals::timing_bounds(&timing, zone).map_err(|_| unreadable())?;
    let cut = |text: String| crate::workspace::truncate_chars(&text, MAX_TEXT_CHARS).0;
    Ok(CalendarEvent {
        id: event.id,
        calendar_id: calendar_id.to_owned(),
        title: cut(event.summary),
        starts_at,
        ends_at,
        location: cut(event.location),
        description: cut(event.description),
    })
}
