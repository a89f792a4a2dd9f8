//! Approvals: proposals waiting for the owner first, then the recent decided ones, each as
//! its approval card.
//!
//! The list is fetched on open, whenever the task watch shows a task entering or leaving
//! waiting_approval, and after every decision made here. Nothing polls.

use hearth_protocol::approvals::ProposalView;
use hearth_protocol::ids::ProposalId;
use leptos::prelude::*;

use crate::cards::approval::ApprovalCard;
use crate::ipc;
use crate::live_tasks::LiveTasks;
use crate::navigation::Navigation;
use crate::request::{last_loaded, load_failure};
use crate::state::approvals::{review_sections, upsert_proposal, waiting_approvals};

/// The Approvals screen.
#[component]
pub fn ApprovalsScreen() -> impl IntoView {
    let live = LiveTasks::from_context();
    let waiting_tasks = Memo::new(move |_| live.map(|live| live.store.with(waiting_approvals)).unwrap_or_default());
    let list = LocalResource::new(move || {
        // Read, not `track()`: tracking a memo does not compute it, so it would never learn
        // its sources and never change.
        waiting_tasks.with(|_| ());
        ipc::approval_list()
    });
    let loaded = last_loaded(list);
    // `None` until the first list arrives.
    let proposals = Memo::new(move |_| loaded.with(|l| l.as_ref().map(|l| l.proposals.clone())));
    let error = move || load_failure(list, "Proposals");
    // The decided proposal moves at once; the list is then fetched again.
    let on_decided = Callback::new(move |decided: ProposalView| {
        list.update(|reply| {
            if let Some(Ok(shown)) = reply {
                upsert_proposal(&mut shown.proposals, decided);
            }
        });
        list.refetch();
    });
    // A notice's proposal stays marked while the owner is here, not the next time they come.
    if let Some(nav) = Navigation::from_context() {
        on_cleanup(move || {
            nav.selected_proposal.set(None);
            nav.scroll_to_proposal.set(None);
        });
    }
    let sections = Memo::new(move |_| proposals.with(|list| list.as_deref().map(review_sections)).unwrap_or_default());
    // What the body shows; the sections re-render only when this changes, so a refresh
    // updates the keyed cards in place instead of rebuilding them.
    let shape = Memo::new(move |_| match proposals.with(|list| list.as_ref().map(Vec::is_empty)) {
        None => ListShape::Loading,
        Some(true) => ListShape::Empty,
        Some(false) => ListShape::Listed,
    });

    view! {
        <section class="approvals page">
            <header class="approvals-header page-header">
                <h1>"Approvals"</h1>
                <button class="approvals-refresh" data-action="refresh" on:click=move |_| list.refetch()>"Refresh"</button>
            </header>
            {move || error().map(|message| view! { <p class="error approvals-error">{message}</p> })}
            <div class="approvals-body">
                {move || match shape.get() {
                    ListShape::Loading => view! { <p class="empty">"Loading proposals…"</p> }.into_any(),
                    ListShape::Empty => view! {
                        <p class="empty">"Nothing to review. When Hearth prepares an email or a calendar change, it waits here for you."</p>
                    }.into_any(),
                    ListShape::Listed => view! {
                        <Section title="Waiting for you" empty="Nothing is waiting for you." class="approvals-waiting"
                            items=Signal::derive(move || sections.with(|s| s.waiting.clone()))
                            on_decided />
                        <Section title="Recent" empty="No decided proposals yet." class="approvals-recent"
                            items=Signal::derive(move || sections.with(|s| s.recent.clone()))
                            on_decided />
                    }.into_any(),
                }}
            </div>
        </section>
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListShape {
    Loading,
    Empty,
    Listed,
}

/// One section of cards. A card is kept while its proposal's id, status and hash stay the
/// same, so a list refresh does not reset a card the owner is reading.
#[component]
fn Section(
    title: &'static str,
    empty: &'static str,
    class: &'static str,
    items: Signal<Vec<ProposalView>>,
    on_decided: Callback<ProposalView>,
) -> impl IntoView {
    view! {
        <section class=format!("approvals-section {class}")>
            <h2>{title}</h2>
            <Show when=move || items.with(Vec::is_empty)>
                <p class="empty">{empty}</p>
            </Show>
            <For
                each=move || items.get()
                key=|p: &ProposalView| (p.id.clone(), p.status, p.hash.clone())
                let(proposal)
            >
                <ProposalSlot proposal_id=proposal.id.clone()>
                    <ApprovalCard proposal_id=proposal.id.clone() initial=proposal on_decided />
                </ProposalSlot>
            </For>
        </section>
    }
}

/// Holds one card; the card a notice pointed to (`Navigation::selected_proposal`) is marked,
/// and scrolled into view once it is on screen (`scroll_to_proposal`, taken here).
#[component]
fn ProposalSlot(proposal_id: ProposalId, children: Children) -> impl IntoView {
    let nav = Navigation::from_context();
    let slot = NodeRef::<leptos::html::Div>::new();
    let id = proposal_id.clone();
    let selected =
        Memo::new(move |_| nav.is_some_and(|nav| nav.selected_proposal.with(|selected| selected.as_deref() == Some(id.as_str()))));
    Effect::new(move |_| {
        let Some(nav) = nav else { return };
        // Reads the node too: the effect runs again once the slot is mounted.
        let mine = nav.scroll_to_proposal.with(|target| target.as_deref() == Some(proposal_id.as_str()));
        if let (true, Some(element)) = (mine, slot.get()) {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Center);
            element.scroll_into_view_with_scroll_into_view_options(&options);
            nav.scroll_to_proposal.set(None);
        }
    });
    view! {
        <div class="approval-slot" class:selected=move || selected.get() node_ref=slot>
            {children()}
        </div>
    }
}
