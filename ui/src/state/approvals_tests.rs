#![allow(clippy::unwrap_used)]

use hearth_protocol::approvals::{Connection, EmailDraft, EventDraft, ProposalDraft, ReplyContext};
use hearth_protocol::ids::{ProposalId, TaskId};
use hearth_protocol::tasks::{TaskKind, TaskView};
use pretty_assertions::assert_eq;

use super::*;

fn proposal(id: &str, status: ProposalStatus, created_at: i64, expires_at: i64) -> ProposalView {
    ProposalView {
        id: ProposalId::parse(id).unwrap(),
        task_id: None,
        status,
        draft: ProposalDraft::EmailSend(EmailDraft {
            to: vec!["ada@example.org".into()],
            cc: vec![],
            bcc: vec![],
            subject: "Permission form".into(),
            body: "Signed form attached.".into(),
            attachments: vec![],
            thread_id: None,
            in_reply_to: None,
            reply_to: None,
        }),
        origin: ProposalOrigin::OwnerChat,
        connection: Connection { id: "local".into(), account: "me@example.org".into() },
        hash: "a".repeat(64),
        created_at,
        expires_at,
        sources: Vec::new(),
        mandate_id: None,
        receipt: None,
        error: None,
        leaves_at: None,
        failure_id: None,
    }
}

fn task(id: &str, status: TaskStatus, proposal_id: Option<&str>) -> TaskView {
    TaskView {
        id: TaskId::parse(id).unwrap(),
        kind: TaskKind::Document,
        title: format!("task {id}"),
        status,
        plan: Vec::new(),
        attempts: 1,
        question: None,
        choices: Vec::new(),
        result: None,
        error: None,
        outcome_uncertain: false,
        proposal_id: proposal_id.map(|id| ProposalId::parse(id).unwrap()),
        created_at: 1,
        updated_at: 1,
    }
}

#[test]
fn the_countdown_is_minutes_and_seconds_rounded_up() {
    assert_eq!(countdown_label(0, 30 * 60 * 1000), "30:00");
    assert_eq!(countdown_label(1, 30 * 60 * 1000), "30:00");
    assert_eq!(countdown_label(0, 61_000), "01:01");
    assert_eq!(countdown_label(0, 999), "00:01");
    assert_eq!(countdown_label(0, 0), "00:00");
    assert_eq!(countdown_label(5_000, 1_000), "00:00", "never negative");
    assert_eq!(countdown_label(0, 125 * 60 * 1000), "125:00", "minutes are not wrapped into hours");
    assert!(!countdown_label(i64::MIN, i64::MAX).is_empty(), "no overflow on absurd input");
}

#[test]
fn a_proposal_expires_at_its_expiry_not_after() {
    assert!(!is_expired(999, 1_000));
    assert!(is_expired(1_000, 1_000));
    let awaiting = proposal("p", ProposalStatus::AwaitingReview, 0, 1_000);
    assert_eq!(effective_status(&awaiting, 999), ProposalStatus::AwaitingReview);
    assert!(can_decide(&awaiting, 999));
    assert_eq!(effective_status(&awaiting, 1_000), ProposalStatus::Expired);
    assert!(!can_decide(&awaiting, 1_000));
}

#[test]
fn only_an_awaiting_proposal_can_be_decided() {
    for &status in ProposalStatus::ALL {
        let p = proposal("p", status, 0, 1_000);
        assert_eq!(can_decide(&p, 0), status == ProposalStatus::AwaitingReview, "{status:?}");
        // The clock only ever turns awaiting into expired; a settled status stays as it is.
        if status != ProposalStatus::AwaitingReview {
            assert_eq!(effective_status(&p, 5_000), status);
        }
    }
}

#[test]
fn labels_read_as_words() {
    assert_eq!(status_label(ProposalStatus::AwaitingReview), "awaiting review");
    assert_eq!(status_label(ProposalStatus::OutcomeUnknown), "outcome unknown");
    assert_eq!(kind_label(ProposalKind::EmailSend), "Send email");
}

#[test]
fn awaiting_come_first_by_expiry_then_the_rest_newest_first() {
    let list = vec![
        proposal("old-denied", ProposalStatus::Denied, 10, 100),
        proposal("late", ProposalStatus::AwaitingReview, 30, 900),
        proposal("new-sent", ProposalStatus::Succeeded, 50, 200),
        proposal("soon", ProposalStatus::AwaitingReview, 40, 500),
        proposal("expired", ProposalStatus::Expired, 20, 300),
    ];
    let sections = review_sections(&list);
    let ids = |v: &[ProposalView]| v.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&sections.waiting), ["soon", "late"]);
    assert_eq!(ids(&sections.recent), ["new-sent", "expired", "old-denied"]);
    assert_eq!(review_sections(&[]), ReviewSections::default());
}

#[test]
fn ties_are_ordered_by_id_so_the_list_is_stable() {
    let list = vec![proposal("b", ProposalStatus::AwaitingReview, 1, 500), proposal("a", ProposalStatus::AwaitingReview, 1, 500)];
    let sections = review_sections(&list);
    assert_eq!(sections.waiting[0].id, "a");
}

#[test]
fn a_decided_proposal_replaces_its_awaiting_self() {
    let mut list = vec![proposal("p", ProposalStatus::AwaitingReview, 1, 500)];
    upsert_proposal(&mut list, proposal("p", ProposalStatus::Denied, 1, 500));
    upsert_proposal(&mut list, proposal("q", ProposalStatus::AwaitingReview, 2, 600));
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].status, ProposalStatus::Denied);
}

#[test]
fn a_changed_draft_is_never_swapped_in_under_review() {
    let shown = proposal("p", ProposalStatus::AwaitingReview, 1, 500);
    let mut same_draft_moved_on = shown.clone();
    same_draft_moved_on.status = ProposalStatus::Succeeded;
    same_draft_moved_on.receipt = Some("Saved to local sent mail".into());
    let changed = ProposalView { hash: "b".repeat(64), ..shown.clone() };

    assert_eq!(on_refetch(None, &changed), Refetched::Adopt, "nothing shown yet");
    assert_eq!(on_refetch(Some(&shown), &same_draft_moved_on), Refetched::Adopt);
    assert_eq!(on_refetch(Some(&shown), &changed), Refetched::Changed);
    let decided = ProposalView { status: ProposalStatus::Denied, ..shown };
    assert_eq!(on_refetch(Some(&decided), &changed), Refetched::Adopt, "no decision is pending on it");
}

#[test]
fn the_waiting_set_changes_when_a_task_enters_or_leaves_waiting_approval() {
    let mut store = TaskStore::default();
    store.upsert(task("t1", TaskStatus::Running, None));
    store.upsert(task("t2", TaskStatus::Queued, None));
    assert_eq!(waiting_approvals(&store), []);

    let mut entering = task("t1", TaskStatus::WaitingApproval, Some("p1"));
    entering.updated_at = 2;
    store.upsert(entering);
    assert_eq!(waiting_approvals(&store), [(TaskId::parse("t1").unwrap(), Some(ProposalId::parse("p1").unwrap()))]);

    // Another task moving without touching approval leaves the set as it was.
    let mut other = task("t2", TaskStatus::Running, None);
    other.updated_at = 2;
    store.upsert(other);
    assert_eq!(waiting_approvals(&store), [(TaskId::parse("t1").unwrap(), Some(ProposalId::parse("p1").unwrap()))]);

    let mut leaving = task("t1", TaskStatus::Running, Some("p1"));
    leaving.updated_at = 3;
    store.upsert(leaving);
    assert_eq!(waiting_approvals(&store), []);
}

#[test]
fn a_card_refetches_when_its_task_moves_not_when_it_learns_the_task() {
    let rev = |id: &str, n: u64| Some((TaskId::parse(id).unwrap(), n));
    assert!(!task_moved(None, None));
    assert!(!task_moved(None, rev("t", 0).as_ref()), "the first fetch told the card its task");
    assert!(!task_moved(rev("t", 0).as_ref(), rev("t", 0).as_ref()));
    assert!(task_moved(rev("t", 0).as_ref(), rev("t", 1).as_ref()));
    assert!(!task_moved(rev("t", 0).as_ref(), rev("u", 3).as_ref()), "another task is not a move");
    assert!(!task_moved(rev("t", 0).as_ref(), None));
}

#[test]
fn timing_reads_as_the_days_or_utc_times_that_will_be_written() {
    let all_day = |s: &str, e: &str| EventTiming::AllDay { start_date: s.into(), end_date: e.into() };
    assert_eq!(timing_label(&all_day("2025-05-01", "2025-05-02")), "All day 2025-05-01");
    assert_eq!(timing_label(&all_day("2025-05-01", "2025-05-04")), "All day 2025-05-01 to 2025-05-03");
    assert_eq!(timing_label(&all_day("2025-05-01", "soon")), "All day 2025-05-01 until soon");

    let timed = |s: &str, e: &str| EventTiming::Timed { start: s.into(), end: e.into() };
    assert_eq!(timing_label(&timed("2025-05-01T14:00:00Z", "2025-05-01T15:30:00Z")), "2025-05-01 14:00 – 15:30 UTC");
    assert_eq!(timing_label(&timed("2025-05-01T23:00:00Z", "2025-05-02T01:00:15Z")), "2025-05-01 23:00 – 2025-05-02 01:00:15 UTC");
    assert_eq!(
        timing_label(&timed("2025-05-01T14:00:00+02:00", "later")),
        "2025-05-01T14:00:00+02:00 – later",
        "an unexpected shape is shown as it came"
    );
}

#[test]
fn the_day_before_crosses_months_years_and_leap_days() {
    assert_eq!(day_before("2025-05-02").as_deref(), Some("2025-05-01"));
    assert_eq!(day_before("2025-03-01").as_deref(), Some("2025-02-28"));
    assert_eq!(day_before("2024-03-01").as_deref(), Some("2024-02-29"));
    assert_eq!(day_before("2000-03-01").as_deref(), Some("2000-02-29"));
    assert_eq!(day_before("1900-03-01").as_deref(), Some("1900-02-28"));
    assert_eq!(day_before("2025-01-01").as_deref(), Some("2024-12-31"));
    assert_eq!(day_before("2025-05-01").as_deref(), Some("2025-04-30"));
    for bad in ["2025-02-30", "2025-13-01", "2025-5-1", "tomorrow", ""] {
        assert_eq!(day_before(bad), None, "{bad}");
    }
}

#[test]
fn the_card_says_who_asked_for_it() {
    assert_eq!(origin_line(ProposalOrigin::OwnerChat), "Asked for by your chat");
    assert_eq!(origin_line(ProposalOrigin::Task), "Asked for by a background task");
    for &origin in ProposalOrigin::ALL {
        assert_eq!(origin_line(origin), format!("Asked for by {}", origin.label()), "{origin:?}");
    }
}

fn email(in_reply_to: Option<&str>, reply_to: Option<ReplyContext>) -> ProposalDraft {
    let ProposalDraft::EmailSend(mut email) = proposal("p", ProposalStatus::AwaitingReview, 0, 1).draft else { unreachable!() };
    email.in_reply_to = in_reply_to.map(str::to_owned);
    email.reply_to = reply_to;
    ProposalDraft::EmailSend(email)
}

#[test]
fn a_reply_names_the_subject_and_sender_it_answers() {
    let context = ReplyContext {
        message_id: "msg-school-1".into(),
        subject: "Community visit".into(),
        from: "Ms. Alvarez <alvarez@riverside-school.example>".into(),
    };
    assert_eq!(
        reply_line(&email(Some("msg-school-1"), Some(context.clone()))).as_deref(),
        Some("Replying to: Community visit — from Ms. Alvarez <alvarez@riverside-school.example>")
    );
    let blank = ReplyContext { subject: "  ".into(), from: String::new(), ..context };
    assert_eq!(reply_line(&email(Some("msg-school-1"), Some(blank))).as_deref(), Some("Replying to: (no subject) — from none"));
    assert_eq!(
        reply_line(&email(Some("msg-old"), None)).as_deref(),
        Some("Replying to message msg-old"),
        "a proposal from before replies were named still says it is a reply"
    );
    assert_eq!(reply_line(&email(None, None)), None, "a new email replies to nothing");
    assert_eq!(reply_line(&ProposalDraft::CalendarCreate(event("Yoga"))), None);
}

fn event(title: &str) -> EventDraft {
    EventDraft {
        calendar_id: "primary".into(),
        event_id: Some("evt-dentist".into()),
        title: title.into(),
        timing: EventTiming::Timed { start: "2026-12-04T15:00:00Z".into(), end: "2026-12-04T15:45:00Z".into() },
        time_zone: "UTC".into(),
        location: "Bright Smile Dental".into(),
        description: String::new(),
        attendees: vec![],
        before: None,
        changes: None,
    }
}

#[test]
fn an_update_shows_each_changed_field_before_and_after() {
    let now = event("Dentist check-up");
    let mut after = event("Dentist (moved)");
    after.timing = EventTiming::Timed { start: "2026-12-05T09:00:00Z".into(), end: "2026-12-05T09:45:00Z".into() };
    after.location = String::new();
    after.attendees = vec!["sam@example.org".into()];
    after.before = Some(now.snapshot());
    let changes = event_changes(&ProposalDraft::CalendarUpdate(after));
    let lines: Vec<(&str, String)> = changes.iter().map(|c| (c.field, c.arrow())).collect();
    assert_eq!(
        lines,
        [
            ("Title", "Dentist check-up → Dentist (moved)".to_owned()),
            ("When", "2026-12-04 15:00 – 15:45 UTC → 2026-12-05 09:00 – 09:45 UTC".to_owned()),
            ("Location", "Bright Smile Dental → none".to_owned()),
            ("Attendees", "none → sam@example.org".to_owned()),
        ],
        "unchanged fields (calendar, time zone, notes) are not listed"
    );
}

#[test]
fn only_an_update_with_its_before_lists_changes() {
    let without_before = ProposalDraft::CalendarUpdate(event("Dentist (moved)"));
    assert_eq!(event_changes(&without_before), []);
    let mut deleted = event("Dentist check-up");
    deleted.before = Some(event("Something else").snapshot());
    assert_eq!(event_changes(&ProposalDraft::CalendarDelete(deleted.clone())), [], "a delete shows the event, not a diff");
    assert_eq!(event_changes(&ProposalDraft::CalendarCreate(deleted)), []);
    assert_eq!(event_changes(&email(None, None)), []);
}

#[test]
fn the_event_lines_say_which_event_they_are() {
    assert_eq!(event_heading(&ProposalDraft::CalendarUpdate(event("a"))), Some("The event after the change:"));
    assert!(event_heading(&ProposalDraft::CalendarDelete(event("a"))).unwrap().contains("as it is in your calendar now"));
    assert_eq!(event_heading(&ProposalDraft::CalendarCreate(event("a"))), None);
    assert_eq!(event_heading(&email(None, None)), None);
}

#[test]
fn a_forms_rows_name_each_field_and_never_show_a_password() {
    use hearth_protocol::approvals::FormField;
    let field = |name: &str, label: &str, value: &str, hidden: bool, file: bool| FormField {
        name: name.into(),
        label: label.into(),
        value: value.into(),
        hidden,
        file,
    };
    let rows = form_rows(&[
        field("name", "Name", "Ada", false, false),
        field("pin", "PIN", "", true, false),
        field("note", "note", "", false, false),
        field("scan", "", "id.pdf", false, true),
    ]);
    let read: Vec<(&str, &str)> = rows.iter().map(|r| (r.field.as_str(), r.value.as_str())).collect();
    assert_eq!(
        read,
        [
            ("Name (name)", "Ada"),
            ("PIN (pin)", "hidden (a password; approving sends what was typed)"),
            ("note", "empty"),
            ("scan", "file: id.pdf"),
        ]
    );
    assert_eq!(kind_label(ProposalKind::WebSubmit), "Send web form");
    let form = hearth_protocol::approvals::WebSubmitDraft {
        profile: "task-t1".into(),
        page_url: "https://shop.example/".into(),
        page_title: "Shop".into(),
        reference: "0123456789ab:1".into(),
        gesture: hearth_protocol::approvals::SubmitGesture::PressEnter,
        element: "textbox \"Name\"".into(),
        method: "POST".into(),
        destination: "https://shop.example/order".into(),
        fields: vec![],
        form_version: "c".repeat(64),
    };
    assert_eq!(gesture_line(&form), "textbox \"Name\" (Enter pressed)");
}

#[test]
fn only_an_unknown_outcome_the_workspace_keeps_can_be_checked_and_retried() {
    let mut unknown = proposal("p1", ProposalStatus::OutcomeUnknown, 0, 1);
    assert!(can_recheck(&unknown), "an email whose send may have gone");
    for status in [
        ProposalStatus::AwaitingReview,
        ProposalStatus::Executing,
        ProposalStatus::Succeeded,
        ProposalStatus::Failed,
        ProposalStatus::Denied,
        ProposalStatus::Expired,
    ] {
        assert!(!can_recheck(&proposal("p2", status, 0, 1)), "{status:?}");
    }
    // A form only the site knows about: never offered.
    unknown.draft = ProposalDraft::WebSubmit(hearth_protocol::approvals::WebSubmitDraft {
        profile: "task-t1".into(),
        page_url: "https://shop.example/".into(),
        page_title: "Shop".into(),
        reference: "0123456789ab:1".into(),
        gesture: hearth_protocol::approvals::SubmitGesture::Click,
        element: "button \"Pay\"".into(),
        method: "POST".into(),
        destination: "https://shop.example/pay".into(),
        fields: vec![],
        form_version: "c".repeat(64),
    });
    assert!(!can_recheck(&unknown));
}

#[test]
fn a_draft_with_hidden_characters_is_shown_whole_and_counted() {
    let mut shown = proposal("p-hidden", ProposalStatus::AwaitingReview, 0, 60_000);
    if let ProposalDraft::EmailSend(email) = &mut shown.draft {
        email.body = "Transfer to bob\u{202E}moc.knab\u{202C} now\u{200B}".into();
        email.to = vec!["ada\u{E0041}@example.org".into()];
    }
    let (card, hidden) = revealed(&shown);
    assert_eq!(hidden, 4);
    let ProposalDraft::EmailSend(email) = &card.draft else { panic!("kind changed") };
    assert_eq!(email.body, "Transfer to bob⟦U+202E⟧moc.knab⟦U+202C⟧ now⟦U+200B⟧");
    assert_eq!(email.to, vec!["ada⟦U+E0041⟧@example.org".to_owned()]);
    assert_eq!(card.hash, shown.hash, "the decision still names the stored draft");
    assert!(hidden_line(hidden).starts_with("This draft holds 4 hidden characters"));
    let (_, none) = revealed(&proposal("p-plain", ProposalStatus::AwaitingReview, 0, 60_000));
    assert_eq!(none, 0);
}

#[test]
fn a_leaving_card_counts_down_whole_seconds_then_says_it_is_on_its_way() {
    assert_eq!(leaving_label(0, 10_000), "Leaves in 10 s");
    assert_eq!(leaving_label(1, 10_000), "Leaves in 10 s", "a part second counts as one");
    assert_eq!(leaving_label(9_500, 10_000), "Leaves in 1 s");
    assert_eq!(leaving_label(10_000, 10_000), "Leaving now…");
    assert_eq!(leaving_label(12_000, 10_000), "Leaving now…");
    assert!(!left_by(9_999, 10_000));
    assert!(left_by(10_000, 10_000), "the card asks again once the window is over");
}

#[test]
fn a_send_in_its_undo_window_sits_on_top_of_what_waits() {
    let leaving = ProposalView { leaves_at: Some(50), ..proposal("leaving", ProposalStatus::Leaving, 30, 400) };
    let sections = review_sections(&[
        proposal("waits", ProposalStatus::AwaitingReview, 10, 100),
        leaving,
        proposal("done", ProposalStatus::Succeeded, 40, 500),
    ]);
    let ids = |list: &[ProposalView]| list.iter().map(|p| p.id.as_str().to_owned()).collect::<Vec<_>>();
    assert_eq!(ids(&sections.waiting), ["leaving", "waits"]);
    assert_eq!(ids(&sections.recent), ["done"]);
}
