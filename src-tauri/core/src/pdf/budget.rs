//! What one PDF operation may spend, checked before the work it bounds.
//!
//! A hostile PDF costs little to send and a lot to read: a page tree whose nodes each list the
//! next node twice is 2^depth walks, a 10 MB file of small object streams inflates to
//! gigabytes. So every operation carries a [`Budget`]:
//!
//! - **objects and tree nodes**: every object lopdf hands over while loading and every node of
//!   every tree walk (pages, fields, actions) counts one; at [`Limits::nodes`] the operation
//!   ends with [`PdfError::TooComplex`]. Walks also keep a visited set, so a node reached twice
//!   is refused as malformed rather than walked again (see `objects`);
//! - **inflated bytes**, across all streams of the document: each stream is decoded with the
//!   budget's remainder as its limit;
//! - **Stop and a deadline**: each check also looks at the caller's cancellation and the time
//!   limit, so a Stop or the limit ends the walk at its next node.
//!
//! Counts are what tests assert (`spent`), never wall-clock time. The budget is a cheap handle
//! (atomics behind an `Arc`) so the lopdf load filter, a plain `fn`, can reach it through a
//! thread-local while the load runs on the caller's thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::PdfError;

/// The bounds of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Objects loaded plus tree nodes visited.
    pub nodes: u64,
    /// Bytes produced by decoding streams, all streams together.
    pub inflated_bytes: u64,
    /// Wall-clock limit of the whole operation.
    pub time: Duration,
}

impl Limits {
    /// What Hearth allows one operation on a PDF of at most 10 MB and 500 pages: far above any
    /// real form (the permission form spends about 60 nodes and 4 KB), far below what hurts.
    pub const STANDARD: Self = Self { nodes: 1_000_000, inflated_bytes: 128 * 1024 * 1024, time: Duration::from_secs(30) };
}

/// What an operation has spent so far (for tests and the logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spent {
    /// Objects loaded plus tree nodes visited.
    pub nodes: u64,
    /// Bytes produced by decoding streams.
    pub inflated_bytes: u64,
}

/// A probe called at every node check with what has been spent (tests use it to hold an
/// operation in the middle of its work).
type Probe = Arc<dyn Fn(Spent) + Send + Sync>;

struct Shared {
    limits: Limits,
    started: Instant,
    cancel: Option<CancellationToken>,
    nodes: AtomicU64,
    inflated: AtomicU64,
    probe: Option<Probe>,
}

/// The budget of one operation; clones share it.
#[derive(Clone)]
pub struct Budget(Arc<Shared>);

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget").field("limits", &self.0.limits).field("spent", &self.spent()).finish()
    }
}

impl Budget {
    /// [`Limits::STANDARD`], with no Stop.
    pub fn standard() -> Self {
        Self::new(Limits::STANDARD, None)
    }

    /// `limits`, ended early by `cancel`.
    pub fn new(limits: Limits, cancel: Option<CancellationToken>) -> Self {
        Self(Arc::new(Shared {
            limits,
            started: Instant::now(),
            cancel,
            nodes: AtomicU64::new(0),
            inflated: AtomicU64::new(0),
            probe: None,
        }))
    }

    /// The same budget calling `probe` at every node check (tests only).
    #[doc(hidden)]
    pub fn with_probe(limits: Limits, cancel: Option<CancellationToken>, probe: Probe) -> Self {
        let mut budget = Self::new(limits, cancel);
        if let Some(shared) = Arc::get_mut(&mut budget.0) {
            shared.probe = Some(probe);
        }
        budget
    }

    /// A new budget with the same limits and Stop, nothing spent: for a second operation on
    /// what the first produced (inspecting a filled copy).
    pub fn renewed(&self) -> Self {
        Self::new(self.0.limits, self.0.cancel.clone())
    }

    /// What has been spent.
    pub fn spent(&self) -> Spent {
        Spent { nodes: self.0.nodes.load(Ordering::Relaxed), inflated_bytes: self.0.inflated.load(Ordering::Relaxed) }
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.0.limits
    }

    /// Counts one object or tree node, and checks Stop and the deadline.
    pub(super) fn node(&self, what: &'static str) -> Result<(), PdfError> {
        let nodes = self.0.nodes.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(probe) = &self.0.probe {
            probe(self.spent());
        }
        self.alive()?;
        if nodes > self.0.limits.nodes {
            return Err(PdfError::TooComplex { what, limit: format!("{} objects and nodes", self.0.limits.nodes) });
        }
        Ok(())
    }

    /// Stop and the deadline only.
    pub(super) fn alive(&self) -> Result<(), PdfError> {
        if self.0.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            return Err(PdfError::Stopped);
        }
        if self.0.started.elapsed() > self.0.limits.time {
            return Err(PdfError::TimedOut { seconds: self.0.limits.time.as_secs() });
        }
        Ok(())
    }

    /// How many bytes a stream may still inflate to.
    pub(super) fn inflate_allowance(&self) -> usize {
        let left = self.0.limits.inflated_bytes.saturating_sub(self.0.inflated.load(Ordering::Relaxed));
        usize::try_from(left).unwrap_or(usize::MAX)
    }

    /// Records `bytes` inflated; past the limit the operation ends.
    pub(super) fn inflated(&self, bytes: usize) -> Result<(), PdfError> {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        let total = self.0.inflated.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
        if total > self.0.limits.inflated_bytes {
            return Err(self.inflate_exceeded());
        }
        Ok(())
    }

    /// The error of a stream that would inflate past the remainder.
    pub(super) fn inflate_exceeded(&self) -> PdfError {
        PdfError::TooComplex {
            what: "its compressed streams",
            limit: format!("{} MiB inflated in all", self.0.limits.inflated_bytes / (1024 * 1024)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_past_the_limit_end_the_operation() {
        let budget = Budget::new(Limits { nodes: 3, ..Limits::STANDARD }, None);
        for _ in 0..3 {
            assert!(budget.node("a tree").is_ok());
        }
        assert!(matches!(budget.node("a tree"), Err(PdfError::TooComplex { what: "a tree", .. })));
        assert_eq!(budget.spent().nodes, 4);
    }

    #[test]
    fn a_stop_ends_the_operation_at_its_next_node() {
        let cancel = CancellationToken::new();
        let budget = Budget::new(Limits::STANDARD, Some(cancel.clone()));
        assert!(budget.node("x").is_ok());
        cancel.cancel();
        assert!(matches!(budget.node("x"), Err(PdfError::Stopped)));
    }

    #[test]
    fn a_spent_deadline_ends_the_operation() {
        let limits = Limits { time: Duration::from_secs(30), ..Limits::STANDARD };
        assert!(Budget::new(limits, None).alive().is_ok());
        // A budget that, as far as its deadline can tell, started 31 s ago.
        let mut late = Budget::new(limits, None);
        let (Some(shared), Some(started)) = (Arc::get_mut(&mut late.0), Instant::now().checked_sub(Duration::from_secs(31))) else {
            panic!("a new budget is not shared, and this machine has been up for 31 s");
        };
        shared.started = started;
        assert!(matches!(late.alive(), Err(PdfError::TimedOut { seconds: 30 })));
    }

    #[test]
    fn inflation_is_counted_across_streams() {
        let budget = Budget::new(Limits { inflated_bytes: 100, ..Limits::STANDARD }, None);
        assert!(budget.inflated(60).is_ok());
        assert_eq!(budget.inflate_allowance(), 40);
        assert!(budget.inflated(60).is_err());
    }
}
