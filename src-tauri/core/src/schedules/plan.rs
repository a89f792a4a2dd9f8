//! What a schedule does at a tick: which passed due times make a run, which are skipped, and
//! where its cursor moves. Pure, so the missed-run policies are tested without a clock.

use hearth_protocol::schedules::{DueOutcome, MAX_MADE_UP_RUNS, MissedRuns};

use super::rule::Rule;

/// A due time later than this when the tick sees it was missed (Hearth closed, the machine
/// asleep) and goes by the schedule's missed-run policy. The worker ticks every second, so
/// anything later than this was not a busy moment.
pub const MISSED_AFTER_MS: i64 = 120_000;

/// At most this many due times are walked in one tick (an every-5-minutes schedule over a
/// year asleep is 105,120); older ones are passed over unrecorded.
const MAX_WALK: usize = 200_000;
/// Where a walk past [`MAX_WALK`] starts again: a week before now.
const JUMP_BACK_MS: i64 = 7 * 24 * 3_600_000;

/// What a tick does to one schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Due times to record, oldest first, with what each makes.
    pub dues: Vec<(i64, DueOutcome)>,
    /// Every due time ≤ this is handled.
    pub cursor: i64,
    /// The next due time after the cursor.
    pub next: Option<i64>,
    /// Missed due times older than those recorded (not listed, not run).
    pub passed_over: usize,
}

/// Plans the due times in `(cursor, now]`.
pub fn plan(rule: &Rule, policy: MissedRuns, cursor: i64, now: i64) -> Plan {
    let mut recent: std::collections::VecDeque<i64> = std::collections::VecDeque::new();
    let mut passed_over = 0;
    let mut at = cursor;
    let mut walked = 0;
    let mut next = rule.next_after(at);
    while let Some(due) = next {
        if due > now {
            break;
        }
        walked += 1;
        if walked > MAX_WALK && now - due > JUMP_BACK_MS {
            // Only a short interval gets here: jump to a week before now, whose due times
            // still hold the newest ten, and pass over what lies between unrecorded.
            passed_over += recent.len();
            recent.clear();
            at = now - JUMP_BACK_MS;
            next = rule.next_after(at);
            continue;
        }
        recent.push_back(due);
        if recent.len() > MAX_MADE_UP_RUNS {
            recent.pop_front();
            passed_over += 1;
        }
        at = due;
        next = rule.next_after(at);
    }
    let missed: Vec<i64> = recent.iter().copied().filter(|due| now - due > MISSED_AFTER_MS).collect();
    let newest_missed = missed.last().copied();
    let dues = recent
        .into_iter()
        .map(|due| {
            let outcome = if now - due <= MISSED_AFTER_MS {
                DueOutcome::Started
            } else {
                match policy {
                    MissedRuns::Skip => DueOutcome::Skipped,
                    MissedRuns::RunOnce if Some(due) == newest_missed => DueOutcome::MadeUp,
                    MissedRuns::RunOnce => DueOutcome::Skipped,
                    MissedRuns::RunEach => DueOutcome::MadeUp,
                }
            };
            (due, outcome)
        })
        .collect();
    Plan { dues, cursor: now.max(cursor), next, passed_over }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hearth_protocol::schedules::Repeat;

    use super::*;

    const HOUR: i64 = 3_600_000;

    fn hourly() -> Rule {
        Rule::new(&Repeat::Interval { minutes: 60 }, "UTC", 0).unwrap()
    }

    fn outcomes(plan: &Plan) -> Vec<DueOutcome> {
        plan.dues.iter().map(|(_, o)| *o).collect()
    }

    #[test]
    fn on_time_due_times_start_whatever_the_policy() {
        for &policy in MissedRuns::ALL {
            let p = plan(&hourly(), policy, HOUR - 500, HOUR + 1_000);
            assert_eq!(p.dues, [(HOUR, DueOutcome::Started)], "{policy:?}");
            assert_eq!((p.cursor, p.next, p.passed_over), (HOUR + 1_000, Some(2 * HOUR), 0));
        }
        // Nothing due yet: nothing recorded, cursor moves.
        let p = plan(&hourly(), MissedRuns::RunEach, HOUR, HOUR + 10);
        assert!(p.dues.is_empty());
        assert_eq!(p.next, Some(2 * HOUR));
    }

    #[test]
    fn five_missed_hours_under_each_policy() {
        // Closed at 00:30, opened at 05:30: 01:00 … 05:00 were missed.
        let (cursor, now) = (HOUR / 2, 5 * HOUR + HOUR / 2);
        let skip = plan(&hourly(), MissedRuns::Skip, cursor, now);
        assert_eq!(outcomes(&skip), [DueOutcome::Skipped; 5]);
        let once = plan(&hourly(), MissedRuns::RunOnce, cursor, now);
        assert_eq!(
            outcomes(&once),
            [DueOutcome::Skipped, DueOutcome::Skipped, DueOutcome::Skipped, DueOutcome::Skipped, DueOutcome::MadeUp]
        );
        assert_eq!(once.dues[4].0, 5 * HOUR);
        let each = plan(&hourly(), MissedRuns::RunEach, cursor, now);
        assert_eq!(outcomes(&each), [DueOutcome::MadeUp; 5]);
        assert_eq!(each.next, Some(6 * HOUR));
    }

    #[test]
    fn run_each_makes_up_only_the_newest_ten() {
        let p = plan(&hourly(), MissedRuns::RunEach, 0, 30 * HOUR + 10 * 60_000);
        assert_eq!(p.dues.len(), 10);
        assert_eq!(p.passed_over, 20);
        assert_eq!(p.dues.first().unwrap().0, 21 * HOUR);
        assert!(p.dues.iter().all(|(_, o)| *o == DueOutcome::MadeUp));
    }

    #[test]
    fn a_missed_run_and_an_on_time_one_in_the_same_tick() {
        // 01:00 missed, 02:00 just due.
        let p = plan(&hourly(), MissedRuns::RunOnce, HOUR / 2, 2 * HOUR + 1_000);
        assert_eq!(p.dues, [(HOUR, DueOutcome::MadeUp), (2 * HOUR, DueOutcome::Started)]);
    }

    #[test]
    fn years_asleep_is_bounded() {
        let every5 = Rule::new(&Repeat::Interval { minutes: 5 }, "UTC", 0).unwrap();
        let years = 3 * 365 * 24 * HOUR;
        let p = plan(&every5, MissedRuns::RunOnce, 0, years + 3 * 60_000);
        assert_eq!(p.dues.len(), MAX_MADE_UP_RUNS);
        // The newest ten, the last of them made up.
        assert_eq!(p.dues.last().unwrap(), &(years, DueOutcome::MadeUp));
        assert_eq!(p.dues.iter().filter(|(_, o)| *o == DueOutcome::MadeUp).count(), 1);
        assert_eq!(p.next, Some(years + 5 * 60_000));
    }
}
