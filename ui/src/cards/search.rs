//! The search card: what search_web found — each result's title, address and snippet — and
//! what it left out. The addresses are text: the agent opens a result with read_web or
//! browse_web, where the browser's rules apply.

use hearth_protocol::web_search::SearchResultsView;
use leptos::prelude::*;

use crate::state::cards::search_meta;

/// search_web's results.
#[component]
pub fn SearchCard(found: SearchResultsView) -> impl IntoView {
    let meta = search_meta(&found);
    view! {
        <article class="card search-card" data-tool="search_web">
            <header>
                <span class="card-kind">"Web search"</span>
            </header>
            <p class="browser-title">{found.query}</p>
            <p class="browser-url">{meta}</p>
            <ol class="search-results">
                {found.results.into_iter().map(|result| view! {
                    <li class="search-result">
                        <p class="search-result-title">{result.title}</p>
                        <p class="browser-url">{result.url}</p>
                        {(!result.snippet.is_empty()).then(|| view! { <p class="search-result-snippet">{result.snippet}</p> })}
                    </li>
                }).collect_view()}
            </ol>
        </article>
    }
}
