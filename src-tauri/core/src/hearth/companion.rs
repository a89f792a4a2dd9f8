//! What a paired device's request does on the host: its scope checked against the host's own
//! row for it, then the same [`Hearth`] operation the window's command calls.
//!
//! The wire layer has already proved which device is asking ([`RequestContext::device`]) and
//! that it was active when the request was read. Here the host decides what it may do, from its
//! store at the moment of the request — never from anything the device sends — with
//! [`companion_reach`]: a command outside the device's scopes, or one only the window at home
//! may call, is `Forbidden` before any of its parameters are read.
//!
//! Streams (a chat's events, task changes, new notices) go back on the same connection, each
//! named by the request that opened it ([`StreamId::opened_by`]); when it
//! ends (revocation, the device leaving), a chat run is stopped as the window's closing stops it,
//! and the other streams end.

use std::sync::Arc;

use hearth_protocol::devices::{DeviceScope, DeviceScopes, Reach, companion_reach};
use hearth_protocol::ids::DeviceId;
use hearth_protocol::{ErrorCode as IpcCode, IpcError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Hearth;
use crate::pairing::{BoxFuture, RemoteError, RequestContext, RequestHandler, StreamClosed, StreamId, StreamSink};

/// The host's answer to paired devices' requests.
#[derive(Clone)]
pub(crate) struct CompanionRouter {
    hearth: Hearth,
}

impl CompanionRouter {
    pub(crate) fn new(hearth: Hearth) -> Arc<Self> {
        Arc::new(Self { hearth })
    }
}

impl RequestHandler for CompanionRouter {
    fn handle(&self, ctx: RequestContext, command: String, params: Value) -> BoxFuture<'_, Result<Value, RemoteError>> {
        Box::pin(async move {
            let device = DeviceId::trusted(ctx.device().as_str());
            let scopes = self.admit(&device, &command).await?;
            self.answer(&ctx, &command, params, scopes).await
        })
    }
}

impl CompanionRouter {
    /// The device's scopes now, from the store: refused when it is unknown, revoked, or lacks
    /// the command's scope. Notes the use when admitted.
    async fn admit(&self, device: &DeviceId, command: &str) -> Result<DeviceScopes, IpcError> {
        let row = self.hearth.store().device(device).await.map_err(|e| crate::CoreError::from(e).to_ipc())?;
        let scopes: DeviceScopes = match row {
            Some(row) if row.revoked_at.is_none() => row.scopes,
            Some(_) => return Err(forbidden("This device was removed from your Hearth; pair it again in Settings → Devices.")),
            None => return Err(forbidden("This device is not paired with this Hearth; pair it in Settings → Devices.")),
        };
        match companion_reach(command) {
            Reach::Never => {
                return Err(forbidden(format!("{command} is only available in the Hearth app at home, not from a paired device.")));
            }
            Reach::Scope(scope) if !scopes.allows(scope) => {
                let scope: &'static str = scope.into();
                return Err(forbidden(format!(
                    "This device may not do that ({command} needs \"{scope}\"); the owner can allow it in Settings → Devices at home."
                )));
            }
            Reach::Scope(_) => {}
        }
        self.hearth.store().device_used(device).await.map_err(|e| crate::CoreError::from(e).to_ipc())?;
        Ok(scopes)
    }

    /// The operation itself: each arm is what the window's command of the same name does
    /// (`src-tauri/src/commands/`). Commands a device can never reach are refused by
    /// [`Self::admit`] first; the last arm only answers one added to the reach table without an
    /// arm here.
    async fn answer(&self, ctx: &RequestContext, command: &str, params: Value, scopes: DeviceScopes) -> Result<Value, IpcError> {
        use hearth_protocol::{approvals, files, goals, ideas, ipc, mail, mandates, memory, notifications, schedules, tasks};
        let h = &self.hearth;
        let core = |e: crate::CoreError| e.to_ipc();
        match command {
            "app_info" => json(h.app_info()),
            "run_start" => {
                let params: ipc::RunStartParams = parse(command, params)?;
                let (started, events) = h.start_device_run(params).await.map_err(core)?;
                forward_run(h.clone(), started.run_id.clone(), events, ctx.open_stream(StreamId::opened_by(ctx.request_id())));
                json(started)
            }
            "run_stop" => {
                let params: ipc::RunStopParams = parse(command, params)?;
                params.validate()?;
                json(ipc::RunStopResponse { was_running: h.stop_run(&params.run_id) })
            }
            "thread_list" => json(h.thread_list().await.map_err(core)?),
            "thread_history" => {
                let params: ipc::ThreadHistoryParams = parse(command, params)?;
                json(h.thread_history_page(&params.thread_id, params.before).await.map_err(core)?)
            }
            "thread_delete" => {
                let params: ipc::ThreadDeleteParams = parse(command, params)?;
                json(h.thread_delete(&params).await.map_err(core)?)
            }
            "task_list" => json(h.task_list().await.map_err(core)?),
            "failure_list" => json(h.failure_list().await.map_err(core)?),
            "failure_timeline" => {
                let params: hearth_protocol::failures::FailureTimelineParams = parse(command, params)?;
                json(h.failure_timeline(&params).await.map_err(core)?)
            }
            "task_get" => {
                let params: tasks::TaskGetParams = parse(command, params)?;
                json(h.task_get(&params.task_id).await.map_err(core)?)
            }
            "task_control" => {
                let params: tasks::TaskControlParams = parse(command, params)?;
                // Retrying past effects whose outcome is unknown is the owner's review of them:
                // a decision, not control of work.
                if matches!(params.control, tasks::TaskControl::Retry { acknowledge_uncertain: true })
                    && !scopes.allows(DeviceScope::DecideApprovals)
                {
                    return Err(forbidden(
                        "Retrying past effects whose outcome is unknown is a decision; this device may not decide (\"decide_approvals\").",
                    ));
                }
                json(h.task_control(&params).await.map_err(core)?)
            }
            "task_watch" => {
                let stream = ctx.open_stream(StreamId::opened_by(ctx.request_id()));
                forward(h.task_watch(), stream, |task| tasks::TaskChanged { task });
                json(Value::Null)
            }
            "schedule_list" => json(h.schedule_list().await.map_err(core)?),
            "schedule_create" => {
                let params: schedules::ScheduleCreateParams = parse(command, params)?;
                json(h.schedule_create(&params).await.map_err(core)?)
            }
            "schedule_control" => {
                let params: schedules::ScheduleControlParams = parse(command, params)?;
                json(h.schedule_control(&params).await.map_err(core)?)
            }
            "monitor_check_now" => {
                let params: tasks::TaskGetParams = parse(command, params)?;
                json(h.monitor_check_now(&params.task_id).await.map_err(core)?)
            }
            "idea_list" => json(h.idea_list().await.map_err(core)?),
            "idea_accept" => {
                let params: ideas::IdeaParams = parse(command, params)?;
                json(h.idea_accept(&params).await.map_err(core)?)
            }
            "idea_dismiss" => {
                let params: ideas::IdeaParams = parse(command, params)?;
                json(h.idea_dismiss(&params).await.map_err(core)?)
            }
            "notification_list" => json(h.notification_list().await.map_err(core)?),
            "notification_read" => {
                let params: notifications::NotificationReadParams = parse(command, params)?;
                json(h.notification_read(&params).await.map_err(core)?)
            }
            "notification_watch" => {
                let notices = h.notification_watch().await.map_err(core)?;
                let stream = ctx.open_stream(StreamId::opened_by(ctx.request_id()));
                forward(notices, stream, |notice| notice);
                json(Value::Null)
            }
            "finance_start" => {
                let params: hearth_protocol::finance::FinanceStartParams = parse(command, params)?;
                json(h.finance_start(&params).await.map_err(core)?)
            }
            "goal_list" => json(h.goal_list().await.map_err(core)?),
            "goal_create" => {
                let params: goals::GoalCreateParams = parse(command, params)?;
                json(h.goal_create(&params).await.map_err(core)?)
            }
            "goal_control" => {
                let params: goals::GoalControlParams = parse(command, params)?;
                json(h.goal_control(&params).await.map_err(core)?)
            }
            "goal_milestones" => {
                let params: goals::GoalMilestonesParams = parse(command, params)?;
                json(h.goal_milestones(&params).await.map_err(core)?)
            }
            "memory_list" => json(h.memory_list().await.map_err(core)?),
            "memory_save" => {
                let params: memory::MemorySaveParams = parse(command, params)?;
                json(h.memory_save(&params).await.map_err(core)?)
            }
            "memory_forget" => {
                let params: memory::MemoryForgetParams = parse(command, params)?;
                json(h.memory_forget(&params).await.map_err(core)?)
            }
            "mandate_list" => {
                let params: mandates::MandateListParams = parse(command, params)?;
                json(h.mandate_list(&params).await.map_err(core)?)
            }
            "mandate_revoke" => {
                let params: mandates::MandateRevokeParams = parse(command, params)?;
                json(h.mandate_revoke(&params).await.map_err(core)?)
            }
            "approval_list" => json(approvals::ApprovalListResponse { proposals: h.approval_list().await.map_err(core)? }),
            "approval_get" => {
                let params: approvals::ApprovalGetParams = parse(command, params)?;
                params.validate()?;
                json(h.approval_get(&params.proposal_id).await.map_err(core)?)
            }
            "approval_decide" => {
                let params: approvals::ApprovalDecideParams = parse(command, params)?;
                params.validate()?;
                // The owner's decision, once it reached the host, is carried out whole even if
                // the device's connection drops meanwhile: the gate's own task, not this
                // request's, so a lost connection can neither cut a send in half nor leave it
                // to be decided twice (a second decision finds the proposal decided).
                let hearth = h.clone();
                let decided = tokio::spawn(async move { hearth.approval_decide(&params).await });
                json(decided.await.map_err(|_| internal("the decision's task ended unexpectedly"))?.map_err(core)?)
            }
            "approval_recheck" => {
                let params: approvals::ApprovalRecheckParams = parse(command, params)?;
                params.validate()?;
                let hearth = h.clone();
                let rechecked = tokio::spawn(async move { hearth.approval_recheck(&params).await });
                json(rechecked.await.map_err(|_| internal("the recheck's task ended unexpectedly"))?.map_err(core)?)
            }
            "approval_leaving" => {
                let params: approvals::ApprovalLeavingParams = parse(command, params)?;
                params.validate()?;
                // As a decision: once it reached the host, carried out whole (Send now may send).
                let hearth = h.clone();
                let left = tokio::spawn(async move { hearth.approval_leaving(&params).await });
                json(left.await.map_err(|_| internal("the undo's task ended unexpectedly"))?.map_err(core)?)
            }
            "file_list" => json(files::FileListResponse { files: h.file_list().await.map_err(core)? }),
            "file_get" => {
                let params: files::FileGetParams = parse(command, params)?;
                json(h.file_get(&params.file_id).await.map_err(core)?)
            }
            "file_render" => {
                let params: files::FileRenderParams = parse(command, params)?;
                json(h.file_render(&params).await.map_err(core)?)
            }
            "file_fill" => {
                let params: files::FileFillParams = parse(command, params)?;
                json(h.file_fill(&params).await.map_err(core)?)
            }
            "file_delete" => {
                let params: files::FileDeleteParams = parse(command, params)?;
                json(h.file_delete(&params.file_id).await.map_err(core)?)
            }
            "mail_thread_get" => {
                let params: mail::MailThreadGetParams = parse(command, params)?;
                json(h.mail_thread(&params.thread_id).await.map_err(core)?)
            }
            "local_model_activity" => json(h.local_model_activity()),
            other => Err(forbidden(format!("{other} is not available from a paired device yet."))),
        }
    }
}

/// A run's events to the device. When its connection ends the run is stopped at once, as when
/// the window stops listening (`src-tauri/src/streams.rs`), and the rest is drained so the
/// driver records the ending. An event over the wire's bound ends the device's stream (it
/// reads the thread's history instead) while the run goes on at home.
fn forward_run(hearth: Hearth, run_id: hearth_protocol::ids::RunId, mut events: crate::RunEvents, stream: StreamSink) {
    tokio::spawn(async move {
        let mut forwarding = true;
        loop {
            let event = tokio::select! {
                biased;
                () = stream.closed(), if forwarding => {
                    hearth.stop_run(run_id.as_str());
                    while events.recv().await.is_some() {}
                    return;
                }
                event = events.recv() => event,
            };
            let Some(event) = event else { break };
            if !forwarding {
                continue;
            }
            let sent = match serde_json::to_value(&event) {
                Ok(value) => stream.send(value).await,
                Err(err) => {
                    tracing::warn!(error = %err, "a run event could not be encoded for a paired device; its stream ends there");
                    Err(StreamClosed::EventTooLarge { len: 0, max: 0 })
                }
            };
            match sent {
                Ok(()) => {}
                Err(StreamClosed::EventTooLarge { .. }) => {
                    forwarding = false;
                    let _ended = stream.clone().end().await;
                }
                Err(StreamClosed::ConnectionClosed) => {
                    hearth.stop_run(run_id.as_str());
                    while events.recv().await.is_some() {}
                    return;
                }
            }
        }
        if forwarding {
            let _ended = stream.end().await;
        }
    });
}

/// Any other stream's items to the device, until its connection ends or the stream does.
fn forward<T: Send + 'static, U: Serialize>(
    mut items: tokio::sync::mpsc::Receiver<T>,
    stream: StreamSink,
    wrap: impl Fn(T) -> U + Send + 'static,
) {
    tokio::spawn(async move {
        loop {
            let item = tokio::select! {
                () = stream.closed() => return,
                item = items.recv() => item,
            };
            let Some(item) = item else { break };
            let Ok(value) = serde_json::to_value(wrap(item)) else { continue };
            if stream.send(value).await.is_err() {
                return;
            }
        }
        let _ended = stream.end().await;
    });
}

fn parse<T: DeserializeOwned>(command: &str, params: Value) -> Result<T, IpcError> {
    serde_json::from_value(params).map_err(|err| IpcError::invalid(format!("{command}: the request is malformed ({err}).")))
}

fn json(value: impl Serialize) -> Result<Value, IpcError> {
    serde_json::to_value(value).map_err(|e| internal(&e.to_string()))
}

fn forbidden(message: impl Into<String>) -> IpcError {
    IpcError::new(IpcCode::Forbidden, message)
}

fn internal(message: &str) -> IpcError {
    IpcError::new(IpcCode::Internal, message.to_owned())
}
