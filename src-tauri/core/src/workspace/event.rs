//! An event's times as the workspaces store them and as a draft spells them, the draft an
//! update or delete resolves to, and the message a reply answers. The approval gate's
//! normalization (`approvals::normalize`) builds drafts with these, and the workspaces execute
//! approved drafts with the same functions, so both sides read a time and a zone alike.

use chrono::{DateTime, Utc};
use hearth_protocol::approvals::{EventDraft, EventSnapshot, EventTiming, ReplyContext};

use crate::error::{CoreError, Result};
use crate::store::Store;

fn invalid(message: impl Into<String>) -> CoreError {
    CoreError::InvalidInput(message.into())
}

/// The stored message `message_id` as the card names it. A reply to a message Hearth does
/// not hold would show the owner nothing to check, so it is refused; so is a `threadId` that
/// is not that message's conversation, which would file the reply somewhere else.
pub async fn reply_context(store: &Store, message_id: &str, thread_id: Option<&str>) -> Result<ReplyContext> {
    let message = store.get_message(message_id).await?.ok_or_else(|| {
        invalid(format!(
            "There is no message {message_id} in the mailbox to reply to. Use the `messageId` that search_mail or \
             read_mail_thread gives, or leave `replyToMessageId` out to send a new email."
        ))
    })?;
    if let Some(thread_id) = thread_id
        && thread_id != message.thread_id
    {
        return Err(invalid(format!(
            "The message {message_id} is in conversation {}, not {thread_id}. Use `threadId` {} or leave it out.",
            message.thread_id, message.thread_id
        )));
    }
    Ok(ReplyContext { message_id: message.id, subject: message.subject, from: message.from })
}

/// An IANA zone from the system's time-zone database (through jiff, as the schedules use it).
/// Not chrono-tz: that crate compiles the whole database into the binary, and the system's
/// copy is the one the OS keeps up to date.
pub fn zone(name: &str) -> std::result::Result<jiff::tz::TimeZone, jiff::Error> {
    jiff::tz::TimeZone::get(name)
}

/// A stored zone name, read back.
fn stored_zone(time_zone: &str) -> Result<jiff::tz::TimeZone> {
    zone(time_zone).map_err(|_| invalid(format!("bad stored time zone {time_zone:?}")))
}

/// The draft the owner reviews for an update or delete of the event `event_id`, built from
/// `current` — that event as the workspace holds it now — and never from what the request
/// says the event is:
///
/// - delete: `current` itself;
/// - update: `current` with the request's `changes` applied, and `before = current`. A
///   request without `changes` asks for the event to become exactly its fields.
///
/// Everything the card shows is then in the draft, so the hash binds it.
pub fn resolve_event(update: bool, request: &EventDraft, event_id: &str, current: EventSnapshot) -> Result<EventDraft> {
    let draft = |event: EventSnapshot, before: Option<EventSnapshot>| EventDraft {
        calendar_id: event.calendar_id,
        event_id: Some(event_id.to_owned()),
        title: event.title,
        timing: event.timing,
        time_zone: event.time_zone,
        location: event.location,
        description: event.description,
        attendees: event.attendees,
        before,
        changes: None,
    };
    if !update {
        return Ok(draft(current, None));
    }
    let after = match &request.changes {
        Some(changes) => changes.apply(&current),
        None => request.snapshot(),
    };
    if after == current {
        return Err(invalid(format!(
            "This update would change nothing: the event {event_id} already has these values. Read it with read_calendar \
             and give only the fields that differ."
        )));
    }
    // An all-day event moved to a zone where a day has no midnight cannot be written.
    timing_bounds(&after.timing, &after.time_zone)?;
    Ok(draft(after, Some(current)))
}

/// A stored event's timing as a draft spells it: whole days in its own zone, or UTC times.
pub fn timing_from_bounds(starts_at: i64, ends_at: i64, all_day: bool, time_zone: &str) -> Result<EventTiming> {
    if all_day {
        let tz = stored_zone(time_zone)?;
        let day = |ms: i64| -> Result<String> {
            let instant = jiff::Timestamp::from_millisecond(ms).map_err(|_| invalid(format!("bad stored time {ms}")))?;
            Ok(tz.to_datetime(instant).date().to_string())
        };
        return Ok(EventTiming::AllDay { start_date: day(starts_at)?, end_date: day(ends_at)? });
    }
    let instant = |ms: i64| DateTime::<Utc>::from_timestamp_millis(ms).ok_or_else(|| invalid(format!("bad stored time {ms}")));
    let (start, end) = (instant(starts_at)?, instant(ends_at)?);
    // Fractions only when the stored time has them, so an update that keeps the times keeps
    // them exactly.
    let utc = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
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
            let tz = stored_zone(time_zone)?;
            let midnight = |d: &str| -> Result<i64> {
                let date: jiff::civil::Date = d.parse().map_err(|e| invalid(format!("bad stored date: {e}")))?;
                let local = tz.to_ambiguous_timestamp(date.at(0, 0, 0, 0));
                // A midnight skipped by a clock change has no instant; a repeated one is its first.
                match local.offset() {
                    jiff::tz::AmbiguousOffset::Gap { .. } => Err(invalid(format!("{d} has no midnight in {time_zone}"))),
                    jiff::tz::AmbiguousOffset::Unambiguous { .. } | jiff::tz::AmbiguousOffset::Fold { .. } => {
                        local.earlier().map(|t| t.as_millisecond()).map_err(|e| invalid(format!("{d} in {time_zone}: {e}")))
                    }
                }
            };
            Ok((midnight(start_date)?, midnight(end_date)?))
        }
    }
}
