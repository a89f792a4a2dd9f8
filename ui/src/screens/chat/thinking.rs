//! The "Thinking" block: a model's or agent's reasoning, collapsed under the answer's
//! working so it is there to check but never mistaken for the answer.

use leptos::prelude::*;

/// One reasoning message, collapsed by default. `thinking` is the text so far and whether
/// it still streams. An empty message shows only while it streams (the model is thinking);
/// once it ends with nothing said, there is nothing to open.
#[component]
pub fn ThinkingBlock(thinking: Signal<(String, bool)>) -> impl IntoView {
    let streaming = Signal::derive(move || thinking.with(|(_, streaming)| *streaming));
    let visible = move || thinking.with(|(text, streaming)| *streaming || !text.is_empty());
    view! {
        <Show when=visible>
            <details class="thinking" class:streaming=move || streaming.get()>
                <summary>"Thinking"</summary>
                <div class="thinking-text">{move || thinking.with(|(text, _)| text.clone())}</div>
            </details>
        </Show>
    }
}
