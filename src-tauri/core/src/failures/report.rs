//! The report "Copy details" puts on the clipboard: what failed and how the run got there, in
//! plain text someone helping can read — and nothing the owner would not hand over. It is built
//! from the timeline's entries (names, statuses, times) and the sizes of what the run held; the
//! only free text in it, the failure messages and names, goes through [`redact`].

use std::fmt::Write as _;

use hearth_protocol::failures::{FailureKind, FailureView, TimelineEntry, TryOutcome, effect_word, failure_word};
use hearth_protocol::ids::RunId;

use super::redact::redact;
use crate::secret::SecretString;

/// How much the run held, counted in characters: the report gives these sizes in place of the
/// contents (the owner's words, the model's answer, tool arguments and results, receipts — any of
/// which may quote a mail or a document).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holdings {
    /// What the owner sent with the run.
    pub asked_chars: usize,
    /// The model's answer text.
    pub answer_chars: usize,
    /// Tool calls' arguments.
    pub argument_chars: usize,
    /// Tool results.
    pub results: usize,
    /// Their text.
    pub result_chars: usize,
    /// The journal's receipts.
    pub receipt_chars: usize,
    /// A task run's notes.
    pub notes: usize,
    /// Their text.
    pub note_chars: usize,
}

/// The redacted report of a run's timeline.
pub fn report(
    failure: Option<&FailureView>,
    run_id: Option<&RunId>,
    kind: FailureKind,
    entries: &[TimelineEntry],
    holdings: &Holdings,
    secrets: &[SecretString],
) -> String {
    let clean = |text: &str| redact(text, secrets);
    let mut out = String::from("Hearth failure report\n");
    // A run's failure message is Hearth's own words; an effect's error may quote what the effect
    // read or was told (a server's refusal, an argument), so only its length goes in.
    let quoted = match kind {
        FailureKind::Chat | FailureKind::Task => true,
        FailureKind::Effect | FailureKind::Approval => false,
    };
    let message =
        |text: &str| if quoted { clean(text) } else { format!("{} characters (on its card, not copied here)", text.chars().count()) };
    let kind = failure_word(kind);
    // Writing to a String cannot fail.
    if let Some(failure) = failure {
        let _ = writeln!(out, "Failure: {}", failure.id);
        let _ = writeln!(out, "Message: {}", message(&failure.message));
        if let Some(later) = failure.later {
            let _ = writeln!(out, "Since then: {}", <&'static str>::from(later).replace('_', " "));
        }
    }
    let _ = writeln!(out, "What failed: {kind}");
    if let Some(run_id) = run_id {
        let _ = writeln!(out, "Run: {run_id}");
    }
    let start = entries.first().map(TimelineEntry::at).unwrap_or_default();
    if let Some(when) = chrono::DateTime::from_timestamp_millis(start) {
        let _ = writeln!(out, "Started: {}", when.format("%Y-%m-%d %H:%M:%S UTC"));
    }
    out.push_str("\nTimeline (ms after the start):\n");
    for entry in entries {
        let offset = entry.at().saturating_sub(start);
        let line = match entry {
            TimelineEntry::Started { .. } => "started".to_owned(),
            TimelineEntry::ProviderTry { provider, try_number, retry, outcome, .. } => {
                let outcome = match outcome {
                    TryOutcome::Status { code } => format!("HTTP {code}"),
                    TryOutcome::Transport { kind } => format!("no answer ({})", <&'static str>::from(*kind)),
                };
                format!("model provider {}: try {try_number} (retry {retry}): {outcome}", clean(provider))
            }
            TimelineEntry::ToolCall { tool, effect_class, .. } => match effect_class {
                Some(class) => format!("tool call {} ({})", clean(tool), effect_word(*class)),
                None => format!("tool call {} (not one of Hearth's tools)", clean(tool)),
            },
            TimelineEntry::Receipt { tool, status, .. } => format!("receipt for {}: {status}", clean(tool)),
            TimelineEntry::Note { kind, text, .. } => format!("{kind}: {text}"),
            TimelineEntry::Failed { message: text, .. } => format!("failed: {}", message(text)),
        };
        let _ = writeln!(out, "  +{offset} {line}");
    }
    let tries = entries.iter().filter(|e| matches!(e, TimelineEntry::ProviderTry { .. })).count();
    let calls = entries.iter().filter(|e| matches!(e, TimelineEntry::ToolCall { .. })).count();
    let _ = writeln!(out, "\nCounts: {tries} provider tries, {calls} tool calls, {} tool results.", holdings.results);
    let _ = writeln!(
        out,
        "Sizes only (their contents are not in this report): asked {} characters, answer {}, tool arguments {}, \
         tool results {}, receipts {}, task notes {} ({} characters).",
        holdings.asked_chars,
        holdings.answer_chars,
        holdings.argument_chars,
        holdings.result_chars,
        holdings.receipt_chars,
        holdings.notes,
        holdings.note_chars,
    );
    out.push_str("Left out: keys and tokens, mail bodies and document text, the conversation; addresses show only their host.\n");
    out
}
