//! Ideas: deterministic rules over what Hearth holds — no model. Each idea's id is the rule
//! and what it is about, hashed, so it is the same idea every time it is computed and a
//! decision on it sticks.
//!
//! - A mail in the inbox with an attachment that mentions a form → fill it (a document task).
//! - A mail that asks to meet (a question with "meet", "still on", "catch up", …) → answer it.
//! - A goal without milestones → propose some (a task on the goal).
//! - The same request as the first message of three conversations → a weekly schedule.
//!
//! The mail rules read the inbox of the account the owner chose in Settings → Accounts — the
//! sample mailbox or a connected Google account — through the same workspace the mail tools
//! use, when the ideas are asked for (Google's mail is read on demand, never copied).

use hearth_protocol::ideas::{IdeaKind, IdeaView};
use hearth_protocol::mail::MailMatch;
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::store::Store;

/// At most this many ideas are offered at once.
const MAX_IDEAS: usize = 12;

/// Words that make a question an ask to meet.
const MEETING_WORDS: &[&str] = &["meet", "meeting", "still on", "catch up", "coffee", "lunch", "call", "free on", "available"];

/// Whether a mail asks to meet: it asks something and names meeting.
pub fn asks_to_meet(subject: &str, body: &str) -> bool {
    let text = format!("{subject}\n{body}").to_lowercase();
    text.contains('?') && MEETING_WORDS.iter().any(|w| text.contains(w))
}

/// The idea's id: the rule and its subject.
pub fn idea_id(kind: IdeaKind, subject: &str) -> String {
    let digest = hex::encode(Sha256::digest(format!("{}:{subject}", kind.as_str()).as_bytes()));
    format!("idea-{}", &digest[..24])
}

/// What accepting an idea makes, with what it needs (one variant per rule, so the kind and
/// its subject cannot disagree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// A task for this message's form.
    FillForm {
        /// The message.
        message_id: String,
        /// Its conversation (what read_mail_thread takes).
        thread_id: String,
        /// Its subject.
        subject: String,
        /// Whose mailbox it is in: the sample mailbox's forms go to the document workflow,
        /// which reads Hearth's own tables; a connected account's to the agent, which reads
        /// it through the mail tools.
        mailbox: Mailbox,
    },
    /// A task to answer this message.
    AnswerMeeting {
        /// The message.
        message_id: String,
        /// Its conversation.
        thread_id: String,
        /// Its sender.
        from: String,
        /// Its subject.
        subject: String,
    },
    /// A task to propose milestones for this goal.
    AddMilestones {
        /// The goal.
        goal_id: String,
        /// Its title.
        title: String,
    },
    /// A weekly schedule of this request.
    MakeSchedule(String),
}

impl Offer {
    /// The rule.
    pub const fn kind(&self) -> IdeaKind {
        match self {
            Offer::FillForm { .. } => IdeaKind::FillForm,
            Offer::AnswerMeeting { .. } => IdeaKind::AnswerMeeting,
            Offer::AddMilestones { .. } => IdeaKind::AddMilestones,
            Offer::MakeSchedule(_) => IdeaKind::MakeSchedule,
        }
    }
}

/// Which kind of mailbox the inbox came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mailbox {
    /// The seeded local mailbox.
    Sample,
    /// A connected account (Google).
    Connected,
}

/// The chosen account's newest inbox messages, as the mail rules read them.
#[derive(Debug, Clone)]
pub struct Inbox {
    /// Newest first.
    pub messages: Vec<MailMatch>,
    /// Whose.
    pub mailbox: Mailbox,
}

impl Inbox {
    /// No mail to read (the account could not be read; the other rules still run).
    pub const fn empty() -> Self {
        Self { messages: Vec::new(), mailbox: Mailbox::Sample }
    }
}

/// Every idea not decided yet, with what it is about. The mail rules read each message's
/// subject and snippet (its first 240 characters), the same for every account: Gmail is read
/// as search hits, never copied whole.
pub async fn compute(store: &Store, inbox: &Inbox) -> Result<Vec<(IdeaView, Offer)>> {
    let decided = store.idea_decisions().await?;
    let mut ideas = Vec::new();
    let mut offer = |about: &str, title: String, reason: String, subject: Offer| {
        let kind = subject.kind();
        let id = idea_id(kind, about);
        if !decided.contains_key(&id) && ideas.len() < MAX_IDEAS {
            ideas.push((IdeaView { id, kind, title, reason }, subject));
        }
    };
    let mut seen_threads = std::collections::HashSet::new();
    for message in &inbox.messages {
        // A provider's ids go into a task's instructions: only plain ids do.
        let plain = hearth_protocol::ids::is_valid_id(&message.message_id) && hearth_protocol::ids::is_valid_id(&message.thread_id);
        if seen_threads.contains(&message.thread_id) || !plain {
            // One idea per conversation, from its newest message that suggests one.
            continue;
        }
        let text = format!("{} {}", message.subject, message.snippet).to_lowercase();
        if message.attachments > 0 && text.contains("form") {
            offer(
                &message.message_id,
                format!("Fill the form from {}", short_sender(&message.from)),
                format!("\u{201c}{}\u{201d} has a form attached.", message.subject),
                Offer::FillForm {
                    message_id: message.message_id.clone(),
                    thread_id: message.thread_id.clone(),
                    subject: message.subject.clone(),
                    mailbox: inbox.mailbox,
                },
            );
            seen_threads.insert(message.thread_id.clone());
        } else if asks_to_meet(&message.subject, &message.snippet) {
            offer(
                &message.message_id,
                format!("Answer {} about meeting", short_sender(&message.from)),
                format!("\u{201c}{}\u{201d} asks to meet.", message.subject),
                Offer::AnswerMeeting {
                    message_id: message.message_id.clone(),
                    thread_id: message.thread_id.clone(),
                    from: message.from.clone(),
                    subject: message.subject.clone(),
                },
            );
            seen_threads.insert(message.thread_id.clone());
        }
    }
    for goal in store.goals().await? {
        if goal.milestones.is_empty() {
            offer(
                &goal.id,
                format!("Propose milestones for \u{201c}{}\u{201d}", goal.title),
                "A goal without milestones is hard to follow.".into(),
                Offer::AddMilestones { goal_id: goal.id.clone(), title: goal.title.clone() },
            );
        }
    }
    for (request, times) in store.repeated_requests(3, 5).await? {
        offer(
            &request,
            format!("Do \u{201c}{request}\u{201d} every Monday at 09:00"),
            format!("You asked for it in {times} conversations."),
            Offer::MakeSchedule(request.clone()),
        );
    }
    Ok(ideas)
}

/// "Ms. Alvarez <alvarez@…>" → "Ms. Alvarez".
fn short_sender(from: &str) -> String {
    from.split('<').next().map(str::trim).filter(|s| !s.is_empty()).unwrap_or(from).chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meeting_asks_need_a_question_and_a_meeting_word() {
        assert!(asks_to_meet("Weekend hiking trip", "Are we still on for Saturday?"));
        assert!(asks_to_meet("Coffee?", ""));
        assert!(!asks_to_meet("Minutes of the meeting", "Attached."));
        assert!(!asks_to_meet("Invoice", "Can you pay by Friday?"));
    }

    #[test]
    fn ids_are_stable_and_apart() {
        assert_eq!(idea_id(IdeaKind::FillForm, "m1"), idea_id(IdeaKind::FillForm, "m1"));
        assert_ne!(idea_id(IdeaKind::FillForm, "m1"), idea_id(IdeaKind::AnswerMeeting, "m1"));
        assert!(hearth_protocol::ids::is_valid_id(&idea_id(IdeaKind::MakeSchedule, "water the plants")));
        assert_eq!(short_sender("Ms. Alvarez <alvarez@riverside-school.example>"), "Ms. Alvarez");
    }
}
