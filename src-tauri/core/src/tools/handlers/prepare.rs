//! prepare_email and prepare_event: they turn arguments into a normalized draft, which
//! dispatch hands to the approval gate for the owner's review. They never send or write;
//! only the owner's approval in the app does.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::ProposalDraft;

use crate::approvals::normalize::EventAction;
use crate::approvals::{EmailArgs, EventArgs, email_draft, event_draft};
use crate::tools::ToolOutput;
use crate::tools::context::ToolContext;
use crate::tools::traits::{PrepareTool, Tool};

/// `prepare_email`.
pub(crate) struct PrepareEmail;

impl Tool for PrepareEmail {
    const NAME: ToolName = ToolName::PrepareEmail;
    const DESCRIPTION: &'static str = "Prepare an email for the owner's review. It is NOT sent: the owner approves or denies \
                                       it in Hearth, and only a receipt means it was sent.";
    type Args = EmailArgs;
}

impl PrepareTool for PrepareEmail {
    async fn draft(ctx: &ToolContext, args: EmailArgs) -> Result<ProposalDraft, ToolOutput> {
        email_draft(&ctx.store, args).await.map(ProposalDraft::EmailSend).map_err(|err| ToolOutput::error(err.to_string()))
    }
}

/// `prepare_event`.
pub(crate) struct PrepareEvent;

impl Tool for PrepareEvent {
    const NAME: ToolName = ToolName::PrepareEvent;
    const DESCRIPTION: &'static str = "Prepare a calendar change (create, update or delete) for the owner's review. Nothing \
                                       changes until the owner approves it in Hearth.";
    type Args = EventArgs;
}

impl PrepareTool for PrepareEvent {
    async fn draft(_ctx: &ToolContext, args: EventArgs) -> Result<ProposalDraft, ToolOutput> {
        match event_draft(args) {
            Ok((EventAction::Create, d)) => Ok(ProposalDraft::CalendarCreate(d)),
            Ok((EventAction::Update, d)) => Ok(ProposalDraft::CalendarUpdate(d)),
            Ok((EventAction::Delete, d)) => Ok(ProposalDraft::CalendarDelete(d)),
            Err(err) => Err(ToolOutput::error(err.to_string())),
        }
    }
}
