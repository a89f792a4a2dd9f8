//! The Browser screen and the browser card: pictures of pages, and the owner's profiles.

use base64::Engine;
use hearth_protocol::browser::{BrowserListResponse, ControlFrame, ControlInput, ProfileView, ScreenshotResponse};

use super::Hearth;
use crate::browser::error::BrowserError;
use crate::browser::profiles::ProfileId;
use crate::error::{CoreError, Result};
use hearth_protocol::tasks::TaskStatus;

impl Hearth {
    /// The picture a browse_web result names.
    pub async fn browser_screenshot(&self, id: &str) -> Result<ScreenshotResponse> {
        let shots = self.browsers.shots().clone();
        let id = id.to_owned();
        let png = tokio::task::spawn_blocking(move || shots.get(&id))
            .await
            .map_err(|e| CoreError::Unavailable(e.to_string()))?
            .map_err(|e| CoreError::Unavailable(format!("the picture could not be read: {e}")))?
            .ok_or_else(|| CoreError::NotFound("That picture is no longer kept (Hearth keeps the newest 200).".into()))?;
        Ok(ScreenshotResponse { png_base64: base64::engine::general_purpose::STANDARD.encode(png) })
    }

    /// The saved browser profiles.
    pub async fn browser_list(&self) -> BrowserListResponse {
        let now = std::time::Instant::now();
        let now_ms = crate::store::now_ms();
        let profiles = self
            .browsers
            .profiles()
            .await
            .into_iter()
            .map(|p| ProfileView {
                id: p.id.as_str().to_owned(),
                running: p.running,
                last_used_ms: p.last_used.map(|at| now_ms - i64::try_from(now.duration_since(at).as_millis()).unwrap_or(i64::MAX)),
            })
            .collect();
        BrowserListResponse { profiles }
    }

    /// Closes a profile's browser (its logins stay).
    pub async fn browser_close(&self, id: &str) -> Result<()> {
        let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
        self.browsers.close(&id).await;
        Ok(())
    }

    /// Closes a profile's browser and deletes the profile with its cookies and logins; the
    /// threads and tasks the owner had pointed at it browse in their own again.
    pub async fn browser_delete_profile(&self, id: &str) -> Result<()> {
        let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
        // The picks go first: no call between the two can start a new, empty profile under the
        // old name for a chat that was only pointed at it.
        self.store.forget_browser_profile(id.as_str()).await?;
        self.browsers.delete(&id).await.map_err(|e| CoreError::Unavailable(format!("the profile could not be deleted: {e}")))
    }

    /// The owner picks the saved profile a thread or a task browses in (its cookies and
    /// logins), or gives it back its own. Only the app calls this: no tool can.
    pub async fn browser_use_profile(&self, params: &hearth_protocol::browser::UseProfileParams) -> Result<()> {
        use hearth_protocol::browser::ProfileTarget;
        let scope = match &params.target {
            ProfileTarget::Thread(id) => {
                if !self.store.thread_exists(id).await? {
                    return Err(CoreError::NotFound("There is no such chat.".into()));
                }
                // An outside client drives that chat through the endpoint: it would browse with
                // the logins of the profile picked for it.
                if params.profile.is_some() && self.store.endpoint_may_continue(id).await? {
                    return Err(CoreError::InvalidInput(
                        "This chat was started by an outside client through the endpoint; it browses only in its own profile.".into(),
                    ));
                }
                format!("thread:{id}")
            }
            ProfileTarget::Task(id) => {
                if self.store.get_task(id).await?.is_none() {
                    return Err(CoreError::NotFound("There is no such task.".into()));
                }
                crate::store::tasks::task_scope(id)
            }
        };
        let profile = match &params.profile {
            None => None,
            Some(id) => {
                let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
                if !self.browsers.profiles().await.iter().any(|saved| saved.id == id) {
                    return Err(CoreError::NotFound(format!(
                        "There is no saved browser profile {}; the Browser screen lists them.",
                        id.as_str()
                    )));
                }
                Some(id)
            }
        };
        // A profile picked for a chat or task holds logins the owner wants: kept from now on.
        self.browsers.keep(profile.clone());
        self.store.choose_browser_profile(&scope, profile.as_ref().map(ProfileId::as_str)).await.map_err(Into::into)
    }
}

impl Hearth {
    /// Take control: the owner's live view of a profile's browser, frames to `frames`; answers
    /// the ticket Give back names.
    pub async fn browser_control_start(&self, id: &str, frames: tokio::sync::mpsc::Sender<ControlFrame>) -> Result<u64> {
        let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
        self.browsers.take_control(&id, frames).await.map_err(|e| CoreError::Unavailable(e.to_string()))
    }

    /// One input of the owner's to the browser under control.
    pub async fn browser_control_input(&self, id: &str, input: &ControlInput) -> Result<()> {
        let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
        self.browsers.control_input(&id, input).await.map_err(|e| match e {
            BrowserError::BadElement(message) => CoreError::InvalidInput(message),
            other => CoreError::Unavailable(other.to_string()),
        })
    }

    /// Give back (the session `ticket`, or whichever when `None`): the agent may use the
    /// browser again.
    pub async fn browser_control_stop(&self, id: &str, ticket: Option<u64>) -> Result<()> {
        let id = ProfileId::parse(id).map_err(CoreError::InvalidInput)?;
        self.browsers.give_back(&id, ticket).await;
        Ok(())
    }
}

impl Hearth {
    /// Ends every Take control (the window calls this when it loads: a view that was open when
    /// the window went away cannot give back).
    pub async fn browser_control_release_all(&self) {
        self.browsers.give_back_all().await;
    }
}

/// Deletes a task's browser profile (its cookies, logins and downloads) once the task has
/// ended for good — succeeded or cancelled — so profiles do not pile up run after run. Follows
/// the task engine's change feed until it closes; a change missed while lagging leaves the
/// profile to the make-room rule (`Browsers::session`). A monitor keeps its profile across
/// looks: it ends only when the owner ends it.
pub(super) fn forget_profiles_of_ended_tasks(
    tasks: &crate::tasks::TaskEngine,
    store: crate::store::Store,
    browsers: crate::browser::profiles::Browsers,
) {
    let mut changes = tasks.subscribe();
    tokio::spawn(async move {
        loop {
            let task_id = match changes.recv().await {
                Ok(task_id) => task_id,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "task changes were missed; their profiles go when room is needed");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            };
            let profile = ProfileId::for_task(&task_id);
            if !browsers.is_saved(&profile) && browsers.existing(&profile).await.is_none() {
                continue;
            }
            match store.get_task(&task_id).await {
                // Only what cannot run again (a failed task can be retried, with the logins it
                // had); one in use meanwhile (a browser running, the owner's control) stays.
                Ok(Some(task)) if matches!(task.status, TaskStatus::Succeeded | TaskStatus::Cancelled) => {
                    if let Err(err) = browsers.delete_if_unused(&profile).await {
                        tracing::warn!(task_id, error = %err, "an ended task's browser profile could not be deleted");
                    }
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(task_id, error = %err, "could not read a task to tidy its browser profile"),
            }
        }
    });
}
