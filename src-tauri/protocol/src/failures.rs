//! Failures the owner can follow: a failed run's short id, its timeline (what the run did, the
//! model provider's tries, the tool calls and their receipts) and the redacted report the owner
//! can send to someone helping.
//!
//! The timeline is plain data the window lists as it is; the core builds the report, so what it
//! leaves out (keys, tokens, mail bodies, document text, full addresses) is tested there.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::{FailureId, ProposalId, RunId, TaskId, ThreadId};
use crate::tools::EffectClass;

/// The most failures `failure_list` returns (newest first).
pub const MAX_LISTED_FAILURES: usize = 50;

/// What failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FailureKind {
    /// A chat turn.
    Chat,
    /// One run of a background task.
    Task,
    /// One effect a tool performed through the journal (in a chat's or a task's run, or for an
    /// approved held call): it failed, or Hearth lost track of whether it happened.
    Effect,
    /// An action the owner approved (a mail, a calendar change, a web form): it failed when it
    /// was carried out, or its outcome is unknown.
    Approval,
}

/// What became of a failed effect afterwards, so a doubt that was settled is not shown as open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LaterOutcome {
    /// A retry (or the owner's recheck) found it done, or did it.
    Succeeded,
    /// The owner reviewed the doubt and acknowledged it.
    Acknowledged,
    /// It never started: its record was withdrawn.
    Withdrawn,
}

/// What a failure of this kind is called in a message or a report.
pub fn failure_word(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Chat => "a chat reply",
        FailureKind::Task => "a background task's run",
        FailureKind::Effect => "a tool's effect",
        FailureKind::Approval => "an approved action",
    }
}

/// One failure as Activity lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureView {
    /// The short id shown with the message.
    pub id: FailureId,
    /// The run that failed, or that performed the effect that failed. An approved action is
    /// carried out outside any run: `None`, and [`Self::proposal_id`] names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// What failed.
    pub kind: FailureKind,
    /// The tool (an effect) or the kind of action (`email.send` …) that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The approved action that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<ProposalId>,
    /// The chat it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<ThreadId>,
    /// The task it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// The message the owner saw (without the id).
    pub message: String,
    /// When it failed, Unix ms.
    pub at: i64,
    /// For an effect: what became of it afterwards, if anything settled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub later: Option<LaterOutcome>,
}

/// An effect class as the timeline and the report write it.
pub fn effect_word(class: EffectClass) -> &'static str {
    match class {
        EffectClass::Read => "read",
        EffectClass::Prepare => "prepare",
        EffectClass::Effect => "effect",
        EffectClass::Control => "control",
    }
}

/// `failure_list`'s answer: the newest failures, at most [`MAX_LISTED_FAILURES`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureListResponse {
    /// Newest first.
    pub failures: Vec<FailureView>,
}

/// `failure_timeline`: the timeline of the run a failure id (or a run id) names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureTimelineParams {
    /// A failure id as the owner typed it ("K3M9-2QXA"), or a run id.
    pub id: String,
}

/// What [`FailureTimelineParams::id`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineKey {
    /// A failure's short id.
    Failure(FailureId),
    /// A run's id.
    Run(RunId),
}

impl FailureTimelineParams {
    /// A failure id if it reads as one (8 Crockford characters, hyphens allowed), else a run id.
    pub fn key(&self) -> Result<TimelineKey, IpcError> {
        let id = self.id.trim();
        if let Ok(failure) = FailureId::parse(id) {
            return Ok(TimelineKey::Failure(failure));
        }
        RunId::parse(id).map(TimelineKey::Run).map_err(|_| {
            IpcError::invalid("That is not a failure id: type the 8 letters and digits shown with the message (for example K3M9-2QXA).")
        })
    }
}

/// How one try of a request to the model provider ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TryOutcome {
    /// The provider answered with this HTTP status (200 when the answer started).
    Status {
        /// The HTTP status code.
        code: u16,
    },
    /// No answer: the connection failed.
    Transport {
        /// What kind of failure.
        kind: TransportFailure,
    },
}

/// Why a try got no HTTP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TransportFailure {
    /// Nothing listened at the address, or it could not be reached.
    Connect,
    /// It took too long.
    Timeout,
    /// Something else (the request could not be sent, TLS).
    Other,
}

/// One entry of a run's timeline, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TimelineEntry {
    /// The run began.
    Started {
        /// Unix ms.
        at: i64,
    },
    /// One try of a request to the model provider.
    ProviderTry {
        /// Unix ms, when the try ended.
        at: i64,
        /// The provider's name as Settings shows it.
        provider: String,
        /// 1 for a request's first try.
        try_number: u32,
        /// How many retries came before it (0 for the first try).
        retry: u32,
        /// What happened.
        outcome: TryOutcome,
    },
    /// The model asked for a tool.
    ToolCall {
        /// Unix ms.
        at: i64,
        /// The tool's name.
        tool: String,
        /// What it can change; absent for a tool Hearth does not know (a plug-in's, a client's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effect_class: Option<EffectClass>,
    },
    /// The journal's receipt for an effect of the run.
    Receipt {
        /// Unix ms, when it settled (or was written, if it has not).
        at: i64,
        /// The tool.
        tool: String,
        /// `succeeded`, `failed`, `outcome_unknown` …, as the journal holds it.
        status: String,
    },
    /// Something else the run recorded (a task's plan, step or observation).
    Note {
        /// Unix ms.
        at: i64,
        /// What kind of note.
        kind: String,
        /// Its text, shortened.
        text: String,
    },
    /// The run ended with this failure.
    Failed {
        /// Unix ms.
        at: i64,
        /// The message the owner saw.
        message: String,
    },
}

impl TimelineEntry {
    /// When it happened, Unix ms.
    pub fn at(&self) -> i64 {
        match self {
            TimelineEntry::Started { at }
            | TimelineEntry::ProviderTry { at, .. }
            | TimelineEntry::ToolCall { at, .. }
            | TimelineEntry::Receipt { at, .. }
            | TimelineEntry::Note { at, .. }
            | TimelineEntry::Failed { at, .. } => *at,
        }
    }
}

/// `failure_timeline`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureTimeline {
    /// The failure (for a run id that did not fail: `None`, and the timeline still shows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureView>,
    /// The run the timeline is of; `None` for an approved action's own timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// Oldest first.
    pub entries: Vec<TimelineEntry>,
    /// The redacted report "Copy details" puts on the clipboard: no keys or tokens, no mail
    /// bodies or document text (only their sizes), addresses only as their host.
    pub report: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_typed_failure_id_or_a_run_id_is_a_key() {
        let key = |id: &str| FailureTimelineParams { id: id.to_owned() }.key();
        assert_eq!(key(" k3m9-2qxa ").unwrap(), TimelineKey::Failure(FailureId::parse("K3M92QXA").unwrap()));
        let run = "0b5e3c1a-7f2d-4c4e-9a51-2d3f6b7c8e90";
        assert_eq!(key(run).unwrap(), TimelineKey::Run(RunId::parse(run).unwrap()));
        assert_eq!(key("<b>").unwrap_err().code, crate::ErrorCode::InvalidInput);
    }

    #[test]
    fn entries_are_tagged_camel_case() {
        let entry = TimelineEntry::ProviderTry {
            at: 5,
            provider: "OpenAI".into(),
            try_number: 2,
            retry: 1,
            outcome: TryOutcome::Status { code: 500 },
        };
        assert_eq!(
            serde_json::to_value(&entry).unwrap(),
            serde_json::json!({"type": "provider_try", "at": 5, "provider": "OpenAI", "tryNumber": 2, "retry": 1,
                               "outcome": {"type": "status", "code": 500}})
        );
    }
}
