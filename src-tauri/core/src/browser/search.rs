//! What a search results page lists: titles, addresses and snippets, parsed from the page's
//! markup by `dom_query` (html5ever and CSS selectors), never by hand.
//!
//! Layouts known by their selectors, tried in order (the first that finds a result wins):
//!
//! | page | a result | its link and title | its snippet |
//! |---|---|---|---|
//! | DuckDuckGo's HTML page | `.result` (not `.result--ad`) | `a.result__a` | `.result__snippet` |
//! | Mojeek | `ul.results-standard > li` | `h2 a`, `a.title` | `p.s` |
//!
//! Any other page (a preset without a layout here, or the owner's own) is read generically:
//! every link whose text is not empty and whose address leaves the search page's own site is
//! a result, titled by its text, its snippet the text around it (the nearest of its three
//! closest ancestors that says more than the link itself).
//!
//! Every address is resolved against the page, unwrapped from DuckDuckGo's `/l/?uddg=<address>`
//! redirect (any link with a `uddg` parameter), and then checked by the egress policy
//! ([`super::egress::check_url`], with the browser's own allow-list): an address the browser
//! would refuse (this machine, the local network, another private range, a local name, a
//! port other than 80 and 443) is left out and counted, never opened. A name that resolves to
//! a private address can only be known by resolving it; that happens if the agent opens the
//! result, where the proxy refuses it as it refuses every request.

use std::collections::HashSet;

use dom_query::{Document, Matcher, Selection};
use hearth_protocol::browser::MAX_URL;
use hearth_protocol::web_search::{MAX_RESULT_SNIPPET, MAX_RESULT_TITLE, MAX_SEARCH_RESULTS, SearchResult};
use url::Url;

use super::egress::{self, AllowList};

/// A layout known by its selectors.
struct Layout {
    /// Each result's element.
    result: &'static str,
    /// Its link, whose text is the title.
    link: &'static str,
    /// Its snippet.
    snippet: &'static str,
}

/// The layouts in the table above, in order.
const LAYOUTS: &[Layout] = &[
    // DuckDuckGo's HTML page (html.duckduckgo.com/html/).
    Layout { result: ".result:not(.result--ad)", link: "a.result__a", snippet: ".result__snippet" },
    // Mojeek.
    Layout { result: "ul.results-standard > li", link: "h2 a, a.title", snippet: "p.s" },
];

/// What a results page gave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// At most [`MAX_SEARCH_RESULTS`], in the page's order, each address once.
    pub results: Vec<SearchResult>,
    /// How many more it listed.
    pub left_out: u32,
    /// How many it listed whose address the egress policy refuses.
    pub refused: u32,
}

/// The results `markup` lists, read as the page at `page` (for relative links), each address
/// checked against the policy with `allow`.
pub fn parse_results(markup: &str, page: &Url, allow: &AllowList) -> Parsed {
    let document = Document::from(markup);
    // Script and style text is no one's title or snippet.
    document.select("script, style, noscript, template").remove();
    let found = LAYOUTS.iter().map(|layout| by_layout(&document, layout)).find(|found| !found.is_empty());
    let generic = found.is_none();
    let candidates = found.unwrap_or_else(|| by_links(&document));
    let mut parsed = Parsed::default();
    let mut seen = HashSet::new();
    for (title, href, snippet) in candidates {
        let Some(url) = target(page, &href) else { continue };
        // The search site's own pages (its next page, its settings) are no results.
        if generic && url.host_str() == page.host_str() {
            continue;
        }
        if egress::check_url(&url, allow).is_err() {
            parsed.refused += 1;
            continue;
        }
        if !seen.insert(url.to_string()) {
            continue;
        }
        if parsed.results.len() == MAX_SEARCH_RESULTS {
            parsed.left_out += 1;
            continue;
        }
        parsed.results.push(SearchResult {
            title: cut(&title, MAX_RESULT_TITLE),
            url: url.to_string(),
            snippet: cut(&snippet, MAX_RESULT_SNIPPET),
        });
    }
    parsed
}

/// One candidate: its title, its link as written and its snippet.
type Candidate = (String, String, String);

fn by_layout(document: &Document, layout: &Layout) -> Vec<Candidate> {
    let (Ok(result), Ok(link), Ok(snippet)) = (Matcher::new(layout.result), Matcher::new(layout.link), Matcher::new(layout.snippet)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in document.select_matcher(&result).iter() {
        let anchor = item.select_matcher(&link).first();
        let (Some(href), title) = (anchor.attr("href"), words(&anchor)) else { continue };
        if title.is_empty() {
            continue;
        }
        found.push((title, href.to_string(), words(&item.select_matcher(&snippet).first())));
    }
    found
}

fn by_links(document: &Document) -> Vec<Candidate> {
    let mut found = Vec::new();
    for anchor in document.select("a[href]").iter() {
        let title = words(&anchor);
        let Some(href) = anchor.attr("href") else { continue };
        if title.is_empty() {
            continue;
        }
        let snippet = anchor
            .ancestors(Some(3))
            .iter()
            .map(|around| words(&around))
            .find(|text| text.chars().count() > title.chars().count() + 20)
            .map(|text| text.replacen(&title, "", 1).trim().to_owned())
            .unwrap_or_default();
        found.push((title, href.to_string(), snippet));
    }
    found
}

/// Where `href` leads: resolved against the page, unwrapped from a `uddg` redirect; only an
/// http or https address no longer than [`MAX_URL`] (a `javascript:` or `mailto:` link is no
/// result).
fn target(page: &Url, href: &str) -> Option<Url> {
    let url = page.join(href.trim()).ok()?;
    let url = match url.query_pairs().find(|(key, _)| key == "uddg") {
        Some((_, wrapped)) => Url::parse(&wrapped).ok()?,
        None => url,
    };
    (matches!(url.scheme(), "http" | "https") && url.as_str().len() <= MAX_URL).then_some(url)
}

/// A selection's text with its whitespace folded.
fn words(selection: &Selection<'_>) -> String {
    selection.text().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to `limit` characters.
fn cut(text: &str, limit: usize) -> String {
    text.chars().take(limit).collect()
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
