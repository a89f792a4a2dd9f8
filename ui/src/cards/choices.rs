//! The `present_choices` card: the agent's question and one button per option. A pick is sent
//! as the owner's next message ("I pick: …"); once the conversation moved on, the buttons are
//! still there to read but send nothing new by themselves.

use hearth_protocol::ipc::{PresentChoicesResult, pick_message};
use leptos::prelude::*;

/// How a card answers in the chat it is in (the chat screen provides it).
#[derive(Debug, Clone, Copy)]
pub struct ChatReply(pub Callback<String>);

/// The choice in front of the owner.
#[component]
pub fn ChoiceCard(offered: PresentChoicesResult) -> impl IntoView {
    let reply = use_context::<ChatReply>();
    let picked = RwSignal::new(None::<String>);
    view! {
        <article class="card card-choices" data-tool="present_choices">
            <header><span class="card-kind">"Your choice"</span></header>
            <p class="choice-question">{offered.question.clone()}</p>
            <div class="choice-options">
                {offered.options.into_iter().map(|option| {
                    let pick = option.clone();
                    view! {
                        <button
                            class="choice-option"
                            class:picked=move || picked.with(|p| p.as_deref() == Some(pick.as_str()))
                            data-choice=option.clone()
                            disabled=move || picked.with(Option::is_some) || reply.is_none()
                            on:click={
                                move |_| {
                                    if let Some(ChatReply(send)) = reply {
                                        picked.set(Some(option.clone()));
                                        send.run(pick_message(&option));
                                    }
                                }
                            }
                        >{option.clone()}</button>
                    }
                }).collect_view()}
            </div>
        </article>
    }
}
