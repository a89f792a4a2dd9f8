//! The conversations of recently used threads, kept between sends.
//!
//! Why: every Send gives the model the whole conversation, and the conversation lives in the
//! thread's AG-UI event log — a streamed reply is one event per token. Rebuilding it from the
//! log on every Send read and decoded the whole log each time (the instruction profile of a
//! chat turn: a third of the turn's instructions in the main thread went to decoding earlier
//! turns), so a Send in a long thread cost time in proportion to everything ever said in it.
//! Here each thread's fold is kept with the number of the last event it took, and a Send reads
//! only what the log gained since. The log is append-only and numbered in commit order, so the
//! kept fold plus the newer events is exactly the fold of the whole log.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hearth_protocol::agui::Message;

use crate::agent::HistoryFold;
use crate::error::Result;
use crate::store::Store;

/// How many threads' conversations are kept (the least recently used goes first). A fold
/// holds the thread's messages once; 16 long threads stay within a few tens of MB.
const KEPT: usize = 16;

#[derive(Debug, Default)]
pub(crate) struct Conversations {
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    threads: HashMap<String, Entry>,
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    /// The number of the last event the fold took.
    last_event: i64,
    fold: HistoryFold,
    used: u64,
}

impl Conversations {
    /// The conversation of `thread_id` as its log holds it now.
    ///
    /// The thread's fold is taken out of the cache while its new events are read (no lock is
    /// held across the read); a second Send on the same thread meanwhile finds nothing and
    /// reads the whole log, which is slower but the same answer.
    pub(crate) async fn messages(&self, store: &Store, thread_id: &str) -> Result<Vec<Message>> {
        let (mut last_event, mut fold) = self.take(thread_id).unwrap_or_default();
        for (number, event) in store.thread_events_after(thread_id, last_event).await? {
            fold.apply(&event);
            last_event = number;
        }
        let messages = fold.conversation();
        self.put(thread_id, last_event, fold);
        Ok(messages)
    }

    /// Drops what is kept of `thread_id` (the owner deleted it).
    pub(crate) fn forget(&self, thread_id: &str) {
        self.lock().threads.remove(thread_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self, thread_id: &str) -> Option<(i64, HistoryFold)> {
        self.lock().threads.remove(thread_id).map(|entry| (entry.last_event, entry.fold))
    }

    fn put(&self, thread_id: &str, last_event: i64, fold: HistoryFold) {
        let mut kept = self.lock();
        kept.clock += 1;
        let used = kept.clock;
        // A fold put back by a slower concurrent Send must not replace a newer one.
        if kept.threads.get(thread_id).is_some_and(|entry| entry.last_event >= last_event) {
            return;
        }
        kept.threads.insert(thread_id.to_owned(), Entry { last_event, fold, used });
        while kept.threads.len() > KEPT {
            let Some(oldest) = kept.threads.iter().min_by_key(|(_, entry)| entry.used).map(|(id, _)| id.clone()) else {
                break;
            };
            kept.threads.remove(&oldest);
        }
    }
}
