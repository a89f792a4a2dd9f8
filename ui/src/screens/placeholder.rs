//! A screen not built yet: says what will live there.

use leptos::prelude::*;

use super::Screen;

/// Placeholder for `screen`.
#[component]
pub fn Placeholder(screen: Screen) -> impl IntoView {
    view! {
        <section class="placeholder" data-screen=screen.slug()>
            <h1>{screen.title()}</h1>
            <p>{screen.coming()}</p>
        </section>
    }
}
