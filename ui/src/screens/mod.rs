//! Screens reachable from the navigation.

pub mod activity;
pub mod approvals;
pub mod browser;
pub mod chat;
pub mod computer;
pub mod documents;
pub mod files;
pub mod goals;
pub mod inbox;
pub mod memory;
pub mod settings;
pub mod startup_error;

/// Every screen in the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// Talk to the agent.
    Chat,
    /// Tasks and their runs.
    Activity,
    /// Notices: tasks done or failed, questions, reviews, reminders.
    Inbox,
    /// Proposals waiting for the owner.
    Approvals,
    /// The sandboxed Linux computer.
    Computer,
    /// The agent's browser.
    Browser,
    /// Files and PDFs.
    Files,
    /// Search over the owner's document folders.
    Documents,
    /// Goals and their milestones.
    Goals,
    /// What Hearth remembers.
    Memory,
    /// Models, accounts and data.
    Settings,
}

impl Screen {
    /// In navigation order.
    pub const ALL: [Screen; 11] = [
        Screen::Chat,
        Screen::Activity,
        Screen::Inbox,
        Screen::Approvals,
        Screen::Computer,
        Screen::Browser,
        Screen::Files,
        Screen::Documents,
        Screen::Goals,
        Screen::Memory,
        Screen::Settings,
    ];

    /// Navigation label.
    pub const fn title(self) -> &'static str {
        match self {
            Screen::Chat => "Chat",
            Screen::Activity => "Activity",
            Screen::Inbox => "Inbox",
            Screen::Approvals => "Approvals",
            Screen::Computer => "Computer",
            Screen::Browser => "Browser",
            Screen::Files => "Files",
            Screen::Documents => "Documents",
            Screen::Goals => "Goals",
            Screen::Memory => "Memory",
            Screen::Settings => "Settings",
        }
    }

    /// Stable name for tests and CSS.
    pub const fn slug(self) -> &'static str {
        match self {
            Screen::Chat => "chat",
            Screen::Activity => "activity",
            Screen::Inbox => "inbox",
            Screen::Approvals => "approvals",
            Screen::Computer => "computer",
            Screen::Browser => "browser",
            Screen::Files => "files",
            Screen::Documents => "documents",
            Screen::Goals => "goals",
            Screen::Memory => "memory",
            Screen::Settings => "settings",
        }
    }
}
