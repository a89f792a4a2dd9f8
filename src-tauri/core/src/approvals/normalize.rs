//! From a prepare tool's arguments to the normalized draft the owner reviews. Every bound
//! is checked here, and every error says what to change.

use chrono::{DateTime, NaiveDate, Utc};
use hearth_protocol::approvals::{DraftAttachment, EmailDraft, EventChanges, EventDraft, EventTiming};
use hearth_protocol::ids::FileId;
use serde::Deserialize;

use super::address::normalize_address;
use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::workspace::event::zone;

const MAX_RECIPIENTS: usize = 50;
const MAX_SUBJECT_CHARS: usize = 998;
const MAX_BODY_CHARS: usize = 100_000;
const MAX_ATTACHMENTS: usize = 10;
const MAX_TITLE_CHARS: usize = 500;
const MAX_LOCATION_CHARS: usize = 1_000;
const MAX_DESCRIPTION_CHARS: usize = 8_000;

/// `prepare_email`'s arguments.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmailArgs {
    /// Recipients.
    #[serde(default)]
    pub to: Vec<String>,
    /// Copy.
    #[serde(default)]
    pub cc: Vec<String>,
    /// Blind copy.
    #[serde(default)]
    pub bcc: Vec<String>,
    /// One line.
    #[serde(default)]
    pub subject: String,
    /// Plain text.
    #[serde(default)]
    pub body: String,
    /// Files (ids from Files) to attach.
    #[serde(default)]
    pub attachment_ids: Vec<String>,
    /// The conversation to reply in.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The message this answers: a `messageId` from search_mail or read_mail_thread. The owner
    /// sees that message's subject and sender on the card.
    #[serde(default)]
    pub reply_to_message_id: Option<String>,
}

/// `prepare_event`'s arguments.
///
/// - `create` (the default): `title`, `start`, `end` and `timeZone`; `calendarId`, `location`,
///   `description` and `attendees` are optional.
/// - `update`: `eventId` (from read_calendar) and only the fields to change; the rest stay as
///   they are. Moving it needs both `start` and `end`. The owner sees the event as it is now
///   and each change.
/// - `delete`: `eventId` only; anything else is ignored. The owner sees the event as it is in
///   the calendar, whatever else was sent.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventArgs {
    /// `create` (default), `update` or `delete`.
    #[serde(default)]
    pub action: Option<String>,
    /// The event to change or delete (update and delete; read_calendar gives it).
    #[serde(default)]
    pub event_id: Option<String>,
    /// Which calendar (create: `primary` by default; update: moves the event there).
    #[serde(default)]
    pub calendar_id: Option<String>,
    /// Title (required to create).
    #[serde(default)]
    pub title: Option<String>,
    /// `YYYY-MM-DD` for all-day, else RFC 3339 with an offset (required to create; to move an
    /// event give it with `end`).
    #[serde(default)]
    pub start: Option<String>,
    /// Same form as `start`; after it (all-day: the day after the last day).
    #[serde(default)]
    pub end: Option<String>,
    /// IANA time zone, e.g. `Europe/Berlin` (required to create).
    #[serde(default)]
    pub time_zone: Option<String>,
    /// Where (update: an empty string clears it).
    #[serde(default)]
    pub location: Option<String>,
    /// Notes (update: an empty string clears them).
    #[serde(default)]
    pub description: Option<String>,
    /// Invitees (update: the whole new list).
    #[serde(default)]
    pub attendees: Option<Vec<String>>,
}

fn invalid(message: impl Into<String>) -> CoreError {
    CoreError::InvalidInput(message.into())
}

fn addresses(field: &str, list: &[String], seen: &mut Vec<String>) -> Result<Vec<String>> {
    if list.len() > MAX_RECIPIENTS {
        return Err(invalid(format!("`{field}` has {} addresses; the limit is {MAX_RECIPIENTS}.", list.len())));
    }
    let mut out = Vec::with_capacity(list.len());
    for raw in list {
        let address = normalize_address(raw).map_err(|e| invalid(format!("`{field}`: {e}")))?;
        // One address, one copy: a later list never repeats an earlier one.
        if !seen.iter().any(|s| s.eq_ignore_ascii_case(&address)) {
            seen.push(address.clone());
            out.push(address);
        }
    }
    Ok(out)
}

fn bounded(field: &str, text: &str, min: usize, max: usize) -> Result<String> {
    let chars = text.chars().count();
    if chars < min {
        return Err(invalid(format!("`{field}` must not be empty.")));
    }
    if chars > max {
        return Err(invalid(format!("`{field}` has {chars} characters; the limit is {max}.")));
    }
    Ok(text.to_owned())
}

/// Validates and normalizes an email; attachments must be files Hearth holds.
pub async fn email_draft(store: &Store, args: EmailArgs) -> Result<EmailDraft> {
    let mut seen = Vec::new();
    let to = addresses("to", &args.to, &mut seen)?;
    if to.is_empty() {
        return Err(invalid("`to` needs at least one recipient."));
    }
    let cc = addresses("cc", &args.cc, &mut seen)?;
    let bcc = addresses("bcc", &args.bcc, &mut seen)?;
    let subject = args.subject.trim();
    if subject.contains(['\r', '\n']) {
        return Err(invalid("`subject` must be one line."));
    }
    let subject = bounded("subject", subject, 1, MAX_SUBJECT_CHARS)?;
    let body = bounded("body", &args.body, 1, MAX_BODY_CHARS)?;
    if args.body.trim().is_empty() {
        return Err(invalid("`body` must not be empty."));
    }
    if args.attachment_ids.len() > MAX_ATTACHMENTS {
        return Err(invalid(format!("At most {MAX_ATTACHMENTS} attachments; you gave {}.", args.attachment_ids.len())));
    }
    let mut attachments = Vec::with_capacity(args.attachment_ids.len());
    for id in &args.attachment_ids {
        let file =
            store.get_file(id).await?.filter(|f| f.deleted_at.is_none()).ok_or_else(|| {
                invalid(format!("There is no file {id} in Files. Attach a file id that import_pdf or fill_pdf returned."))
            })?;
        if !attachments.iter().any(|a: &DraftAttachment| a.file_id == file.id) {
            attachments.push(DraftAttachment { file_id: FileId::trusted(file.id), name: file.name, size: file.size, sha256: file.sha256 });
        }
    }
    let id_arg = |field: &str, id: Option<String>| -> Result<Option<String>> {
        match id {
            Some(id) if !hearth_protocol::ids::is_valid_id(&id) => Err(invalid(format!("`{field}` is not a valid id."))),
            other => Ok(other),
        }
    };
    let thread_id = id_arg("threadId", args.thread_id)?;
    let in_reply_to = id_arg("replyToMessageId", args.reply_to_message_id)?;
    // The message answered is read by the workspace that will send the reply (the sample
    // mailbox or Gmail) when the gate resolves the draft, never here from one mailbox.
    Ok(EmailDraft { to, cc, bcc, subject, body, attachments, thread_id, in_reply_to, reply_to: None })
}

/// Which calendar change an [`EventArgs`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventAction {
    /// A new event.
    Create,
    /// Change `eventId`.
    Update,
    /// Delete `eventId`.
    Delete,
}

/// Validates and normalizes a calendar change.
///
/// A create comes back complete. An update or delete comes back as a *request*: only
/// `eventId` (and, for an update, `changes`) is meaningful, and the other fields are empty
/// until the workspace builds the draft from the event as it is now ([`resolve_event`]) —
/// the model never gets to say what the event it changes looks like.
pub fn event_draft(args: EventArgs) -> Result<(EventAction, EventDraft)> {
    let action = match args.action.as_deref().unwrap_or("create") {
        "create" => EventAction::Create,
        "update" => EventAction::Update,
        "delete" => EventAction::Delete,
        other => return Err(invalid(format!("`action` is {other:?}; use create, update or delete."))),
    };
    match action {
        EventAction::Create => Ok((action, new_event(args)?)),
        EventAction::Update => {
            let event_id = target_id(args.event_id.as_deref(), "update")?;
            let changes = event_changes(args)?;
            if changes.is_empty() {
                return Err(invalid(
                    "An update needs at least one field to change: title, start and end, timeZone, location, description, \
                     attendees or calendarId. To remove the event use action delete.",
                ));
            }
            Ok((action, request(event_id, Some(changes))))
        }
        // Only the id counts: the card shows the event the id names, whatever else was sent.
        EventAction::Delete => Ok((action, request(target_id(args.event_id.as_deref(), "delete")?, None))),
    }
}

fn target_id(event_id: Option<&str>, verb: &str) -> Result<String> {
    match event_id {
        Some(id) if hearth_protocol::ids::is_valid_id(id) => Ok(id.to_owned()),
        Some(_) => Err(invalid(format!("`eventId` is not a valid id; use the id read_calendar gives to {verb} an event."))),
        None => Err(invalid(format!("`eventId` is required to {verb} an event; read_calendar gives it."))),
    }
}

fn calendar_id(id: String) -> Result<String> {
    if hearth_protocol::ids::is_valid_id(&id) { Ok(id) } else { Err(invalid("`calendarId` is not a valid id.")) }
}

fn time_zone(raw: &str) -> Result<String> {
    let not_a_zone = || invalid(format!("`timeZone` {raw:?} is not an IANA time zone like Europe/Berlin."));
    let name = raw.trim();
    if !iana_shaped(name) {
        return Err(not_a_zone());
    }
    let zone = zone(name).map_err(|_| not_a_zone())?;
    Ok(zone.iana_name().ok_or_else(not_a_zone)?.to_owned())
}

/// `UTC`, `GMT`, or `Area/Location…` in one of the IANA areas (the current ones and the older
/// `US/`, `Canada/`… aliases). The system's zone folder also holds files that are not zones a
/// draft may name — `localtime` (whatever this machine is set to, so an approved event would
/// change meaning with the machine's setting), `posixrules`, `Factory` — and those are refused.
fn iana_shaped(name: &str) -> bool {
    const AREAS: [&str; 16] = [
        "Africa",
        "America",
        "Antarctica",
        "Arctic",
        "Asia",
        "Atlantic",
        "Australia",
        "Europe",
        "Indian",
        "Pacific",
        "Etc",
        "US",
        "Canada",
        "Brazil",
        "Chile",
        "Mexico",
    ];
    match name.split_once('/') {
        None => matches!(name, "UTC" | "GMT"),
        Some((area, rest)) => {
            AREAS.contains(&area)
                && !rest.is_empty()
                && rest.split('/').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || "_-+".contains(c)))
        }
    }
}

fn title(raw: &str) -> Result<String> {
    bounded("title", raw.trim(), 1, MAX_TITLE_CHARS)
}

fn location(raw: &str) -> Result<String> {
    bounded("location", raw.trim(), 0, MAX_LOCATION_CHARS)
}

fn description(raw: &str) -> Result<String> {
    bounded("description", raw, 0, MAX_DESCRIPTION_CHARS)
}

fn attendees(list: &[String]) -> Result<Vec<String>> {
    addresses("attendees", list, &mut Vec::new())
}

fn new_event(args: EventArgs) -> Result<EventDraft> {
    let required = |field: &str, value: Option<String>| value.ok_or_else(|| invalid(format!("`{field}` is required to create an event.")));
    let title = title(&required("title", args.title)?)?;
    let time_zone = time_zone(&required("timeZone", args.time_zone)?)?;
    let timing = timing(required("start", args.start)?.trim(), required("end", args.end)?.trim())?;
    Ok(EventDraft {
        calendar_id: calendar_id(args.calendar_id.unwrap_or_else(|| "primary".into()))?,
        event_id: None,
        title,
        timing,
        time_zone,
        location: location(args.location.as_deref().unwrap_or_default())?,
        description: description(args.description.as_deref().unwrap_or_default())?,
        attendees: attendees(args.attendees.as_deref().unwrap_or_default())?,
        before: None,
        changes: None,
    })
}

fn event_changes(args: EventArgs) -> Result<EventChanges> {
    let timing = match (args.start, args.end) {
        (Some(start), Some(end)) => Some(timing(start.trim(), end.trim())?),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err(invalid("To move an event give both `start` and `end` (its new start and end)."));
        }
    };
    Ok(EventChanges {
        calendar_id: args.calendar_id.map(calendar_id).transpose()?,
        title: args.title.as_deref().map(title).transpose()?,
        timing,
        time_zone: args.time_zone.as_deref().map(time_zone).transpose()?,
        location: args.location.as_deref().map(location).transpose()?,
        description: args.description.as_deref().map(description).transpose()?,
        attendees: args.attendees.as_deref().map(attendees).transpose()?,
    })
}

/// An update or delete as the prepare tool hands it over: which event, and what to change.
fn request(event_id: String, changes: Option<EventChanges>) -> EventDraft {
    EventDraft {
        calendar_id: String::new(),
        event_id: Some(event_id),
        title: String::new(),
        timing: EventTiming::Timed { start: String::new(), end: String::new() },
        time_zone: String::new(),
        location: String::new(),
        description: String::new(),
        attendees: Vec::new(),
        before: None,
        changes,
    }
}

fn timing(start: &str, end: &str) -> Result<EventTiming> {
    let as_date = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
    if let (Some(start_date), Some(end_date)) = (as_date(start), as_date(end)) {
        if start_date >= end_date {
            return Err(invalid("An all-day event's `end` is the day after its last day, so it must be after `start`."));
        }
        return Ok(EventTiming::AllDay { start_date: start_date.to_string(), end_date: end_date.to_string() });
    }
    let parse = |field: &str, s: &str| {
        DateTime::parse_from_rfc3339(s).map_err(|_| {
            invalid(format!("`{field}` {s:?} is neither a date (2026-12-01) nor a time with an offset (2026-12-01T09:00:00+01:00)."))
        })
    };
    let (start, end) = (parse("start", start)?, parse("end", end)?);
    if start >= end {
        return Err(invalid("`end` must be after `start`."));
    }
    let utc = |t: DateTime<chrono::FixedOffset>| t.with_timezone(&Utc).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(EventTiming::Timed { start: utc(start), end: utc(end) })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hearth_protocol::approvals::EventSnapshot;

    use super::*;
    use crate::workspace::event::{resolve_event, timing_bounds, timing_from_bounds};

    fn args(value: serde_json::Value) -> EventArgs {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_time_zone_is_an_iana_name_from_the_system_database_and_never_a_local_alias() {
        assert_eq!(time_zone(" Europe/Berlin ").unwrap(), "Europe/Berlin");
        assert_eq!(time_zone("America/Argentina/Buenos_Aires").unwrap(), "America/Argentina/Buenos_Aires");
        assert_eq!(time_zone("UTC").unwrap(), "UTC");
        for refused in ["localtime", "posixrules", "Factory", "Europe/", "Mars/Olympus", "Europe/../localtime", "", "Europe/Nowhere"] {
            let err = time_zone(refused).unwrap_err().to_string();
            assert!(err.contains("is not an IANA time zone"), "{refused:?}: {err}");
        }
    }

    fn dentist() -> EventSnapshot {
        EventSnapshot {
            calendar_id: "primary".into(),
            title: "Dentist check-up".into(),
            timing: EventTiming::Timed { start: "2026-12-04T15:00:00Z".into(), end: "2026-12-04T15:45:00Z".into() },
            time_zone: "Europe/Berlin".into(),
            location: "Bright Smile Dental".into(),
            description: String::new(),
            attendees: vec![],
        }
    }

    #[test]
    fn a_delete_is_only_its_event_id_whatever_else_was_sent() {
        let (action, request) = event_draft(args(serde_json::json!({
            "action": "delete", "eventId": "evt-dentist", "title": "Old reminder",
            "start": "2026-01-01T09:00:00Z", "end": "2026-01-01T10:00:00Z", "timeZone": "UTC"
        })))
        .unwrap();
        assert_eq!(action, EventAction::Delete);
        assert_eq!(request.event_id.as_deref(), Some("evt-dentist"));
        assert_eq!((request.title.as_str(), request.changes.as_ref()), ("", None), "the model's title is not carried");
        let draft = resolve_event(false, &request, "evt-dentist", dentist()).unwrap();
        assert_eq!(draft.snapshot(), dentist(), "the card shows the event as it is");
        assert_eq!((draft.before.as_ref(), draft.changes.as_ref()), (None, None));
        let missing = event_draft(args(serde_json::json!({ "action": "delete" }))).unwrap_err();
        assert!(missing.to_string().contains("`eventId` is required to delete"), "{missing}");
    }

    #[test]
    fn an_update_is_the_current_event_with_only_the_given_fields_changed() {
        let (action, request) = event_draft(args(
            serde_json::json!({ "action": "update", "eventId": "evt-dentist", "title": " Dentist (moved) ", "location": "" }),
        ))
        .unwrap();
        assert_eq!(action, EventAction::Update);
        let changes = request.changes.clone().unwrap();
        assert_eq!(
            (changes.title.as_deref(), changes.location.as_deref(), changes.timing.as_ref()),
            (Some("Dentist (moved)"), Some(""), None)
        );
        let draft = resolve_event(true, &request, "evt-dentist", dentist()).unwrap();
        assert_eq!(draft.before, Some(dentist()));
        assert_eq!(draft.changes, None, "the request is not stored");
        assert_eq!((draft.title.as_str(), draft.location.as_str()), ("Dentist (moved)", ""));
        assert_eq!((draft.timing.clone(), draft.time_zone.as_str()), (dentist().timing, "Europe/Berlin"), "the rest is kept");
    }

    #[test]
    fn an_update_must_change_something_and_move_with_both_ends() {
        for (value, says) in [
            (serde_json::json!({ "action": "update", "eventId": "evt-dentist" }), "at least one field"),
            (
                serde_json::json!({ "action": "update", "eventId": "evt-dentist", "start": "2026-12-05T09:00:00Z" }),
                "both `start` and `end`",
            ),
            (serde_json::json!({ "action": "update", "title": "x" }), "`eventId` is required to update"),
            (serde_json::json!({ "action": "update", "eventId": "evt-dentist", "timeZone": "Mars/Olympus" }), "IANA"),
            (serde_json::json!({ "action": "update", "eventId": "evt-dentist", "title": "  " }), "must not be empty"),
        ] {
            let err = event_draft(args(value.clone())).unwrap_err().to_string();
            assert!(err.contains(says), "{value}: {err:?} should say {says:?}");
        }
        let (_, same) =
            event_draft(args(serde_json::json!({ "action": "update", "eventId": "evt-dentist", "title": "Dentist check-up" }))).unwrap();
        let err = resolve_event(true, &same, "evt-dentist", dentist()).unwrap_err().to_string();
        assert!(err.contains("would change nothing"), "{err}");
    }

    #[test]
    fn a_create_still_needs_its_title_times_and_zone() {
        let (action, draft) = event_draft(args(serde_json::json!({
            "title": "Garden visit", "start": "2026-12-03T09:00:00+01:00", "end": "2026-12-03T12:00:00+01:00", "timeZone": "Europe/Paris"
        })))
        .unwrap();
        assert_eq!(action, EventAction::Create);
        assert_eq!(draft.timing, EventTiming::Timed { start: "2026-12-03T08:00:00Z".into(), end: "2026-12-03T11:00:00Z".into() });
        assert_eq!((draft.calendar_id.as_str(), draft.before.as_ref(), draft.changes.as_ref()), ("primary", None, None));
        let err = event_draft(args(serde_json::json!({ "start": "2026-12-03", "end": "2026-12-04", "timeZone": "UTC" }))).unwrap_err();
        assert!(err.to_string().contains("`title` is required to create"), "{err}");
    }

    #[test]
    fn stored_bounds_read_back_as_the_timing_that_wrote_them() {
        for (timing, zone) in [
            (EventTiming::Timed { start: "2026-12-04T15:00:00Z".into(), end: "2026-12-04T15:45:00Z".into() }, "UTC"),
            (EventTiming::Timed { start: "2026-12-04T15:00:00.250Z".into(), end: "2026-12-04T15:45:00Z".into() }, "UTC"),
            (EventTiming::AllDay { start_date: "2026-03-28".into(), end_date: "2026-03-30".into() }, "Europe/Berlin"),
            (EventTiming::AllDay { start_date: "2026-12-31".into(), end_date: "2027-01-01".into() }, "Pacific/Auckland"),
        ] {
            let (start, end) = timing_bounds(&timing, zone).unwrap();
            assert_eq!(timing_from_bounds(start, end, matches!(timing, EventTiming::AllDay { .. }), zone).unwrap(), timing);
        }
    }
}
