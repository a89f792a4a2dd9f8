//! The typed tool registry: one trait per effect class, one exhaustive `match` on
//! [`ToolName`].
//!
//! A tool is a type. Which trait it implements is decided by its [`EffectClass`] — checked at
//! compile time in [`visit`] — and the class alone decides what [`super::dispatch`] does with
//! it: a [`DirectTool`] (Read and Control) runs directly; an [`EffectTool`] runs only inside
//! `Journal::perform`, under the one operation key; a [`PrepareTool`] only produces a draft,
//! which goes only to the approval gate. No tool calls the journal or the gate itself, and
//! adding a `ToolName` without deciding its handler does not compile.

use std::future::Future;

use hearth_protocol::ToolName;
use hearth_protocol::approvals::ProposalDraft;
use hearth_protocol::tools::EffectClass;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolOutput;
use super::context::{StepId, ToolContext};
use super::handlers::{browser, choices, computer, goals, mail, memory, monitors, pdf, prepare, schedules, tasks};
use crate::journal::{EffectError, Receipt};

/// What every tool declares.
pub(crate) trait Tool: 'static {
    /// Its name on the wire.
    const NAME: ToolName;
    /// What the model is told it does.
    const DESCRIPTION: &'static str;
    /// Its arguments, parsed once; the JSON Schema the model sees is generated from this type.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
}

/// Read and Control tools: they run directly. Control tools change only Hearth's own
/// bookkeeping, through the fenced task context or the task desk.
pub(crate) trait DirectTool: Tool {
    /// Runs the call.
    fn run(ctx: &ToolContext, step: &StepId, args: Self::Args) -> impl Future<Output = ToolOutput> + Send;
}

/// Effect tools: they change the world, so they run only inside the journal.
pub(crate) trait EffectTool: Tool {
    /// An operation id the caller gave in the arguments, when the tool takes one: the call is
    /// then keyed by it (within the task or chat run) instead of by its step, so asking again
    /// under the same id returns the first receipt.
    fn operation_id(_args: &Self::Args) -> Option<&str> {
        None
    }

    /// Checks the arguments and returns the full action the journal records (any byte of it
    /// changed under the same key is a conflict), or an error for the model.
    fn action(args: &Self::Args) -> Result<Value, ToolOutput>;

    /// The effect itself. It must honour `cancel` (stop its I/O, or report
    /// [`EffectError::Failed`] when it stopped before anything irreversible).
    fn perform(
        ctx: ToolContext,
        args: Self::Args,
        cancel: CancellationToken,
    ) -> impl Future<Output = Result<Value, EffectError>> + Send + 'static;

    /// What the model sees of a receipt (or of the journal's refusal).
    fn present(_ctx: &ToolContext, receipt: Result<Receipt, String>) -> impl Future<Output = ToolOutput> + Send {
        async move { super::dispatch::present_receipt(receipt) }
    }
}

/// Prepare tools: they turn arguments into a normalized draft; the gate stores it for the
/// owner's review. They never send or write.
pub(crate) trait PrepareTool: Tool {
    /// The normalized draft, or an error for the model.
    fn draft(ctx: &ToolContext, args: Self::Args) -> impl Future<Output = Result<ProposalDraft, ToolOutput>> + Send;
}

/// What the registry is asked to do with a tool's type.
pub(crate) trait Visitor {
    /// The answer.
    type Out;
    /// A Read or Control tool.
    fn direct<T: DirectTool>(self) -> Self::Out;
    /// An Effect tool.
    fn effect<T: EffectTool>(self) -> Self::Out;
    /// A Prepare tool.
    fn prepare<T: PrepareTool>(self) -> Self::Out;
}

const fn is_direct(class: EffectClass) -> bool {
    matches!(class, EffectClass::Read | EffectClass::Control)
}

fn direct<T: DirectTool, V: Visitor>(v: V) -> V::Out {
    const { assert!(is_direct(T::NAME.effect_class()), "a DirectTool must be of class Read or Control") };
    v.direct::<T>()
}

fn effect<T: EffectTool, V: Visitor>(v: V) -> V::Out {
    const { assert!(matches!(T::NAME.effect_class(), EffectClass::Effect), "an EffectTool must be of class Effect") };
    v.effect::<T>()
}

fn prepare<T: PrepareTool, V: Visitor>(v: V) -> V::Out {
    const { assert!(matches!(T::NAME.effect_class(), EffectClass::Prepare), "a PrepareTool must be of class Prepare") };
    v.prepare::<T>()
}

/// **The** registry: every `ToolName` maps to its handler type, or is said to be unavailable.
/// No wildcard: a new tool must be decided here.
pub(crate) fn visit<V: Visitor>(tool: ToolName, v: V) -> V::Out {
    match tool {
        ToolName::SearchMail => direct::<mail::SearchMail, V>(v),
        ToolName::ReadMailThread => direct::<mail::ReadMailThread, V>(v),
        ToolName::ReadCalendar => direct::<mail::ReadCalendar, V>(v),
        ToolName::ReadWorkspace => direct::<mail::ReadWorkspace, V>(v),
        ToolName::DelegateTask => direct::<tasks::DelegateTask, V>(v),
        ToolName::ScheduleTask => direct::<schedules::ScheduleTask, V>(v),
        ToolName::AgentStatus => direct::<tasks::AgentStatus, V>(v),
        ToolName::SetPlan => direct::<tasks::SetPlan, V>(v),
        ToolName::AskUser => direct::<tasks::AskUser, V>(v),
        ToolName::FinishTask => direct::<tasks::FinishTask, V>(v),
        ToolName::SaveArtifact => effect::<tasks::SaveArtifact, V>(v),
        ToolName::ImportPdf => effect::<pdf::ImportPdf, V>(v),
        ToolName::InspectPdf => direct::<pdf::InspectPdf, V>(v),
        ToolName::FillPdf => effect::<pdf::FillPdf, V>(v),
        ToolName::PrepareEmail => prepare::<prepare::PrepareEmail, V>(v),
        ToolName::PrepareEvent => prepare::<prepare::PrepareEvent, V>(v),
        ToolName::PrepareFormSubmission => prepare::<browser::PrepareFormSubmission, V>(v),
        ToolName::ComputerStatus => direct::<computer::ComputerStatus, V>(v),
        ToolName::StartComputer => effect::<computer::StartComputer, V>(v),
        ToolName::StopComputer => effect::<computer::StopComputer, V>(v),
        ToolName::RunComputerCommand => effect::<computer::RunComputerCommand, V>(v),
        ToolName::ListComputerFiles => direct::<computer::ListComputerFiles, V>(v),
        ToolName::ReadComputerFile => direct::<computer::ReadComputerFile, V>(v),
        ToolName::WriteComputerFile => effect::<computer::WriteComputerFile, V>(v),
        ToolName::MkdirComputer => effect::<computer::MkdirComputer, V>(v),
        ToolName::ImportComputerPdf => effect::<computer::ImportComputerPdf, V>(v),
        ToolName::ExportComputerPdf => effect::<computer::ExportComputerPdf, V>(v),
        ToolName::BrowseWeb => direct::<browser::BrowseWeb, V>(v),
        ToolName::ReadWeb => direct::<browser::ReadWeb, V>(v),
        ToolName::LookPage => direct::<browser::LookPage, V>(v),
        ToolName::PageElements => direct::<browser::PageElementsTool, V>(v),
        ToolName::PageAct => effect::<browser::PageAct, V>(v),
        ToolName::SaveDownload => effect::<browser::SaveDownload, V>(v),
        ToolName::RememberFact => direct::<memory::RememberFact, V>(v),
        ToolName::PresentChoices => direct::<choices::PresentChoices, V>(v),
        ToolName::WatchPage => direct::<monitors::WatchPage, V>(v),
        ToolName::CreateGoal => direct::<goals::CreateGoal, V>(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers with the handler type's own `NAME`, so a mis-wired arm is caught.
    struct NameOf;
    impl Visitor for NameOf {
        type Out = Option<ToolName>;
        fn direct<T: DirectTool>(self) -> Self::Out {
            Some(T::NAME)
        }
        fn effect<T: EffectTool>(self) -> Self::Out {
            Some(T::NAME)
        }
        fn prepare<T: PrepareTool>(self) -> Self::Out {
            Some(T::NAME)
        }
    }

    #[test]
    fn every_arm_names_its_own_tool() {
        let mut implemented = 0;
        for &tool in ToolName::ALL {
            if let Some(name) = visit(tool, NameOf) {
                assert_eq!(name, tool, "the registry maps {tool} to the handler of {name}");
                implemented += 1;
            }
        }
        assert_eq!(implemented, ToolName::ALL.len(), "every tool has a handler");
    }
}
