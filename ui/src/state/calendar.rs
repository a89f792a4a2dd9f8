//! read_calendar's result as a card model: each event's title and when it happens on the
//! owner's wall clock, all-day events as days, and whether the tool left events out.
//!
//! Pure, so it is tested natively: the caller passes the local time zone as a function from
//! an instant to its offset east of UTC (the webview's, `clock::utc_offset_minutes`). Asking
//! per instant means an event after a summer-time change shows the time the owner will see
//! on the wall clock that day, not today's offset applied to it.

use serde::Deserialize;

use crate::state::cards::tool_result;
use crate::state::chat::ToolCallView;

const MINUTE_MS: i64 = 60_000;
const DAY_MS: i64 = 86_400_000;
const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// What the calendar card shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarList {
    /// The range the agent asked for, in local time; `None` when its arguments do not say.
    pub range: Option<String>,
    /// How many events came back, in words.
    pub count: String,
    /// The events, in the tool's order (by start).
    pub events: Vec<CalendarEntry>,
    /// Said when more events fall in the range than the tool returned, so a short list is
    /// not taken for the whole range.
    pub truncated_note: Option<String>,
}

/// One event on the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarEntry {
    /// Event id.
    pub id: String,
    /// Title (a placeholder when the event has none).
    pub title: String,
    /// When, in local time: "Tue 3 Mar, 09:30–09:45" or "Tue 3 Mar, all day".
    pub when: String,
    /// Whole days rather than a time.
    pub all_day: bool,
    /// Where, when the event says.
    pub location: Option<String>,
}

/// The tool's result: `{"events":[...],"truncated":bool}` (the sample agent leaves out
/// `truncated`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CalendarResult {
    events: Vec<EventJson>,
    #[serde(default)]
    truncated: bool,
}

/// One event as the workspace serializes it (`store::workspace::CalendarEvent`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventJson {
    #[serde(default)]
    id: String,
    #[serde(default)]
    title: String,
    starts_at: i64,
    ends_at: i64,
    #[serde(default)]
    location: String,
    /// Read when the result carries it; today's result does not, so an event running from
    /// one local midnight to another is taken as all-day, which is how an approved all-day
    /// event is stored.
    #[serde(default)]
    all_day: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CalendarArgs {
    time_min: String,
    time_max: String,
}

/// The card for a completed read_calendar call, or `None` for the generic card (running,
/// an error, a result of another shape). `offset_minutes` is the local time zone; `now_ms`
/// decides which year goes without saying.
pub fn calendar_list(call: &ToolCallView, offset_minutes: impl Fn(i64) -> i32, now_ms: i64) -> Option<CalendarList> {
    let result: CalendarResult = tool_result(call)?;
    let zone = Zone { offset_minutes: &offset_minutes, this_year: WallTime::at(now_ms, offset_minutes(now_ms)).year };
    let range = serde_json::from_str::<CalendarArgs>(&call.args)
        .ok()
        .and_then(|args| Some((parse_rfc3339(&args.time_min)?, parse_rfc3339(&args.time_max)?)))
        .map(|(from, to)| zone.range_label(from, to));
    let events: Vec<CalendarEntry> = result.events.into_iter().map(|event| zone.entry(event)).collect();
    let count = match events.len() {
        0 => "No events in this range.".to_owned(),
        1 => "1 event".to_owned(),
        n => format!("{n} events"),
    };
    let truncated_note = result.truncated.then(|| format!("Only the first {} are shown; more events fall in this range.", events.len()));
    Some(CalendarList { range, count, events, truncated_note })
}

/// The owner's time zone and the current year.
struct Zone<'a> {
    offset_minutes: &'a dyn Fn(i64) -> i32,
    this_year: i64,
}

impl Zone<'_> {
    fn wall(&self, ms: i64) -> WallTime {
        WallTime::at(ms, (self.offset_minutes)(ms))
    }

    fn entry(&self, event: EventJson) -> CalendarEntry {
        let (start, end) = (event.starts_at, event.ends_at);
        let all_day = event.all_day.unwrap_or_else(|| end > start && self.wall(start).midnight && self.wall(end).midnight);
        let when = if all_day { format!("{}, all day", self.days_label(start, end)) } else { self.times_label(start, end) };
        let title = event.title.trim();
        let location = event.location.trim();
        CalendarEntry {
            id: event.id,
            title: if title.is_empty() { "(untitled)".to_owned() } else { title.to_owned() },
            when,
            all_day,
            location: (!location.is_empty()).then(|| location.to_owned()),
        }
    }

    /// Whole days when both ends are local midnights, else times.
    fn range_label(&self, from: i64, to: i64) -> String {
        if to > from && self.wall(from).midnight && self.wall(to).midnight { self.days_label(from, to) } else { self.times_label(from, to) }
    }

    /// The days from `start` up to `end` (exclusive, as a calendar stores it): "Tue 3 Mar"
    /// or "Tue 3 Mar – Thu 5 Mar".
    fn days_label(&self, start: i64, end: i64) -> String {
        let first = self.wall(start);
        let last = self.wall(end.saturating_sub(1).max(start));
        if first.same_day(&last) { self.date(first) } else { format!("{} – {}", self.date(first), self.date(last)) }
    }

    /// "Tue 3 Mar, 09:30–09:45", or with both dates when it ends on another day.
    fn times_label(&self, start: i64, end: i64) -> String {
        let (s, e) = (self.wall(start), self.wall(end));
        if end <= start {
            format!("{}, {}", self.date(s), s.time())
        } else if s.same_day(&e) {
            format!("{}, {}–{}", self.date(s), s.time(), e.time())
        } else {
            format!("{}, {} – {}, {}", self.date(s), s.time(), self.date(e), e.time())
        }
    }

    /// "Tue 3 Mar", with the year when it is not this one.
    fn date(&self, t: WallTime) -> String {
        let weekday = WEEKDAYS.get(t.weekday).copied().unwrap_or("");
        let month = MONTHS.get(t.month.saturating_sub(1) as usize).copied().unwrap_or("");
        if t.year == self.this_year { format!("{weekday} {} {month}", t.day) } else { format!("{weekday} {} {month} {}", t.day, t.year) }
    }
}

/// A moment as a wall clock shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WallTime {
    /// Year.
    pub year: i64,
    /// 1 = January.
    pub month: u32,
    /// Day of the month, from 1.
    pub day: u32,
    /// 0 = Monday.
    pub weekday: usize,
    /// 0–23.
    pub hour: u32,
    /// 0–59.
    pub minute: u32,
    /// Exactly the start of the day.
    pub midnight: bool,
}

impl WallTime {
    /// Unix ms `ms` on a clock `offset_minutes` east of UTC.
    pub fn at(ms: i64, offset_minutes: i32) -> Self {
        let local = ms.saturating_add(i64::from(offset_minutes) * MINUTE_MS);
        let days = local.div_euclid(DAY_MS);
        let into_day = local.rem_euclid(DAY_MS);
        let (year, month, day) = civil_from_days(days);
        let minutes = into_day / MINUTE_MS;
        // In range by construction: weekday < 7, hour < 24, minute < 60.
        Self {
            year,
            month,
            day,
            weekday: usize::try_from((days + 3).rem_euclid(7)).unwrap_or(0), // 1970-01-01 was a Thursday.
            hour: u32::try_from(minutes / 60).unwrap_or(0),
            minute: u32::try_from(minutes % 60).unwrap_or(0),
            midnight: into_day == 0,
        }
    }

    fn same_day(&self, other: &Self) -> bool {
        (self.year, self.month, self.day) == (other.year, other.month, other.day)
    }

    fn time(&self) -> String {
        format!("{:02}:{:02}", self.hour, self.minute)
    }
}

/// The civil date `days` after 1970-01-01 (proleptic Gregorian; Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, u32::try_from(month).unwrap_or(1), u32::try_from(day).unwrap_or(1))
}

/// Days from 1970-01-01 to a civil date (the inverse of [`civil_from_days`]).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 timestamp with an offset (`2026-03-02T00:00:00+01:00`, `…Z`, fractions
/// allowed) as Unix ms; `None` for anything else. The core refuses read_calendar ranges
/// that are not this, so `None` only means an argument the card cannot label.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if !separators.iter().all(|&(at, byte)| text.as_bytes().get(at) == Some(&byte))
        || !matches!(text.as_bytes().get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = text.get(19..)?;
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        let first_three = fraction.get(..len.min(3))?;
        millis = first_three.parse::<i64>().ok()? * 10_i64.pow(3 - u32::try_from(first_three.len()).ok()?);
        rest = fraction.get(len..)?;
    }
    let offset_minutes = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let part = |a: &u8, b: &u8| (a.is_ascii_digit() && b.is_ascii_digit()).then(|| i64::from((a - b'0') * 10 + (b - b'0')));
            let minutes = part(h1, h2)? * 60 + part(m1, m2)?;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

#[cfg(test)]
#[path = "calendar_tests.rs"]
mod tests;
