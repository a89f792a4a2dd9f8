//! The card for any tool without one of its own, including names Hearth does not know.

use leptos::prelude::*;

use super::{pretty_json, status_label};
use crate::state::chat::ToolCallView;

/// Title, pretty-printed arguments, status and result.
#[component]
pub fn GenericCard(call: ToolCallView) -> impl IntoView {
    let status = status_label(call.status);
    let title = call.name.clone();
    view! {
        <article class="card card-generic" data-tool=call.name data-status=status>
            <header>
                <span class="card-title">{title}</span>
                <span class=format!("status status-{status}")>{status}</span>
            </header>
            <pre class="card-args">{pretty_json(&call.args)}</pre>
            {call.result.map(|result| view! { <pre class="card-result">{pretty_json(&result)}</pre> })}
        </article>
    }
}
