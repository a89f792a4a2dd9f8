//! Page monitors: a `monitor` task that looks at a page through the browser (read_web, so the
//! egress policy applies), compares it with the last look, notifies on a match, and schedules
//! its next look — `TaskOutcome::Scheduled`, so the task engine's leases, Pause, Resume and
//! Cancel govern it like any task.
//!
//! - **Match**: `change` — the normalized text's hash differs from the last one (the first
//!   look only records); `contains` — the text contains the value, ignoring case;
//!   `price_below` — a price on the page ([`crate::watch::price::prices`]) is below the value.
//! - **Once per match**: `change` notifies each change; `contains` and `price_below` notify
//!   when the condition becomes true (not again while it holds). The notice's key is
//!   `monitor:<task>:<look>:<hash>` — the look's number and the page's hash — written, fenced to
//!   the run's lease, before the look is checkpointed, so a crash between the two repeats that
//!   look under the same key, which the inbox keeps once (also across a restart), while a page
//!   that goes A → B → A is two changes.
//! - **Failures** back off `min(60, 2^failures)` minutes; the fifth in a row pauses the task
//!   with a notice (Resume looks again at once).

pub mod diff;

use hearth_protocol::ids::TaskId;
use hearth_protocol::notifications::{NotificationKind, NotificationTarget};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::store::notifications::Notice;
use crate::tasks::{TaskContext, TaskHandler, TaskOutcome};
use crate::tools::{StepId, Toolbox, call, typed};
use crate::watch::price;
pub use crate::watch::{Condition, MAX_INTERVAL_MINUTES, MIN_INTERVAL_MINUTES, MonitorInput};
use diff::{LineDiff, normalize};

/// After this many failed looks in a row the monitor pauses itself.
pub const MAX_FAILURES: u32 = 5;
/// The most text kept for the next diff.
const KEPT_TEXT: usize = 100_000;

/// What a monitor keeps between looks (in its task's state, under `monitor`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Seen {
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    failures: u32,
    #[serde(default)]
    last_error: Option<String>,
    /// Looks that read the page, so far (the notice key's first part).
    #[serde(default)]
    looks: u64,
    /// Whether the condition held at the last look (contains, price_below).
    #[serde(default)]
    matched: bool,
}

/// The monitor task kind.
pub fn task_handler(toolbox: Toolbox) -> impl TaskHandler {
    move |ctx: TaskContext| {
        let toolbox = toolbox.clone();
        async move { look(&toolbox, ctx).await }
    }
}

/// When the next look is due after `failures` failures in a row (0: the interval).
pub fn next_look(now: i64, interval_minutes: u32, failures: u32) -> i64 {
    let minutes = if failures == 0 { i64::from(interval_minutes) } else { 2_i64.saturating_pow(failures).min(60) };
    now + minutes * 60_000
}

async fn look(toolbox: &Toolbox, ctx: TaskContext) -> TaskOutcome {
    let task = ctx.task().clone();
    let input: MonitorInput = match serde_json::from_value(task.input.clone()) {
        Ok(input) => input,
        Err(err) => return TaskOutcome::Failed(format!("This monitor's settings cannot be read ({err}); make it again.")),
    };
    let threshold = match input.validate() {
        Ok(threshold) => threshold,
        Err(why) => return TaskOutcome::Failed(why),
    };
    // No state yet is a first look; state Hearth cannot read is not (its look count keys the
    // notices already written), so the run stops and says so.
    let seen: Seen = match task.state.get("monitor") {
        None => Seen::default(),
        Some(state) => match serde_json::from_value(state.clone()) {
            Ok(seen) => seen,
            Err(err) => {
                return TaskOutcome::Failed(format!("This monitor's memory of the page cannot be read ({err}); make the monitor again."));
            }
        },
    };
    let tools = toolbox.for_task(ctx.clone()).for_workflow();
    let output = call::<typed::ReadWeb>(&tools, typed::UrlArgs { url: input.url.clone() }, StepId::Named("look".into())).await;
    if ctx.guard().await.is_err() {
        return TaskOutcome::Stopped;
    }
    let store = ctx.task_store();
    let now = crate::store::now_ms();
    let page: Option<serde_json::Value> = if output.is_error { None } else { serde_json::from_str(&output.content).ok() };
    let page_text = page.as_ref().and_then(|p| p.get("text")).and_then(serde_json::Value::as_str);
    // The proxy's own page for a site that did not answer is a failure, not the site's text.
    let unreachable = page_text.is_some_and(|t| t.trim_start().starts_with(crate::browser::proxy::UNREACHABLE_PAGE.trim_end()));
    let Some(text) = page_text.filter(|_| !unreachable) else {
        let failures = seen.failures + 1;
        let why: String = page_text.unwrap_or(&output.content).chars().take(300).collect();
        let kept = Seen { failures, last_error: Some(why.clone()), ..seen };
        if ctx.checkpoint(&json!({ "monitor": kept })).await.is_err() {
            return TaskOutcome::Stopped;
        }
        if failures >= MAX_FAILURES {
            let reason = format!(
                "The page could not be read {failures} times in a row, so this monitor paused itself. Resume to look again. Last error: {why}"
            );
            // Keyed by the run: each pause (after a Resume, a new run of failures) is its own notice.
            let key = format!("monitor:{}:paused:{}", task.id, task.attempts);
            let target = NotificationTarget::Task(TaskId::trusted(task.id.as_str()));
            let notice = Notice { key: &key, kind: NotificationKind::MonitorPaused, title: &input.title, body: &reason, target: &target };
            match store.notify_fenced(ctx.fence(), &notice).await {
                Ok(Some(_)) => {}
                Ok(None) => return TaskOutcome::Stopped,
                Err(err) => tracing::warn!(error = %err, "a monitor's pause notice was not written"),
            }
            return TaskOutcome::Paused(reason);
        }
        return TaskOutcome::Scheduled(next_look(now, input.interval_minutes, failures));
    };
    let text = normalize(text);
    let hash = hex::encode(Sha256::digest(text.as_bytes()));
    // The lowest price on the page, read once (price_below only).
    let lowest = match input.condition {
        Condition::PriceBelow => price::prices(&text).into_iter().min(),
        Condition::Change | Condition::Contains => None,
    };
    let holds = match input.condition {
        Condition::Change => false,
        Condition::Contains => text.to_lowercase().contains(&input.value.trim().to_lowercase()),
        Condition::PriceBelow => lowest.zip(threshold).is_some_and(|(low, below)| low < below),
    };
    let notify = match input.condition {
        Condition::Change => seen.hash.as_ref().is_some_and(|h| *h != hash),
        Condition::Contains | Condition::PriceBelow => holds && !seen.matched,
    };
    let look = seen.looks + 1;
    if notify {
        let diff = LineDiff::between(&seen.text, &text).render();
        let lead = match input.condition {
            Condition::Change => "The page changed.".to_owned(),
            Condition::Contains => format!("The page contains \u{201c}{}\u{201d}.", input.value.trim()),
            Condition::PriceBelow => {
                format!("A price is below {}: {}.", input.value.trim(), hearth_protocol::finance::money(lowest.unwrap_or(0)))
            }
        };
        let body = if diff.is_empty() { lead } else { format!("{lead}\n{diff}") };
        let key = format!("monitor:{}:{look}:{hash}", task.id);
        let target = NotificationTarget::Task(TaskId::trusted(task.id.as_str()));
        let notice = Notice { key: &key, kind: NotificationKind::MonitorNotice, title: &input.title, body: &body, target: &target };
        match store.notify_fenced(ctx.fence(), &notice).await {
            Ok(Some(_)) => {}
            Ok(None) => return TaskOutcome::Stopped,
            Err(err) => {
                // Not checkpointed either: the next look sees the same news and writes it then.
                tracing::warn!(error = %err, "a monitor's notice was not written");
                return TaskOutcome::Scheduled(next_look(now, input.interval_minutes, 1));
            }
        }
    }
    let kept =
        Seen { hash: Some(hash), text: text.chars().take(KEPT_TEXT).collect(), failures: 0, last_error: None, looks: look, matched: holds };
    if ctx.checkpoint(&json!({ "monitor": kept })).await.is_err() {
        return TaskOutcome::Stopped;
    }
    TaskOutcome::Scheduled(next_look(now, input.interval_minutes, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_to_an_hour() {
        let minutes = |f| (next_look(0, 15, f)) / 60_000;
        assert_eq!([minutes(0), minutes(1), minutes(2), minutes(3), minutes(5), minutes(6), minutes(9)], [15, 2, 4, 8, 32, 60, 60]);
    }

    #[test]
    fn inputs_are_checked() {
        let base = MonitorInput {
            title: "Kettle".into(),
            url: "https://shop.example/kettle".into(),
            condition: Condition::PriceBelow,
            value: "$25".into(),
            interval_minutes: 60,
        };
        assert_eq!(base.validate(), Ok(Some(2500)));
        assert!(MonitorInput { value: "$9k".into(), ..base.clone() }.validate().is_err());
        assert!(MonitorInput { url: "file:///etc/passwd".into(), ..base.clone() }.validate().is_err());
        assert!(MonitorInput { interval_minutes: 0, ..base.clone() }.validate().is_err());
        assert!(MonitorInput { interval_minutes: 10_081, ..base.clone() }.validate().is_err());
        assert!(MonitorInput { condition: Condition::Contains, value: " ".into(), ..base }.validate().is_err());
    }
}
