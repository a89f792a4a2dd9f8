//! Where the text in an agent's context came from, as the owner's card shows it.
//!
//! An agent that reads mail and web pages takes instructions from whoever wrote them. Hearth
//! therefore records, for every run, what entered the model's context from outside the owner
//! ([`OutsideSource`]); the core's trust policy decides by it what runs, what waits for the
//! owner and what is refused, and the card of a held call names these sources, so the owner
//! sees which content led to the action.

use serde::{Deserialize, Serialize};

/// What kind of content came from outside the owner. The card words it; the trust policy only
/// asks whether any is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Mail (a search result or a thread): written by its senders.
    Mail,
    /// Calendar entries: their descriptions are written by whoever invited the owner.
    Calendar,
    /// A web page: written by whoever runs the site.
    WebPage,
    /// A PDF's text or fields.
    Pdf,
    /// A file in the computer's workspace.
    File,
    /// What a command in the computer printed.
    CommandOutput,
    /// A file the browser downloaded.
    Download,
    /// What a background task reported (its result may carry what it read).
    TaskReport,
    /// Messages from an external agent Hearth talks to.
    ExternalAgent,
    /// Messages from a client of Hearth's AG-UI endpoint.
    EndpointClient,
    /// A chat sent from one of the owner's paired devices (a phone can be lost or taken: what
    /// follows from it waits for a card at home or on a device allowed to decide).
    PairedDevice,
    /// What a tool of one of the owner's MCP servers returned: written by that server, or by
    /// whoever wrote what it read.
    McpTool,
    /// Text from a file in the owner's document folders: the owner keeps the folder, but a
    /// file in it (a download, a saved mail, a shared PDF) was often written by someone else.
    Document,
}

impl SourceKind {
    /// How the card names it.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Mail => "mail",
            Self::Calendar => "a calendar entry",
            Self::WebPage => "a web page",
            Self::Pdf => "a PDF",
            Self::File => "a file in the computer",
            Self::CommandOutput => "a command's output",
            Self::Download => "a download",
            Self::TaskReport => "a task's report",
            Self::ExternalAgent => "the external agent",
            Self::EndpointClient => "an app using Hearth's AG-UI endpoint",
            Self::PairedDevice => "a paired device",
            Self::McpTool => "a plug-in tool's result",
            Self::Document => "a document in your folders",
        }
    }
}

/// One piece of outside content that entered a run's context.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutsideSource {
    /// What it was.
    pub kind: SourceKind,
    /// Which one, as the tool was asked for it (a thread id, a search, an address, a file):
    /// at most [`OutsideSource::MAX_DETAIL`] characters.
    pub detail: String,
}

impl OutsideSource {
    /// The longest `detail` kept (characters); longer ones are cut with an ellipsis.
    pub const MAX_DETAIL: usize = 200;

    /// A source with `detail` cut to [`OutsideSource::MAX_DETAIL`] characters.
    pub fn new(kind: SourceKind, detail: &str) -> Self {
        let detail = if detail.chars().count() > Self::MAX_DETAIL {
            let mut cut: String = detail.chars().take(Self::MAX_DETAIL - 1).collect();
            cut.push('…');
            cut
        } else {
            detail.to_owned()
        };
        Self { kind, detail }
    }

    /// How the card lists it: `mail (thread-7)`.
    pub fn describe(&self) -> String {
        if self.detail.is_empty() { self.kind.label().to_owned() } else { format!("{} ({})", self.kind.label(), self.detail) }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_long_detail_is_cut_on_a_character_boundary() {
        let long = "é".repeat(500);
        let source = OutsideSource::new(SourceKind::WebPage, &long);
        assert_eq!(source.detail.chars().count(), OutsideSource::MAX_DETAIL);
        assert!(source.detail.ends_with('…'));
    }

    #[test]
    fn the_wire_form_is_camel_case_with_snake_case_kinds() {
        let source = OutsideSource::new(SourceKind::CommandOutput, "ls");
        assert_eq!(serde_json::to_string(&source).unwrap(), r#"{"kind":"command_output","detail":"ls"}"#);
        assert_eq!(source.describe(), "a command's output (ls)");
    }
}
