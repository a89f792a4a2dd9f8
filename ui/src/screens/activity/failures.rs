//! Activity's failures: the newest failed runs with their short ids, a box to open one by the id
//! a message showed, and the open one's timeline (the run's start, the provider's tries, tool
//! calls, receipts, the failure) with "Copy details" for the redacted report the core made.

use hearth_protocol::failures::{FailureKind, FailureTimeline, FailureView, LaterOutcome, TimelineEntry, TryOutcome, effect_word};
use hearth_protocol::ids::RunId;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::clipboard::copy_text;
use crate::clock::local_time;
use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::request::{action_failure, last_loaded, load_failure};

/// The failures section.
#[component]
pub fn Failures(live: LiveTasks) -> impl IntoView {
    // A task change may be a task failing: the list is read again then.
    let changes = Memo::new(move |_| live.store.with(|s| s.ids_by_recency().first().and_then(|id| s.get(id)).map(|t| t.updated_at)));
    let list = LocalResource::new(move || {
        changes.with(|_| ());
        ipc::failure_list()
    });
    let loaded = last_loaded(list);
    let failures = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.failures.clone()).unwrap_or_default()));
    let typed = RwSignal::new(String::new());
    let open = Action::new_local(move |id: &String| {
        let id = id.clone();
        async move { ipc::failure_timeline(&id).await }
    });
    let timeline = Memo::new(move |_| open.value().with(|v| v.as_ref().and_then(|r| r.as_ref().ok().cloned())));
    let open_id = move |id: String| {
        open.dispatch_local(id);
    };
    view! {
        <section class="failures" id="failures">
            <h2>"Failures"</h2>
            <form class="failure-open" on:submit=move |ev| { ev.prevent_default(); open_id(typed.get_untracked()); }>
                <input name="failure-id" placeholder="Failure id, e.g. K3M9-2QXA" prop:value=typed
                    on:input=move |ev| typed.set(event_target_value(&ev)) />
                <button type="submit" data-action="open-failure">"Open"</button>
            </form>
            {move || load_failure(list, "Failures").map(|message| view! { <p class="error">{message}</p> })}
            {move || action_failure(open).map(|message| view! { <p class="error" id="failure-error">{message}</p> })}
            <Show when=move || failures.with(Vec::is_empty)>
                <p class="empty">"No failures. When a reply or a task fails, it shows here with its id."</p>
            </Show>
            <ul class="failure-list">
                <For each=move || failures.get() key=|f| f.id.clone() let(failure)>
                    {
                        let id = failure.id.to_string();
                        let (attribute, open_this) = (id.clone(), id.clone());
                        view! {
                            <li>
                                <button class="failure-row" data-failure-id=attribute on:click=move |_| open_id(open_this.clone())>
                                    <span class="failure-id">{id}</span>
                                    <span class="failure-what" data-kind=kind_word(failure.kind)>{what(&failure)}</span>
                                    <span class="failure-message">{failure.message}</span>
                                    {failure.later.map(|later| view! { <span class="failure-later" data-later=later_word(later)>{later_line(later)}</span> })}
                                    <span class="failure-when">{local_time(failure.at)}</span>
                                </button>
                            </li>
                        }
                    }
                </For>
            </ul>
            {move || timeline.get().map(|timeline| view! { <Timeline timeline /> })}
        </section>
    }
}

/// One run's timeline and its Copy details.
#[component]
fn Timeline(timeline: FailureTimeline) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let report = StoredValue::new(timeline.report.clone());
    let copy = move |_| {
        let text = report.get_value();
        // Kept: a clipboard write, not an IPC request; its outcome is a one-off note.
        spawn_local(async move { copied.set(Some(copy_text(&text).await)) });
    };
    let title = match (&timeline.failure, &timeline.run_id) {
        (Some(failure), _) => format!("Failure {}", failure.id),
        (None, Some(run_id)) => format!("Run {run_id}"),
        (None, None) => "Timeline".to_owned(),
    };
    let entries = timeline
        .entries
        .into_iter()
        .map(|entry| view! { <li class="timeline-entry" data-type=kind(&entry)>{line(&entry)}</li> })
        .collect_view();
    view! {
        <div class="failure-timeline" data-run-id=timeline.run_id.map(RunId::into_string)>
            <h3>{title}</h3>
            <ol class="timeline">{entries}</ol>
            <button type="button" data-action="copy-details" on:click=copy>"Copy details"</button>
            {move || copied.get().map(|ok| view! {
                <span class="failure-copied" data-ok=if ok { "true" } else { "false" }>
                    {if ok { "Copied: no keys, tokens or mail in it." } else { "Could not copy; select the report below and copy by hand." }}
                </span>
            })}
            <details class="failure-report"><summary>"The report"</summary><pre>{timeline.report}</pre></details>
        </div>
    }
}

fn later_word(later: LaterOutcome) -> &'static str {
    later.into()
}

/// What became of a failed effect since, in the owner's words.
fn later_line(later: LaterOutcome) -> &'static str {
    match later {
        LaterOutcome::Succeeded => "Since then it was done.",
        LaterOutcome::Acknowledged => "Since then you reviewed it.",
        LaterOutcome::Withdrawn => "It never started: nothing happened.",
    }
}

fn kind_word(kind: FailureKind) -> &'static str {
    kind.into()
}

/// What failed, in a few words: a reply, a task's run, or which effect.
fn what(failure: &FailureView) -> String {
    let tool = failure.tool.as_deref().unwrap_or("an action");
    match failure.kind {
        FailureKind::Chat => "Reply".to_owned(),
        FailureKind::Task => "Task".to_owned(),
        FailureKind::Effect => format!("Effect {tool}"),
        FailureKind::Approval => format!("Approved {tool}"),
    }
}

fn kind(entry: &TimelineEntry) -> &'static str {
    match entry {
        TimelineEntry::Started { .. } => "started",
        TimelineEntry::ProviderTry { .. } => "provider_try",
        TimelineEntry::ToolCall { .. } => "tool_call",
        TimelineEntry::Receipt { .. } => "receipt",
        TimelineEntry::Note { .. } => "note",
        TimelineEntry::Failed { .. } => "failed",
    }
}

fn line(entry: &TimelineEntry) -> String {
    let at = local_time(entry.at());
    match entry {
        TimelineEntry::Started { .. } => format!("{at} Started"),
        TimelineEntry::ProviderTry { provider, try_number, retry, outcome, .. } => {
            let outcome = match outcome {
                TryOutcome::Status { code } => format!("HTTP {code}"),
                TryOutcome::Transport { kind } => format!("no answer ({})", <&'static str>::from(*kind)),
            };
            format!("{at} {provider}: try {try_number} (retry {retry}): {outcome}")
        }
        TimelineEntry::ToolCall { tool, effect_class, .. } => match effect_class {
            Some(class) => format!("{at} Tool {tool} ({})", effect_word(*class)),
            None => format!("{at} Tool {tool}"),
        },
        TimelineEntry::Receipt { tool, status, .. } => format!("{at} Receipt for {tool}: {status}"),
        TimelineEntry::Note { kind, text, .. } => format!("{at} {kind}: {text}"),
        TimelineEntry::Failed { message, .. } => format!("{at} Failed: {message}"),
    }
}
