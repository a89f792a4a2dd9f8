//! Why a run or subagent ended, the interrupts a paused run waits on, and token usage.

use serde::{Deserialize, Serialize};

use super::Metadata;

/// `RUN_FINISHED.outcome`: why a run that did not fail ended.
///
/// 1.0 added `cancelled` deliberately before release, because a consumer reads an
/// outcome it does not recognise as success — so a Stop must not be smuggled into
/// `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum RunFinishedOutcome {
    /// The run completed (the same as an absent outcome).
    Success {
        /// Frontend tool calls the application still has to answer.
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// The run paused; resuming means a new run whose `resume` answers these.
    Interrupt {
        /// At least one interrupt (checked by the verifier).
        interrupts: Vec<Interrupt>,
    },
    /// Stopped by whoever ran it before completion, without failing. The next run on
    /// the thread is an ordinary run, not a resume.
    Cancelled,
}

impl RunFinishedOutcome {
    /// `{"type":"success"}` with no pending tool calls.
    pub fn success() -> Self {
        RunFinishedOutcome::Success { pending_tool_call_ids: None }
    }
}

/// Something a run needs from outside before it can continue (an approval, a value).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Identifies the interrupt; a `ResumeEntry` answers it by this id.
    pub id: String,
    /// Machine-readable reason, e.g. `"approval"`.
    pub reason: String,
    /// Human-readable prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call this interrupt gates, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// JSON Schema (an object) for the expected answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Metadata>,
    /// When the interrupt lapses (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The subagent that raised it; `None` = the parent agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// Extra information, open by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `SUBAGENT_FINISHED.outcome`: mirrors [`RunFinishedOutcome`] one level down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum SubagentFinishedOutcome {
    /// The subagent completed (the same as an absent outcome).
    Success,
    /// Paused awaiting outside input; a later run may continue it.
    Suspended {
        /// The interrupts it waits on.
        #[serde(skip_serializing_if = "Option::is_none")]
        interrupt_ids: Option<Vec<String>>,
    },
}

/// Token counts for one provider and model. Parts (`reasoning`, `cached_input`,
/// `cache_write_input`) are included in the totals, never added to them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Provider label, e.g. `"ollama"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Total input tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Total output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `input_tokens + output_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Part of `output_tokens` spent on reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Part of `input_tokens` served from cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Part of `input_tokens` written to cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn outcomes_serialise_as_the_schema_says() {
        let cases = [
            (RunFinishedOutcome::success(), r#"{"type":"success"}"#),
            (RunFinishedOutcome::Cancelled, r#"{"type":"cancelled"}"#),
            (
                RunFinishedOutcome::Success { pending_tool_call_ids: Some(vec!["c1".into()]) },
                r#"{"type":"success","pendingToolCallIds":["c1"]}"#,
            ),
            (
                RunFinishedOutcome::Interrupt {
                    interrupts: vec![Interrupt { id: "i".into(), reason: "approval".into(), ..Default::default() }],
                },
                r#"{"type":"interrupt","interrupts":[{"id":"i","reason":"approval"}]}"#,
            ),
        ];
        for (o, json) in cases {
            assert_eq!(serde_json::to_string(&o).unwrap(), json);
            assert_eq!(serde_json::from_str::<RunFinishedOutcome>(json).unwrap(), o);
        }
        assert!(serde_json::from_str::<RunFinishedOutcome>(r#"{"type":"aborted"}"#).is_err());
    }

    #[test]
    fn outcomes_are_open_objects() {
        // 1.0 objects are loose: unknown keys are ignored, not rejected.
        let o: RunFinishedOutcome = serde_json::from_str(r#"{"type":"cancelled","reason":"owner pressed stop"}"#).unwrap();
        assert_eq!(o, RunFinishedOutcome::Cancelled);
        let o: SubagentFinishedOutcome = serde_json::from_str(r#"{"type":"success","x":1}"#).unwrap();
        assert_eq!(o, SubagentFinishedOutcome::Success);
    }

    #[test]
    fn subagent_outcomes() {
        let s = SubagentFinishedOutcome::Suspended { interrupt_ids: Some(vec!["i".into()]) };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"type":"suspended","interruptIds":["i"]}"#);
        assert_eq!(serde_json::from_str::<SubagentFinishedOutcome>(&json).unwrap(), s);
        assert_eq!(serde_json::to_string(&SubagentFinishedOutcome::Success).unwrap(), r#"{"type":"success"}"#);
    }
}
