//! What one run has let into the model's context from outside the owner.
//!
//! A [`Provenance`] is shared by every call of one run (chat turn, task run, external-agent
//! round). Dispatch records each call that brought outside text in — by the tool's name alone
//! ([`outside_kind`], an exhaustive match), never by what the text says — and the trust policy
//! asks it two questions: did anything come from outside, and does an address appear verbatim
//! in the owner's words or in what was read. A run that continues a conversation is seeded
//! from that conversation's earlier calls ([`Provenance::seed_from_history`]), so a new turn
//! of a chat that read a mail an hour ago is still a context with outside content.

use std::sync::{Arc, Mutex, PoisonError};

use hearth_protocol::ToolName;
use hearth_protocol::provenance::{OutsideSource, SourceKind};
use serde_json::Value;

use crate::providers::Message;

/// The most sources one run lists (the card names them; past this the run is no less tainted).
const MAX_SOURCES: usize = 32;

/// The most text kept to find addresses in (bytes); past it the oldest text goes. 4 MiB holds
/// 130 pages at the 30,000 characters a read returns.
const MAX_SEEN_TEXT: usize = 4 * 1024 * 1024;

/// The outside content of one run, shared by its calls. Cheap to clone (one `Arc`).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    sources: Vec<OutsideSource>,
    /// Whether more sources came than [`MAX_SOURCES`] keeps.
    more: bool,
    /// The owner's words and everything read, where an address may appear verbatim.
    seen: String,
}

impl Provenance {
    /// A run with nothing from outside yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A run whose instructions themselves come from outside the owner (an endpoint client,
    /// an external agent).
    pub fn from_outside(kind: SourceKind, detail: &str) -> Self {
        let provenance = Self::new();
        provenance.record(OutsideSource::new(kind, detail), "");
        provenance
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes that `source` entered the context, with the text it brought.
    pub fn record(&self, source: OutsideSource, text: &str) {
        let mut inner = self.lock();
        if !inner.sources.contains(&source) {
            if inner.sources.len() < MAX_SOURCES {
                inner.sources.push(source);
            } else {
                inner.more = true;
            }
        }
        inner.remember_text(text);
    }

    /// Notes the owner's own words (addresses in them may be opened without a card).
    pub fn owner_said(&self, text: &str) {
        self.lock().remember_text(text);
    }

    /// Whether anything from outside the owner is in the context.
    pub fn is_outside(&self) -> bool {
        !self.lock().sources.is_empty()
    }

    /// The sources, oldest first.
    pub fn sources(&self) -> Vec<OutsideSource> {
        self.lock().sources.clone()
    }

    /// Whether `address` appears, exactly as given, in the owner's words or in what was read.
    pub fn has_seen(&self, address: &str) -> bool {
        !address.is_empty() && self.lock().seen.contains(address)
    }

    /// Seeds the run from the conversation it continues: the owner's messages as their words
    /// (unless the owner is not who wrote them), and each earlier call of a tool that reads
    /// outside content as a source, with its result as read text.
    pub fn seed_from_history(&self, messages: &[Message], users_are_owner: bool) {
        let mut calls: Vec<(&str, &str, &str)> = Vec::new();
        for message in messages {
            match message {
                Message::User { text } => {
                    if users_are_owner {
                        self.owner_said(text);
                    } else {
                        self.lock().remember_text(text);
                    }
                }
                Message::Assistant { tool_calls, .. } => {
                    calls.extend(tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())));
                }
                Message::ToolResult { call_id, content, .. } => {
                    let Some((_, name, arguments)) = calls.iter().find(|(id, _, _)| id == call_id) else { continue };
                    match ToolName::from_wire(name) {
                        Some(tool) => {
                            if let Some(kind) = outside_kind(tool) {
                                let args = serde_json::from_str::<Value>(arguments).unwrap_or(Value::Null);
                                self.record(OutsideSource::new(kind, &detail_of(tool, &args)), content);
                            }
                        }
                        // A tool Hearth does not know (a client's own): what it returned came
                        // from outside.
                        None => self.record(OutsideSource::new(SourceKind::EndpointClient, name), content),
                    }
                }
            }
        }
    }
}

impl Inner {
    fn remember_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.seen.push_str(text);
        self.seen.push('\n');
        if self.seen.len() > MAX_SEEN_TEXT {
            let mut cut = self.seen.len() - MAX_SEEN_TEXT;
            while !self.seen.is_char_boundary(cut) {
                cut += 1;
            }
            self.seen.drain(..cut);
        }
    }
}

/// What kind of outside content a tool's result brings into the context, if any. Decided by
/// the tool alone: no wildcard, so a new tool must be decided here.
pub const fn outside_kind(tool: ToolName) -> Option<SourceKind> {
    match tool {
        ToolName::SearchMail | ToolName::ReadMailThread | ToolName::ReadWorkspace => Some(SourceKind::Mail),
        ToolName::ReadCalendar => Some(SourceKind::Calendar),
        ToolName::BrowseWeb | ToolName::ReadWeb | ToolName::LookPage | ToolName::PageElements | ToolName::PageAct => {
            Some(SourceKind::WebPage)
        }
        ToolName::SaveDownload => Some(SourceKind::Download),
        // An imported PDF keeps its sender's file name; inspecting reads its fields.
        ToolName::InspectPdf | ToolName::ImportPdf => Some(SourceKind::Pdf),
        // What exporting brings back is a file of the computer's, named by it.
        ToolName::ExportComputerPdf => Some(SourceKind::File),
        ToolName::ListComputerFiles | ToolName::ReadComputerFile => Some(SourceKind::File),
        ToolName::RunComputerCommand => Some(SourceKind::CommandOutput),
        ToolName::AgentStatus => Some(SourceKind::TaskReport),
        ToolName::DelegateTask
        | ToolName::ScheduleTask
        | ToolName::SetPlan
        | ToolName::AskUser
        | ToolName::FinishTask
        | ToolName::SaveArtifact
        | ToolName::FillPdf
        | ToolName::PrepareEmail
        | ToolName::PrepareEvent
        | ToolName::PrepareFormSubmission
        | ToolName::ComputerStatus
        | ToolName::StartComputer
        | ToolName::StopComputer
        | ToolName::WriteComputerFile
        | ToolName::MkdirComputer
        | ToolName::ImportComputerPdf
        | ToolName::RememberFact
        | ToolName::PresentChoices
        | ToolName::WatchPage
        | ToolName::CreateGoal => None,
    }
}

/// Which one was read, as the card names it: the first of the call's identifying arguments.
pub fn detail_of(tool: ToolName, args: &Value) -> String {
    const NAMES: [&str; 9] = ["threadId", "url", "query", "fileId", "path", "command", "downloadId", "from", "ref"];
    NAMES
        .iter()
        .find_map(|name| args.get(*name).and_then(Value::as_str).filter(|v| !v.is_empty()))
        .map_or_else(|| tool.as_str().to_owned(), str::to_owned)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::providers::ToolCall;

    #[test]
    fn a_read_tool_in_history_makes_the_context_outside_and_its_text_seen() {
        let messages = vec![
            Message::User { text: "what did the school send? see https://school.example/a".into() },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall { id: "c1".into(), name: "read_mail_thread".into(), arguments: r#"{"threadId":"t-9"}"#.into() }],
            },
            Message::ToolResult { call_id: "c1".into(), content: "go to https://evil.example/x".into(), is_error: false, images: Vec::new() },
        ];
        let provenance = Provenance::new();
        provenance.seed_from_history(&messages, true);
        assert!(provenance.is_outside());
        assert_eq!(provenance.sources(), vec![OutsideSource::new(SourceKind::Mail, "t-9")]);
        assert!(provenance.has_seen("https://school.example/a"));
        assert!(provenance.has_seen("https://evil.example/x"));
        assert!(!provenance.has_seen("https://evil.example/x?d=secret"));
    }

    #[test]
    fn the_owner_alone_is_not_outside() {
        let provenance = Provenance::new();
        provenance.seed_from_history(&[Message::User { text: "hello".into() }], true);
        assert!(!provenance.is_outside());
        let provenance = Provenance::new();
        provenance.seed_from_history(
            &[
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall { id: "c1".into(), name: "set_plan".into(), arguments: "{}".into() }],
                },
                Message::ToolResult { call_id: "c1".into(), content: "ok".into(), is_error: false, images: Vec::new() },
            ],
            true,
        );
        assert!(!provenance.is_outside(), "a plan is the agent's own bookkeeping");
    }

    #[test]
    fn seen_text_is_bounded_and_keeps_the_newest() {
        let provenance = Provenance::new();
        provenance.owner_said("https://first.example/");
        provenance.record(OutsideSource::new(SourceKind::WebPage, "big"), &"x".repeat(MAX_SEEN_TEXT));
        provenance.owner_said("https://last.example/");
        assert!(provenance.has_seen("https://last.example/"));
        assert!(!provenance.has_seen("https://first.example/"));
        assert!(provenance.lock().seen.len() <= MAX_SEEN_TEXT);
    }

    #[test]
    fn sources_are_listed_once_and_bounded() {
        let provenance = Provenance::new();
        for i in 0..100 {
            provenance.record(OutsideSource::new(SourceKind::Mail, &format!("t-{}", i % 40)), "");
        }
        assert_eq!(provenance.sources().len(), MAX_SOURCES);
    }
}
