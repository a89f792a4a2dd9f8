#![allow(clippy::unwrap_used)]
use super::*;

fn page() -> Url {
    Url::parse("https://html.duckduckgo.com/html/?q=tide+times").unwrap()
}

fn ddg_result(address: &str, title: &str, snippet: &str) -> String {
    let wrapped: String = url::form_urlencoded::byte_serialize(address.as_bytes()).collect();
    format!(
        r#"<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" rel="nofollow" href="//duckduckgo.com/l/?uddg={wrapped}&amp;rut=abc">{title}</a></h2>
        <a class="result__url" href="//duckduckgo.com/l/?uddg={wrapped}">{address}</a><a class="result__snippet" href="//duckduckgo.com/l/?uddg={wrapped}">{snippet}</a></div>"#
    )
}

#[test]
fn a_duckduckgo_page_gives_titles_unwrapped_addresses_and_snippets_without_its_ads() {
    let markup = format!(
        r#"<html><body><div class="serp__results">
        <div class="result result--ad"><a class="result__a" href="https://ads.example/buy">Buy now</a></div>
        {}{}
        <script>var title = "not a result";</script></div></body></html>"#,
        ddg_result("https://tides.example/harbour?day=1&x=%C3%A9", "Harbour   tide\n times", "High water at <b>06:12</b>."),
        ddg_result("https://sea.example/", "Sea", ""),
    );
    let parsed = parse_results(&markup, &page(), &AllowList::none());
    assert_eq!(
        parsed.results,
        vec![
            SearchResult {
                title: "Harbour tide times".into(),
                url: "https://tides.example/harbour?day=1&x=%C3%A9".into(),
                snippet: "High water at 06:12.".into(),
            },
            SearchResult { title: "Sea".into(), url: "https://sea.example/".into(), snippet: String::new() },
        ]
    );
    assert_eq!((parsed.left_out, parsed.refused), (0, 0));
}

#[test]
fn private_and_local_addresses_are_counted_and_left_out() {
    let markup = [
        ddg_result("http://127.0.0.1:8080/admin", "Router", "on this machine"),
        ddg_result("http://10.0.0.5/", "Printer", "local network"),
        ddg_result("http://169.254.169.254/latest/meta-data/", "Metadata", "cloud"),
        ddg_result("http://[::1]/", "Loopback v6", ""),
        ddg_result("http://nas.local/", "NAS", ""),
        ddg_result("https://public.example/", "Public", ""),
    ]
    .concat();
    let parsed = parse_results(&markup, &page(), &AllowList::none());
    assert_eq!(parsed.results.iter().map(|r| r.url.as_str()).collect::<Vec<_>>(), ["https://public.example/"]);
    assert_eq!(parsed.refused, 5);
    // The allow-list (tests, development) lets exactly its address through.
    let allowed = AllowList::of(["127.0.0.1:8080".parse().unwrap()]);
    assert_eq!(parse_results(&markup, &page(), &allowed).refused, 4);
}

#[test]
fn at_most_ten_results_each_address_once_and_each_text_bounded() {
    let long = "word ".repeat(200);
    let mut markup = String::new();
    for n in 0..14 {
        markup.push_str(&ddg_result(&format!("https://site{n}.example/"), &long, &long));
    }
    markup.push_str(&ddg_result("https://site0.example/", "Again", "the same address"));
    let parsed = parse_results(&markup, &page(), &AllowList::none());
    assert_eq!(parsed.results.len(), MAX_SEARCH_RESULTS);
    assert_eq!(parsed.left_out, 4, "the duplicate is not counted");
    for result in &parsed.results {
        assert_eq!(result.title.chars().count(), MAX_RESULT_TITLE);
        assert_eq!(result.snippet.chars().count(), MAX_RESULT_SNIPPET);
    }
}

#[test]
fn a_mojeek_page_is_read_by_its_layout() {
    let markup = r#"<ul class="results-standard">
        <li><h2><a class="title" href="https://one.example/a">One</a></h2><p class="i">one.example</p><p class="s">First snippet.</p></li>
        <li><h2><a class="title" href="https://two.example/b">Two</a></h2><p class="s">Second snippet.</p></li>
        </ul><a href="https://www.mojeek.com/about">About Mojeek</a>"#;
    let page = Url::parse("https://www.mojeek.com/search?q=x").unwrap();
    let parsed = parse_results(markup, &page, &AllowList::none());
    assert_eq!(
        parsed.results.iter().map(|r| (r.title.as_str(), r.url.as_str(), r.snippet.as_str())).collect::<Vec<_>>(),
        [("One", "https://one.example/a", "First snippet."), ("Two", "https://two.example/b", "Second snippet.")]
    );
}

#[test]
fn any_other_page_gives_its_links_off_the_site_with_the_text_around_them() {
    let markup = r#"<nav><a href="/settings">Settings</a><a href="https://search.example/?q=x&page=2">Next</a></nav>
        <section><div class="hit"><h3><a href="https://far.example/story">A far story</a></h3>
        <span>Told at length by the far example site, with more words than its title.</span></div>
        <div><a href="javascript:void(0)">Share</a> <a href="mailto:x@example.com">Mail</a> <a href="https://near.example/"> </a></div>
        <p><a href="//wrapped.example/l/?uddg=https%3A%2F%2Funwrapped.example%2Fpage">Wrapped</a></p></section>"#;
    let page = Url::parse("https://search.example/?q=x").unwrap();
    let parsed = parse_results(markup, &page, &AllowList::none());
    assert_eq!(
        parsed.results.iter().map(|r| (r.title.as_str(), r.url.as_str())).collect::<Vec<_>>(),
        [("A far story", "https://far.example/story"), ("Wrapped", "https://unwrapped.example/page")]
    );
    assert_eq!(parsed.results[0].snippet, "Told at length by the far example site, with more words than its title.");
}

#[test]
fn every_layout_selector_compiles() {
    for layout in LAYOUTS {
        for selector in [layout.result, layout.link, layout.snippet] {
            assert!(Matcher::new(selector).is_ok(), "{selector}");
        }
    }
}
