//! Inbox: ideas to accept or dismiss, then every notice, newest first; opening one shows what
//! it is about.

use hearth_protocol::approvals::{ApprovalLeavingParams, LeavingAction, ProposalStatus};
use hearth_protocol::ideas::IdeaAccepted;
use hearth_protocol::ids::ProposalId;
use hearth_protocol::notifications::{NotificationKind, NotificationTarget};
use leptos::prelude::*;

use crate::clock::{Clock, local_time};
use crate::ipc;
use crate::live_inbox::LiveInbox;
use crate::navigation::Navigation;
use crate::request::{action_failure, last_loaded, load_failure};
use crate::screens::Screen;
use crate::state::approvals::left_by;

/// The Inbox screen.
#[component]
pub fn InboxScreen() -> impl IntoView {
    let (Some(live), Some(nav)) = (LiveInbox::from_context(), Navigation::from_context()) else {
        return view! { <p class="error">"The inbox is not available in this window. Reload the app."</p> }.into_any();
    };
    let notices = Memo::new(move |_| live.inbox.with(|inbox| inbox.notices.clone()));
    view! {
        <section class="inbox page">
            <header class="inbox-header page-header">
                <h1>"Inbox"</h1>
                <button class="inbox-read-all" data-action="read-all" on:click=move |_| live.read_all()>"Mark all read"</button>
            </header>
            <div class="page-content">
            {move || live.error.get().map(|message| view! { <p class="error inbox-error">{message}</p> })}
            <Ideas nav />
            <Show when=move || notices.with(Vec::is_empty)>
                <p class="empty">"Nothing yet. Finished tasks, questions, reviews and reminders show up here."</p>
            </Show>
            <ul class="inbox-list">
                <For each=move || notices.get() key=|n| (n.id, n.read) let(notice)>
                    {
                        let open = notice.clone();
                        // An approved send in its undo window: Undo right here.
                        let undo = match (&notice.kind, &notice.target) {
                            (NotificationKind::Leaving, NotificationTarget::Proposal(id)) => Some(id.clone()),
                            _ => None,
                        };
                        view! {
                            <li>
                                <button
                                    class="notice"
                                    class:unread=!notice.read
                                    data-notice-id=notice.id
                                    data-kind=notice.kind.as_str()
                                    on:click=move |_| live.open(nav, &open)
                                >
                                    <span class="notice-kind">{notice.kind.label()}</span>
                                    <span class="notice-title">{notice.title.clone()}</span>
                                    <span class="notice-body">{notice.body.clone()}</span>
                                    <span class="notice-time">{local_time(notice.created_at)}</span>
                                </button>
                                {undo.map(|proposal_id| view! { <UndoFromNotice proposal_id /> })}
                            </li>
                        }
                    }
                </For>
            </ul>
            </div>
        </section>
    }
    .into_any()
}

/// Undo on a notice about an approved send: shown only while the send waits out its undo window
/// (the proposal is read when the notice shows, and the window's end is watched on the clock),
/// so a notice of a send that has left offers nothing to undo; it takes the send back if it has
/// not left yet, and says what became of it either way.
#[component]
fn UndoFromNotice(proposal_id: ProposalId) -> impl IntoView {
    let clock = Clock::from_context();
    let id = proposal_id.clone();
    let current = LocalResource::new(move || {
        let id = id.clone();
        async move { ipc::approval_get(id.as_str()).await }
    });
    let undo = Action::new_local(move |(): &()| {
        let params = ApprovalLeavingParams { proposal_id: proposal_id.clone(), action: LeavingAction::Undo };
        async move { ipc::approval_leaving(&params).await }
    });
    let busy = undo.pending();
    // While it waits to leave: the time it leaves.
    let leaves_at = move || {
        current.with(|fetched| match fetched {
            Some(Ok(view)) if view.status == ProposalStatus::Leaving => view.leaves_at,
            Some(Ok(_) | Err(_)) | None => None,
        })
    };
    // An answer settles it (undone, or it had left); an error (say the window's connection) leaves
    // Undo there to try again.
    let answered = move || undo.value().with(|reply| matches!(reply, Some(Ok(_))));
    let can_undo = move || !answered() && leaves_at().is_some_and(|at| !left_by(clock.now.get(), at));
    let outcome = move || {
        undo.value().get().map(|reply| match reply {
            Ok(view) if view.status == ProposalStatus::Undone => "Undone: nothing was sent or changed.".to_owned(),
            Ok(view) => format!("It is {} now.", view.status.as_str().replace('_', " ")),
            Err(err) => err.message,
        })
    };
    view! {
        <Show when=can_undo>
            <button
                class="notice-undo"
                data-action="undo"
                disabled=move || busy.get()
                on:click=move |_| { undo.dispatch_local(()); }
            >"Undo"</button>
        </Show>
        {move || outcome().map(|line| view! { <span class="notice-undo-outcome">{line}</span> })}
    }
}

/// The owner's answer to an idea.
#[derive(Debug, Clone)]
enum IdeaAnswer {
    Accept(String),
    Dismiss(String),
}

/// Suggestions from Hearth's rules: Accept makes the task or schedule, Dismiss is remembered.
#[component]
fn Ideas(nav: Navigation) -> impl IntoView {
    let list = LocalResource::new(ipc::idea_list);
    let loaded = last_loaded(list);
    let ideas = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.ideas.clone()).unwrap_or_default()));
    let answer = Action::new_local(move |answer: &IdeaAnswer| {
        let answer = answer.clone();
        async move {
            match answer {
                IdeaAnswer::Accept(id) => {
                    let accepted = ipc::idea_accept(&id).await;
                    match &accepted {
                        Ok(IdeaAccepted::Task(task_id)) => nav.open_task(task_id.clone()),
                        Ok(IdeaAccepted::Schedule(_)) => nav.screen.set(Screen::Activity),
                        Err(_) => {}
                    }
                    // Accepted or not, the list says which ideas are still offered.
                    list.refetch();
                    accepted.map(drop)
                }
                // Dismiss answers the list left.
                IdeaAnswer::Dismiss(id) => ipc::idea_dismiss(&id).await.map(|left| list.set(Some(Ok(left)))),
            }
        }
    });
    // One answer at a time: a second click before the first is answered (a double click on
    // Accept) sends nothing, so an idea is never made into two tasks.
    let busy = answer.pending();
    let accept = move |id: String| {
        if !busy.get_untracked() {
            answer.dispatch_local(IdeaAnswer::Accept(id));
        }
    };
    let dismiss = move |id: String| {
        if !busy.get_untracked() {
            answer.dispatch_local(IdeaAnswer::Dismiss(id));
        }
    };
    let error = move || load_failure(list, "Ideas").or_else(|| action_failure(answer));
    view! {
        <Show when=move || !ideas.with(Vec::is_empty)>
            <section class="ideas">
                <h2>"Ideas"</h2>
                {move || error().map(|message| view! { <p class="error ideas-error">{message}</p> })}
                <ul class="idea-list">
                    {move || ideas.get().into_iter().map(|idea| {
                        let (a, d) = (idea.id.clone(), idea.id.clone());
                        view! {
                            <li class="idea" data-idea-id=idea.id.clone() data-kind=idea.kind.as_str()>
                                <span class="idea-title">{idea.title.clone()}</span>
                                <span class="idea-reason">{idea.reason.clone()}</span>
                                <button data-action="accept" disabled=move || busy.get() on:click=move |_| accept(a.clone())>"Accept"</button>
                                <button data-action="dismiss" disabled=move || busy.get() on:click=move |_| dismiss(d.clone())>"Dismiss"</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </section>
        </Show>
    }
}
