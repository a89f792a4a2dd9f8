//! The trust boundary: content the agent reads cannot make it act without the owner.
//!
//! [`Provenance`] records what entered a run's context from outside the owner; [`policy`]
//! decides by it, per call, whether the call runs, waits for the owner on a card (a held call,
//! `ProposalDraft::HeldCall`), or is refused. `tools::dispatch` asks the policy before every
//! call a model chose; fixed workflow steps of Hearth's own code and the owner's own screens
//! are not a model's choice and are not asked about ([`Trust`]).

pub mod mandate;
pub mod policy;
pub mod provenance;

pub use policy::{Chooser, Verdict, decide};
pub use provenance::{Provenance, detail_of, outside_kind};

/// Who chose the calls of a tool context, which decides whether the policy is asked.
#[derive(Debug, Clone)]
pub enum Trust {
    /// A model or an external agent chose them: the policy decides each, by what this run has
    /// read.
    Model(Provenance),
    /// Hearth's own code chose them — a fixed workflow step (the document task's import, a
    /// monitor's look, a finance tracker's save) — with arguments it built itself.
    Workflow,
    /// The owner: the app's own screens, or one call the owner approved on its card.
    Owner,
}

impl Trust {
    /// A model's calls, with nothing from outside read yet.
    pub fn model() -> Self {
        Self::Model(Provenance::new())
    }

    /// The run's provenance, when a model chooses its calls.
    pub fn provenance(&self) -> Option<&Provenance> {
        match self {
            Self::Model(provenance) => Some(provenance),
            Self::Workflow | Self::Owner => None,
        }
    }
}
