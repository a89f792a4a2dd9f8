//! The schedule form and how schedules read, as plain data.

use hearth_protocol::schedules::{DueOutcome, MissedRuns, Repeat, ScheduleCreateParams, ScheduledJob, Weekday};

/// Which kind of rule the form edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuleKind {
    /// Days of the week at a time.
    #[default]
    Week,
    /// A day of each month at a time.
    Month,
    /// Every so many minutes.
    Interval,
}

impl RuleKind {
    /// Every kind, as the form's select lists them.
    pub const ALL: [RuleKind; 3] = [RuleKind::Week, RuleKind::Month, RuleKind::Interval];

    /// The select's value.
    pub const fn slug(self) -> &'static str {
        match self {
            RuleKind::Week => "week",
            RuleKind::Month => "month",
            RuleKind::Interval => "interval",
        }
    }

    /// The select's label.
    pub const fn label(self) -> &'static str {
        match self {
            RuleKind::Week => "On days of the week",
            RuleKind::Month => "On a day of each month",
            RuleKind::Interval => "Every so many minutes",
        }
    }

    /// From the select's value.
    pub fn from_slug(slug: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.slug() == slug)
    }
}

/// What the owner typed into "New schedule".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleForm {
    /// Title.
    pub title: String,
    /// Reminder or agent job.
    pub job: ScheduledJob,
    /// The reminder's text or the job.
    pub instructions: String,
    /// Which rule.
    pub kind: RuleKind,
    /// Monday … Sunday ticked.
    pub days: [bool; 7],
    /// HH:MM.
    pub at: String,
    /// Day of the month, as typed.
    pub day: String,
    /// Minutes, as typed.
    pub minutes: String,
    /// IANA zone; empty is the computer's own.
    pub time_zone: String,
    /// Missed runs.
    pub missed: MissedRuns,
}

impl Default for ScheduleForm {
    fn default() -> Self {
        Self {
            title: String::new(),
            job: ScheduledJob::Reminder,
            instructions: String::new(),
            kind: RuleKind::Week,
            days: [true, true, true, true, true, false, false],
            at: "08:00".into(),
            day: "1".into(),
            minutes: "120".into(),
            time_zone: String::new(),
            missed: MissedRuns::RunOnce,
        }
    }
}

impl ScheduleForm {
    /// The request, or what to fix.
    pub fn to_params(&self) -> Result<ScheduleCreateParams, String> {
        let repeat = match self.kind {
            RuleKind::Week => Repeat::Week {
                days: Weekday::ALL.iter().copied().zip(self.days).filter(|(_, on)| *on).map(|(d, _)| d).collect(),
                at: self.at.trim().to_owned(),
            },
            RuleKind::Month => Repeat::Month {
                day: self.day.trim().parse().map_err(|_| "The day of the month is a number from 1 to 31.".to_owned())?,
                at: self.at.trim().to_owned(),
            },
            RuleKind::Interval => Repeat::Interval {
                minutes: self.minutes.trim().parse().map_err(|_| "The interval is a whole number of minutes.".to_owned())?,
            },
        };
        let params = ScheduleCreateParams {
            title: self.title.trim().to_owned(),
            job: self.job,
            instructions: self.instructions.trim().to_owned(),
            repeat,
            time_zone: self.time_zone.trim().to_owned(),
            missed: self.missed,
        };
        params.validate().map_err(|e| e.message)?;
        Ok(params)
    }
}

/// How a due time turned out, for the schedule's history.
pub const fn outcome_label(outcome: DueOutcome) -> &'static str {
    match outcome {
        DueOutcome::Started => "ran",
        DueOutcome::MadeUp => "made up",
        DueOutcome::Skipped => "skipped (missed)",
        DueOutcome::RunNow => "run now",
        DueOutcome::Refused => "not run (too many tasks)",
    }
}

/// The job's label.
pub const fn job_label(job: ScheduledJob) -> &'static str {
    match job {
        ScheduledJob::Reminder => "Reminder",
        ScheduledJob::Agent => "Agent job",
        ScheduledJob::Finance => "Statement summary",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_default_form_is_weekdays_at_eight_once_titled() {
        let mut form = ScheduleForm::default();
        assert!(form.to_params().unwrap_err().contains("title"));
        form.title = "Check the garden".into();
        let params = form.to_params().unwrap();
        assert_eq!(params.repeat, Repeat::Week { days: Weekday::WEEKDAYS.to_vec(), at: "08:00".into() });
        assert_eq!(params.missed, MissedRuns::RunOnce);
        assert!(params.time_zone.is_empty());
    }

    #[test]
    fn bad_fields_say_what_to_fix() {
        let mut form = ScheduleForm { title: "x".into(), ..ScheduleForm::default() };
        form.days = [false; 7];
        assert!(form.to_params().unwrap_err().contains("at least one day"));
        form.kind = RuleKind::Month;
        form.day = "first".into();
        assert!(form.to_params().unwrap_err().contains("1 to 31"));
        form.day = "31".into();
        form.at = "8am".into();
        assert!(form.to_params().unwrap_err().contains("HH:MM"));
        form.kind = RuleKind::Interval;
        form.minutes = "2".into();
        assert!(form.to_params().unwrap_err().contains("5 to"));
        form.minutes = "60".into();
        assert_eq!(form.to_params().unwrap().repeat, Repeat::Interval { minutes: 60 });
        for kind in RuleKind::ALL {
            assert_eq!(RuleKind::from_slug(kind.slug()), Some(kind));
        }
    }
}
