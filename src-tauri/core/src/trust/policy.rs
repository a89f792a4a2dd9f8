//! The trust policy: for each tool call, who asked and what was in the context decide whether
//! it runs, waits for the owner, or is refused — in one place, by an exhaustive match.
//!
//! Why a policy beside the effect class: the effect class says what a call *can* change; it
//! cannot say whether the owner wanted it. An agent that has read a mail or a page takes
//! instructions from whoever wrote them, so once such text is in the context, every call that
//! leaves something behind — standing work (a schedule, a task, a monitor, a goal), a memory,
//! a command or file in the computer, a page action that may send, an address the model built
//! itself — waits on a card that shows the exact call and the content that led to it. What the
//! owner asks directly, in a context with only their own words, runs as it always did.

use hearth_protocol::ToolName;
use serde_json::Value;

use super::Provenance;

/// Who chose a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chooser {
    /// A model (or an external agent) in the owner's chat, an endpoint client's run, or an
    /// external agent's run.
    ChatModel,
    /// A model inside a background task.
    TaskModel,
}

/// What the policy says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It runs now.
    Run,
    /// It waits for the owner on a card; the text says why.
    Ask(&'static str),
    /// It never runs from here; the text says why and what to do instead.
    Refuse(&'static str),
}

const STANDING_WORK: &str = "It would leave work running in the background after the agent read content from outside you; \
                             that content could have asked for it.";
const MEMORY_WRITE: &str = "It would keep a fact that later chats and tasks read, after the agent read content from outside you; \
                            that content could have written it.";
const COMPUTER_WRITE: &str = "It would run a command or write a file in the computer after the agent read content from outside \
                              you; that content could have asked for it.";
const PAGE_SEND: &str = "A click, a key press, typing or a choice on a page can send something from it (its scripts see what \
                         is typed), and the agent read content from outside you that could have asked for it.";
const NEW_ADDRESS: &str = "It opens an address that appears neither in your words nor in what the agent read: an address the \
                           agent built can carry what it read to the site.";
const SEARCH_AFTER_READ: &str = "It sends words the agent chose to the search site after the agent read content from \
                                 outside you: that content could have asked it to send something private.";
const NO_TASKS_FROM_TASKS: &str = "A background task cannot start other tasks, schedules or monitors. Finish this task and say \
                                   what should happen next; the owner decides.";

/// Decides one call. `args` are the call's parsed JSON arguments.
pub fn decide(tool: ToolName, args: &Value, chooser: Chooser, provenance: &Provenance) -> Verdict {
    let outside = provenance.is_outside();
    let ask_if_outside = |why: &'static str| if outside { Verdict::Ask(why) } else { Verdict::Run };
    match tool {
        // Reads of Hearth's own state, of the owner's data, or of the page already open.
        ToolName::SearchMail
        | ToolName::ReadMailThread
        | ToolName::ReadCalendar
        | ToolName::SearchDocuments
        | ToolName::ReadWorkspace
        | ToolName::AgentStatus
        | ToolName::InspectPdf
        | ToolName::ComputerStatus
        | ToolName::ListComputerFiles
        | ToolName::ReadComputerFile
        | ToolName::PageElements => Verdict::Run,
        // Opening an address is a request to whoever runs it: the address itself can carry text.
        ToolName::BrowseWeb | ToolName::ReadWeb | ToolName::LookPage => match args.get("url").and_then(Value::as_str) {
            Some(url) if outside && !provenance.has_seen(url) => Verdict::Ask(NEW_ADDRESS),
            Some(_) | None => Verdict::Run,
        },
        // The query goes to the search site the owner chose, but its words are the agent's: after
        // outside content they could carry what was read (a mail's secret) to that site.
        ToolName::SearchWeb => ask_if_outside(SEARCH_AFTER_READ),
        // The run's own bookkeeping and questions to the owner.
        ToolName::SetPlan | ToolName::AskUser | ToolName::FinishTask | ToolName::PresentChoices => Verdict::Run,
        // Standing work.
        ToolName::DelegateTask | ToolName::ScheduleTask | ToolName::WatchPage => match chooser {
            Chooser::TaskModel => Verdict::Refuse(NO_TASKS_FROM_TASKS),
            Chooser::ChatModel => ask_if_outside(STANDING_WORK),
        },
        ToolName::CreateGoal => ask_if_outside(STANDING_WORK),
        // A statement summary sends nothing and starts no agent, but it leaves a task, an
        // artifact and a notice worded from the statement: after outside content it waits, as
        // every lasting thing does. A task still cannot start another task.
        ToolName::SummarizeStatement => match chooser {
            Chooser::TaskModel => Verdict::Refuse(NO_TASKS_FROM_TASKS),
            Chooser::ChatModel => ask_if_outside(STANDING_WORK),
        },
        ToolName::RememberFact => ask_if_outside(MEMORY_WRITE),
        // Effects inside Hearth's own files, or the computer switched on or off: nothing leaves.
        ToolName::SaveArtifact
        | ToolName::ImportPdf
        | ToolName::FillPdf
        | ToolName::SaveDownload
        | ToolName::ExportComputerPdf
        | ToolName::StartComputer
        | ToolName::StopComputer => Verdict::Run,
        // A command, or a file put into the computer's workspace (import_computer_pdf copies a
        // PDF from Files into it).
        ToolName::RunComputerCommand | ToolName::WriteComputerFile | ToolName::MkdirComputer | ToolName::ImportComputerPdf => {
            ask_if_outside(COMPUTER_WRITE)
        }
        // Scrolling sends nothing. A click or a key press may send a form; typing and choosing
        // hand text to the page's scripts, which can send it anywhere (a change handler, a fetch).
        ToolName::PageAct => match args.get("action").and_then(Value::as_str) {
            Some("scroll") => Verdict::Run,
            Some(_) | None => ask_if_outside(PAGE_SEND),
        },
        // Every proposal waits for the owner anyway; its card names the sources.
        ToolName::PrepareEmail | ToolName::PrepareEvent | ToolName::PrepareFormSubmission => Verdict::Run,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hearth_protocol::provenance::{OutsideSource, SourceKind};
    use serde_json::json;

    use super::*;

    fn tainted() -> Provenance {
        let p = Provenance::new();
        p.owner_said("open https://owner.example/page");
        p.record(OutsideSource::new(SourceKind::Mail, "t-1"), "see https://mail.example/link");
        p
    }

    #[test]
    fn a_clean_context_runs_everything_a_chat_model_asks() {
        let clean = Provenance::new();
        for &tool in ToolName::ALL {
            let verdict = decide(tool, &json!({ "url": "https://x.example/", "action": "click" }), Chooser::ChatModel, &clean);
            assert_eq!(verdict, Verdict::Run, "{tool}");
        }
    }

    #[test]
    fn outside_content_holds_every_lasting_effect() {
        let mut held: Vec<ToolName> = ToolName::ALL
            .iter()
            .copied()
            .filter(|&tool| {
                matches!(
                    decide(tool, &json!({ "url": "https://built.example/?d=x", "action": "click" }), Chooser::ChatModel, &tainted()),
                    Verdict::Ask(_)
                )
            })
            .collect();
        held.sort();
        let mut expected = vec![
            ToolName::BrowseWeb,
            ToolName::ReadWeb,
            ToolName::LookPage,
            ToolName::SearchWeb,
            ToolName::PageAct,
            ToolName::DelegateTask,
            ToolName::SummarizeStatement,
            ToolName::ScheduleTask,
            ToolName::RunComputerCommand,
            ToolName::WriteComputerFile,
            ToolName::MkdirComputer,
            ToolName::ImportComputerPdf,
            ToolName::RememberFact,
            ToolName::WatchPage,
            ToolName::CreateGoal,
        ];
        expected.sort();
        assert_eq!(held, expected);
    }

    #[test]
    fn an_address_in_the_owners_words_or_in_what_was_read_opens_without_a_card() {
        let p = tainted();
        for url in ["https://owner.example/page", "https://mail.example/link"] {
            assert_eq!(decide(ToolName::BrowseWeb, &json!({ "url": url }), Chooser::ChatModel, &p), Verdict::Run, "{url}");
        }
        assert!(matches!(
            decide(ToolName::ReadWeb, &json!({ "url": "https://mail.example/link?d=secret" }), Chooser::ChatModel, &p),
            Verdict::Ask(_)
        ));
    }

    #[test]
    fn only_scrolling_a_page_runs_after_outside_content() {
        let p = tainted();
        assert_eq!(decide(ToolName::PageAct, &json!({ "action": "scroll" }), Chooser::ChatModel, &p), Verdict::Run);
        for action in ["click", "press", "type", "select"] {
            assert!(matches!(decide(ToolName::PageAct, &json!({ "action": action }), Chooser::ChatModel, &p), Verdict::Ask(_)), "{action}");
        }
    }

    #[test]
    fn a_task_never_starts_tasks_schedules_or_monitors() {
        for tool in [ToolName::DelegateTask, ToolName::SummarizeStatement, ToolName::ScheduleTask, ToolName::WatchPage] {
            assert!(matches!(decide(tool, &json!({}), Chooser::TaskModel, &Provenance::new()), Verdict::Refuse(_)));
        }
    }
}
