//! The Activity screen's schedules and the owner's notices.

use hearth_protocol::notifications::{NotificationListResponse, NotificationReadParams, NotificationView};
use hearth_protocol::schedules::{ScheduleControlParams, ScheduleCreateParams, ScheduleListResponse, ScheduleView};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::schedules::{ScheduleSpec, Schedules};
use crate::store::now_ms;

/// How many notices the inbox lists.
const LISTED: i64 = 200;

/// How often a notice watcher looks when no task changed: notices of proposals and schedules
/// are written without a task broadcast.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl Hearth {
    /// The schedules service (tests tick it with a chosen clock).
    pub fn schedules(&self) -> &Schedules {
        &self.schedules
    }

    /// Every schedule, newest first.
    pub async fn schedule_list(&self) -> Result<ScheduleListResponse> {
        Ok(ScheduleListResponse { schedules: self.schedules.list().await? })
    }

    /// A schedule the owner made in the Activity screen.
    pub async fn schedule_create(&self, params: &ScheduleCreateParams) -> Result<ScheduleView> {
        params.validate()?;
        // A statement summary's instructions are the path of an indexed document.
        if params.job == hearth_protocol::schedules::ScheduledJob::Finance {
            let source = crate::finance::StatementSource::Document(params.instructions.trim().to_owned());
            source.check(&self.files, &self.store).await.map_err(CoreError::InvalidInput)?;
        }
        // Each press of Create is a new schedule.
        let key = format!("owner:activity:{}", uuid::Uuid::new_v4());
        self.schedules
            .create(&key, &ScheduleSpec::from(params), &[], None, None, None, now_ms())
            .await?
            .ok_or_else(|| CoreError::Conflict("The schedule was not made; try again.".into()))
    }

    /// Pause, resume, run now or delete (`None` after a delete).
    pub async fn schedule_control(&self, params: &ScheduleControlParams) -> Result<Option<ScheduleView>> {
        self.schedules.control(params, now_ms()).await
    }

    /// A scheduled monitor looks at its page now. Refused unless it is waiting for its next
    /// look (running, paused or ended monitors have their own controls).
    pub async fn monitor_check_now(&self, task_id: &str) -> Result<hearth_protocol::tasks::TaskView> {
        if !self.store.monitor_due_now(task_id).await? {
            return Err(CoreError::Conflict(
                "This monitor is not waiting for its next look (it is running, paused or ended); nothing was changed.".into(),
            ));
        }
        self.tasks.announce_created(&[task_id.to_owned()]);
        self.store.get_task(task_id).await?.map(|t| t.view()).ok_or_else(|| CoreError::NotFound(format!("There is no task {task_id}.")))
    }

    /// The inbox: the newest notices and how many are unread.
    pub async fn notification_list(&self) -> Result<NotificationListResponse> {
        Ok(NotificationListResponse {
            notifications: self.store.notifications(LISTED).await?,
            unread: self.store.unread_notifications().await?,
        })
    }

    /// Marks notices read; returns the inbox as it is then.
    pub async fn notification_read(&self, params: &NotificationReadParams) -> Result<NotificationListResponse> {
        params.validate()?;
        self.store.mark_notifications_read(&params.ids, params.all).await?;
        self.notification_list().await
    }

    /// Every notice written from now on, oldest first, once each. Ends when the receiver is
    /// dropped or Hearth shuts down.
    pub async fn notification_watch(&self) -> Result<tokio::sync::mpsc::Receiver<NotificationView>> {
        let now = self.store.newest_notification_id().await?;
        Ok(self.notices_after(now))
    }

    /// Every notice written since this Hearth opened, oldest first, once each: the OS
    /// notifications' watch. The shell starts it once the core has opened, and the workers
    /// started in [`Hearth::open`] may have written notices by then; those must pop up too.
    pub fn notification_watch_since_open(&self) -> tokio::sync::mpsc::Receiver<NotificationView> {
        self.notices_after(self.notices_at_open)
    }

    fn notices_after(&self, mut after: i64) -> tokio::sync::mpsc::Receiver<NotificationView> {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let mut changes = self.tasks.subscribe();
        let store = self.store.clone();
        let stop = self.background.clone();
        tokio::spawn(async move {
            loop {
                match store.notifications_after(after, 50).await {
                    Ok(new) => {
                        for notice in new {
                            after = notice.id;
                            if tx.send(notice).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(err) => tracing::error!(error = %err, "could not read new notices"),
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tx.closed() => return,
                    changed = changes.recv() => {
                        if matches!(changed, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                            return;
                        }
                    }
                    () = tokio::time::sleep(WATCH_EVERY) => {}
                }
            }
        });
        rx
    }
}
