//! Where the owner is looking: the current screen, the task open in Activity, the file open
//! in Files and the proposal a notice pointed to in Approvals.
//!
//! Shared through context so a chat card can open its task without threading signals
//! through every component in between.

use hearth_protocol::ids::{FileId, ProposalId, TaskId};
use leptos::prelude::*;

use crate::screens::Screen;

/// The current screen, the selected task and the selected file.
#[derive(Debug, Clone, Copy)]
pub struct Navigation {
    /// The screen shown.
    pub screen: RwSignal<Screen>,
    /// The task shown in Activity's detail pane.
    pub selected_task: RwSignal<Option<TaskId>>,
    /// The file shown in Files' viewer.
    pub selected_file: RwSignal<Option<FileId>>,
    /// The proposal Approvals marks (a review notice was opened).
    pub selected_proposal: RwSignal<Option<ProposalId>>,
    /// The proposal Approvals scrolls to, once: taken by its card when it is on screen, so a
    /// card rebuilt later (a decision, a refresh) does not pull the view back to it.
    pub scroll_to_proposal: RwSignal<Option<ProposalId>>,
}

impl Navigation {
    /// Starts on Chat with nothing selected, and provides itself to the component tree.
    pub fn provide() -> Self {
        let navigation = Self {
            screen: RwSignal::new(Screen::Chat),
            selected_task: RwSignal::new(None),
            selected_file: RwSignal::new(None),
            selected_proposal: RwSignal::new(None),
            scroll_to_proposal: RwSignal::new(None),
        };
        provide_context(navigation);
        navigation
    }

    /// The navigation provided by the app, if any (cards can render without it).
    pub fn from_context() -> Option<Self> {
        use_context::<Self>()
    }

    /// Selects a task and shows it in Activity.
    pub fn open_task(self, task_id: TaskId) {
        self.selected_task.set(Some(task_id));
        self.screen.set(Screen::Activity);
    }

    /// Shows Approvals with this proposal's card marked and scrolled into view.
    pub fn open_proposal(self, proposal_id: ProposalId) {
        self.selected_proposal.set(Some(proposal_id.clone()));
        self.scroll_to_proposal.set(Some(proposal_id));
        self.screen.set(Screen::Approvals);
    }

    /// Selects a file and shows it in Files.
    pub fn open_file(self, file_id: FileId) {
        self.selected_file.set(Some(file_id));
        self.screen.set(Screen::Files);
    }
}
