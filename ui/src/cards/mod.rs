//! Tool cards, chosen by tool name.
//!
//! The `match` on [`ToolName`] has no wildcard: adding a tool to the protocol without
//! deciding its card here is a compile error. A plug-in (MCP) tool's name gets its own card;
//! other names Hearth does not know get the generic card.

pub mod approval;
mod approval_draft;
pub mod browser;
mod calendar;
pub mod choices;
mod delegate_task;
mod file;
mod generic;
mod mail;
mod mcp;
mod schedule;
mod search;
pub mod take_control;
pub mod terminal;
mod workspace;

use hearth_protocol::mcp::McpToolRef;
use hearth_protocol::{ToolName, ToolRef};
use leptos::prelude::*;

use crate::clock;
use crate::state::calendar::calendar_list;
use crate::state::cards;
use crate::state::chat::ToolCallView;

/// The card for one tool call.
#[component]
pub fn ToolCard(call: ToolCallView) -> impl IntoView {
    match ToolRef::parse(&call.name) {
        ToolRef::Known(tool) => known_card(tool, call),
        ToolRef::Unknown(name) => match McpToolRef::from_wire(&name) {
            Some(tool) => mcp_card(tool, call),
            None => view! { <generic::GenericCard call /> }.into_any(),
        },
    }
}

/// A plug-in tool's call: the card the owner decides on when it was held, else its own card.
fn mcp_card(tool: McpToolRef, call: ToolCallView) -> AnyView {
    if let Some(held) = cards::held(&call) {
        return view! { <approval::ApprovalCard proposal_id=held.proposal_id /> }.into_any();
    }
    view! { <mcp::McpCard tool call /> }.into_any()
}

/// A tool's own card once its result reads as the tool's type; until then (running, an
/// error, an unreadable result) the generic card, which shows the raw text.
fn known_card(tool: ToolName, call: ToolCallView) -> AnyView {
    // Any call the trust policy held for the owner shows the card they decide on.
    if let Some(held) = cards::held(&call) {
        return view! { <approval::ApprovalCard proposal_id=held.proposal_id /> }.into_any();
    }
    let own = match tool {
        // A monitor is a task: the same card, its live status and Open.
        ToolName::DelegateTask | ToolName::SummarizeStatement | ToolName::WatchPage => {
            return view! { <delegate_task::DelegateTaskCard call /> }.into_any();
        }
        ToolName::PresentChoices => cards::choices_offered(&call).map(|offered| view! { <choices::ChoiceCard offered /> }.into_any()),
        ToolName::ScheduleTask => cards::schedule_made(&call).map(|made| view! { <schedule::ScheduleCard made /> }.into_any()),
        ToolName::PrepareEmail | ToolName::PrepareEvent | ToolName::PrepareFormSubmission => {
            cards::prepared(&call).map(|prepared| view! { <approval::ApprovalCard proposal_id=prepared.proposal_id /> }.into_any())
        }
        ToolName::SearchMail => cards::mail_search(&call).map(|result| view! { <mail::MailSearchCard result /> }.into_any()),
        ToolName::ReadMailThread => cards::mail_thread(&call).map(|thread| view! { <mail::MailThreadCard thread /> }.into_any()),
        ToolName::ReadCalendar => calendar_list(&call, clock::utc_offset_minutes, clock::now_ms())
            .map(|list| view! { <calendar::CalendarCard list /> }.into_any()),
        ToolName::ImportPdf => cards::file_made(&call).map(|file| view! { <file::FileCard file tool="import_pdf" /> }.into_any()),
        ToolName::FillPdf => cards::file_made(&call).map(|file| view! { <file::FileCard file tool="fill_pdf" /> }.into_any()),
        ToolName::SaveDownload => cards::file_made(&call).map(|file| view! { <file::FileCard file tool="save_download" /> }.into_any()),
        ToolName::InspectPdf => cards::file_inspected(&call).map(|file| view! { <file::FileCard file tool="inspect_pdf" /> }.into_any()),
        // Its own card from the first argument bytes on, so Stop is there while it runs (the
        // chat mounts it live; this is the card for a call shown once, as in replay).
        ToolName::RunComputerCommand => crate::state::computer::command_card(&call).map(|_| {
            let call = Signal::stored(call.clone());
            view! { <terminal::TerminalCard call /> }.into_any()
        }),
        ToolName::ListComputerFiles
        | ToolName::ReadComputerFile
        | ToolName::WriteComputerFile
        | ToolName::MkdirComputer
        | ToolName::ImportComputerPdf
        | ToolName::ExportComputerPdf => {
            let done = call.clone();
            cards::completed(&call).then(move || view! { <workspace::WorkspaceCard tool call=done /> }.into_any())
        }
        ToolName::BrowseWeb => cards::page_seen(&call).map(|page| view! { <browser::BrowserCard page tool="browse_web" /> }.into_any()),
        ToolName::ReadWeb => cards::page_seen(&call).map(|page| view! { <browser::BrowserCard page tool="read_web" /> }.into_any()),
        ToolName::SearchWeb => cards::search_results(&call).map(|found| view! { <search::SearchCard found /> }.into_any()),
        ToolName::LookPage => cards::page_seen(&call).map(|page| view! { <browser::BrowserCard page tool="look_page" /> }.into_any()),
        ToolName::PageAct => cards::page_acted(&call).map(|receipt| view! { <browser::PageActCard receipt /> }.into_any()),
        // Cards of their own arrive with their issues; until then the generic card shows
        // title, arguments, status and result.
        ToolName::PageElements
        | ToolName::SearchDocuments
        | ToolName::AgentStatus
        | ToolName::CreateGoal
        | ToolName::RememberFact
        | ToolName::SetPlan
        | ToolName::ReadWorkspace
        | ToolName::SaveArtifact
        | ToolName::AskUser
        | ToolName::FinishTask
        | ToolName::ComputerStatus
        | ToolName::StartComputer
        | ToolName::StopComputer => None,
    };
    own.unwrap_or_else(|| view! { <generic::GenericCard call /> }.into_any())
}

/// The status word a card shows.
pub fn status_label(status: crate::state::chat::ToolStatus) -> &'static str {
    match status {
        crate::state::chat::ToolStatus::Running => "running",
        crate::state::chat::ToolStatus::Complete => "complete",
        crate::state::chat::ToolStatus::Error => "error",
    }
}

/// JSON text pretty-printed, or as it came when it is not JSON (still streaming, say).
pub fn pretty_json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}
