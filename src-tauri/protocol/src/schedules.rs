//! Schedules: a task that repeats, as a rule in a time zone plus what to do with runs that
//! were missed while Hearth was closed or the machine slept.
//!
//! The rule is data, not a cron string: the model fills in fields a schema describes, the
//! Activity screen edits them with plain controls, and the core computes the instants with a
//! time-zone library (so "08:00 in Europe/Paris" stays 08:00 across a change of clocks).

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::{OperationId, ScheduleId, TaskId};
use crate::tasks::TaskStatus;

/// Longest schedule title.
pub const MAX_SCHEDULE_TITLE: usize = 200;
/// Longest instructions of a scheduled job.
pub const MAX_SCHEDULE_INSTRUCTIONS: usize = 20_000;
/// Shortest interval of an `Every` rule: tighter than this is a monitor's job, not a schedule's.
pub const MIN_INTERVAL_MINUTES: u32 = 5;
/// Longest interval of an `Every` rule (a year).
pub const MAX_INTERVAL_MINUTES: u32 = 525_600;
/// At most this many missed runs are made up under [`MissedRuns::RunEach`].
pub const MAX_MADE_UP_RUNS: usize = 10;
/// At most this many schedules exist at once.
pub const MAX_SCHEDULES: usize = 100;

/// A day of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "lowercase")]
pub enum Weekday {
    /// Monday.
    Monday,
    /// Tuesday.
    Tuesday,
    /// Wednesday.
    Wednesday,
    /// Thursday.
    Thursday,
    /// Friday.
    Friday,
    /// Saturday.
    Saturday,
    /// Sunday.
    Sunday,
}

impl Weekday {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Monday to Friday.
    pub const WEEKDAYS: [Weekday; 5] = [Weekday::Monday, Weekday::Tuesday, Weekday::Wednesday, Weekday::Thursday, Weekday::Friday];

    /// Three letters, for the screen.
    pub const fn short(self) -> &'static str {
        match self {
            Weekday::Monday => "Mon",
            Weekday::Tuesday => "Tue",
            Weekday::Wednesday => "Wed",
            Weekday::Thursday => "Thu",
            Weekday::Friday => "Fri",
            Weekday::Saturday => "Sat",
            Weekday::Sunday => "Sun",
        }
    }
}

/// When a schedule is due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "every", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Repeat {
    /// On the given days of the week at a wall-clock time ("every weekday at 08:00").
    Week {
        /// The days (at least one).
        days: Vec<Weekday>,
        /// `HH:MM`, 24-hour, wall-clock time in the schedule's zone.
        at: String,
    },
    /// On a day of each month at a wall-clock time ("on the 1st of each month"). A day past
    /// the end of a month (the 31st in April) runs on that month's last day.
    Month {
        /// 1 to 31.
        day: u8,
        /// `HH:MM`, 24-hour.
        at: String,
    },
    /// Every so many minutes from when the schedule was made ("every 2 hours" = 120). Elapsed
    /// time, so a change of clocks neither adds nor drops a run.
    Interval {
        /// 5 to 525,600.
        minutes: u32,
    },
}

impl Repeat {
    /// Checks the fields' shapes (the time zone is checked by the core, which has the zone
    /// database).
    pub fn validate(&self) -> Result<(), IpcError> {
        match self {
            Repeat::Week { days, at } => {
                if days.is_empty() {
                    return Err(IpcError::invalid("A weekly schedule needs at least one day."));
                }
                parse_hhmm(at).map(|_| ())
            }
            Repeat::Month { day, at } => {
                if !(1..=31).contains(day) {
                    return Err(IpcError::invalid("The day of the month is 1 to 31."));
                }
                parse_hhmm(at).map(|_| ())
            }
            Repeat::Interval { minutes } => {
                if !(MIN_INTERVAL_MINUTES..=MAX_INTERVAL_MINUTES).contains(minutes) {
                    return Err(IpcError::invalid(format!("The interval is {MIN_INTERVAL_MINUTES} to {MAX_INTERVAL_MINUTES} minutes.")));
                }
                Ok(())
            }
        }
    }

    /// The rule in words ("Mon–Fri at 08:00", "every 2 h").
    pub fn describe(&self) -> String {
        match self {
            Repeat::Week { days, at } => {
                let mut sorted = days.clone();
                sorted.sort();
                sorted.dedup();
                let days = if sorted == Weekday::ALL {
                    "every day".to_owned()
                } else if sorted == Weekday::WEEKDAYS {
                    "weekdays".to_owned()
                } else {
                    sorted.iter().map(|d| d.short()).collect::<Vec<_>>().join(", ")
                };
                format!("{days} at {at}")
            }
            Repeat::Month { day, at } => format!("day {day} of each month at {at}"),
            Repeat::Interval { minutes } if minutes % 60 == 0 => format!("every {} h", minutes / 60),
            Repeat::Interval { minutes } => format!("every {minutes} min"),
        }
    }
}

/// `HH:MM` (24-hour) → (hour, minute), or an error that shows the expected form.
pub fn parse_hhmm(at: &str) -> Result<(u8, u8), IpcError> {
    let bad = || IpcError::invalid(format!("The time {at:?} is not HH:MM on a 24-hour clock (for example 08:00)."));
    let (h, m) = at.split_once(':').ok_or_else(bad)?;
    if h.len() != 2 || m.len() != 2 || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (hour, minute) = (h.parse::<u8>().map_err(|_| bad())?, m.parse::<u8>().map_err(|_| bad())?);
    if hour > 23 || minute > 59 {
        return Err(bad());
    }
    Ok((hour, minute))
}

/// What happens to due times that passed while Hearth was not running (closed, asleep).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, strum::IntoStaticStr, strum::EnumString, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum MissedRuns {
    /// Run none of them; wait for the next due time.
    Skip,
    /// Run once for all of them (the newest).
    #[default]
    RunOnce,
    /// Run each of them, oldest first, at most [`MAX_MADE_UP_RUNS`] (the newest ones).
    RunEach,
}

impl MissedRuns {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// For the screen.
    pub const fn label(self) -> &'static str {
        match self {
            MissedRuns::Skip => "Skip missed runs",
            MissedRuns::RunOnce => "Run once for missed runs",
            MissedRuns::RunEach => "Run each missed run (up to 10)",
        }
    }
}

/// What each run of a schedule does.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, strum::IntoStaticStr, strum::EnumString, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ScheduledJob {
    /// Remind the owner: a notification with the instructions. No model needed.
    #[default]
    Reminder,
    /// The agent works on the instructions (needs a model).
    Agent,
    /// A statement summary (the finance task, no model): the instructions are the path of the
    /// statement in the owner's document folders, read as the index holds it at each run.
    Finance,
}

impl ScheduledJob {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// Whether a schedule makes runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleStatus {
    /// Makes a run at each due time.
    Active,
    /// Makes none until resumed; due times that pass while paused are not made up.
    Paused,
}

impl ScheduleStatus {
    /// Stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Active => "active",
            ScheduleStatus::Paused => "paused",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [ScheduleStatus::Active, ScheduleStatus::Paused].into_iter().find(|p| p.as_str() == s)
    }
}

/// Why a due time made a run, or did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DueOutcome {
    /// A task was made for it, on time.
    Started,
    /// A task was made for it late, under the missed-run policy.
    MadeUp,
    /// Missed, and the policy said not to run it.
    Skipped,
    /// The owner pressed Run now.
    RunNow,
    /// No task could be made (Hearth had too many unfinished tasks).
    Refused,
}

impl DueOutcome {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// One due time of a schedule and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRunView {
    /// The due time, Unix ms (Run now: when it was pressed).
    pub due_at: i64,
    /// What the due time made.
    pub outcome: DueOutcome,
    /// The task it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// That task's status now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_status: Option<TaskStatus>,
}

/// A schedule as the Activity screen shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleView {
    /// Id.
    pub id: ScheduleId,
    /// Title.
    pub title: String,
    /// What each run does.
    pub job: ScheduledJob,
    /// The instructions each run gets.
    pub instructions: String,
    /// When it is due.
    pub repeat: Repeat,
    /// IANA time zone the rule is read in.
    pub time_zone: String,
    /// The missed-run policy.
    pub missed: MissedRuns,
    /// Active or paused.
    pub status: ScheduleStatus,
    /// The next due time, Unix ms (none while paused, or when the rule has no more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at: Option<i64>,
    /// The newest due times, newest first (at most 10).
    pub last_runs: Vec<ScheduleRunView>,
    /// Created, Unix ms.
    pub created_at: i64,
}

/// What schedule_task answers (the chat's schedule card reads it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleTaskResult {
    /// The schedule.
    pub schedule_id: ScheduleId,
    /// Its title.
    pub title: String,
    /// The rule in words.
    pub when: String,
    /// The zone it is read in.
    pub time_zone: String,
    /// The first run, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at: Option<i64>,
    /// What happens to missed runs.
    pub missed_runs: MissedRuns,
}

/// `schedule_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleListResponse {
    /// Every schedule, newest first.
    pub schedules: Vec<ScheduleView>,
}

/// `schedule_create`: a schedule made by the owner in the Activity screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleCreateParams {
    /// Title.
    pub title: String,
    /// What each run does.
    #[serde(default)]
    pub job: ScheduledJob,
    /// Instructions (the reminder's text, or the agent's job); the title when empty.
    #[serde(default)]
    pub instructions: String,
    /// When.
    pub repeat: Repeat,
    /// IANA time zone ("Europe/Paris"); empty: the computer's own.
    #[serde(default)]
    pub time_zone: String,
    /// Missed-run policy.
    #[serde(default)]
    pub missed: MissedRuns,
}

impl ScheduleCreateParams {
    /// Checks the shapes (the core checks the zone).
    pub fn validate(&self) -> Result<(), IpcError> {
        let title = self.title.trim();
        if title.is_empty() || title.chars().count() > MAX_SCHEDULE_TITLE {
            return Err(IpcError::invalid(format!("A schedule's title is 1 to {MAX_SCHEDULE_TITLE} characters.")));
        }
        if self.instructions.chars().count() > MAX_SCHEDULE_INSTRUCTIONS {
            return Err(IpcError::invalid(format!(
                "The instructions are longer than {MAX_SCHEDULE_INSTRUCTIONS} characters; shorten them."
            )));
        }
        if self.time_zone.trim().len() > 64 {
            return Err(IpcError::invalid("Give an IANA time zone such as Europe/Paris."));
        }
        self.repeat.validate()
    }
}

/// The owner's controls of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleAction {
    /// Stop making runs.
    Pause,
    /// Make runs again from now on (what passed while paused is not made up).
    Resume,
    /// Make one run now, beside the rule.
    RunNow,
    /// Delete the schedule (the tasks it made stay).
    Delete,
}

/// `schedule_control`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleControlParams {
    /// The schedule.
    pub schedule_id: ScheduleId,
    /// What to do.
    pub action: ScheduleAction,
    /// Run now: the screen's id for this one press, made once per click. Sent again (a double
    /// click, a retry), it makes no second run. Required for Run now, ignored otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<OperationId>,
}

impl ScheduleControlParams {
    /// Run now needs its operation id (the ids checked themselves when they were parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        match (&self.operation_id, self.action) {
            (Some(_), _) => Ok(()),
            (None, ScheduleAction::RunNow) => Err(IpcError::invalid("Run now needs an operation id, made once per press; send one.")),
            (None, _) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn run_now_needs_a_valid_operation_id() {
        // As the shell gets them: parsed from the window's JSON, then validated.
        let control = |action: &str, id: Option<&str>| {
            let mut json = serde_json::json!({ "scheduleId": "s1", "action": action });
            if let Some(id) = id {
                json["operationId"] = id.into();
            }
            serde_json::from_value::<ScheduleControlParams>(json).map_err(|e| IpcError::invalid(e.to_string())).and_then(|p| {
                p.validate()?;
                Ok(p)
            })
        };
        assert!(control("run_now", Some("run-now-1-2")).is_ok());
        assert!(control("run_now", None).is_err());
        assert!(control("run_now", Some("a/b")).unwrap_err().message.contains("operation id"));
        assert!(control("run_now", Some("")).is_err());
        assert!(control("pause", None).is_ok());
        let json = serde_json::to_value(control("run_now", Some("x")).unwrap()).unwrap();
        assert_eq!(json["operationId"], "x");
    }

    #[test]
    fn times_are_24_hour_hh_mm() {
        assert_eq!(parse_hhmm("08:00").unwrap(), (8, 0));
        assert_eq!(parse_hhmm("23:59").unwrap(), (23, 59));
        for bad in ["8:00", "24:00", "12:60", "12-00", "", "ab:cd", "+1:00", "08:00:00"] {
            assert!(parse_hhmm(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_are_checked_and_described() {
        let weekdays = Repeat::Week { days: Weekday::WEEKDAYS.to_vec(), at: "08:00".into() };
        assert!(weekdays.validate().is_ok());
        assert_eq!(weekdays.describe(), "weekdays at 08:00");
        assert!(Repeat::Week { days: vec![], at: "08:00".into() }.validate().is_err());
        assert!(Repeat::Month { day: 0, at: "08:00".into() }.validate().is_err());
        assert!(Repeat::Month { day: 32, at: "08:00".into() }.validate().is_err());
        assert!(Repeat::Interval { minutes: 4 }.validate().is_err());
        assert_eq!(Repeat::Interval { minutes: 120 }.describe(), "every 2 h");
        let json = serde_json::to_value(&weekdays).unwrap();
        assert_eq!(json["every"], "week");
        assert_eq!(serde_json::from_value::<Repeat>(json).unwrap(), weekdays);
        let monthly: Repeat = serde_json::from_str(r#"{"every":"month","day":1,"at":"09:30"}"#).unwrap();
        assert_eq!(monthly, Repeat::Month { day: 1, at: "09:30".into() });
    }

    #[test]
    fn stored_spellings_round_trip() {
        for &p in MissedRuns::ALL {
            assert_eq!(MissedRuns::parse(p.as_str()), Some(p));
        }
        for &o in DueOutcome::ALL {
            assert_eq!(DueOutcome::parse(o.as_str()), Some(o));
        }
        for &j in ScheduledJob::ALL {
            assert_eq!(ScheduledJob::parse(j.as_str()), Some(j));
        }
        assert_eq!(MissedRuns::parse("sometimes"), None);
    }
}
