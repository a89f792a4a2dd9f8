//! When a schedule is due: a [`Repeat`] read in a time zone, as instants.
//!
//! jiff does the calendar and time-zone work (its `compatible` disambiguation is RFC 5545's
//! and Temporal's), so this file only walks dates. What a change of clocks does to a
//! wall-clock rule:
//! - **A gap** (the clocks jump forward past the time, e.g. 02:30 on the last Sunday of
//!   March in Europe/Paris): the run is at the same time *after* the jump, shifted by the
//!   gap's length (03:30 CEST). It is not skipped: a reminder the owner asked for still comes.
//! - **A repeat** (the clocks go back and the time happens twice): one run, at the first
//!   occurrence. Never two.
//!
//! An `Interval` rule counts elapsed time from its anchor, so clocks do not touch it.

use hearth_protocol::schedules::{Repeat, Weekday, parse_hhmm};
use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

use crate::error::{CoreError, Result};

/// A schedule's rule, ready to compute instants.
#[derive(Debug, Clone)]
pub struct Rule {
    repeat: Repeat,
    zone: TimeZone,
    /// Where an interval counts from, Unix ms.
    anchor_ms: i64,
    /// The wall-clock time of a week or month rule.
    at: (i8, i8),
}

impl Rule {
    /// Checks the rule and looks its zone up in the system's time-zone database.
    pub fn new(repeat: &Repeat, time_zone: &str, anchor_ms: i64) -> Result<Self> {
        repeat.validate().map_err(|e| CoreError::InvalidInput(e.message))?;
        let zone = TimeZone::get(time_zone.trim()).map_err(|_| {
            CoreError::InvalidInput(format!(
                "{time_zone:?} is not a time zone Hearth knows; give an IANA name such as Europe/Paris or America/New_York."
            ))
        })?;
        let at = match repeat {
            Repeat::Week { at, .. } | Repeat::Month { at, .. } => {
                let (h, m) = parse_hhmm(at).map_err(|e| CoreError::InvalidInput(e.message))?;
                // parse_hhmm bounds both (≤ 23, ≤ 59), so they fit an i8.
                (i8::try_from(h).unwrap_or(0), i8::try_from(m).unwrap_or(0))
            }
            Repeat::Interval { .. } => (0, 0),
        };
        Ok(Self { repeat: repeat.clone(), zone, anchor_ms, at })
    }

    /// The first due time strictly after `after_ms` (Unix ms); `None` only past the end of
    /// the calendar jiff supports.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        match &self.repeat {
            Repeat::Interval { minutes } => {
                let step = i64::from(*minutes) * 60_000;
                // The first due time is one step after the anchor.
                let k = if after_ms < self.anchor_ms { 1 } else { (after_ms - self.anchor_ms) / step + 1 };
                self.anchor_ms.checked_add(k.checked_mul(step)?)
            }
            Repeat::Week { days, .. } => {
                let mut date = self.local_date(after_ms)?;
                // Today may still be due; within 8 days every weekday has come round once.
                for _ in 0..=8 {
                    if days.contains(&weekday(date)) {
                        let due = self.wall_clock_on(date)?;
                        if due > after_ms {
                            return Some(due);
                        }
                    }
                    date = date.tomorrow().ok()?;
                }
                None
            }
            Repeat::Month { day, .. } => {
                let mut first = self.local_date(after_ms)?.first_of_month();
                for _ in 0..=13 {
                    let day = i8::try_from(*day).ok()?.min(first.days_in_month());
                    let date = Date::new(first.year(), first.month(), day).ok()?;
                    let due = self.wall_clock_on(date)?;
                    if due > after_ms {
                        return Some(due);
                    }
                    first = first.last_of_month().tomorrow().ok()?;
                }
                None
            }
        }
    }

    /// The local date at an instant, in this rule's zone.
    fn local_date(&self, at_ms: i64) -> Option<Date> {
        Some(Timestamp::from_millisecond(at_ms).ok()?.to_zoned_datetime(self.zone.clone()).date())
    }

    /// The instant of this rule's wall-clock time on `date`: shifted forward across a gap,
    /// the first of a repeat.
    fn wall_clock_on(&self, date: Date) -> Option<i64> {
        let local: DateTime = date.at(self.at.0, self.at.1, 0, 0);
        let zoned = self.zone.to_ambiguous_zoned_datetime(local).compatible().ok()?;
        Some(zoned.timestamp().as_millisecond())
    }
}

fn weekday(date: Date) -> Weekday {
    match date.weekday() {
        jiff::civil::Weekday::Monday => Weekday::Monday,
        jiff::civil::Weekday::Tuesday => Weekday::Tuesday,
        jiff::civil::Weekday::Wednesday => Weekday::Wednesday,
        jiff::civil::Weekday::Thursday => Weekday::Thursday,
        jiff::civil::Weekday::Friday => Weekday::Friday,
        jiff::civil::Weekday::Saturday => Weekday::Saturday,
        jiff::civil::Weekday::Sunday => Weekday::Sunday,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Unix ms of a UTC instant written out by hand.
    fn utc(s: &str) -> i64 {
        s.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn iso(ms: i64) -> String {
        Timestamp::from_millisecond(ms).unwrap().to_string()
    }

    fn dues(rule: &Rule, from: &str, n: usize) -> Vec<String> {
        let mut at = utc(from);
        (0..n)
            .map(|_| {
                at = rule.next_after(at).unwrap();
                iso(at)
            })
            .collect()
    }

    #[test]
    fn every_day_at_0230_in_paris_across_both_changes_of_clocks() {
        // Hand-checked: CET is UTC+1, CEST UTC+2. On 2026-03-29 02:00 CET jumps to 03:00
        // CEST, so 02:30 does not exist and runs at 03:30 CEST (01:30Z); on 2026-10-25 03:00
        // CEST goes back to 02:00 CET, so 02:30 happens twice and runs once, at the first
        // (00:30Z), never again at 01:30Z.
        let rule = Rule::new(&Repeat::Week { days: Weekday::ALL.to_vec(), at: "02:30".into() }, "Europe/Paris", 0).unwrap();
        assert_eq!(
            dues(&rule, "2026-03-27T12:00:00Z", 4),
            ["2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"]
        );
        assert_eq!(
            dues(&rule, "2026-10-23T12:00:00Z", 4),
            ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"]
        );
    }

    #[test]
    fn weekdays_at_0800_in_new_york_across_both_changes_of_clocks() {
        // Hand-checked: EST is UTC−5, EDT UTC−4; 2026-03-08 and 2026-11-01 are Sundays, the
        // days the clocks change, so the weekday runs straddle them without landing on them.
        let rule = Rule::new(&Repeat::Week { days: Weekday::WEEKDAYS.to_vec(), at: "08:00".into() }, "America/New_York", 0).unwrap();
        assert_eq!(dues(&rule, "2026-03-05T14:00:00Z", 3), ["2026-03-06T13:00:00Z", "2026-03-09T12:00:00Z", "2026-03-10T12:00:00Z"]);
        assert_eq!(dues(&rule, "2026-10-29T12:00:00Z", 3), ["2026-10-30T12:00:00Z", "2026-11-02T13:00:00Z", "2026-11-03T13:00:00Z"]);
        // 01:30 on the night the clocks go back (01:00–02:00 EDT, then again EST): once, at
        // the first (05:30Z), not at 06:30Z too.
        let night = Rule::new(&Repeat::Week { days: vec![Weekday::Sunday], at: "01:30".into() }, "America/New_York", 0).unwrap();
        assert_eq!(dues(&night, "2026-10-31T12:00:00Z", 2), ["2026-11-01T05:30:00Z", "2026-11-08T06:30:00Z"]);
    }

    #[test]
    fn the_first_of_each_month_and_a_day_months_lack() {
        let first = Rule::new(&Repeat::Month { day: 1, at: "09:00".into() }, "Europe/Paris", 0).unwrap();
        assert_eq!(dues(&first, "2026-02-15T00:00:00Z", 3), ["2026-03-01T08:00:00Z", "2026-04-01T07:00:00Z", "2026-05-01T07:00:00Z"]);
        // The 31st runs on the last day of shorter months (30 April, 28 February).
        let last = Rule::new(&Repeat::Month { day: 31, at: "12:00".into() }, "UTC", 0).unwrap();
        assert_eq!(dues(&last, "2026-03-31T12:00:00Z", 2), ["2026-04-30T12:00:00Z", "2026-05-31T12:00:00Z"]);
        assert_eq!(dues(&last, "2027-01-31T12:00:00Z", 1), ["2027-02-28T12:00:00Z"]);
    }

    #[test]
    fn intervals_count_elapsed_time_from_the_anchor() {
        let anchor = utc("2026-03-29T00:15:00Z");
        let rule = Rule::new(&Repeat::Interval { minutes: 120 }, "Europe/Paris", anchor).unwrap();
        // The change of clocks at 01:00Z changes nothing: two hours apart in elapsed time.
        assert_eq!(dues(&rule, "2026-03-29T00:15:00Z", 3), ["2026-03-29T02:15:00Z", "2026-03-29T04:15:00Z", "2026-03-29T06:15:00Z"]);
        // Asked from before the anchor: the first due time is one step after it.
        assert_eq!(rule.next_after(anchor - 1_000_000), Some(anchor + 7_200_000));
        // Exactly on a due time: the next one.
        assert_eq!(rule.next_after(anchor + 7_200_000), Some(anchor + 14_400_000));
    }

    #[test]
    fn an_unknown_zone_or_bad_rule_is_refused_with_what_to_give() {
        let err = Rule::new(&Repeat::Interval { minutes: 60 }, "Mars/Olympus", 0).unwrap_err().to_string();
        assert!(err.contains("IANA"), "{err}");
        assert!(Rule::new(&Repeat::Week { days: vec![], at: "08:00".into() }, "UTC", 0).is_err());
        assert!(Rule::new(&Repeat::Month { day: 1, at: "25:00".into() }, "UTC", 0).is_err());
    }
}
