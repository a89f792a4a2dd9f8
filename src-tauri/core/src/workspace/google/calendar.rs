//! Reading the owner's Google Calendar through its REST API (`calendar/v3`): the events of a
//! calendar in a window, recurring events expanded into their single occurrences, ordered by
//! start, within the local calendar's bounds (20 events, a window of at most 366 days).
//!
//! Event text is untrusted (anyone who invites the owner writes it); the tools mark it as data.

use chrono::{DateTime, SecondsFormat, Utc};
use hearth_protocol::approvals::{EventDraft, EventSnapshot, EventTiming};
use serde::Deserialize;

use super::oauth::GoogleAuth;
use crate::error::{CoreError, Result};
use crate::secret::ExposeSecret;
use crate::store::workspace::CalendarEvent;
use crate::workspace::{CalendarPage, ExecuteError, MAX_CALENDAR_DAYS, MAX_CALENDAR_EVENTS};

/// The private extended property that names the proposal an event was created for: how an
/// uncertain create is found again, and how the owner (or a script) can tell Hearth's events.
pub const PROPOSAL_PROPERTY: &str = "hearthProposal";

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
#[serde(rename_all = "camelCase")]
struct Event {
    id: String,
    #[serde(default)]
    etag: String,
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
    #[serde(default)]
    attendees: Vec<Attendee>,
    /// Set on an occurrence of a recurring event.
    #[serde(default)]
    recurring_event_id: Option<String>,
    /// Set on a recurring event itself.
    #[serde(default)]
    recurrence: Option<Vec<String>>,
    #[serde(default)]
    extended_properties: Option<ExtendedProperties>,
}

#[derive(Deserialize)]
struct Attendee {
    #[serde(default)]
    email: String,
}

#[derive(Deserialize)]
struct ExtendedProperties {
    #[serde(default)]
    private: std::collections::HashMap<String, String>,
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
    /// The zone the event was made in.
    #[serde(default)]
    time_zone: Option<String>,
}

/// One event as Calendar holds it now: what a change or a delete is reviewed against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEvent {
    /// The event's fields, as a draft spells them (times in UTC).
    pub snapshot: EventSnapshot,
    /// Its version: a write with `If-Match` of it fails once anyone changed the event.
    pub etag: String,
    /// An occurrence of a recurring event, or the series itself: Hearth changes neither.
    pub recurring: bool,
    /// Deleted (Google keeps a deleted event, cancelled, for a while).
    pub cancelled: bool,
    /// The proposal it was created for, if Hearth created it.
    pub proposal: Option<String>,
}

/// The most of a write's answer read (an event's JSON is a few KiB).
const MAX_WRITE_ANSWER_BYTES: usize = 256 * 1024;

/// A write to one event, as Calendar's API takes it.
enum Write<'a> {
    /// `POST …/events` with a client-chosen id (Google answers 409 when it exists: the id is
    /// this write's idempotency key).
    Insert { draft: &'a EventDraft, event_id: &'a str, proposal_id: &'a str },
    /// `PATCH …/events/{id}` with `If-Match`, carrying only the fields the owner changed:
    /// Calendar's `update` (PUT) clears every field not sent — reminders, the video call,
    /// colour, attachments — and the description Hearth holds may be cut short.
    Patch { draft: &'a EventDraft, before: &'a EventSnapshot, event_id: &'a str, etag: &'a str },
    /// `DELETE …/events/{id}` with `If-Match`.
    Delete { calendar_id: &'a str, event_id: &'a str, etag: &'a str },
}

/// How a write ended, when Calendar answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Done now.
    Done,
    /// An insert whose id already exists: an earlier attempt of the same proposal created it.
    AlreadyThere,
}

/// The id of the event a proposal creates: Calendar takes a client-chosen id (5–1024 of
/// `a-v0-9`), so a second insert of the same proposal is refused (409) instead of making a
/// second event. A proposal id is a UUID, whose hex digits are all in that alphabet.
pub fn event_id_for(proposal_id: &str) -> String {
    let digits: String = proposal_id.chars().filter(|c| matches!(c, '0'..='9' | 'a'..='v')).collect();
    format!("hearth{digits}")
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
        check_calendar_id(calendar_id)?;
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

impl Calendar {
    fn events_url(&self, calendar_id: &str, event_id: Option<&str>) -> Result<reqwest::Url> {
        check_calendar_id(calendar_id)?;
        let mut url = reqwest::Url::parse(&format!("{}/calendar/v3/calendars", self.base_url))
            .map_err(|_| CoreError::InvalidInput("That Google Calendar address does not parse.".into()))?;
        {
            let mut path =
                url.path_segments_mut().map_err(|()| CoreError::InvalidInput("That Google Calendar address does not parse.".into()))?;
            path.push(calendar_id).push("events");
            if let Some(id) = event_id {
                path.push(id);
            }
        }
        Ok(url)
    }

    /// The event `event_id` of `calendar_id` as it is now, with its version.
    pub async fn event(&self, calendar_id: &str, event_id: &str) -> Result<RemoteEvent> {
        check_event_id(event_id)?;
        let url = self.events_url(calendar_id, Some(event_id))?;
        let token = self.auth.access_token(&self.connection_id).await?;
        let api = super::Api { name: "Google Calendar", not_found: "Google Calendar has no such event; use read_calendar to find its id." };
        let event: Event = super::get_json(&self.http, url, &token, &api).await?;
        remote_event(event, calendar_id)
    }

    /// Creates `draft` as the event `event_id` ([`event_id_for`]), marked with the proposal.
    pub async fn insert(&self, draft: &EventDraft, event_id: &str, proposal_id: &str) -> std::result::Result<Written, ExecuteError> {
        self.write(Write::Insert { draft, event_id, proposal_id }).await
    }

    /// Changes what differs between `before` and `draft` in the event, only while it is still
    /// at `etag`; everything else on the event is left as it is.
    pub async fn update(
        &self,
        draft: &EventDraft,
        before: &EventSnapshot,
        event_id: &str,
        etag: &str,
    ) -> std::result::Result<Written, ExecuteError> {
        self.write(Write::Patch { draft, before, event_id, etag }).await
    }

    /// Deletes the event, only while it is still at `etag`.
    pub async fn delete(&self, calendar_id: &str, event_id: &str, etag: &str) -> std::result::Result<Written, ExecuteError> {
        self.write(Write::Delete { calendar_id, event_id, etag }).await
    }

    /// One write, its failures sorted the way the gate needs them: refused before anything
    /// changed ([`ExecuteError::Rejected`]: a connect failure, 4xx), or perhaps done
    /// ([`ExecuteError::Uncertain`]: a broken connection after the request left, 5xx, 408, an
    /// answer that does not read). Never retried here.
    async fn write(&self, write: Write<'_>) -> std::result::Result<Written, ExecuteError> {
        let refused = |why: String| ExecuteError::Rejected(why);
        let (method, url, body, etag) = match &write {
            Write::Insert { draft, event_id, proposal_id } => {
                let mut body = event_body(draft).map_err(|e| refused(e.to_string()))?;
                body["id"] = serde_json::json!(event_id);
                body["extendedProperties"] = serde_json::json!({ "private": { PROPOSAL_PROPERTY: proposal_id } });
                (reqwest::Method::POST, self.events_url(&draft.calendar_id, None), Some(body), None)
            }
            Write::Patch { draft, before, event_id, etag } => {
                let body = changed_fields(draft, before).map_err(|e| refused(e.to_string()))?;
                (reqwest::Method::PATCH, self.events_url(&draft.calendar_id, Some(event_id)), Some(body), Some(*etag))
            }
            Write::Delete { calendar_id, event_id, etag } => {
                (reqwest::Method::DELETE, self.events_url(calendar_id, Some(event_id)), None, Some(*etag))
            }
        };
        let url = url.map_err(|e| refused(e.to_string()))?;
        let token = self.auth.access_token(&self.connection_id).await.map_err(|e| refused(format!("{e} Nothing was changed.")))?;
        let mut request = self.http.request(method, url).bearer_auth(token.expose_secret());
        if let Some(etag) = etag {
            request = request.header(reqwest::header::IF_MATCH, etag);
        }
        if let Some(body) = body {
            request = request.header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_string());
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(err) if err.is_connect() => {
                return Err(refused(format!("Google Calendar could not be reached, so nothing was changed: {}", err.without_url())));
            }
            Err(err) => {
                return Err(ExecuteError::Uncertain(format!(
                    "the connection to Google Calendar broke after the change was sent ({}); it may have been made",
                    err.without_url()
                )));
            }
        };
        let status = response.status();
        let answer = super::gmail::read_bounded(response, MAX_WRITE_ANSWER_BYTES).await;
        let changed = "The event changed after you reviewed this, so nothing was changed. Prepare it again.";
        match (status.as_u16(), &write) {
            (200 | 204, _) => {}
            (409, Write::Insert { draft, event_id, proposal_id }) => {
                // Only this proposal's own event is "already there".
                return match self.event(&draft.calendar_id, event_id).await {
                    Ok(event) if event.proposal.as_deref() == Some(*proposal_id) => Ok(Written::AlreadyThere),
                    Ok(_) => Err(refused(format!("Google Calendar holds another event with the id {event_id}, so nothing was added."))),
                    Err(err) => Err(ExecuteError::Uncertain(format!(
                        "Google Calendar says the event exists, but it could not be read ({err}); check the calendar"
                    ))),
                };
            }
            (412, _) => return Err(refused(changed.into())),
            (404 | 410, Write::Patch { .. } | Write::Delete { .. }) => {
                return Err(refused("The event is no longer in the calendar, so nothing was changed.".into()));
            }
            (401, _) => return Err(refused("Google Calendar refused Hearth's access, so nothing was changed; connect the account again in Settings → Accounts.".into())),
            (403, _) if answer.as_deref().is_ok_and(super::is_rate_limit) => {
                return Err(refused("Google Calendar asks Hearth to slow down, so nothing was changed; try again later.".into()));
            }
            (403, _) => return Err(refused("Google Calendar does not let Hearth change events with the access it has, so nothing was changed; grant write access in Settings → Accounts.".into())),
            (429, _) => return Err(refused("Google Calendar asks Hearth to slow down, so nothing was changed; try again later.".into())),
            (400 | 404, _) => return Err(refused(format!("Google Calendar refused the change ({status}), so nothing was changed."))),
            _ => {
                return Err(ExecuteError::Uncertain(format!(
                    "Google Calendar answered {status}; the change may have been made — check the calendar before doing it again"
                )));
            }
        }
        // A delete answers 204 with nothing; an insert or replace answers the event.
        if let Write::Insert { .. } | Write::Patch { .. } = write {
            let bytes =
                answer.map_err(|why| ExecuteError::Uncertain(format!("Google Calendar's answer {why}; the change may have been made")))?;
            serde_json::from_slice::<Event>(&bytes)
                .map_err(|_| ExecuteError::Uncertain("Google Calendar's answer did not read; the change may have been made".into()))?;
        }
        Ok(Written::Done)
    }
}

fn check_calendar_id(calendar_id: &str) -> Result<()> {
    if calendar_id.is_empty() || calendar_id.len() > 200 || calendar_id.chars().any(char::is_control) {
        return Err(CoreError::InvalidInput("That is not a calendar id (primary, or a calendar's address).".into()));
    }
    Ok(())
}

/// Google's event ids are base32hex-ish (and an occurrence's adds `_<time>`): anything else is
/// refused rather than escaped.
fn check_event_id(event_id: &str) -> Result<()> {
    if !event_id.is_empty() && event_id.len() <= 1024 && event_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(CoreError::InvalidInput("That is not a Google Calendar event id; use read_calendar to find it.".into()))
    }
}

/// The JSON Calendar takes for `draft`'s fields.
fn event_body(draft: &EventDraft) -> Result<serde_json::Value> {
    let zone = draft.time_zone.as_str();
    let (start, end) = match &draft.timing {
        EventTiming::Timed { start, end } => {
            (serde_json::json!({ "dateTime": start, "timeZone": zone }), serde_json::json!({ "dateTime": end, "timeZone": zone }))
        }
        EventTiming::AllDay { start_date, end_date } => {
            (serde_json::json!({ "date": start_date }), serde_json::json!({ "date": end_date }))
        }
    };
    let attendees: Vec<serde_json::Value> = draft.attendees.iter().map(|a| serde_json::json!({ "email": a })).collect();
    Ok(serde_json::json!({
        "summary": draft.title,
        "location": draft.location,
        "description": draft.description,
        "start": start,
        "end": end,
        "attendees": attendees,
    }))
}

/// The fields of `draft` that differ from `before`, as Calendar's JSON: what a PATCH sends.
fn changed_fields(draft: &EventDraft, before: &EventSnapshot) -> Result<serde_json::Value> {
    let all = event_body(draft)?;
    let mut changed = serde_json::Map::new();
    if draft.title != before.title {
        changed.insert("summary".into(), all["summary"].clone());
    }
    if draft.location != before.location {
        changed.insert("location".into(), all["location"].clone());
    }
    if draft.description != before.description {
        changed.insert("description".into(), all["description"].clone());
    }
    if draft.timing != before.timing || draft.time_zone != before.time_zone {
        // A PATCH merges into `start` and `end`: the other form is cleared, or an all-day
        // event made timed would carry both `date` and `dateTime`.
        let side = |value: &serde_json::Value| {
            let mut side = value.clone();
            if let Some(object) = side.as_object_mut() {
                for key in ["date", "dateTime", "timeZone"] {
                    object.entry(key).or_insert(serde_json::Value::Null);
                }
            }
            side
        };
        changed.insert("start".into(), side(&all["start"]));
        changed.insert("end".into(), side(&all["end"]));
    }
    if draft.attendees != before.attendees {
        changed.insert("attendees".into(), all["attendees"].clone());
    }
    Ok(serde_json::Value::Object(changed))
}

/// An event as a draft spells it: times in UTC to the second, the event's own zone (UTC when
/// it names none).
fn remote_event(event: Event, calendar_id: &str) -> Result<RemoteEvent> {
    let unreadable = || CoreError::Unavailable("Google Calendar sent an event whose times Hearth cannot read.".into());
    let utc = |t: &str| {
        DateTime::parse_from_rfc3339(t).map(|t| t.with_timezone(&Utc).to_rfc3339_opts(SecondsFormat::Secs, true)).map_err(|_| unreadable())
    };
    let time_zone = event.start.time_zone.clone().filter(|z| !z.is_empty()).unwrap_or_else(|| "UTC".into());
    let timing = match (&event.start.date, &event.start.date_time, &event.end.date, &event.end.date_time) {
        (_, Some(start), _, Some(end)) => EventTiming::Timed { start: utc(start)?, end: utc(end)? },
        (Some(start_date), None, Some(end_date), None) => {
            EventTiming::AllDay { start_date: start_date.clone(), end_date: end_date.clone() }
        }
        _ => return Err(unreadable()),
    };
    let mut attendees: Vec<String> = event.attendees.into_iter().map(|a| a.email.to_lowercase()).filter(|a| !a.is_empty()).collect();
    attendees.dedup();
    let cut = |text: String| crate::workspace::truncate_chars(&text, MAX_TEXT_CHARS).0;
    Ok(RemoteEvent {
        snapshot: EventSnapshot {
            calendar_id: calendar_id.to_owned(),
            title: cut(event.summary),
            timing,
            time_zone,
            location: cut(event.location),
            description: cut(event.description),
            attendees,
        },
        etag: event.etag,
        recurring: event.recurring_event_id.is_some() || event.recurrence.is_some_and(|r| !r.is_empty()),
        cancelled: event.status == "cancelled",
        proposal: event.extended_properties.and_then(|p| p.private.get(PROPOSAL_PROPERTY).cloned()),
    })
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
    let (starts_at, ends_at) = crate::workspace::event::timing_bounds(&timing, zone).map_err(|_| unreadable())?;
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
