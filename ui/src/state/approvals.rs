//! Proposals as the approval card and the Approvals screen show them: the countdown, whether
//! a decision can still be sent, the list's order, and when to fetch again.
//!
//! Plain data so the rules are tested without a browser; "now" is always passed in.

use hearth_protocol::approvals::{
    EmailDraft, EventDraft, EventSnapshot, EventTiming, FormField, ProposalDraft, ProposalKind, ProposalOrigin, ProposalStatus,
    ProposalView, SubmitGesture, WebSubmitDraft,
};
use hearth_protocol::ids::{ProposalId, TaskId};
use hearth_protocol::provenance::OutsideSource;
use hearth_protocol::reveal::{reveal, reveal_json};
use hearth_protocol::tasks::TaskStatus;

use crate::state::tasks::TaskStore;

/// Time left until `expires_at` as "mm:ss" (minutes may exceed 59), "00:00" once past.
/// Rounded up, so "00:00" appears exactly when the proposal expires.
pub fn countdown_label(now_ms: i64, expires_at: i64) -> String {
    let left_ms = expires_at.saturating_sub(now_ms).max(0);
    let left_s = left_ms / 1000 + i64::from(left_ms % 1000 != 0);
    format!("{:02}:{:02}", left_s / 60, left_s % 60)
}

/// What a card in its undo window says: the seconds left ("Leaves in 8 s"), then that it is
/// on its way once they are up.
pub fn leaving_label(now_ms: i64, leaves_at: i64) -> String {
    let left_ms = leaves_at.saturating_sub(now_ms).max(0);
    if left_ms == 0 {
        return "Leaving now…".to_owned();
    }
    let left_s = left_ms / 1000 + i64::from(left_ms % 1000 != 0);
    format!("Leaves in {left_s} s")
}

/// Whether an undo window ending at `leaves_at` is over at `now_ms`.
pub fn left_by(now_ms: i64, leaves_at: i64) -> bool {
    now_ms >= leaves_at
}

/// Whether the proposal can no longer be approved at `now_ms`.
pub fn is_expired(now_ms: i64, expires_at: i64) -> bool {
    now_ms >= expires_at
}

/// The status to show: an awaiting proposal past its expiry is expired, even before the
/// backend records it, so the owner is never offered a decision that will be refused.
pub fn effective_status(proposal: &ProposalView, now_ms: i64) -> ProposalStatus {
    if proposal.status == ProposalStatus::AwaitingReview && is_expired(now_ms, proposal.expires_at) {
        ProposalStatus::Expired
    } else {
        proposal.status
    }
}

/// Whether Approve and Deny are offered.
pub fn can_decide(proposal: &ProposalView, now_ms: i64) -> bool {
    effective_status(proposal, now_ms) == ProposalStatus::AwaitingReview
}

/// Whether the owner can check (and retry) this proposal: approved, its outcome unknown, and
/// kept where Hearth can look for it — a web form's only the site knows.
pub fn can_recheck(proposal: &ProposalView) -> bool {
    let findable = match proposal.draft.kind() {
        ProposalKind::EmailSend | ProposalKind::CalendarCreate | ProposalKind::CalendarUpdate | ProposalKind::CalendarDelete => true,
        ProposalKind::WebSubmit | ProposalKind::HeldCall => false,
    };
    proposal.status == ProposalStatus::OutcomeUnknown && findable
}

/// A status as the owner reads it ("awaiting review").
pub fn status_label(status: ProposalStatus) -> String {
    status.as_str().replace('_', " ")
}

/// What approving does, in a word or two.
pub const fn kind_label(kind: ProposalKind) -> &'static str {
    match kind {
        ProposalKind::EmailSend => "Send email",
        ProposalKind::CalendarCreate => "New event",
        ProposalKind::CalendarUpdate => "Change event",
        ProposalKind::CalendarDelete => "Delete event",
        ProposalKind::WebSubmit => "Send web form",
        ProposalKind::HeldCall => "Agent action",
    }
}

/// The card's title: what approving does, and for a held call of a plug-in tool, that it is one.
pub fn draft_title(draft: &hearth_protocol::approvals::ProposalDraft) -> &'static str {
    match draft {
        hearth_protocol::approvals::ProposalDraft::HeldCall(call) => match call.tool {
            hearth_protocol::approvals::HeldTool::Mcp(_) => "Plug-in tool call",
            hearth_protocol::approvals::HeldTool::Hearth(_) => kind_label(draft.kind()),
        },
        other => kind_label(other.kind()),
    }
}

/// Who asked for the proposal: "Asked for by your chat". None of them can approve it; the
/// line tells the owner whether the draft came from them, a task or another program.
pub fn origin_line(origin: ProposalOrigin) -> String {
    format!("Asked for by {}", origin.label())
}

/// The proposal as the card shows it: every string of its draft and sources with its hidden
/// characters (zero-width, bidirectional, tag, control) written as `⟦U+XXXX⟧`, and how many
/// there were. The hash is untouched: a decision still names the stored draft.
pub fn revealed(proposal: &ProposalView) -> (ProposalView, usize) {
    let mut hidden = 0;
    let mut shown = proposal.clone();
    if let Ok(mut value) = serde_json::to_value(&proposal.draft) {
        let found = reveal_json(&mut value);
        hidden += found;
        if found > 0
            && let Ok(draft) = serde_json::from_value(value)
        {
            shown.draft = draft;
        }
    }
    for source in &mut shown.sources {
        let (detail, found) = reveal(&source.detail);
        source.detail = detail;
        hidden += found;
    }
    (shown, hidden)
}

/// The card's warning when a draft holds hidden characters.
pub fn hidden_line(hidden: usize) -> String {
    let what = if hidden == 1 { "1 hidden character".to_owned() } else { format!("{hidden} hidden characters") };
    format!("This draft holds {what}, shown as ⟦U+…⟧. Text you cannot see can change what it says or where it goes.")
}

/// What outside content was in the agent's context when it asked: "After reading: mail
/// (thread-7), a web page (https://…)". `None` when it had only the owner's words.
pub fn sources_line(sources: &[OutsideSource]) -> Option<String> {
    if sources.is_empty() {
        return None;
    }
    let named: Vec<String> = sources.iter().map(OutsideSource::describe).collect();
    Some(format!("After reading: {}", named.join(", ")))
}

/// Which message an email answers: "Replying to: <subject> — from <sender>", as the mailbox
/// holds that message (the hash covers it). `None` for a new email and for events.
pub fn reply_line(draft: &ProposalDraft) -> Option<String> {
    match draft {
        ProposalDraft::EmailSend(email) => email_reply_line(email),
        ProposalDraft::CalendarCreate(_)
        | ProposalDraft::CalendarUpdate(_)
        | ProposalDraft::CalendarDelete(_)
        | ProposalDraft::WebSubmit(_)
        | ProposalDraft::HeldCall(_) => None,
    }
}

fn email_reply_line(email: &EmailDraft) -> Option<String> {
    let quoted = |text: &str| if text.trim().is_empty() { "(no subject)".to_owned() } else { text.trim().to_owned() };
    match (&email.reply_to, &email.in_reply_to) {
        (Some(message), _) => Some(format!("Replying to: {} — from {}", quoted(&message.subject), or_none(&message.from))),
        // Prepared before proposals named the message: the id is all there is.
        (None, Some(id)) => Some(format!("Replying to message {id}")),
        (None, None) => None,
    }
}

/// What the event lines above the draft say it is: the event after the change (update), the
/// event as the calendar holds it (delete). `None` for a new event and for email.
pub const fn event_heading(draft: &ProposalDraft) -> Option<&'static str> {
    match draft {
        ProposalDraft::CalendarUpdate(_) => Some("The event after the change:"),
        ProposalDraft::CalendarDelete(_) => Some("The event that will be deleted, as it is in your calendar now:"),
        ProposalDraft::EmailSend(_) | ProposalDraft::CalendarCreate(_) | ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => None,
    }
}

/// Above an update's list of [`FieldChange`]s.
pub const CHANGES_HEADING: &str = "What changes (now → after you approve):";

/// One field an update changes, as the card shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// The field's name ("Title", "When", …).
    pub field: &'static str,
    /// Its value now.
    pub before: String,
    /// Its value once approved.
    pub after: String,
}

impl FieldChange {
    /// "now → after".
    pub fn arrow(&self) -> String {
        format!("{} → {}", self.before, self.after)
    }
}

/// The fields an update changes, before → after, in the card's field order. Empty for
/// anything but an update, and for an update that carries no `before` (the draft then is
/// all there is to show).
pub fn event_changes(draft: &ProposalDraft) -> Vec<FieldChange> {
    match draft {
        ProposalDraft::CalendarUpdate(event) => update_changes(event),
        ProposalDraft::EmailSend(_)
        | ProposalDraft::CalendarCreate(_)
        | ProposalDraft::CalendarDelete(_)
        | ProposalDraft::WebSubmit(_)
        | ProposalDraft::HeldCall(_) => Vec::new(),
    }
}

/// One field a web form sends, as the card lists it: what the page calls it, and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormRow {
    /// The field's label, with the name the site receives when it differs ("PIN (pin)").
    pub field: String,
    /// The value sent, or what stands for it (a hidden password, a file, an empty field).
    pub value: String,
}

/// The rows of a form's review, in the form's order. A password's value is never in the
/// proposal: the row says it is hidden, and that approving sends what was typed (the hash
/// binds it).
pub fn form_rows(fields: &[FormField]) -> Vec<FormRow> {
    fields
        .iter()
        .map(|f| {
            let field = match f.label.trim() {
                "" => f.name.clone(),
                label if label == f.name => label.to_owned(),
                label => format!("{label} ({})", f.name),
            };
            let value = if f.hidden {
                "hidden (a password; approving sends what was typed)".to_owned()
            } else if f.file {
                format!("file: {}", or_none(&f.value))
            } else if f.value.is_empty() {
                "empty".to_owned()
            } else {
                f.value.clone()
            };
            FormRow { field, value }
        })
        .collect()
}

/// How a form is sent, as the card says it: `button "Pay" (clicked)`, `textbox "Name" (Enter
/// pressed)`.
pub fn gesture_line(form: &WebSubmitDraft) -> String {
    let how = match form.gesture {
        SubmitGesture::Click => "clicked",
        SubmitGesture::PressEnter => "Enter pressed",
    };
    format!("{} ({how})", form.element)
}

/// How one field of an event reads on the card.
type FieldValue = fn(&EventSnapshot) -> String;

fn update_changes(event: &EventDraft) -> Vec<FieldChange> {
    let Some(before) = &event.before else { return Vec::new() };
    let after = event.snapshot();
    let fields: [(&'static str, FieldValue); 7] = [
        ("Calendar", |e| e.calendar_id.clone()),
        ("Title", |e| e.title.clone()),
        ("When", |e| timing_label(&e.timing)),
        ("Time zone", |e| e.time_zone.clone()),
        ("Location", |e| or_none(&e.location)),
        ("Attendees", |e| if e.attendees.is_empty() { "none".to_owned() } else { e.attendees.join(", ") }),
        ("Notes", |e| or_none(&e.description)),
    ];
    fields
        .into_iter()
        .filter_map(|(field, value)| {
            let (was, will) = (value(before), value(&after));
            (was != will).then_some(FieldChange { field, before: was, after: will })
        })
        .collect()
}

fn or_none(text: &str) -> String {
    if text.trim().is_empty() { "none".to_owned() } else { text.to_owned() }
}

/// The Approvals screen's two sections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewSections {
    /// Leaving (Undo still possible) first, then awaiting review, the soonest to expire first.
    pub waiting: Vec<ProposalView>,
    /// Everything else, the most recent first.
    pub recent: Vec<ProposalView>,
}

/// Splits and orders proposals for the Approvals screen, whatever order they came in.
/// Sections follow the backend's status, not the clock, so the list does not reshuffle
/// while the owner reads it; an expired card says so itself.
pub fn review_sections(proposals: &[ProposalView]) -> ReviewSections {
    // An approved send in its undo window stays on top with what waits: Undo is only for now.
    let (mut waiting, mut recent): (Vec<_>, Vec<_>) =
        proposals.iter().cloned().partition(|p| matches!(p.status, ProposalStatus::AwaitingReview | ProposalStatus::Leaving));
    waiting.sort_by(|a, b| {
        (b.status == ProposalStatus::Leaving)
            .cmp(&(a.status == ProposalStatus::Leaving))
            .then_with(|| a.expires_at.cmp(&b.expires_at))
            .then_with(|| a.id.cmp(&b.id))
    });
    recent.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    ReviewSections { waiting, recent }
}

/// Replaces the proposal with the same id, or adds it.
pub fn upsert_proposal(proposals: &mut Vec<ProposalView>, proposal: ProposalView) {
    match proposals.iter_mut().find(|held| held.id == proposal.id) {
        Some(held) => *held = proposal,
        None => proposals.push(proposal),
    }
}

/// What to do with a proposal fetched again while a card shows one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refetched {
    /// Show it: same draft (a status or receipt moved on), or nothing awaited a decision.
    Adopt,
    /// The draft under review changed: keep showing the old one, whose buttons the backend
    /// will refuse, and offer the latest for a fresh review. Never swap it under the owner's
    /// cursor.
    Changed,
}

/// Whether a re-fetched proposal may replace the one on screen.
pub fn on_refetch(shown: Option<&ProposalView>, fetched: &ProposalView) -> Refetched {
    match shown {
        Some(shown) if shown.status == ProposalStatus::AwaitingReview && shown.hash != fetched.hash => Refetched::Changed,
        _ => Refetched::Adopt,
    }
}

/// Tasks waiting for approval and the proposal each waits on, by task id. When this changes,
/// a task entered or left waiting_approval and the Approvals list is fetched again.
pub fn waiting_approvals(store: &TaskStore) -> Vec<(TaskId, Option<ProposalId>)> {
    let mut waiting: Vec<_> = store
        .tasks()
        .filter(|task| task.status == TaskStatus::WaitingApproval)
        .map(|task| (task.id.clone(), task.proposal_id.clone()))
        .collect();
    waiting.sort();
    waiting
}

/// A task and the store's revision of it.
pub type TaskRevision = (TaskId, u64);

/// Whether the task behind a card moved since the card last looked (not merely that the
/// card learned which task it is), so the card fetches its proposal again.
pub fn task_moved(before: Option<&TaskRevision>, now: Option<&TaskRevision>) -> bool {
    matches!((before, now), (Some((was_id, was)), Some((id, rev))) if was_id == id && was != rev)
}

/// When an event happens, exactly: all-day dates (the last day inclusive) or the UTC times
/// the backend will write.
pub fn timing_label(timing: &EventTiming) -> String {
    match timing {
        EventTiming::AllDay { start_date, end_date } => match day_before(end_date) {
            Some(last) if last == *start_date => format!("All day {start_date}"),
            Some(last) => format!("All day {start_date} to {last}"),
            None => format!("All day {start_date} until {end_date}"),
        },
        EventTiming::Timed { start, end } => {
            let (start_day, start_time) = utc_parts(start);
            let (end_day, end_time) = utc_parts(end);
            match (start_day, start_time, end_day, end_time) {
                (Some(sd), Some(st), Some(ed), Some(et)) if sd == ed => format!("{sd} {st} – {et} UTC"),
                (Some(sd), Some(st), Some(ed), Some(et)) => format!("{sd} {st} – {ed} {et} UTC"),
                // Not the normalized shape: show exactly what came.
                _ => format!("{start} – {end}"),
            }
        }
    }
}

/// "2025-05-01T14:00:00Z" → ("2025-05-01", "14:00"); seconds only when not zero.
fn utc_parts(rfc3339: &str) -> (Option<&str>, Option<&str>) {
    let Some(rest) = rfc3339.strip_suffix('Z') else { return (None, None) };
    let Some((day, time)) = rest.split_once('T') else { return (None, None) };
    let short = time.strip_suffix(":00").filter(|t| t.len() == 5).unwrap_or(time);
    (parse_date(day).map(|_| day), Some(short))
}

/// The day before a `YYYY-MM-DD` date, or `None` when it is not one.
pub fn day_before(date: &str) -> Option<String> {
    let (year, month, day) = parse_date(date)?;
    let (year, month, day) = match (month, day) {
        (1, 1) => (year - 1, 12, 31),
        (_, 1) => (year, month - 1, days_in_month(year, month - 1)),
        _ => (year, month, day - 1),
    };
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

fn parse_date(date: &str) -> Option<(i32, u32, u32)> {
    let mut parts = date.splitn(3, '-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let (year, month, day) = (year.parse().ok()?, month.parse().ok()?, day.parse().ok()?);
    ((1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day)).then_some((year, month, day))
}

const fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
