//! Deleting a chat: its messages, and its browser profile unless the owner kept it.

use hearth_protocol::ipc::{ThreadDeleteParams, ThreadDeleteResponse};

use super::Hearth;
use crate::browser::profiles::ProfileId;
use crate::error::{CoreError, Result};
use crate::store::threads::{ThreadDeletion, ThreadWork};

impl Hearth {
    /// The owner deletes the chat `thread_id`: its messages go (the thread is marked deleted
    /// and listed no more, see [`crate::store::Store::delete_thread`] for what stays and why),
    /// then its own browser closes and its profile folder goes with its cookies and downloads —
    /// unless the owner kept that profile (picked it for a chat or a task) or it is under Take
    /// control, in which case it stays, as when a task ends.
    ///
    /// Refused, with nothing changed, while a reply of it is being written (`Conflict`), an
    /// action of it is being performed or a proposal of it waits for the owner's decision or is
    /// being carried out (`Conflict`), and, unless `acknowledge_uncertain`, while something of
    /// it may or may not have happened (`NeedsReview`): the owner reviews those first. An
    /// unknown or already deleted chat is `NotFound`.
    pub async fn thread_delete(&self, params: &ThreadDeleteParams) -> Result<ThreadDeleteResponse> {
        params.validate()?;
        let thread_id = params.thread_id.as_str();
        // A driver still finishing (recording its end, marking what it had in flight uncertain)
        // is in the registry after its row says it ended.
        if self.runs.has_thread(thread_id) {
            return Err(busy(thread_id, &ThreadWork { running_runs: 1, ..ThreadWork::default() }));
        }
        match self.store.delete_thread(thread_id, params.acknowledge_uncertain).await? {
            ThreadDeletion::Deleted { .. } => {}
            ThreadDeletion::NotFound => {
                return Err(CoreError::NotFound(format!(
                    "There is no chat {thread_id}; it may have been deleted already. Reload the chat list."
                )));
            }
            ThreadDeletion::Refused(work) => return Err(busy(thread_id, &work)),
        }
        self.conversations.forget(thread_id);
        // After the rows: a refused deletion must not have cost the chat its logins. A profile
        // that cannot be removed now is a throwaway one the make-room rule removes later.
        let profile = ProfileId::for_thread(thread_id);
        let profile_deleted = match self.browsers.delete_if_unused(&profile).await {
            Ok(deleted) => deleted && !self.browsers.is_saved(&profile),
            Err(err) => {
                tracing::warn!(thread_id, profile = profile.as_str(), error = %err, "a deleted chat's browser profile could not be removed");
                false
            }
        };
        Ok(ThreadDeleteResponse { profile_deleted })
    }
}

/// The refusal of a deletion, saying what of the chat is still going on and what to do.
fn busy(thread_id: &str, work: &ThreadWork) -> CoreError {
    let chat = format!("The chat {thread_id} was not deleted");
    if work.running_runs > 0 {
        return CoreError::Conflict(format!(
            "{chat}: a reply is still being written in it. Stop it or wait for it to finish, then delete."
        ));
    }
    if work.dispatching > 0 || work.executing > 0 {
        return CoreError::Conflict(format!(
            "{chat}: {} of its actions is being carried out right now. Wait until it reports (its card shows the result), then delete.",
            work.dispatching + work.executing
        ));
    }
    if work.awaiting_review > 0 {
        return CoreError::Conflict(format!(
            "{chat}: {} of its proposals waits for your decision. Approve or deny it in Approvals, then delete.",
            work.awaiting_review
        ));
    }
    CoreError::NeedsReview(format!(
        "{chat}: {} of its actions may or may not have happened (their cards say what they were). Check them first; \
         deleting anyway keeps their records, but the chat that shows them goes.",
        work.uncertain
    ))
}
