//! The typed tool registry: one exhaustive `match` on [`ToolName`].
//!
//! A tool is a type. Which trait of [`super::traits`] it implements is decided by its
//! [`EffectClass`] — checked at compile time in [`visit`] — and the class alone decides what
//! [`super::dispatch`] does with it: a [`DirectTool`] (Read and Control) runs directly; an
//! [`EffectTool`] runs only inside `Journal::perform`, under the one operation key; a
//! [`PrepareTool`] only produces a draft, which goes only to the approval gate. No tool calls
//! the journal or the gate itself, and adding a `ToolName` without deciding its handler does
//! not compile.

use hearth_protocol::ToolName;
use hearth_protocol::tools::EffectClass;

use super::handlers::{
    browser, choices, computer, documents, finance, goals, mail, memory, monitors, pdf, prepare, schedules, search, tasks,
};
use super::traits::{DirectTool, EffectTool, PrepareTool, Visitor};

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
        ToolName::SearchDocuments => direct::<documents::SearchDocuments, V>(v),
        ToolName::ReadWorkspace => direct::<mail::ReadWorkspace, V>(v),
        ToolName::DelegateTask => direct::<tasks::DelegateTask, V>(v),
        ToolName::SummarizeStatement => direct::<finance::SummarizeStatement, V>(v),
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
        ToolName::SearchWeb => direct::<search::SearchWeb, V>(v),
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
