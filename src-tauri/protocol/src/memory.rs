//! Memory: facts Hearth keeps for the owner, and which of them went into which model request.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// Longest fact.
pub const MAX_FACT_CHARS: usize = 2_000;

/// Who asked Hearth to keep a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum MemorySource {
    /// Typed in the Memory screen.
    Owner,
    /// remember_fact, in a conversation or a task.
    Agent,
}

impl MemorySource {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// One fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryView {
    /// Id.
    pub id: i64,
    /// The fact.
    pub text: String,
    /// Who asked to keep it.
    pub source: MemorySource,
    /// Kept, Unix ms.
    pub created_at: i64,
    /// Last edited, Unix ms.
    pub updated_at: i64,
}

/// The facts one model request carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryUseView {
    /// The request.
    pub request_id: String,
    /// When it was sent, Unix ms.
    pub at: i64,
    /// The conversation it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<crate::ids::ThreadId>,
    /// The task it worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<crate::ids::TaskId>,
    /// The facts, by id (a forgotten fact is gone from here too).
    pub memory_ids: Vec<i64>,
}

/// `memory_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryListResponse {
    /// Every fact, newest first.
    pub memories: Vec<MemoryView>,
    /// The newest model requests that carried facts, newest first (at most 50).
    pub uses: Vec<MemoryUseView>,
}

/// `memory_save`: keep a new fact (no id) or correct one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySaveParams {
    /// The fact to correct; none for a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// The fact.
    pub text: String,
}

impl MemorySaveParams {
    /// 1 to 2,000 characters.
    pub fn validate(&self) -> Result<(), IpcError> {
        check_fact(&self.text)
    }
}

/// `memory_forget`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryForgetParams {
    /// The fact.
    pub id: i64,
}

impl MemoryForgetParams {
    /// Ids are positive.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.id <= 0 {
            return Err(IpcError::invalid("The fact's id is not valid."));
        }
        Ok(())
    }
}

/// A fact is 1 to [`MAX_FACT_CHARS`] characters of text.
pub fn check_fact(text: &str) -> Result<(), IpcError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(IpcError::invalid("A fact needs some text."));
    }
    if text.chars().count() > MAX_FACT_CHARS {
        return Err(IpcError::invalid(format!("A fact is at most {MAX_FACT_CHARS} characters; split it or shorten it.")));
    }
    Ok(())
}
