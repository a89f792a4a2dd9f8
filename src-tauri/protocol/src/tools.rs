//! Tool names and their side-effect class.
//!
//! `ToolName` is a closed enum on purpose: the UI picks a card with an exhaustive `match`,
//! so adding a tool without deciding its card (and its effect class) fails to compile.
//! Names from outside Hearth (an AG-UI harness, MCP) arrive as [`ToolRef::Unknown`].

use serde::{Deserialize, Serialize};

/// What running a tool can change, which decides whether it needs the gate and the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectClass {
    /// Reads data; never changes anything outside Hearth's own bookkeeping.
    Read,
    /// Prepares something for the owner to review (a draft, a proposal); sends nothing.
    Prepare,
    /// Changes the world (a container command, a file write, a page action).
    Effect,
    /// Steers Hearth's own work (tasks, plans, questions to the owner).
    Control,
}

macro_rules! tool_names {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal => $class:ident ),+ $(,)?) => {
        /// Every tool Hearth has. Serialized as its snake_case wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ToolName {
            $( $(#[$doc])* #[serde(rename = $wire)] $variant, )+
        }

        impl ToolName {
            /// All tools, in declaration order.
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant),+];

            /// The name the model and the wire use.
            pub const fn as_str(self) -> &'static str {
                match self { $(ToolName::$variant => $wire,)+ }
            }

            /// What this tool can change.
            pub const fn effect_class(self) -> EffectClass {
                match self { $(ToolName::$variant => EffectClass::$class,)+ }
            }

            /// Looks a wire name up; `None` for names Hearth does not know.
            pub fn from_wire(name: &str) -> Option<Self> {
                match name { $($wire => Some(ToolName::$variant),)+ _ => None }
            }
        }
    };
}

tool_names! {
    /// Search the mailbox.
    SearchMail = "search_mail" => Read,
    /// Read one mail thread.
    ReadMailThread = "read_mail_thread" => Read,
    /// Read calendar events in a range.
    ReadCalendar = "read_calendar" => Read,
    /// Search the text of the files in the owner's document folders (bm25, with the matched
    /// passage).
    SearchDocuments = "search_documents" => Read,
    /// Open a web page in the agent's browser, read it and picture it (a GET through the
    /// egress policy; actions on the page are page_act's).
    BrowseWeb = "browse_web" => Read,
    /// Read a web page's text (a task's look, without the picture).
    ReadWeb = "read_web" => Read,
    /// Search the web through the search page the owner picked in Settings, in the agent's
    /// browser under the egress policy: titles, addresses and snippets.
    SearchWeb = "search_web" => Read,
    /// Show the model a picture of the open page (offered only to a model set to accept
    /// images).
    LookPage = "look_page" => Read,
    /// List the open page's interactive elements with their references.
    PageElements = "page_elements" => Read,
    /// Click, type, select, press or scroll on the open page: an operation with an id.
    PageAct = "page_act" => Effect,
    /// Put a PDF the browser downloaded into Files.
    SaveDownload = "save_download" => Effect,
    /// Hand a job to the durable task engine.
    DelegateTask = "delegate_task" => Control,
    /// Start a statement summary (the finance task): pasted CSV, or a PDF in Files.
    SummarizeStatement = "summarize_statement" => Control,
    /// Make a task repeat on a schedule (a rule in a time zone).
    ScheduleTask = "schedule_task" => Control,
    /// Report the state of Hearth's tasks.
    AgentStatus = "agent_status" => Read,
    /// Create a long-running goal.
    CreateGoal = "create_goal" => Control,
    /// Watch a page for changes.
    WatchPage = "watch_page" => Control,
    /// Store a fact in memory.
    RememberFact = "remember_fact" => Control,
    /// Offer the owner a choice.
    PresentChoices = "present_choices" => Control,
    /// Set a task's plan.
    SetPlan = "set_plan" => Control,
    /// Read the workspace overview.
    ReadWorkspace = "read_workspace" => Read,
    /// Import a PDF attachment into Files.
    ImportPdf = "import_pdf" => Effect,
    /// List a PDF's pages and form fields.
    InspectPdf = "inspect_pdf" => Read,
    /// Fill a PDF form into a new file.
    FillPdf = "fill_pdf" => Effect,
    /// Save a task artifact.
    SaveArtifact = "save_artifact" => Effect,
    /// Prepare an email for review; never sends.
    PrepareEmail = "prepare_email" => Prepare,
    /// Prepare a calendar change for review; never writes.
    PrepareEvent = "prepare_event" => Prepare,
    /// Prepare a form submission on the open page for review (a task's way to send a form);
    /// never sends.
    PrepareFormSubmission = "prepare_form_submission" => Prepare,
    /// Ask the owner a question and wait.
    AskUser = "ask_user" => Control,
    /// Finish the current task with a result.
    FinishTask = "finish_task" => Control,
    /// Report the computer's state.
    ComputerStatus = "computer_status" => Read,
    /// Start the sandboxed computer.
    StartComputer = "start_computer" => Effect,
    /// Stop the sandboxed computer.
    StopComputer = "stop_computer" => Effect,
    /// Run a command in the sandboxed computer.
    RunComputerCommand = "run_computer_command" => Effect,
    /// List files in the computer's workspace.
    ListComputerFiles = "list_computer_files" => Read,
    /// Read a file from the computer's workspace.
    ReadComputerFile = "read_computer_file" => Read,
    /// Write a file in the computer's workspace.
    WriteComputerFile = "write_computer_file" => Effect,
    /// Create a folder in the computer's workspace.
    MkdirComputer = "mkdir_computer" => Effect,
    /// Copy a PDF from Files into the computer.
    ImportComputerPdf = "import_computer_pdf" => Effect,
    /// Copy a PDF from the computer into Files.
    ExportComputerPdf = "export_computer_pdf" => Effect,
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool name as it arrives on the wire: one of Hearth's, or any other string.
///
/// An external harness may call tools Hearth has never heard of; they still get a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolRef {
    /// One of Hearth's own tools.
    Known(ToolName),
    /// A name Hearth does not know (kept verbatim).
    Unknown(String),
}

impl ToolRef {
    /// Classifies a wire name.
    pub fn parse(name: &str) -> Self {
        ToolName::from_wire(name).map_or_else(|| ToolRef::Unknown(name.to_owned()), ToolRef::Known)
    }

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            ToolRef::Known(tool) => tool.as_str(),
            ToolRef::Unknown(name) => name,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_name_round_trips_through_json_and_wire() {
        assert_eq!(ToolName::ALL.len(), 40);
        for tool in ToolName::ALL {
            let json = serde_json::to_string(tool).unwrap();
            assert_eq!(json, format!("\"{}\"", tool.as_str()));
            assert_eq!(serde_json::from_str::<ToolName>(&json).unwrap(), *tool);
            assert_eq!(ToolRef::parse(tool.as_str()), ToolRef::Known(*tool));
        }
    }

    #[test]
    fn unknown_names_are_kept_verbatim() {
        assert_eq!(ToolRef::parse("weather_lookup"), ToolRef::Unknown("weather_lookup".into()));
        assert_eq!(ToolRef::parse("Search_Mail").as_str(), "Search_Mail");
    }

    #[test]
    fn only_prepare_tools_are_prepare() {
        let prepare: Vec<_> = ToolName::ALL.iter().filter(|t| t.effect_class() == EffectClass::Prepare).collect();
        assert_eq!(prepare, [&ToolName::PrepareEmail, &ToolName::PrepareEvent, &ToolName::PrepareFormSubmission]);
    }
}
