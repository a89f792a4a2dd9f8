//! From a prepare tool's arguments to the normalized draft the owner reviews. Every bound
//! is checked here, and every error says what to change.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use hearth_protocol::approvals::{DraftAttachment, EmailDraft, EventDraft, EventTiming};
use serde::Deserialize;

use super::address::normalize_address;
use crate::error::{CoreError, Result};
use crate::store::Store;

const MAX_RECIPIENTS: usize = 50;
const MAX_SUBJECT_CHARS: usize = 998;
const MAX_BODY_CHARS: usize = 100_000;
const MAX_ATTACHMENTS: usize = 10;
const MAX_TITLE_CHARS: usize = 500;
const MAX_LOCATION_CHARS: usize = 1_000;
const MAX_DESCRIPTION_CHARS: usize = 8_000;

/// `prepare_email`'s arguments.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
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
    /// The message this answers.
    #[serde(default)]
    pub reply_to_message_id: Option<String>,
}

/// `prepare_event`'s arguments.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventArgs {
    /// `create` (default), `update` or `delete`.
    #[serde(default)]
    pub action: Option<String>,
    /// The event to change or delete.
    #[serde(default)]
    pub event_id: Option<String>,
    /// Which calendar (`primary` by default).
    #[serde(default)]
    pub calendar_id: Option<String>,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// `YYYY-MM-DD` for all-day, else RFC 3339 with an offset.
    #[serde(default)]
    pub start: String,
    /// Same form as `start`; after it (all-day: the day after the last day).
    #[serde(default)]
    pub end: String,
    /// IANA time zone, e.g. `Europe/Berlin`.
    #[serde(default)]
    pub time_zone: String,
    /// Where.
    #[serde(default)]
    pub location: String,
    /// Notes.
    #[serde(default)]
    pub description: String,
    /// Invitees.
    #[serde(default)]
    pub attendees: Vec<String>,
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
        let file = store
            .get_file(id)
            .await?
            .filter(|f| f.deleted_at.is_none())
            .ok_or_else(|| invalid(format!("There is no file {id} in Files. Attach a file id that import_pdf or fill_pdf returned.")))?;
        if !attachments.iter().any(|a: &DraftAttachment| a.file_id == file.id) {
            attachments.push(DraftAttachment { file_id: file.id, name: file.name, size: file.size, sha256: file.sha256 });
        }
    }
    let id_arg = |field: &str, id: Option<String>| -> Result<Option<String>> {
        match id {
            Some(id) if !hearth_protocol::ids::is_valid_id(&id) => Err(invalid(format!("`{field}` is not a valid id."))),
            other => Ok(other),
        }
    };
    Ok(EmailDraft {
        to,
        cc,
        bcc,
        subject,
        body,
        attachments,
        thread_id: id_arg("threadId", args.thread_id)?,
        in_reply_to: id_arg("replyToMessageId", args.reply_to_message_id)?,
    })
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
pub fn event_draft(args: EventArgs) -> Result<(EventAction, EventDraft)> {
    let action = match args.action.as_deref().unwrap_or("create") {
        "create" => EventAction::Create,
        "update" => EventAction::Update,
        "delete" => EventAction::Delete,
        other => return Err(invalid(format!("`action` is {other:?}; use create, update or delete."))),
    };
    let event_id = match (action, args.event_id) {
        (EventAction::Create, _) => None,
        (_, Some(id)) if hearth_protocol::ids::is_valid_id(&id) => Some(id),
        _ => return Err(invalid("`eventId` is required to update or delete; read_calendar gives it.")),
    };
    let calendar_id = args.calendar_id.unwrap_or_else(|| "primary".into());
    if !hearth_protocol::ids::is_valid_id(&calendar_id) {
        return Err(invalid("`calendarId` is not a valid id."));
    }
    let title = bounded("title", args.title.trim(), 1, MAX_TITLE_CHARS)?;
    let time_zone: chrono_tz::Tz = args
        .time_zone
        .trim()
        .parse()
        .map_err(|_| invalid(format!("`timeZone` {:?} is not an IANA time zone like Europe/Berlin.", args.time_zone)))?;
    let timing = timing(args.start.trim(), args.end.trim())?;
    let mut seen = Vec::new();
    let attendees = addresses("attendees", &args.attendees, &mut seen)?;
    Ok((
        action,
        EventDraft {
            calendar_id,
            event_id,
            title,
            timing,
            time_zone: time_zone.name().to_owned(),
            location: bounded("location", args.location.trim(), 0, MAX_LOCATION_CHARS)?,
            description: bounded("description", &args.description, 0, MAX_DESCRIPTION_CHARS)?,
            attendees,
        },
    ))
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
            invalid(format!(
                "`{field}` {s:?} is neither a date (2026-12-01) nor a time with an offset (2026-12-01T09:00:00+01:00)."
            ))
        })
    };
    let (start, end) = (parse("start", start)?, parse("end", end)?);
    if start >= end {
        return Err(invalid("`end` must be after `start`."));
    }
    let utc = |t: DateTime<chrono::FixedOffset>| t.with_timezone(&Utc).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(EventTiming::Timed { start: utc(start), end: utc(end) })
}

/// The Unix-ms bounds of a normalized timing (all-day days begin at midnight in `time_zone`).
pub fn timing_bounds(timing: &EventTiming, time_zone: &str) -> Result<(i64, i64)> {
    match timing {
        EventTiming::Timed { start, end } => {
            let ms = |s: &str| {
                DateTime::parse_from_rfc3339(s).map(|t| t.timestamp_millis()).map_err(|e| invalid(format!("bad stored time: {e}")))
            };
            Ok((ms(start)?, ms(end)?))
        }
        EventTiming::AllDay { start_date, end_date } => {
            let tz: chrono_tz::Tz = time_zone.parse().map_err(|_| invalid(format!("bad stored time zone {time_zone:?}")))?;
            let midnight = |d: &str| -> Result<i64> {
                let date = NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|e| invalid(format!("bad stored date: {e}")))?;
                let naive = date.and_hms_opt(0, 0, 0).ok_or_else(|| invalid("bad stored date"))?;
                tz.from_local_datetime(&naive)
                    .earliest()
                    .map(|t| t.timestamp_millis())
                    .ok_or_else(|| invalid(format!("{d} has no midnight in {time_zone}")))
            };
            Ok((midnight(start_date)?, midnight(end_date)?))
        }
    }
}
