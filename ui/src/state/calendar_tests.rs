#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::state::chat::ToolStatus;

// Instants in Central European time (UTC+1 in March until the 29th, UTC+2 after).
const MON_0000: i64 = 1_772_406_000_000; // 2026-03-02T00:00:00+01:00
const NEXT_MON_0000: i64 = 1_773_010_800_000; // 2026-03-09T00:00:00+01:00
const MON_0930: i64 = 1_772_440_200_000;
const MON_0945: i64 = 1_772_441_100_000;
const TUE_1230: i64 = 1_772_537_400_000;
const TUE_1330: i64 = 1_772_541_000_000;
const WED_2200: i64 = 1_772_658_000_000;
const THU_0000: i64 = 1_772_665_200_000;
const THU_0100: i64 = 1_772_668_800_000;
const FRI_0000: i64 = 1_772_751_600_000;
const SAT_0000: i64 = 1_772_838_000_000;
/// 2026-03-29T01:00:00Z, when summer time starts.
const SUMMER_STARTS: i64 = 1_774_746_000_000;
/// 2026-03-29T09:00:00+02:00.
const SUMMER_SUN_0900: i64 = 1_774_767_600_000;
const NEXT_YEAR_MON_1000: i64 = 1_799_053_200_000; // 2027-01-04T10:00:00+01:00

const CET: fn(i64) -> i32 = |_| 60;
const WEEK_ARGS: &str = r#"{"timeMin":"2026-03-02T00:00:00+01:00","timeMax":"2026-03-09T00:00:00+01:00"}"#;

fn call(args: &str, status: ToolStatus, result: &str) -> ToolCallView {
    ToolCallView {
        id: "c1".into(),
        name: "read_calendar".into(),
        args: args.into(),
        status,
        result: Some(result.into()),
        live: String::new(),
    }
}

/// An event as the workspace serializes it; `extra` adds fields (`"allDay":true`).
fn event(id: &str, title: &str, starts_at: i64, ends_at: i64, location: &str, extra: &str) -> String {
    format!(
        r#"{{"id":"{id}","calendarId":"primary","title":"{title}","startsAt":{starts_at},"endsAt":{ends_at},"location":"{location}","description":""{extra}}}"#
    )
}

fn list(events: &[String], truncated: &str) -> String {
    format!(r#"{{"events":[{}]{truncated}}}"#, events.join(","))
}

fn entry(id: &str, title: &str, when: &str, all_day: bool, location: Option<&str>) -> CalendarEntry {
    CalendarEntry { id: id.into(), title: title.into(), when: when.into(), all_day, location: location.map(str::to_owned) }
}

#[test]
fn a_week_reads_as_titles_and_local_times() {
    let result = list(
        &[
            event("evt-standup", "Team stand-up", MON_0930, MON_0945, "Video call", ""),
            event("evt-lunch", "Lunch with Priya", TUE_1230, TUE_1330, " ", ""),
            event("evt-late", "", WED_2200, THU_0100, "Ridge trail", ""),
        ],
        r#","truncated":false"#,
    );
    let card = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &result), CET, MON_0000).unwrap();
    assert_eq!(
        card,
        CalendarList {
            range: Some("Mon 2 Mar – Sun 8 Mar".into()),
            count: "3 events".into(),
            events: vec![
                entry("evt-standup", "Team stand-up", "Mon 2 Mar, 09:30–09:45", false, Some("Video call")),
                entry("evt-lunch", "Lunch with Priya", "Tue 3 Mar, 12:30–13:30", false, None),
                entry("evt-late", "(untitled)", "Wed 4 Mar, 22:00 – Thu 5 Mar, 01:00", false, Some("Ridge trail")),
            ],
            truncated_note: None,
        }
    );
}

#[test]
fn the_same_events_read_in_another_time_zone_show_its_wall_clock() {
    let result = list(&[event("evt-standup", "Team stand-up", MON_0930, MON_0945, "", "")], "");
    let new_york = |_| -300;
    let card = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &result), new_york, MON_0000).unwrap();
    assert_eq!(card.events[0].when, "Mon 2 Mar, 03:30–03:45");
    assert_eq!(card.range.as_deref(), Some("Sun 1 Mar, 18:00 – Sun 8 Mar, 18:00"), "not local midnights, so times");
}

#[test]
fn all_day_events_show_as_days() {
    let result = list(
        &[
            // Said by the result.
            event("evt-holiday", "School holiday", THU_0000, FRI_0000, "", r#","allDay":true"#),
            // Midnight to midnight, as an approved all-day event is stored.
            event("evt-trip", "Class trip", THU_0000, SAT_0000, "", ""),
            // The result says it is timed, so it is, whatever its bounds.
            event("evt-shift", "Night shift", THU_0000, FRI_0000, "", r#","allDay":false"#),
        ],
        "",
    );
    let card = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &result), CET, MON_0000).unwrap();
    assert_eq!(
        card.events,
        vec![
            entry("evt-holiday", "School holiday", "Thu 5 Mar, all day", true, None),
            entry("evt-trip", "Class trip", "Thu 5 Mar – Fri 6 Mar, all day", true, None),
            entry("evt-shift", "Night shift", "Thu 5 Mar, 00:00 – Fri 6 Mar, 00:00", false, None),
        ]
    );
}

#[test]
fn the_offset_is_asked_for_each_instant() {
    let central_europe = |ms: i64| if ms < SUMMER_STARTS { 60 } else { 120 };
    let result = list(&[event("evt-run", "Park run", SUMMER_SUN_0900, SUMMER_SUN_0900 + 3_600_000, "", "")], "");
    let card = calendar_list(&call("{}", ToolStatus::Complete, &result), central_europe, MON_0000).unwrap();
    assert_eq!(card.events[0].when, "Sun 29 Mar, 09:00–10:00", "summer time, though it is winter now");
    assert_eq!(card.range, None, "no range in the arguments");
}

#[test]
fn a_truncated_result_says_more_events_exist() {
    let two = [event("a", "A", MON_0930, MON_0945, "", ""), event("b", "B", TUE_1230, TUE_1330, "", "")];
    let card = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &list(&two, r#","truncated":true"#)), CET, MON_0000).unwrap();
    assert_eq!(
        (card.count.as_str(), card.truncated_note.as_deref()),
        ("2 events", Some("Only the first 2 are shown; more events fall in this range."))
    );

    let empty = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &list(&[], "")), CET, MON_0000).unwrap();
    assert_eq!((empty.count.as_str(), empty.truncated_note), ("No events in this range.", None));
    let one = calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, &list(&two[..1], "")), CET, MON_0000).unwrap();
    assert_eq!(one.count, "1 event");
}

#[test]
fn another_year_carries_its_year() {
    let result = list(&[event("evt-new-year", "Dentist", NEXT_YEAR_MON_1000, NEXT_YEAR_MON_1000, "", "")], "");
    let card = calendar_list(&call("{}", ToolStatus::Complete, &result), CET, MON_0000).unwrap();
    assert_eq!(card.events[0].when, "Mon 4 Jan 2027, 10:00", "no length, so one time");
}

#[test]
fn unfinished_failed_or_unreadable_calls_keep_the_generic_card() {
    let good = list(&[event("a", "A", MON_0930, MON_0945, "", "")], "");
    assert_eq!(calendar_list(&call(WEEK_ARGS, ToolStatus::Running, &good), CET, MON_0000), None);
    assert_eq!(calendar_list(&call(WEEK_ARGS, ToolStatus::Error, &good), CET, MON_0000), None);
    for bad in ["", "not json", "{}", r#"{"error":"The range is too long"}"#, r#"{"events":[{"title":"no times"}]}"#] {
        assert_eq!(calendar_list(&call(WEEK_ARGS, ToolStatus::Complete, bad), CET, MON_0000), None, "{bad:?}");
    }
}

#[test]
fn rfc3339_reads_offsets_and_fractions_and_refuses_the_rest() {
    assert_eq!(parse_rfc3339("2026-03-02T00:00:00+01:00"), Some(MON_0000));
    assert_eq!(parse_rfc3339(" 2026-03-09t00:00:00+01:00 "), Some(NEXT_MON_0000));
    assert_eq!(parse_rfc3339("2026-03-29T01:00:00Z"), Some(SUMMER_STARTS));
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(parse_rfc3339("1969-12-31T23:59:59.5Z"), Some(-500));
    assert_eq!(parse_rfc3339("2026-03-01T18:00:00.123456-05:00"), Some(MON_0000 + 123));
    for bad in [
        "",
        "2026-03-02",
        "2026-03-02T00:00:00",
        "2026-13-02T00:00:00Z",
        "2026-03-02T00:00:00+0100",
        "２026-03-02T00:00:00Z",
        "2026-03-02T00:00:00.Z",
    ] {
        assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
    }
}

#[test]
fn wall_time_and_civil_days_agree_across_epochs() {
    assert_eq!(WallTime::at(MON_0930, 60), WallTime { year: 2026, month: 3, day: 2, weekday: 0, hour: 9, minute: 30, midnight: false });
    assert_eq!(WallTime::at(-1, 0), WallTime { year: 1969, month: 12, day: 31, weekday: 2, hour: 23, minute: 59, midnight: false });
    assert!(WallTime::at(MON_0000, 60).midnight);
    for days in (-800_000..800_000).step_by(997) {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days, "{y}-{m}-{d}");
    }
    // Far outside any calendar, still no panic.
    let _ = WallTime::at(i64::MAX, 840);
    let _ = WallTime::at(i64::MIN, -720);
}
