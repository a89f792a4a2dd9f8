//! The stored spelling of every enum the store and the wire both carry is derived twice (serde
//! for the wire, strum for the store's text columns); this pins that the two agree, so a
//! `#[serde(rename)]` without its `#[strum(serialize)]` fails here rather than as a row the
//! store cannot read back.

use hearth_protocol::approvals::{ProposalOrigin, ProposalStatus};
use hearth_protocol::goals::GoalStatus;
use hearth_protocol::ideas::IdeaKind;
use hearth_protocol::memory::MemorySource;
use hearth_protocol::notifications::NotificationKind;
use hearth_protocol::schedules::{DueOutcome, MissedRuns, ScheduledJob};
use hearth_protocol::tasks::{TaskEventKind, TaskKind, TaskRunStatus, TaskStatus};

macro_rules! same_spelling {
    ($($ty:ty),+ $(,)?) => {$(
        for &v in <$ty>::ALL {
            let wire = serde_json::to_value(v).expect("serializes");
            assert_eq!(wire.as_str(), Some(v.as_str()), "{}::{v:?}: serde and strum spell it differently", stringify!($ty));
            assert_eq!(<$ty>::parse(v.as_str()), Some(v), "{}::{v:?} does not parse back", stringify!($ty));
        }
        assert_eq!(<$ty>::parse("no such spelling"), None);
    )+};
}

#[test]
fn serde_and_the_store_spell_every_variant_alike() {
    same_spelling!(
        TaskKind,
        TaskStatus,
        TaskRunStatus,
        TaskEventKind,
        ProposalStatus,
        ProposalOrigin,
        NotificationKind,
        MissedRuns,
        ScheduledJob,
        DueOutcome,
        GoalStatus,
        IdeaKind,
        MemorySource
    );
}
