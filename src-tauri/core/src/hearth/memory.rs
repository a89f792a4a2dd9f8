//! The Memory screen's operations: read, keep, correct and forget facts, and see which went
//! into which model request.

use hearth_protocol::memory::{MemoryForgetParams, MemoryListResponse, MemorySaveParams, MemorySource, MemoryView};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::store::memory::Remembered;

/// How many requests the screen lists.
const SHOWN_USES: i64 = 50;

impl Hearth {
    /// Every fact and the newest requests that carried some.
    pub async fn memory_list(&self) -> Result<MemoryListResponse> {
        Ok(MemoryListResponse { memories: self.store.memories().await?, uses: self.store.memory_uses(SHOWN_USES).await? })
    }

    /// Keeps a new fact, or corrects one.
    pub async fn memory_save(&self, params: &MemorySaveParams) -> Result<MemoryView> {
        params.validate()?;
        let text = params.text.trim();
        match params.id {
            Some(id) => {
                if !self.store.edit_memory(id, text).await? {
                    return Err(gone(id));
                }
                self.store.memory(id).await?.ok_or_else(|| gone(id))
            }
            None => {
                let key = format!("owner:memory:{}", uuid::Uuid::new_v4());
                match self.store.remember(&key, text, MemorySource::Owner, None, None).await? {
                    Some(Remembered::New(fact) | Remembered::Same(fact) | Remembered::Different(fact)) => Ok(fact),
                    Some(Remembered::Forgotten) | None => Err(CoreError::Conflict("The fact was not kept; try again.".into())),
                }
            }
        }
    }

    /// Forgets a fact: from the list, the index and every later request at once.
    pub async fn memory_forget(&self, params: &MemoryForgetParams) -> Result<MemoryListResponse> {
        if !self.store.forget_memory(params.id).await? {
            return Err(gone(params.id));
        }
        self.memory_list().await
    }
}

fn gone(id: i64) -> CoreError {
    CoreError::NotFound(format!("There is no fact {id}; it may have been forgotten already."))
}
