//! The approval card: one proposal exactly as approving it will act, with Approve and Deny.
//! It says who asked for it, which message a reply answers, and for a calendar change the
//! event as it is now (update: each changed field before → after). The reply and the event
//! are part of the draft and so of the hash; who asked (the origin) is shown, not hashed —
//! it cannot change what approving does.
//!
//! Shown in chat (prepare_email / prepare_event), on the Approvals screen and in Activity's
//! task detail. A decision carries the hash of the proposal on screen — never of a fresh
//! fetch — so the owner can only approve what they read. A re-fetched proposal whose draft
//! changed is held back until the owner asks for it.

use hearth_protocol::approvals::{
    ApprovalDecideParams, ApprovalLeavingParams, ApprovalRecheckParams, Decision, LeavingAction, ProposalStatus, ProposalView, Recheck,
};
use hearth_protocol::ids::ProposalId;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::approval_draft::DraftView;
use crate::clock::Clock;
use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::request::settled_failure;
use crate::state::approvals::{
    CHANGES_HEADING, Refetched, TaskRevision, can_decide, can_recheck, countdown_label, draft_title, effective_status, event_changes,
    event_heading, hidden_line, is_expired, leaving_label, left_by, on_refetch, origin_line, reply_line, revealed, sources_line,
    status_label, task_moved,
};

/// What the owner answers a proposal: a decision, Undo or Send now while an approved one
/// waits out its undo window, or a check of an approved action's outcome.
#[derive(Debug, Clone)]
enum Answer {
    Decide(ApprovalDecideParams),
    Leaving(ApprovalLeavingParams),
    Recheck(ApprovalRecheckParams),
}

/// The proposal `proposal_id`: `initial` when the caller already holds it (the Approvals
/// list), else fetched. `on_decided` gets the proposal as the decision left it.
#[component]
pub fn ApprovalCard(
    proposal_id: ProposalId,
    #[prop(optional)] initial: Option<ProposalView>,
    #[prop(optional)] on_decided: Option<Callback<ProposalView>>,
) -> impl IntoView {
    let clock = Clock::from_context();
    let card_id = proposal_id.clone();
    let fetch_now = initial.is_none();
    // What is on screen; the decision is built from this and nothing else.
    let shown = RwSignal::new(initial);
    // A newer draft than the one shown, held until the owner asks for it.
    let latest = RwSignal::new(None::<ProposalView>);
    let fetch_error = RwSignal::new(None::<String>);
    // Only the newest fetch may land; a reply overtaken by a decision or a later fetch is dropped.
    let latest_fetch = StoredValue::new(0_u64);

    // The fetch stays a hand-rolled task: a decision must drop a fetch already on its way (its
    // older proposal would replace the decided one), which a resource cannot be told.
    let refetch = Callback::new(move |()| {
        let fetch = latest_fetch.get_value() + 1;
        latest_fetch.set_value(fetch);
        let proposal_id = proposal_id.clone();
        spawn_local(async move {
            let reply = ipc::approval_get(&proposal_id).await;
            if latest_fetch.try_get_value() != Some(fetch) {
                return;
            }
            match reply {
                Ok(fetched) => {
                    fetch_error.set(None);
                    match shown.with_untracked(|held| on_refetch(held.as_ref(), &fetched)) {
                        Refetched::Adopt => {
                            shown.set(Some(fetched));
                            latest.set(None);
                        }
                        Refetched::Changed => latest.set(Some(fetched)),
                    }
                }
                Err(err) => fetch_error.set(Some(err.message)),
            }
        });
    });
    if fetch_now {
        refetch.run(());
    }
    refetch_when_task_moves(shown, refetch);

    // Approve, Deny, Check and Retry: one at a time; the answer replaces what is shown and
    // drops any fetch still on its way.
    let answer = Action::new_local(move |request: &Answer| {
        let request = request.clone();
        async move {
            let reply = match &request {
                Answer::Decide(params) => ipc::approval_decide(params).await,
                Answer::Leaving(params) => ipc::approval_leaving(params).await,
                Answer::Recheck(params) => ipc::approval_recheck(params).await,
            };
            match reply {
                Ok(answered) => {
                    latest_fetch.try_update_value(|fetch| *fetch += 1);
                    shown.set(Some(answered.clone()));
                    latest.set(None);
                    if let (Answer::Decide(_), Some(on_decided)) = (&request, on_decided) {
                        on_decided.try_run(answered);
                    }
                    Ok(())
                }
                Err(err) => {
                    if let Answer::Decide(_) = request {
                        // Show where the proposal is now: an expired or decided one replaces
                        // this one; a changed draft waits behind "Show latest".
                        refetch.try_run(());
                    }
                    Err(err)
                }
            }
        }
    });
    let deciding = answer.pending();
    // A new answer on its way clears the last refusal.
    let decide_error = move || settled_failure(answer);

    let decide = move |decision: Decision| {
        if deciding.get_untracked() {
            return;
        }
        let Some(proposal) = shown.get_untracked() else { return };
        if !can_decide(&proposal, clock.now.get_untracked()) {
            return;
        }
        answer.dispatch_local(Answer::Decide(ApprovalDecideParams { proposal_id: proposal.id, hash: proposal.hash, decision }));
    };
    // Check (and retry) an approved action whose outcome is unknown: the backend always looks
    // first, so a retry of one that happened does nothing again.
    let recheck = move |action: Recheck| {
        if deciding.get_untracked() {
            return;
        }
        let Some(proposal) = shown.get_untracked() else { return };
        if !can_recheck(&proposal) {
            return;
        }
        answer.dispatch_local(Answer::Recheck(ApprovalRecheckParams { proposal_id: proposal.id, hash: proposal.hash, action }));
    };
    // Undo or Send now: the backend decides whether it is still in time (a click after the
    // window ended is told it already left).
    let leave = move |action: LeavingAction| {
        if deciding.get_untracked() {
            return;
        }
        let Some(proposal) = shown.get_untracked() else { return };
        if proposal.status != ProposalStatus::Leaving {
            return;
        }
        answer.dispatch_local(Answer::Leaving(ApprovalLeavingParams { proposal_id: proposal.id, action }));
    };
    refetch_when_it_leaves(shown, clock, refetch);
    let show_latest = move |_| {
        if let Some(newer) = latest.get_untracked() {
            shown.set(Some(newer));
            latest.set(None);
            answer.clear();
        }
    };

    let status = Memo::new(move |_| shown.with(|p| p.as_ref().map(|p| effective_status(p, clock.now.get()))));
    let decidable = Memo::new(move |_| status.get() == Some(ProposalStatus::AwaitingReview));
    let superseded = Memo::new(move |_| latest.with(Option::is_some));
    let recheckable = Memo::new(move |_| shown.with(|p| p.as_ref().is_some_and(can_recheck)));
    let undoable = Memo::new(move |_| status.get() == Some(ProposalStatus::Leaving));
    // Before the proposal arrives: "loading", or "error" when it could not be fetched.
    let status_slug = move || match status.get() {
        Some(status) => status.as_str(),
        None if fetch_error.with(Option::is_some) => "error",
        None => "loading",
    };

    view! {
        <article class="card approval-card" data-proposal-id=card_id.into_string() data-status=status_slug>
            <header>
                <span class="card-kind">
                    {move || shown.with(|p| p.as_ref().map_or("Approval", |p| draft_title(&p.draft)))}
                </span>
                <span class=move || format!("status approval-status approval-status-{}", status_slug())>
                    {move || status.get().map_or_else(|| status_slug().to_owned(), status_label)}
                </span>
            </header>
            {move || fetch_error.get().map(|message| view! {
                <p class="approval-error">
                    {message} " "
                    <button class="approval-retry" data-action="reload" on:click=move |_| refetch.run(())>"Try again"</button>
                </p>
            })}
            {move || match shown.get() {
                Some(proposal) => {
                    // Every character the owner approves is shown, the invisible ones too.
                    let (draft, hidden) = revealed(&proposal);
                    Some(view! {
                        <Expiry proposal=proposal.clone() clock />
                        <Context proposal=draft.clone() />
                        {(hidden > 0).then(|| view! {
                            <p class="approval-hidden" data-hidden=hidden.to_string()>{hidden_line(hidden)}</p>
                        })}
                        <DraftView proposal=draft />
                        <Outcome proposal />
                    }.into_any())
                }
                None if fetch_error.with(Option::is_none) => Some(view! { <p class="empty">"Loading the proposal…"</p> }.into_any()),
                None => None,
            }}
            <Show when=move || superseded.get()>
                <p class="approval-changed">
                    "This proposal changed since it was shown. Review the latest version before deciding. "
                    <button data-action="show-latest" on:click=show_latest>"Show latest"</button>
                </p>
            </Show>
            <Show when=move || decidable.get()>
                <div class="approval-actions">
                    <button
                        class="approval-approve"
                        data-action="approve"
                        disabled=move || deciding.get() || superseded.get()
                        on:click=move |_| decide(Decision::Approve)
                    >"Approve"</button>
                    <button
                        class="approval-deny"
                        data-action="deny"
                        disabled=move || deciding.get() || superseded.get()
                        on:click=move |_| decide(Decision::Deny)
                    >"Deny"</button>
                </div>
            </Show>
            <Show when=move || undoable.get()>
                <div class="approval-actions approval-leaving">
                    <span class="approval-leaves-in">
                        {move || shown.with(|p| p.as_ref().and_then(|p| p.leaves_at)).map(|at| leaving_label(clock.now.get(), at))}
                    </span>
                    <button
                        class="approval-undo"
                        data-action="undo"
                        disabled=move || deciding.get()
                        on:click=move |_| leave(LeavingAction::Undo)
                    >"Undo"</button>
                    <button
                        class="approval-send-now"
                        data-action="send-now"
                        disabled=move || deciding.get()
                        on:click=move |_| leave(LeavingAction::SendNow)
                    >"Send now"</button>
                </div>
            </Show>
            <Show when=move || recheckable.get()>
                <div class="approval-actions">
                    <button
                        class="approval-check"
                        data-action="check"
                        disabled=move || deciding.get()
                        on:click=move |_| recheck(Recheck::Check)
                    >"Check whether it happened"</button>
                    <button
                        class="approval-redo"
                        data-action="retry"
                        disabled=move || deciding.get()
                        on:click=move |_| recheck(Recheck::Retry)
                    >"Retry (checks first)"</button>
                </div>
            </Show>
            {move || decide_error().map(|message| view! { <p class="approval-error">{message}</p> })}
        </article>
    }
}

/// Fetches the proposal again whenever the task waiting on it changes (the watch saw it
/// leave waiting_approval, say), so the card follows it to its receipt without polling.
fn refetch_when_task_moves(shown: RwSignal<Option<ProposalView>>, refetch: Callback<()>) {
    let Some(live) = LiveTasks::from_context() else { return };
    let watched = Memo::new(move |_| {
        let task_id = shown.with(|p| p.as_ref().and_then(|p| p.task_id.clone()))?;
        let revision = live.store.with(|store| store.revision(&task_id))?;
        Some((task_id, revision))
    });
    Effect::new(move |before: Option<Option<TaskRevision>>| {
        let now = watched.get();
        if task_moved(before.flatten().as_ref(), now.as_ref()) {
            refetch.run(());
        }
        now
    });
}

/// While the proposal waits out its undo window, fetches it again every two seconds (Undo may
/// come from the Inbox or another device) and each second once the window has ended, so the
/// card follows it to `undone` or to its receipt.
fn refetch_when_it_leaves(shown: RwSignal<Option<ProposalView>>, clock: Clock, refetch: Callback<()>) {
    let asked_at = StoredValue::new(0_i64);
    Effect::new(move |_| {
        let now = clock.now.get();
        let leaves_at = shown.with(|p| p.as_ref().filter(|p| p.status == ProposalStatus::Leaving).and_then(|p| p.leaves_at));
        if let Some(leaves_at) = leaves_at
            && now.saturating_sub(asked_at.get_value()) >= if left_by(now, leaves_at) { 1_000 } else { 2_000 }
        {
            asked_at.set_value(now);
            refetch.run(());
        }
    });
}

/// The time left to decide, while the proposal awaits review.
#[component]
fn Expiry(proposal: ProposalView, clock: Clock) -> impl IntoView {
    let expires_at = proposal.expires_at;
    (proposal.status == ProposalStatus::AwaitingReview).then(|| {
        view! {
            <p class="approval-expiry" class:expired=move || is_expired(clock.now.get(), expires_at)>
                {move || {
                    let now = clock.now.get();
                    if is_expired(now, expires_at) {
                        "Expired: it can no longer be approved. Ask Hearth to prepare it again.".to_owned()
                    } else {
                        format!("Expires in {}", countdown_label(now, expires_at))
                    }
                }}
            </p>
        }
    })
}

/// What the draft is about, before the draft itself: who asked for it, the message an email
/// answers, and — for a calendar change — each field before → after and what the event lines
/// below show. The words come from `state::approvals`.
#[component]
fn Context(proposal: ProposalView) -> impl IntoView {
    let changes = event_changes(&proposal.draft);
    view! {
        <p class="approval-note approval-origin" data-origin=proposal.origin.as_str()>{origin_line(proposal.origin)}</p>
        {sources_line(&proposal.sources).map(|line| view! { <p class="approval-note approval-sources">{line}</p> })}
        {proposal.mandate_id.clone().map(|id| view! {
            <p class="approval-note approval-mandate" data-mandate-id=id>
                "Approved by a standing order you granted this task, not by a click."
            </p>
        })}
        {reply_line(&proposal.draft).map(|line| view! { <p class="approval-note approval-reply-to">{line}</p> })}
        {(!changes.is_empty()).then(|| view! {
            <p class="approval-note">{CHANGES_HEADING}</p>
            <dl class="approval-fields approval-changes">
                {changes.into_iter().map(|change| view! {
                    <dt>{change.field}</dt>
                    <dd class="approval-change" data-field=change.field>{change.arrow()}</dd>
                }).collect_view()}
            </dl>
        })}
        {event_heading(&proposal.draft).map(|heading| view! { <p class="approval-note approval-event-heading">{heading}</p> })}
    }
}

/// The receipt once it happened; the error when it failed or may have happened.
#[component]
fn Outcome(proposal: ProposalView) -> impl IntoView {
    let failure = match proposal.status {
        ProposalStatus::Failed => {
            Some(proposal.error.clone().unwrap_or_else(|| "It failed before anything was sent or written.".to_owned()))
        }
        ProposalStatus::OutcomeUnknown => Some(format!(
            "It may or may not have happened. Check before asking Hearth to do it again.{}",
            proposal.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default()
        )),
        ProposalStatus::AwaitingReview
        | ProposalStatus::Leaving
        | ProposalStatus::Undone
        | ProposalStatus::Executing
        | ProposalStatus::Succeeded
        | ProposalStatus::Denied
        | ProposalStatus::Expired => None,
    };
    // The id to quote, which opens the failure's timeline in Activity → Failures.
    let failure_id = failure.as_ref().and(proposal.failure_id).map(|id| id.to_string());
    let undone = (proposal.status == ProposalStatus::Undone)
        .then(|| proposal.error.clone().unwrap_or_else(|| "Undone before it left. Nothing was sent or changed.".to_owned()));
    view! {
        {proposal.receipt.map(|receipt| view! { <p class="approval-receipt">{receipt}</p> })}
        {failure.map(|failure| view! { <p class="approval-failure">{failure}</p> })}
        {failure_id.map(|id| view! {
            <p class="approval-failure-id">"Failure " <span class="failure-id" data-failure-id=id>{id.clone()}</span>
                ": Activity → Failures shows what happened."</p>
        })}
        {undone.map(|undone| view! { <p class="approval-undone">{undone}</p> })}
    }
}
