//! Payloads of Hearth's own IPC commands (`<resource>_<verb>`).
//!
//! Each `*Params` validates itself, so the shell rejects bad input before the core sees it
//! and the UI can run the same check before sending.

use serde::{Deserialize, Serialize};

use crate::agui::Event;
use crate::error::{ErrorCode, IpcError};
use crate::ids::{RunId, TaskId, ThreadId};
use crate::tasks::TaskStatus;

/// Longest chat message the owner can send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// `run_start`: the owner sends a message; the run's events stream on a channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStartParams {
    /// The thread to continue; `None` starts a new thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<ThreadId>,
    /// What the owner typed.
    pub text: String,
}

impl RunStartParams {
    /// Checks the message's bounds (the thread id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.text.trim().is_empty() {
            return Err(IpcError::invalid("The message is empty. Type something first."));
        }
        let chars = self.text.chars().count();
        if chars > MAX_MESSAGE_CHARS {
            return Err(IpcError::invalid(format!(
                "The message has {chars} characters; the limit is {MAX_MESSAGE_CHARS}. Shorten it or attach a file."
            )));
        }
        Ok(())
    }
}

/// Answer to `run_start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStartResponse {
    /// The thread the run belongs to.
    pub thread_id: ThreadId,
    /// The new run.
    pub run_id: RunId,
}

/// `run_stop`: the owner pressed Stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStopParams {
    /// The run to stop.
    pub run_id: RunId,
}

impl RunStopParams {
    /// Nothing left to check: the run id checked itself when it was parsed. Kept so every
    /// command reads alike (parse, validate, call the core).
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// Answer to `run_stop`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStopResponse {
    /// `false` when the run had already ended (Stop is idempotent).
    pub was_running: bool,
}

/// One thread in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    /// Thread id.
    pub id: ThreadId,
    /// The first words of the first message.
    pub title: String,
    /// Last activity, Unix ms.
    pub updated_at: i64,
}

/// Answer to `thread_list`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    /// The threads.
    pub threads: Vec<ThreadSummary>,
}

/// `thread_delete`: the owner deletes a chat, with its messages and its own browser profile
/// (unless the owner kept that profile for a chat or a task).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDeleteParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The owner has seen that something of this chat may or may not have happened (the
    /// refusal said so) and deletes the chat anyway; the records of those actions are kept.
    #[serde(default)]
    pub acknowledge_uncertain: bool,
}

impl ThreadDeleteParams {
    /// Nothing left to check: the thread id checked itself when it was parsed. Kept so every
    /// command's params are validated the same way.
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// Answer to `thread_delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDeleteResponse {
    /// The chat's own browser profile was deleted with it (`false`: it had none, the owner kept
    /// it, or it is in use; the Browser screen lists what is left).
    pub profile_deleted: bool,
}

/// How many events a `thread_history` page holds before it reaches back to where its oldest
/// run began (at most [`HISTORY_RUN_EVENTS`] more). A page of a plain chat is some 300 rows,
/// more than the chat shows at first; a 100,000-event thread sent whole took the webview
/// 0.7–1.0 s to receive, decode and replay (benches/webview.rs in tests/support).
pub const HISTORY_PAGE_EVENTS: u32 = 2_000;

/// How many events past [`HISTORY_PAGE_EVENTS`] a page reaches back to begin where its oldest
/// run began. Every token is an event, so one long answer or a command's output is a run of
/// thousands: a page cut inside it would show an answer without its question, and tool
/// results without their calls. Only a run longer than this is cut (`startsInsideRun`).
pub const HISTORY_RUN_EVENTS: u32 = 20_000;

/// `thread_history`: one page of the stored event log of one thread, the newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadHistoryParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The page that ends just before this event (an earlier answer's `earlier`); none: the
    /// newest page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
}

impl ThreadHistoryParams {
    /// Checks the cursor (the thread id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        match self.before {
            Some(before) if before < 1 => Err(IpcError::new(
                ErrorCode::InvalidInput,
                format!("before must be an event number from an earlier page (1 or more), not {before}."),
            )),
            Some(_) | None => Ok(()),
        }
    }
}

/// Answer to `thread_history`: [`HISTORY_PAGE_EVENTS`] consecutive events of the thread's
/// runs, or fewer when the log has no more before them, and up to [`HISTORY_RUN_EVENTS`] more
/// to begin where a run began (unless `startsInsideRun`); in order, ending with the newest (or
/// just before `before`). The UI replays
/// them through the same reducer it uses for live streams, so history and live look alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadHistoryResponse {
    /// The thread.
    pub thread_id: ThreadId,
    /// The events.
    pub events: Vec<Event>,
    /// When the thread has events before this page: pass it as `before` for the page before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<i64>,
    /// The page begins inside a run longer than [`HISTORY_RUN_EVENTS`] past the page: its
    /// start, and the question that began it, are on the page before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starts_inside_run: bool,
}

/// Answer to `app_info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfoResponse {
    /// Hearth's version.
    pub version: String,
    /// Where Hearth keeps its data.
    pub data_dir: String,
    /// Which agent answers the chat (`sample` until a model is configured).
    pub agent: crate::settings::AgentMode,
}

/// The result a `delegate_task` tool call returns (JSON in `TOOL_CALL_RESULT.content`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DelegateTaskResult {
    /// The durable task's id.
    pub task_id: TaskId,
    /// Its title.
    pub title: String,
    /// Its status when the call returned.
    pub status: TaskStatus,
}

/// At least this many options in a choice.
pub const MIN_CHOICES: usize = 2;
/// At most this many options in a choice.
pub const MAX_CHOICES: usize = 12;

/// What a `present_choices` call returns: the question and the options, which the choice card
/// shows as buttons. The owner's pick comes back as their next message (chat) or their answer
/// (task).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PresentChoicesResult {
    /// The question.
    pub question: String,
    /// 2 to 12 options, in the model's order.
    pub options: Vec<String>,
}

/// The message a pick sends in chat ("I pick: …"), so the agent can tell a pick from a new
/// request.
pub fn pick_message(option: &str) -> String {
    format!("I pick: {option}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn run_start_rejects_empty_long_and_bad_ids() {
        let ok = RunStartParams { thread_id: None, text: "hello".into() };
        assert!(ok.validate().is_ok());
        let empty = RunStartParams { thread_id: None, text: "  \n".into() };
        assert_eq!(empty.validate().unwrap_err().code, ErrorCode::InvalidInput);
        let long = RunStartParams { thread_id: None, text: "é".repeat(MAX_MESSAGE_CHARS + 1) };
        assert!(long.validate().unwrap_err().message.contains("20001"));
        let at_limit = RunStartParams { thread_id: None, text: "é".repeat(MAX_MESSAGE_CHARS) };
        assert!(at_limit.validate().is_ok());
        let bad = serde_json::from_str::<RunStartParams>(r#"{"threadId":"a/b","text":"hi"}"#).unwrap_err();
        assert!(bad.to_string().contains("not a valid thread id"), "{bad}");
    }

    #[test]
    fn a_deletion_names_a_valid_thread_and_acknowledges_nothing_unless_told() {
        let plain: ThreadDeleteParams = serde_json::from_str(r#"{"threadId":"t1"}"#).unwrap();
        assert!(!plain.acknowledge_uncertain);
        assert!(plain.validate().is_ok());
        let told: ThreadDeleteParams = serde_json::from_str(r#"{"threadId":"t1","acknowledgeUncertain":true}"#).unwrap();
        assert!(told.acknowledge_uncertain);
        let bad = serde_json::from_str::<ThreadDeleteParams>(r#"{"threadId":"../t"}"#).unwrap_err();
        assert!(bad.to_string().contains("not a valid thread id"), "{bad}");
    }

    #[test]
    fn a_history_page_names_its_cursor_or_none() {
        let newest: ThreadHistoryParams = serde_json::from_str(r#"{"threadId":"t1"}"#).unwrap();
        assert_eq!(newest.before, None);
        assert!(newest.validate().is_ok());
        let page: ThreadHistoryParams = serde_json::from_str(r#"{"threadId":"t1","before":4001}"#).unwrap();
        assert_eq!(page.before, Some(4001));
        assert!(page.validate().is_ok());
        for bad in [0, -3] {
            let err = ThreadHistoryParams { thread_id: ThreadId::parse("t1").unwrap(), before: Some(bad) }.validate().unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidInput);
            assert!(err.message.contains(&bad.to_string()), "{}", err.message);
        }
        let last = ThreadHistoryResponse {
            thread_id: ThreadId::parse("t1").unwrap(),
            events: Vec::new(),
            earlier: None,
            starts_inside_run: false,
        };
        assert_eq!(serde_json::to_string(&last).unwrap(), r#"{"threadId":"t1","events":[]}"#);
        let cut = ThreadHistoryResponse { earlier: Some(7), starts_inside_run: true, ..last };
        let json = serde_json::to_string(&cut).unwrap();
        assert_eq!(json, r#"{"threadId":"t1","events":[],"earlier":7,"startsInsideRun":true}"#);
        assert_eq!(serde_json::from_str::<ThreadHistoryResponse>(&json).unwrap(), cut);
    }

    #[test]
    fn json_is_camel_case() {
        let p: RunStartParams = serde_json::from_str(r#"{"threadId":"t1","text":"hi"}"#).unwrap();
        assert_eq!(p.thread_id.as_deref(), Some("t1"));
        let r = DelegateTaskResult { task_id: TaskId::parse("x").unwrap(), title: "T".into(), status: TaskStatus::WaitingApproval };
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"taskId":"x","title":"T","status":"waiting_approval"}"#);
    }
}
