//! Tool cards, chosen by tool name.
//!
//! The `match` on [`ToolName`] has no wildcard: adding a tool to the protocol without
//! deciding its card here is a compile error. Names Hearth does not know get the generic card.

mod delegate_task;
mod generic;

use hearth_protocol::{ToolName, ToolRef};
use leptos::prelude::*;

use crate::state::chat::ToolCallView;

/// The card for one tool call.
#[component]
pub fn ToolCard(call: ToolCallView) -> impl IntoView {
    match ToolRef::parse(&call.name) {
        ToolRef::Known(tool) => known_card(tool, call),
        ToolRef::Unknown(_) => view! { <generic::GenericCard call /> }.into_any(),
    }
}

fn known_card(tool: ToolName, call: ToolCallView) -> AnyView {
    match tool {
        ToolName::DelegateTask => view! { <delegate_task::DelegateTaskCard call /> }.into_any(),
        // Cards of their own arrive with their issues; until then the generic card shows
        // title, arguments, status and result.
        ToolName::SearchMail
        | ToolName::ReadMailThread
        | ToolName::ReadCalendar
        | ToolName::BrowseWeb
        | ToolName::ReadWeb
        | ToolName::AgentStatus
        | ToolName::CreateGoal
        | ToolName::WatchPage
        | ToolName::RememberFact
        | ToolName::PresentChoices
        | ToolName::SetPlan
        | ToolName::ReadWorkspace
        | ToolName::ImportPdf
        | ToolName::InspectPdf
        | ToolName::FillPdf
        | ToolName::SaveArtifact
        | ToolName::PrepareEmail
        | ToolName::PrepareEvent
        | ToolName::AskUser
        | ToolName::FinishTask
        | ToolName::ComputerStatus
        | ToolName::StartComputer
        | ToolName::StopComputer
        | ToolName::RunComputerCommand
        | ToolName::ListComputerFiles
        | ToolName::ReadComputerFile
        | ToolName::WriteComputerFile
        | ToolName::MkdirComputer
        | ToolName::ImportComputerPdf
        | ToolName::ExportComputerPdf => view! { <generic::GenericCard call /> }.into_any(),
    }
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
