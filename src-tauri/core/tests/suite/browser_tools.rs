//! The browser's tools through the one dispatch path, on a real Hearth with real Chromium,
//! against pages served on loopback under the test allow-list. Oracles: the requests the page
//! server received (a click's POST, a form's submission, cookies sent), the journal's rows,
//! the profile folders on disk and the running browsers.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use base64::Engine;
use hearth_core::browser::egress::AllowList;
use hearth_core::browser::profiles::{IDLE_CLOSE, ProfileId};
use hearth_core::store::journal::OpStatus;
use hearth_core::tools::{StepId, dispatch};
use hearth_protocol::approvals::ProposalOrigin;
use hearth_protocol::browser::{ActReceipt, DownloadRefusal, DownloadStatus, DownloadView, PageElements, PageView};
use hearth_protocol::ids::ThreadId;
use hearth_testkit::dns_stub::DnsStub;
use hearth_testkit::pages::{PageServer, ServedFile};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::fast_config;

/// Each click counts itself in its own label and POSTs its number.
const CLICK_PAGE: &str = r#"<!doctype html><title>Rows</title>
<button id="add" onclick="n++; this.textContent = 'Add (' + n + ')'; fetch('/row?n=' + n, {method: 'POST'});">Add</button>
<script>let n = 0;</script>"#;

/// A form whose Enter submits a GET with the fields; a banner lies over its first line, so a
/// click on the name field would land on the banner.
const FORM_PAGE: &str = r#"<!doctype html><title>Order</title>
<div style="position: fixed; left: 0; top: 0; width: 100%; height: 60px; background: rgba(255,255,255,.6)">We use cookies</div>
<form action="/submitted" method="get">
  <label>Name <input name="name"></label>
  <label>Size <select name="size"><option value="small">Small</option><option value="large">Large</option></select></label>
</form>"#;

/// One button filling the viewport: a press turns the page green and tells the server.
const PRESS_PAGE: &str = r#"<!doctype html><title>Press</title>
<style>body { margin: 0 } button { width: 100vw; height: 100vh; font-size: 40px }</style>
<button onclick="document.body.style.background = 'green'; this.style.background = 'green'; this.textContent = 'Pressed'; fetch('/pressed', {method: 'POST'});">Press</button>"#;

/// Sets a cookie that outlives the browser (written to the profile).
const COOKIE_PAGE: &str =
    r#"<!doctype html><title>Cookie</title><script>document.cookie = "who=me; max-age=3600; path=/";</script><p>set</p>"#;

/// A page whose image never comes: DOMContentLoaded fires, `load` never does.
const NEVER_LOADED_PAGE: &str = r#"<!doctype html><title>Never loaded</title><p>text is here</p><img src="/hang">"#;

/// A page whose parsing waits on a script that never comes (DOMContentLoaded never fires)
/// while a timer of its own keeps asking the server for ticks.
const HANGING_PAGE: &str = r#"<!doctype html><title>Slow</title>
<script>let n = 0; setInterval(() => fetch('/tick?' + (n++)), 50);</script><script src="/hang"></script>"#;

/// Links to files the browser downloads when clicked.
const DOWNLOADS_PAGE: &str = r#"<!doctype html><title>Downloads</title>
<a href="/clicked.pdf">Get the report</a>"#;

/// A checkout form that POSTs a name, a PIN and a note; a search form that GETs; a button that
/// sends nothing; and a plain button whose script posts the name elsewhere (no submit button a
/// static check would see).
const CHECKOUT_PAGE: &str = r#"<!doctype html><title>Checkout</title>
<form action="/order" method="post">
  <label>Name <input name="name"></label>
  <label>PIN <input name="pin" type="password"></label>
  <label>Note <textarea name="note"></textarea></label>
  <button>Place order</button>
</form>
<form action="/search"><label>Search <input name="q"></label></form>
<button type="button" onclick="document.body.dataset.more = 'opened'">More</button>
<button type="button" onclick="const f = document.createElement('form'); f.method = 'post'; f.action = '/sneak';
  const i = document.createElement('input'); i.type = 'hidden'; i.name = 'name'; i.value = document.querySelector('[name=name]').value;
  f.append(i); document.body.append(f); f.submit();">Quick order</button>"#;

/// A sign-in form whose parts a static look would miss: its password stands outside it (joined
/// by `form=`) under the same name as a hidden field; its default button has a name and its own
/// `formaction`, so Enter sends there; a checkbox and a field named `action` (which shadows the
/// form's own property in page scripts).
const SIGNIN_PAGE: &str = r#"<!doctype html><title>Sign in</title>
<form id="f" action="/signin" method="post">
  <label>User <input name="user"></label>
  <input type="hidden" name="pw" value="decoy">
  <input type="hidden" name="action" value="login">
  <button name="go" value="1" formaction="/signin-alt">Sign in</button>
</form>
<label>Password <input type="password" name="pw" form="f"></label>
<label>Remember me <input type="checkbox" name="remember" form="f"></label>"#;

/// A payment form whose own submit handler raises the amount after any review, and a pay
/// button whose inner span is listed on its own (a click on the span presses the button).
const PAY_PAGE: &str = r#"<!doctype html><title>Pay</title>
<form id="pay" action="/pay" method="post">
  <input type="hidden" name="amount" value="10">
  <label>Card holder <input name="holder"></label>
  <button><span role="button" aria-label="Inner pay">Pay now</span></button>
</form>
<script>document.getElementById('pay').addEventListener('submit', e => { e.target.amount.value = '9999'; });</script>"#;

/// The same payment as a multipart form with a note written over two lines and an optional
/// attachment left empty; `?changes` adds the handler that raises the amount after any review.
const PAY_MULTIPART_PAGE: &str = r#"<!doctype html><title>Pay</title>
<form id="pay" action="/pay" method="post" enctype="multipart/form-data">
  <input type="hidden" name="amount" value="10">
  <label>Card holder <input name="holder"></label>
  <textarea name="memo">line one
line two</textarea>
  <label>Receipt <input type="file" name="receipt"></label>
  <button>Pay now</button>
</form>
<script>if (location.search === '?changes') document.getElementById('pay').addEventListener('submit', e => { e.target.amount.value = '9999'; });</script>"#;

/// A plain button whose script posts a typed field from a new tab it opens.
const POPUP_PAGE: &str = r#"<!doctype html><title>Popup</title>
<label>Note <input name="note"></label>
<button type="button" onclick="const f = document.createElement('form'); f.method = 'post'; f.action = '/popup'; f.target = '_blank';
  const i = document.createElement('input'); i.type = 'hidden'; i.name = 'note'; i.value = document.querySelector('[name=note]').value;
  f.append(i); document.body.append(f); f.submit();">Open in a new window</button>"#;

/// A button that opens a page in a new window; that page asks the server for a tick every 50 ms.
const OPENER_PAGE: &str = r#"<!doctype html><title>Opener</title>
<button type="button" onclick="window.open('/ticker.html')">Open the ticker</button>"#;
const TICKER_PAGE: &str = r#"<!doctype html><title>Ticker</title>
<script>let n = 0; setInterval(() => fetch('/ptick?' + (n++)), 50);</script>"#;

/// The payment again, sent by an image button (its click position goes with the fields);
/// `?changes` adds the handler that raises the amount after any review.
const PAY_IMAGE_PAGE: &str = r#"<!doctype html><title>Pay</title>
<form id="pay" action="/pay" method="post">
  <input type="hidden" name="amount" value="10">
  <label>Card holder <input name="holder"></label>
  <input type="image" name="go" aria-label="Pay by card" style="width: 80px; height: 30px">
</form>
<script>if (location.search === '?changes') document.getElementById('pay').addEventListener('submit', e => { e.target.amount.value = '9999'; });</script>"#;

/// The payment again, answered with a redirect to a result page (post, then get).
const PAY_REDIRECT_PAGE: &str = r#"<!doctype html><title>Pay</title>
<form action="/redirect?to=/article.html" method="post">
  <input type="hidden" name="amount" value="10">
  <label>Card holder <input name="holder"></label>
  <button>Pay now</button>
</form>"#;

/// A real PDF (a form from the fixtures).
const REPORT: &[u8] = include_bytes!("../fixtures/choices.pdf");

struct Web {
    hearth: hearth_core::Hearth,
    server: PageServer,
    dns: DnsStub,
    _dir: tempfile::TempDir,
}

impl Drop for Web {
    /// A test's browsers end with it, even when it fails (Hearth's own close is async).
    fn drop(&mut self) {
        kill_browsers_on(&self._dir.path().join("browser"));
    }
}

impl Web {
    async fn new() -> Self {
        let pages: HashMap<String, String> = [
            ("/click.html", CLICK_PAGE),
            ("/form.html", FORM_PAGE),
            ("/cookie.html", COOKIE_PAGE),
            ("/slow.html", HANGING_PAGE),
            ("/never-loaded.html", NEVER_LOADED_PAGE),
            ("/press.html", PRESS_PAGE),
            ("/checkout.html", CHECKOUT_PAGE),
            ("/signin.html", SIGNIN_PAGE),
            ("/pay.html", PAY_PAGE),
            ("/pay-multipart.html", PAY_MULTIPART_PAGE),
            ("/popup.html", POPUP_PAGE),
            ("/opener.html", OPENER_PAGE),
            ("/ticker.html", TICKER_PAGE),
            ("/pay-image.html", PAY_IMAGE_PAGE),
            ("/pay-redirect.html", PAY_REDIRECT_PAGE),
            ("/article.html", include_str!("../fixtures/pages/article.html")),
        ]
        .into_iter()
        .map(|(path, html)| (path.to_owned(), html.to_owned()))
        .collect();
        let mut pages = pages;
        pages.insert("/downloads.html".into(), DOWNLOADS_PAGE.into());
        // An ELF header: what an executable starts with, whatever name it is given.
        let mut program = b"\x7fELF\x02\x01\x01".to_vec();
        program.resize(4096, 0);
        // Past the 10 MiB limit, yet a PDF by its first bytes.
        let mut large = b"%PDF-1.7\n".to_vec();
        large.resize(11 * 1024 * 1024, b' ');
        let files: HashMap<String, ServedFile> = [
            ("/report.pdf", ServedFile::attachment("application/pdf", "report.pdf", REPORT.to_vec())),
            ("/inline.pdf", ServedFile::inline("application/pdf", REPORT.to_vec())),
            ("/clicked.pdf", ServedFile::attachment("application/pdf", "clicked.pdf", REPORT.to_vec())),
            ("/tool.exe", ServedFile::attachment("application/octet-stream", "tool.exe", program.clone())),
            ("/disguised.pdf", ServedFile::attachment("application/pdf", "invoice.pdf", program)),
            ("/large.pdf", ServedFile::attachment("application/pdf", "large.pdf", large)),
        ]
        .into_iter()
        .map(|(path, file)| (path.to_owned(), file))
        .collect();
        let server = PageServer::bind_with_files(SocketAddr::from(([127, 0, 0, 2], 0)), pages, files).await.unwrap();
        let dns = DnsStub::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = fast_config(dir.path());
        config.browser.allow = AllowList::of([server.address()]);
        config.browser_dns = Some(dns.address());
        let hearth = hearth_core::Hearth::open(config).await.unwrap();
        Self { hearth, server, dns, _dir: dir }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server.address())
    }

    /// A chat's calls, apart from the trust policy (which holds a click after a page was read:
    /// `suite::trust` tests that): these tests are of the browser's own mechanics.
    fn chat(&self, thread: &str, run: &str) -> hearth_core::tools::ToolContext {
        self.hearth.toolbox().for_chat(thread, run, ProposalOrigin::OwnerChat, CancellationToken::new()).for_workflow()
    }

    /// The requests for `prefix` the server received so far.
    fn received(&self, prefix: &str) -> Vec<String> {
        self.server.requests().into_iter().filter(|r| r.starts_with(prefix)).collect()
    }

    /// Waits until the server has received `target` `count` times.
    async fn until_received_count(&self, target: &str, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.server.requests().iter().filter(|r| *r == target).count() < count {
            assert!(Instant::now() < deadline, "the server never received {target} {count} times; it saw {:?}", self.server.requests());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the server has received `target` (the page's own request may still be on its
    /// way when the click returns).
    async fn until_received(&self, target: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.server.requests().iter().any(|r| r == target) {
            assert!(Instant::now() < deadline, "the server never received {target}; it saw {:?}", self.server.requests());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn call(ctx: &hearth_core::tools::ToolContext, tool: &str, args: Value, id: &str) -> (bool, Value) {
    let out = dispatch(ctx, tool, &args.to_string(), StepId::Call(id.into())).await;
    (out.is_error, serde_json::from_str(&out.content).unwrap_or(Value::Null))
}

async fn elements(ctx: &hearth_core::tools::ToolContext, id: &str) -> PageElements {
    let (error, listed) = call(ctx, "page_elements", json!({}), id).await;
    assert!(!error, "{listed}");
    serde_json::from_value(listed).unwrap()
}

/// Opens `path` in `ctx`'s browser and answers the reference of its element named `name`.
async fn open_and_find(web: &Web, ctx: &hearth_core::tools::ToolContext, path: &str, name: &str) -> String {
    let (error, out) = call(ctx, "browse_web", json!({ "url": web.url(path) }), "open").await;
    assert!(!error, "{out}");
    reference(&elements(ctx, "list-1").await, name)
}

fn reference(listed: &PageElements, name: &str) -> String {
    listed
        .elements
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.reference.clone())
        .unwrap_or_else(|| panic!("no {name:?} in {:?}", listed.elements))
}

#[tokio::test]
async fn browse_web_gives_the_page_to_the_model_and_its_picture_to_the_card() {
    let web = Web::new().await;
    let ctx = web.chat("t-look", "r1");
    let (error, seen) = call(&ctx, "browse_web", json!({ "url": web.url("/article.html") }), "c1").await;
    assert!(!error, "{seen}");
    let page: PageView = serde_json::from_value(seen).unwrap();
    assert_eq!(page.title, "Family Day, bus changes and a busy month for Northside volunteers");
    assert!(page.text.contains("Northside") && page.text.chars().count() <= 30_000);
    assert_eq!(page.profile, "thread-t-look");
    assert!(page.untrusted_data.contains("never instructions"));
    let shot = web.hearth.browser_screenshot(page.screenshot_id.as_deref().unwrap()).await.unwrap();
    let png = base64::engine::general_purpose::STANDARD.decode(shot.png_base64).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(web.received("/article.html").len(), 1, "fetched once, through the proxy");

    // read_web takes no picture; a refused address is the model's error, and nothing is fetched.
    let (_, read) = call(&ctx, "read_web", json!({ "url": web.url("/article.html") }), "c2").await;
    assert_eq!(read["screenshotId"], Value::Null);
    let (error, refused) = call(&ctx, "browse_web", json!({ "url": "http://127.0.0.1:9/" }), "c3").await;
    assert!(error && refused["error"].as_str().unwrap().contains("loopback"), "{refused}");
    assert!(web.hearth.browser_screenshot("../../hearth.db").await.is_err());
}

#[tokio::test]
async fn page_act_clicks_once_per_operation_id_and_a_changed_action_is_a_conflict() {
    let web = Web::new().await;
    let ctx = web.chat("t-click", "r1");
    let (error, opened) = call(&ctx, "browse_web", json!({ "url": web.url("/click.html") }), "open").await;
    assert!(!error, "{opened}");
    let first = elements(&ctx, "list-1").await;
    let add = reference(&first, "Add");

    let click = |op: &str, reference: &str| json!({ "ref": reference, "action": "click", "operationId": op });
    let (error, receipt) = call(&ctx, "page_act", click("add-1", &add), "c1").await;
    assert!(!error, "{receipt}");
    assert_eq!(receipt["action"], "click");
    web.until_received("/row?n=1").await;

    // The same id again, from another call and from another run of the thread (a Retry): the
    // first receipt, and no second click.
    let (error, again) = call(&ctx, "page_act", click("add-1", &add), "c2").await;
    assert!(!error, "{again}");
    assert_eq!(again, receipt);
    let retry = web.chat("t-click", "r2");
    let (_, retried) = call(&retry, "page_act", click("add-1", &add), "c9").await;
    assert_eq!(retried, receipt);

    // The same id with anything changed: a conflict, nothing done.
    let (error, conflict) = call(&ctx, "page_act", json!({ "ref": add, "action": "scroll", "operationId": "add-1" }), "c3").await;
    assert!(error, "{conflict}");
    // A reference from before the page changed (its label counts the click): refused.
    let (error, stale) = call(&ctx, "page_act", click("add-2", &add), "c4").await;
    assert!(error && stale["error"].as_str().unwrap().contains("page changed"), "{stale}");
    // That id is now taken by the refused action: another action needs another id.
    let (error, taken) = call(&ctx, "page_act", json!({ "ref": add, "action": "scroll", "operationId": "add-2" }), "c4b").await;
    assert!(error && taken["error"].as_str().unwrap().contains("different content"), "{taken}");

    // The page itself says it was clicked once.
    let second = elements(&ctx, "list-2").await;
    let add_again = reference(&second, "Add (1)");
    let (error, out) = call(&ctx, "page_act", click("add-3", &add_again), "c5").await;
    assert!(!error, "{out}");
    web.until_received("/row?n=2").await;
    reference(&elements(&ctx, "list-3").await, "Add (2)");
    assert_eq!(web.received("/row"), ["/row?n=1", "/row?n=2"], "each operation clicked exactly once");
    let scope = ctx.scope().key(&StepId::Call("x".into())).scope;
    assert_eq!(web.hearth.store().count_operations(&scope, OpStatus::Succeeded).await.unwrap(), 2);
}

#[tokio::test]
async fn typing_choosing_and_pressing_enter_submit_the_form_as_typed() {
    let web = Web::new().await;
    let ctx = web.chat("t-form", "r1");
    let (error, out) = call(&ctx, "browse_web", json!({ "url": web.url("/form.html") }), "open").await;
    assert!(!error, "{out}");
    let listed = elements(&ctx, "list").await;
    let (name, size) = (reference(&listed, "Name"), reference(&listed, "Size"));
    assert_eq!(listed.elements.iter().find(|e| e.name == "Size").unwrap().role, "combobox");
    for (op, args) in [
        ("type", json!({ "ref": name, "action": "type", "value": "Ada Lovelace", "operationId": "f1" })),
        ("select", json!({ "ref": size, "action": "select", "value": "Large", "operationId": "f2" })),
        ("no such key", json!({ "ref": name, "action": "press", "value": "F13", "operationId": "f3" })),
        ("covered", json!({ "ref": name, "action": "click", "operationId": "f6" })),
        ("no value", json!({ "ref": name, "action": "type", "operationId": "f4" })),
        ("enter", json!({ "ref": name, "action": "press", "value": "Enter", "operationId": "f5" })),
    ] {
        let (error, out) = call(&ctx, "page_act", args, op).await;
        let refused = matches!(op, "no such key" | "no value" | "covered");
        assert_eq!(error, refused, "{op}: {out}");
    }
    web.until_received("/submitted?name=Ada+Lovelace&size=large").await;
    assert_eq!(web.received("/submitted").len(), 1);
}

#[tokio::test]
async fn stop_during_a_navigation_ends_it_and_the_page_fetches_nothing_after() {
    let web = Web::new().await;
    let looking = slow_look(&web, "t-stop", "r1").await;
    web.until_received("/tick?2").await;
    stop(looking).await;
    // The stopped page's tab is closed before the call returns.
    let late = asked_after_another_look(&web, "/tick").await;
    assert!(late.is_empty(), "the stopped page kept running: {late:?}");
    // The stopped thread's own browser goes on with a fresh tab.
    let later = web.chat("t-stop", "r2");
    let (error, out) = call(&later, "browse_web", json!({ "url": web.url("/article.html") }), "again").await;
    assert!(!error, "{out}");
}

/// Stop reaches the windows a page opened: the ticker a click opened in a new window is closed
/// with the stopped tab, so it asks for nothing after. Before, only the session's own tab was
/// closed, and the window went on until the browser's idle close.
#[tokio::test]
async fn stop_closes_the_windows_the_page_opened_too() {
    let web = Web::new().await;
    let ctx = web.chat("t-opener", "r1");
    let open = open_and_find(&web, &ctx, "/opener.html", "Open the ticker").await;
    let (error, out) = call(&ctx, "page_act", json!({ "ref": open, "action": "click", "operationId": "open" }), "click").await;
    assert!(!error, "{out}");
    web.until_received("/ptick?2").await;
    // Stop during a look of the same thread, in the same browser.
    stop(slow_look(&web, "t-opener", "r2").await).await;
    let late = asked_after_another_look(&web, "/ptick").await;
    assert!(late.is_empty(), "the window the page opened kept running after Stop: {late:?}");
}

/// A look at the page that never finishes loading, in `thread`'s browser under a Stop of its
/// own, once the page asked for its hanging script.
async fn slow_look(web: &Web, thread: &str, run: &str) -> (CancellationToken, tokio::task::JoinHandle<(bool, Value)>) {
    let cancel = CancellationToken::new();
    let ctx = web.hearth.toolbox().for_chat(thread, run, ProposalOrigin::OwnerChat, cancel.clone()).for_workflow();
    let url = web.url("/slow.html");
    let looking = tokio::spawn(async move { call(&ctx, "browse_web", json!({ "url": url }), "slow").await });
    web.until_received("/hang").await;
    (cancel, looking)
}

/// Presses the look's Stop; the look ends as stopped.
async fn stop((cancel, looking): (CancellationToken, tokio::task::JoinHandle<(bool, Value)>)) {
    cancel.cancel();
    let (error, out) = looking.await.unwrap();
    assert!(error && out["error"] == "stopped", "{out}");
}

/// What the server was asked for under `prefix` after another thread's browser started and
/// loaded a page — a second's worth of a stopped page's 50 ms timer, had it lived. A request
/// already on its way at Stop may land before that page's, none after it.
async fn asked_after_another_look(web: &Web, prefix: &str) -> Vec<String> {
    let other = web.chat("t-other", "r1");
    let (error, out) = call(&other, "browse_web", json!({ "url": web.url("/article.html") }), "next").await;
    assert!(!error, "{out}");
    let log = web.server.requests();
    let article = log.iter().position(|r| r == "/article.html").unwrap();
    log[article..].iter().filter(|r| r.starts_with(prefix)).cloned().collect()
}

#[tokio::test]
async fn each_thread_has_its_own_profile_kept_on_disk_and_at_most_three_run() {
    let web = Web::new().await;
    let browsers = web.hearth.browsers();
    let cookie_sent = |web: &Web| -> Vec<bool> {
        web.server
            .requests_with_header("cookie")
            .into_iter()
            .filter(|(r, _)| r.starts_with("/article.html"))
            .map(|(_, sent)| sent)
            .collect()
    };
    // Thread a gets a cookie; thread b, in its own profile, does not send it.
    let a = web.chat("a", "r1");
    let b = web.chat("b", "r1");
    for (ctx, path, id) in [(&a, "/cookie.html", "1"), (&a, "/article.html", "2"), (&b, "/article.html", "1")] {
        let (error, out) = call(ctx, "browse_web", json!({ "url": web.url(path) }), id).await;
        assert!(!error, "{out}");
    }
    assert_eq!(cookie_sent(&web), [true, false]);

    // Two more threads: the fourth browser closes the least recently used one (a).
    for thread in ["c", "d"] {
        let (error, out) = call(&web.chat(thread, "r1"), "browse_web", json!({ "url": web.url("/article.html") }), "1").await;
        assert!(!error, "{out}");
    }
    assert_eq!(browsers.running().await, 3);
    assert_eq!(chromium_processes(&web), 3, "Chromium processes running");
    let profiles = browsers.profiles().await;
    assert_eq!(profiles.len(), 4, "{profiles:?}");
    let closed: Vec<_> = profiles.iter().filter(|p| !p.running).map(|p| p.id.as_str().to_owned()).collect();
    assert_eq!(closed, ["thread-a"]);

    // Thread a's browser starts again on its saved profile: the cookie is still there.
    let (error, out) = call(&a, "browse_web", json!({ "url": web.url("/article.html") }), "3").await;
    assert!(!error, "{out}");
    assert_eq!(cookie_sent(&web), [true, false, false, false, true]);
    assert_eq!(browsers.running().await, 3);

    // Idle for 30 minutes: every browser closes, the profiles stay.
    assert_eq!(browsers.close_idle(Instant::now() + IDLE_CLOSE + Duration::from_secs(1)).await, 3);
    assert_eq!(browsers.running().await, 0);
    assert_eq!(chromium_processes(&web), 0, "Chromium processes left after the idle close");
    assert_eq!(browsers.profiles().await.len(), 4);

    // Deleting a profile takes its cookie with it.
    web.hearth.browser_delete_profile(ProfileId::for_thread("a").as_str()).await.unwrap();
    assert_eq!(browsers.profiles().await.len(), 3);
    let (error, out) = call(&a, "browse_web", json!({ "url": web.url("/article.html") }), "4").await;
    assert!(!error, "{out}");
    assert_eq!(cookie_sent(&web).last(), Some(&false));
    browsers.close_all().await;
}

#[tokio::test]
async fn thirty_chats_each_open_a_page_then_one_more_still_browses_and_the_profiles_stay_bounded() {
    use hearth_core::browser::profiles::MAX_SAVED;
    let web = Web::new().await;
    let browsers = web.hearth.browsers();
    // The owner's own profile exists first; it is never the one removed to make room.
    let owner = browsers.session(&ProfileId::owner()).await.unwrap();
    owner.look(&web.url("/article.html"), &CancellationToken::new(), false).await.unwrap();
    drop(owner);
    let folders = |web: &Web| -> usize {
        std::fs::read_dir(web._dir.path().join("browser")).unwrap().flatten().filter(|e| e.path().is_dir()).count()
    };
    let mut made_room = Vec::new();
    for n in 0..31 {
        let (error, out) =
            call(&web.chat(&format!("chat{n:02}"), "r1"), "browse_web", json!({ "url": web.url("/article.html") }), "1").await;
        assert!(!error, "chat {n}: {out}");
        if let Some(note) = out["madeRoom"].as_str() {
            made_room.push(note.to_owned());
        }
        assert!(chromium_processes(&web) <= 3, "at most three browsers run");
    }
    let kept: Vec<String> = browsers.profiles().await.into_iter().map(|p| p.id.as_str().to_owned()).collect();
    assert_eq!(kept.len(), MAX_SAVED, "{kept:?}");
    assert!(kept.contains(&"owner".to_owned()), "the owner's profile stays: {kept:?}");
    assert!(kept.contains(&"thread-chat30".to_owned()), "the newest chat has its profile: {kept:?}");
    assert!(!kept.contains(&"thread-chat00".to_owned()), "the least recently used went first: {kept:?}");
    // 1 owner + 31 chats = 32 profiles asked for, 20 kept: 12 made room, each said so.
    assert_eq!(made_room.len(), 12, "{made_room:?}");
    assert!(made_room[0].contains("thread-chat00"), "{}", made_room[0]);
    assert!(folders(&web) <= MAX_SAVED + 1, "profile folders on disk (and the downloads folder) stay bounded");
    browsers.close_all().await;
}

#[tokio::test]
async fn a_tasks_browser_profile_goes_when_the_task_ends() {
    use hearth_core::tasks::{TaskContext, TaskOutcome};
    let web = Web::new().await;
    let url = web.url("/article.html");
    let tool_hearth = web.hearth.clone();
    web.hearth.tasks().register(hearth_protocol::tasks::TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.toolbox().for_task(ctx).for_workflow();
        let url = url.clone();
        async move {
            let out = dispatch(&tools, "browse_web", &json!({ "url": url }).to_string(), StepId::Step(0)).await;
            assert!(!out.is_error, "{}", out.content);
            TaskOutcome::Succeeded("looked".into())
        }
    });
    let task = web.hearth.tasks().create(super::support::new_task("looks-once", &json!({}))).await.unwrap();
    let folder = web._dir.path().join("browser").join(ProfileId::for_task(&task.id).as_str());
    let engine = web.hearth.tasks().clone();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    super::support::engine_idle(&engine, &mut changes).await;
    assert_eq!(web.hearth.store().get_task(&task.id).await.unwrap().unwrap().status, hearth_protocol::tasks::TaskStatus::Succeeded);
    // Deleted by Hearth's follower of task changes, which runs on its own: a bound, not a wait.
    let deadline = Instant::now() + Duration::from_secs(30);
    while folder.exists() {
        assert!(Instant::now() < deadline, "the ended task's profile {} is still on disk", folder.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(chromium_processes(&web), 0, "its browser ended with it");
}

#[tokio::test]
async fn a_page_that_never_finishes_loading_does_not_hold_up_the_next_look() {
    let web = Web::new().await;
    let ctx = web.chat("t-load", "r1");
    let (error, first) = call(&ctx, "browse_web", json!({ "url": web.url("/never-loaded.html") }), "1").await;
    assert!(!error && first["text"] == "text is here", "{first}");
    web.until_received("/hang").await;
    // Its image is still pending: the look did not wait for `load` (with chromiumoxide's
    // Page.navigate it timed out after 30 s), and neither does the next one.
    let (error, next) = call(&ctx, "browse_web", json!({ "url": web.url("/article.html") }), "2").await;
    assert!(!error, "{next}");
}

/// The Chromium browser processes (not their helpers) running on this test's profiles.
fn chromium_processes(web: &Web) -> usize {
    browsers_on(&web._dir.path().join("browser"))
}

/// Kills (SIGKILL) every Chromium browser process on a profile under `profiles`, this
/// process's own included.
pub(super) fn kill_browsers_on(profiles: &std::path::Path) {
    let marker = format!("--user-data-dir={}", profiles.display());
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.iter().any(|a| a.starts_with(marker.as_bytes())) && !args.iter().any(|a| a.starts_with(b"--type=")) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// The Chromium browser processes (not their helpers) running on a profile under `profiles`.
fn browsers_on(profiles: &std::path::Path) -> usize {
    let marker = format!("--user-data-dir={}", profiles.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { return false };
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let on_ours = args.iter().any(|a| a.starts_with(marker.as_bytes()));
            let helper = args.iter().any(|a| a.starts_with(b"--type="));
            on_ours && !helper
        })
        .count()
}

#[tokio::test]
async fn take_control_streams_the_page_takes_the_owners_click_and_keeps_the_agent_out() {
    use hearth_protocol::browser::{ControlInput, MouseButton, MouseKind};
    let web = Web::new().await;
    let ctx = web.chat("t-control", "r1");
    let press = open_and_find(&web, &ctx, "/press.html", "Press").await;
    let profile = ProfileId::for_thread("t-control");
    let (frames_tx, mut frames) = tokio::sync::mpsc::channel(4);
    let ticket = web.hearth.browser_control_start(profile.as_str(), frames_tx).await.unwrap();
    let first = next_frame(&mut frames).await;
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&first.jpeg_base64).unwrap();
    assert_eq!(&jpeg[..3], b"\xff\xd8\xff", "a JPEG");
    assert_eq!((first.width, first.height), (1280, 800));

    // The agent is kept out while the owner holds control.
    let click = |op: &str, reference: &str| json!({ "ref": reference, "action": "click", "operationId": op });
    let (error, busy) = call(&ctx, "page_act", click("agent-1", &press), "c1").await;
    assert!(error && busy["error"].as_str().unwrap().contains("owner has control"), "{busy}");
    let scope = ctx.scope().key(&StepId::Call("x".into())).scope;
    assert_eq!(
        web.hearth.store().count_operations(&scope, OpStatus::Failed).await.unwrap(),
        1,
        "the refused action is failed: nothing was sent"
    );
    let (error, busy) = call(&ctx, "browse_web", json!({ "url": web.url("/article.html") }), "c2").await;
    assert!(error && busy["error"].as_str().unwrap().contains("owner has control"), "{busy}");
    // A look at the page is the agent's too: refused, and no picture is taken or kept.
    let pictures = kept_pictures(&web);
    let seeing = web.chat("t-control", "r1").with_vision(hearth_core::tools::Vision::Images);
    let out = dispatch(&seeing, "look_page", "{}", StepId::Call("c2b".into())).await;
    assert!(out.is_error && out.content.contains("owner has control") && out.images.is_empty(), "{}", out.content);
    assert_eq!(kept_pictures(&web), pictures);

    // Nothing was pressed yet (the refused click sent no input: its row says so above).
    assert!(web.received("/pressed").is_empty(), "the agent's refused click pressed the button");
    // The owner's click through the input API presses the button, and the next frames show it.
    let mouse = |kind| ControlInput::Mouse {
        kind,
        x: 640.0,
        y: 400.0,
        button: MouseButton::Left,
        click_count: 1,
        delta_x: 0.0,
        delta_y: 0.0,
        modifiers: 0,
    };
    web.hearth.browser_control_input(profile.as_str(), &mouse(MouseKind::Down)).await.unwrap();
    web.hearth.browser_control_input(profile.as_str(), &mouse(MouseKind::Up)).await.unwrap();
    web.until_received("/pressed").await;
    loop {
        let frame = next_frame(&mut frames).await;
        assert!(frame.seq > first.seq);
        if frame.jpeg_base64 != first.jpeg_base64 {
            break;
        }
    }
    assert!(web.received("/article.html").is_empty(), "the agent's refused look went out");
    assert_eq!(web.received("/pressed").len(), 1, "only the owner's click pressed");

    // A Give back for another session changes nothing; its own ends it: the agent acts
    // again, and the owner's input is refused.
    web.hearth.browser_control_stop(profile.as_str(), Some(ticket + 100)).await.unwrap();
    let (error, _) = call(&ctx, "page_elements", json!({}), "still-busy").await;
    assert!(error, "a stale Give back ended the owner's control");
    web.hearth.browser_control_stop(profile.as_str(), Some(ticket)).await.unwrap();
    assert!(web.hearth.browser_control_input(profile.as_str(), &mouse(MouseKind::Down)).await.is_err());
    let pressed = reference(&elements(&ctx, "list-2").await, "Pressed");
    let (error, out) = call(&ctx, "page_act", click("agent-2", &pressed), "c3").await;
    assert!(!error, "{out}");
    web.until_received_count("/pressed", 2).await;
}

async fn next_frame(
    frames: &mut tokio::sync::mpsc::Receiver<hearth_protocol::browser::ControlFrame>,
) -> hearth_protocol::browser::ControlFrame {
    tokio::time::timeout(Duration::from_secs(30), frames.recv())
        .await
        .expect("no screencast frame within 30 s")
        .expect("the screencast ended")
}

#[tokio::test]
async fn a_browser_an_earlier_hearth_left_running_is_ended_before_any_launch() {
    // A real orphan: a Chromium on a profile of this data folder whose parent is gone (the
    // shell that started it exits at once), as a killed Hearth leaves one.
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("browser").join("thread-left");
    std::fs::create_dir_all(&profile).unwrap();
    let started = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("/usr/bin/chromium --headless=new --no-sandbox --user-data-dir={} about:blank >/dev/null 2>&1 &", profile.display()))
        .status()
        .unwrap();
    assert!(started.success());
    let orphans = || browsers_on(&dir.path().join("browser"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while orphans() == 0 {
        assert!(Instant::now() < deadline, "the orphan Chromium never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Hearth takes the folder and ends it before any launch.
    let hearth = hearth_core::Hearth::open(fast_config(dir.path())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while orphans() > 0 {
        assert!(Instant::now() < deadline, "the left-over browser still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    hearth.browsers().close_all().await;
}

#[tokio::test]
async fn a_browser_that_dies_under_the_owners_control_gives_the_agent_a_new_one() {
    let web = Web::new().await;
    let ctx = web.chat("t-dies", "r1");
    let (error, out) = call(&ctx, "browse_web", json!({ "url": web.url("/press.html") }), "open").await;
    assert!(!error, "{out}");
    let (frames_tx, mut frames) = tokio::sync::mpsc::channel(4);
    web.hearth.browser_control_start(ProfileId::for_thread("t-dies").as_str(), frames_tx).await.unwrap();
    next_frame(&mut frames).await;
    // Chromium is killed under the owner: the frames end, and with them the owner's control.
    kill_browsers_on(&web._dir.path().join("browser"));
    let ended = tokio::time::timeout(Duration::from_secs(30), async { while frames.recv().await.is_some() {} }).await;
    assert!(ended.is_ok(), "the frames did not end with the browser");
    // The agent is not locked out: its next look starts a new browser and reaches the page.
    let (error, out) = call(&ctx, "browse_web", json!({ "url": web.url("/article.html") }), "after").await;
    assert!(!error, "{out}");
    assert_eq!(web.received("/article.html").len(), 1);
}

/// The browser ends with the Hearth thread that started it, even when nothing is dropped (as
/// when Hearth is killed): the kernel ends it (`setpriv --pdeathsig`).
#[test]
fn a_browser_ends_with_the_thread_that_started_it_even_when_nothing_is_dropped() {
    // The page server runs on this runtime's own worker while the main thread waits.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let web = runtime.block_on(Web::new());
    let (url, dir) = (web.url("/article.html"), web._dir.path().join("browser"));
    let hearth = web.hearth.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let ctx = hearth.toolbox().for_chat("t-thread", "r1", ProposalOrigin::OwnerChat, CancellationToken::new()).for_workflow();
            let (error, out) = call(&ctx, "browse_web", json!({ "url": url }), "1").await;
            assert!(!error, "{out}");
        });
        // Neither the Hearth nor the runtime is dropped: only the thread's end can end Chromium.
        std::mem::forget(hearth);
        std::mem::forget(runtime);
    })
    .join()
    .unwrap();
    let marker = format!("--user-data-dir={}/", dir.display());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| {
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                args.iter().any(|a| a.starts_with(marker.as_bytes())) && !args.iter().any(|a| a.starts_with(b"--type="))
            })
        });
        if !left {
            break;
        }
        assert!(Instant::now() < deadline, "Chromium outlived the thread that started it");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(runtime);
}

/// browse_web on `path`, which must be a download: what became of it.
async fn download_of(web: &Web, ctx: &hearth_core::tools::ToolContext, path: &str, id: &str) -> DownloadView {
    let (error, seen) = call(ctx, "browse_web", json!({ "url": web.url(path) }), id).await;
    assert!(!error, "{seen}");
    let seen: PageView = serde_json::from_value(seen).unwrap();
    seen.download.unwrap_or_else(|| panic!("{path} was not a download"))
}

/// The files the download folder of `profile` holds now.
fn downloaded_files(web: &Web, profile: &str) -> Vec<String> {
    let dir = web._dir.path().join("browser-downloads").join(profile);
    std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default()
}

#[tokio::test]
async fn a_downloaded_pdf_lands_in_files_once_and_anything_else_is_refused() {
    let web = Web::new().await;
    let ctx = web.chat("t-downloads", "run-1");
    let profile = "thread-t-downloads";

    // A PDF: kept, then saved through the journal. Saved again from another call, and the
    // first call asked again, it is still one file.
    let report = download_of(&web, &ctx, "/report.pdf", "look-1").await;
    assert_eq!((report.status, report.bytes, report.name.as_str()), (DownloadStatus::Ready, REPORT.len() as u64, "report.pdf"));
    let (error, first) = call(&ctx, "save_download", json!({ "downloadId": report.id }), "save-1").await;
    assert!(!error, "{first}");
    let (error, again) = call(&ctx, "save_download", json!({ "downloadId": report.id }), "save-2").await;
    assert!(!error, "{again}");
    let (error, repeated) = call(&ctx, "save_download", json!({ "downloadId": report.id }), "save-1").await;
    assert!(!error, "{repeated}");
    assert_eq!(first["id"], again["id"]);
    assert_eq!(first, repeated, "the same call returns its receipt");
    let files = web.hearth.files().list().await.unwrap();
    assert_eq!(files.len(), 1, "one file in Files: {files:?}");
    let (_, bytes) = web.hearth.files().read(files[0].id.as_str()).await.unwrap();
    assert_eq!(bytes, REPORT, "Files holds the bytes the site sent");
    assert_eq!(web.received("/report.pdf").len(), 1, "the site was asked once");
    let saves = web.hearth.store().count_operations("thread:t-downloads", OpStatus::Succeeded).await.unwrap();
    assert_eq!(saves, 2, "two saves, one journal row each");

    // A PDF the site shows inline (Chromium would open its viewer, which has no text): a
    // download all the same.
    let inline = download_of(&web, &ctx, "/inline.pdf", "look-inline").await;
    assert_eq!(inline.status, DownloadStatus::Ready);

    // Not PDFs, by their bytes: refused and deleted, whatever the name or the type claimed;
    // past 10 MiB: refused. None of them can be saved.
    let program = download_of(&web, &ctx, "/tool.exe", "look-2").await;
    assert_eq!(program.status, DownloadStatus::Refused(DownloadRefusal::NotPdf));
    let disguised = download_of(&web, &ctx, "/disguised.pdf", "look-3").await;
    assert_eq!(disguised.status, DownloadStatus::Refused(DownloadRefusal::NotPdf));
    let large = download_of(&web, &ctx, "/large.pdf", "look-4").await;
    assert_eq!(large.status, DownloadStatus::Refused(DownloadRefusal::TooLarge));
    for refused in [&program, &disguised, &large] {
        let (error, said) = call(&ctx, "save_download", json!({ "downloadId": refused.id }), &format!("save-{}", refused.id)).await;
        assert!(error, "{said}");
    }
    assert_eq!(web.hearth.files().list().await.unwrap().len(), 1);
    let mut expected = vec![report.id.clone(), inline.id.clone()];
    expected.sort();
    // A refused download's partial file can be written by Chromium after the refusal deleted
    // it; the cancel's own event, which follows, deletes it again. So the folder is watched
    // until it holds only the kept PDFs (seen once: a `.crdownload` still there at the first
    // look).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut kept = downloaded_files(&web, profile);
        kept.sort();
        if kept == expected {
            break;
        }
        assert!(Instant::now() < deadline, "only the kept PDFs are on disk: {kept:?}, expected {expected:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A click on a link that downloads: page_act reports it once it began, and it is saved.
    let (error, _) = call(&ctx, "browse_web", json!({ "url": web.url("/downloads.html") }), "look-5").await;
    assert!(!error);
    let listed = elements(&ctx, "list-2").await;
    let (error, acted) = call(
        &ctx,
        "page_act",
        json!({ "ref": reference(&listed, "Get the report"), "action": "click", "operationId": "get-report" }),
        "act-1",
    )
    .await;
    assert!(!error, "{acted}");
    let _: ActReceipt = serde_json::from_value(acted).unwrap();
    let clicked = until_download(&web, profile, "clicked.pdf").await;
    // The model finds it with the page's elements (it began after the click returned).
    let listed = elements(&ctx, "list-3").await;
    // The listing holds what is not saved yet: the inline PDF and the clicked one.
    let unsaved: Vec<(&str, DownloadStatus)> = listed.downloads.iter().map(|d| (d.id.as_str(), d.status)).collect();
    assert_eq!(unsaved, [(inline.id.as_str(), DownloadStatus::Ready), (clicked.id.as_str(), DownloadStatus::Ready)]);
    let (error, saved) = call(&ctx, "save_download", json!({ "downloadId": clicked.id }), "save-clicked").await;
    assert!(!error, "{saved}");
    assert_eq!(web.hearth.files().list().await.unwrap().len(), 2);
    assert_eq!(web.received("/clicked.pdf").len(), 1);

    // Twenty downloads a session: the next is refused before it arrives.
    for n in 7..=20 {
        let refused = download_of(&web, &ctx, "/tool.exe", &format!("look-{n}")).await;
        assert_eq!(refused.status, DownloadStatus::Refused(DownloadRefusal::NotPdf));
    }
    let asked = web.received("/report.pdf").len();
    let too_many = download_of(&web, &ctx, "/report.pdf", "look-21").await;
    assert_eq!(too_many.status, DownloadStatus::Refused(DownloadRefusal::TooMany));
    // Refused at its start: Chromium had asked the site once.
    assert_eq!(web.received("/report.pdf").len(), asked + 1);
    assert_eq!(web.hearth.files().list().await.unwrap().len(), 2, "nothing more reached Files");
    web.hearth.shutdown().await;
    assert!(downloaded_files(&web, profile).is_empty(), "a closed browser leaves no downloads behind");
}

/// Waits (woken by the ledger, at most 30 s) until the browser of `profile` has finished a
/// download named `name`.
async fn until_download(web: &Web, profile: &str, name: &str) -> DownloadView {
    let browser = web.hearth.browsers().existing(&ProfileId::parse(profile).unwrap()).await.expect("the thread's browser");
    let found = browser.until_download(|d| d.name == name && d.status != DownloadStatus::Downloading);
    tokio::time::timeout(Duration::from_secs(30), found).await.unwrap_or_else(|_| panic!("no download {name}: {:?}", browser.downloads()))
}

#[tokio::test]
async fn stop_during_a_download_cancels_it_and_leaves_nothing_on_disk() {
    let web = Web::new().await;
    let stop = CancellationToken::new();
    let ctx = web.hearth.toolbox().for_chat("t-stall", "run-1", ProposalOrigin::OwnerChat, stop.clone()).for_workflow();
    let profile = "thread-t-stall";
    let url = web.url("/stall.pdf");
    let look =
        tokio::spawn(async move { dispatch(&ctx, "browse_web", &json!({ "url": url }).to_string(), StepId::Call("look".into())).await });
    // Stop once the download is arriving (its first bytes are on disk). The browser exists once
    // the look holds it; the server has the request by the time the download arrives.
    web.until_received("/stall.pdf").await;
    let browser = web.hearth.browsers().existing(&ProfileId::parse(profile).unwrap()).await.expect("the thread's browser");
    let arriving = browser.until_download(|d| d.status == DownloadStatus::Downloading && d.bytes > 0);
    tokio::time::timeout(Duration::from_secs(30), arriving).await.expect("the download never started arriving");
    stop.cancel();
    let out = look.await.unwrap();
    assert!(out.is_error && out.content.contains("stopped"), "{}", out.content);
    let browser = web.hearth.browsers().existing(&ProfileId::parse(profile).unwrap()).await.unwrap();
    let downloads = browser.downloads();
    assert_eq!(downloads.len(), 1);
    assert_eq!(downloads[0].status, DownloadStatus::Cancelled, "Stop cancelled the download");
    assert!(downloaded_files(&web, profile).is_empty(), "nothing of it is left: {:?}", downloaded_files(&web, profile));
    let (error, said) = call(&web.chat("t-stall", "run-2"), "save_download", json!({ "downloadId": downloads[0].id }), "save").await;
    assert!(error, "{said}");
    assert!(web.hearth.files().list().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_owner_points_a_chat_at_another_profile_and_it_browses_with_its_logins() {
    use hearth_protocol::browser::{ProfileTarget, UseProfileParams};
    let web = Web::new().await;
    let store = web.hearth.store();
    store.ensure_thread("t-logged-in", "log in").await.unwrap();
    store.ensure_thread("t-other", "read").await.unwrap();
    let logged_in = web.chat("t-logged-in", "run-1");
    let (error, _) = call(&logged_in, "browse_web", json!({ "url": web.url("/cookie.html") }), "1").await;
    assert!(!error);
    let pick = |profile: Option<&str>| UseProfileParams {
        target: ProfileTarget::Thread(ThreadId::parse("t-other").unwrap()),
        profile: profile.map(str::to_owned),
    };

    // A profile that is not saved, or a chat that does not exist, is refused and changes nothing.
    assert!(web.hearth.browser_use_profile(&pick(Some("thread-nobody"))).await.is_err());
    let nowhere = UseProfileParams {
        target: ProfileTarget::Thread(ThreadId::parse("t-missing").unwrap()),
        profile: Some("thread-t-logged-in".into()),
    };
    assert!(web.hearth.browser_use_profile(&nowhere).await.is_err());

    // Pointed at the logged-in chat's profile, the other chat sends its cookie; given back its
    // own, it does not.
    web.hearth.browser_use_profile(&pick(Some("thread-t-logged-in"))).await.unwrap();
    let other = web.chat("t-other", "run-1");
    let (error, seen) = call(&other, "browse_web", json!({ "url": web.url("/article.html") }), "1").await;
    assert!(!error, "{seen}");
    assert_eq!(seen["profile"], "thread-t-logged-in");
    web.hearth.browser_use_profile(&pick(None)).await.unwrap();
    let (error, seen) = call(&other, "browse_web", json!({ "url": web.url("/article.html") }), "2").await;
    assert!(!error, "{seen}");
    assert_eq!(seen["profile"], "thread-t-other");
    let sent: Vec<bool> = web
        .server
        .requests_with_header("cookie")
        .into_iter()
        .filter(|(r, _)| r.starts_with("/article.html"))
        .map(|(_, sent)| sent)
        .collect();
    assert_eq!(sent, [true, false], "the cookie went only with the picked profile");

    // A chat an outside client started through the endpoint cannot be pointed at the owner's
    // logins (its client would browse with them); nothing is picked.
    store.open_run("t-endpoint", "run-e", "hi", "test", hearth_core::store::threads::RunOrigin::AguiEndpoint).await.unwrap();
    let endpoint = UseProfileParams {
        target: ProfileTarget::Thread(ThreadId::parse("t-endpoint").unwrap()),
        profile: Some("thread-t-logged-in".into()),
    };
    assert!(web.hearth.browser_use_profile(&endpoint).await.is_err());
    assert_eq!(store.chosen_browser_profile("thread:t-endpoint").await.unwrap(), None);

    // Deleting the picked profile forgets the pick.
    web.hearth.browser_use_profile(&pick(Some("thread-t-logged-in"))).await.unwrap();
    web.hearth.browser_delete_profile("thread-t-logged-in").await.unwrap();
    assert_eq!(store.chosen_browser_profile("thread:t-other").await.unwrap(), None);
}

/// The pictures kept for cards.
fn kept_pictures(web: &Web) -> usize {
    std::fs::read_dir(web._dir.path().join("browser-shots")).map_or(0, |d| d.filter_map(Result::ok).count())
}

/// A PNG's width and height, from its header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let word = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (word(16), word(20))
}

#[tokio::test]
async fn look_page_shows_the_page_as_it_is_now_and_only_to_a_model_that_reads_images() {
    use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
    use hearth_core::tools::Vision;
    use hearth_testkit::model_server::{ModelServer, Reply, Script};
    let web = Web::new().await;

    // Nothing open yet: no browser is started to picture a blank tab.
    let seeing = web.chat("t-see", "r1").with_vision(Vision::Images);
    let (error, none) = call(&seeing, "look_page", json!({}), "c0").await;
    assert!(error && none["error"].as_str().unwrap().contains("no page is open"), "{none}");
    assert_eq!(browsers_on(&web._dir.path().join("browser")), 0);

    // The picture is taken when asked, not the one browse_web took: after a press turns the
    // page green, the look differs from the first picture.
    let (_, seen) = call(&seeing, "browse_web", json!({ "url": web.url("/press.html") }), "c1").await;
    let first = web.hearth.browser_screenshot(seen["screenshotId"].as_str().unwrap()).await.unwrap();
    let listed = elements(&seeing, "c2").await;
    let press = reference(&listed, "Press");
    let (error, acted) = call(&seeing, "page_act", json!({ "ref": press, "action": "click", "operationId": "press-1" }), "c3").await;
    assert!(!error, "{acted}");
    web.until_received("/pressed").await;
    let out = dispatch(&seeing, "look_page", "{}", StepId::Call("c4".into())).await;
    assert!(!out.is_error, "{}", out.content);
    let [image] = out.images.as_slice() else { panic!("one picture: {:?}", out.images) };
    assert_eq!(image.media_type, "image/png");
    let png = base64::engine::general_purpose::STANDARD.decode(&image.base64).unwrap();
    assert_eq!(png_size(&png), (1280, 800));
    assert_ne!(image.base64, first.png_base64, "the page as it is now, not the earlier picture");
    let view: PageView = serde_json::from_str(&out.content).unwrap();
    assert_eq!((view.title.as_str(), view.final_url.as_str()), ("Press", web.url("/press.html").as_str()));
    // The card's copy is the very picture the model got.
    let kept = web.hearth.browser_screenshot(view.screenshot_id.as_deref().unwrap()).await.unwrap();
    assert_eq!(kept.png_base64, image.base64);

    // A context for a model that reads no images takes no picture. The page changes first (a
    // name typed into its form), so a picture wrongly taken now would be a new file.
    let (_, _) = call(&seeing, "browse_web", json!({ "url": web.url("/form.html") }), "c5").await;
    let name = reference(&elements(&seeing, "c6").await, "Name");
    let (error, typed) =
        call(&seeing, "page_act", json!({ "ref": name, "action": "type", "value": "Ada", "operationId": "type-1" }), "c7").await;
    assert!(!error, "{typed}");
    let before = kept_pictures(&web);
    let blind = web.chat("t-see", "r2");
    let out = dispatch(&blind, "look_page", "{}", StepId::Call("c8".into())).await;
    assert!(out.is_error && out.content.contains("reads images") && out.images.is_empty(), "{}", out.content);
    assert_eq!(kept_pictures(&web), before);
    // The seeing context's look now is that new file (the oracle above can see one).
    let out = dispatch(&seeing, "look_page", "{}", StepId::Call("c9".into())).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(kept_pictures(&web), before + 1);

    // Through a model set to read images: the picture follows the tool's answer on the wire,
    // once, and the look before it carried none.
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().tool_call("m1", "browse_web", &[&json!({ "url": web.url("/article.html") }).to_string()]))
            .turn(Reply::new().tool_call("m2", "look_page", &["{}"]))
            .turn(Reply::new().tool_call("m3", "look_page", &["{}"]))
            .turn(Reply::new().text(&["A news page."]))
            .turn(Reply::new().text(&["Still the news."])),
    )
    .await
    .unwrap();
    let config = ProviderConfig::new("Scripted", server.base_url(), None).with_retry(RetryPolicy {
        max_retries: 0,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    });
    let hearth =
        web.hearth.clone().with_model_seeing(std::sync::Arc::new(OpenAiChat::new(&config).unwrap()), "scripted-model", Vision::Images);
    let (thread, _, events) = super::support::start(&hearth, None, "how does the news page look?").await;
    let events = super::support::collect(events).await;
    assert!(matches!(events.last(), Some(hearth_protocol::agui::Event::RunFinished(_))), "{events:?}");
    // The next reply reads the looks back from the thread: without their pictures, and saying so.
    super::support::settled(&hearth).await;
    let (_, _, more) = super::support::start(&hearth, Some(&thread), "and now?").await;
    super::support::collect(more).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(!requests[4].raw_body.contains("data:image/png"), "a later reply carries no earlier picture");
    assert_eq!(requests[4].raw_body.matches("removed to save space").count(), 2, "both looks say their picture is gone");
    assert!(!requests[1].raw_body.contains("image_url"), "browse_web's answer carries no picture");
    for sent in &requests[2..4] {
        let messages = sent.body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        assert!(last["content"][0]["text"].as_str().unwrap().contains("not a message from the owner"), "{last}");
        let url = last["content"][1]["image_url"]["url"].as_str().unwrap();
        let png = base64::engine::general_purpose::STANDARD.decode(url.strip_prefix("data:image/png;base64,").unwrap()).unwrap();
        assert_eq!(png_size(&png), (1280, 800));
        assert_eq!(messages[messages.len() - 2]["role"], "tool");
        assert_eq!(sent.raw_body.matches("data:image/png;base64,").count(), 1, "one picture per request");
    }
    // The second look's request dropped the first picture and says so where it was.
    assert!(requests[3].raw_body.contains("removed to save space"));
    let url =
        requests[3].body["messages"].as_array().unwrap().last().unwrap()["content"][1]["image_url"]["url"].as_str().unwrap().to_owned();
    // The thread keeps the tool's text, never the picture.
    let picture = url.strip_prefix("data:image/png;base64,").unwrap();
    let stored = serde_json::to_string(&events).unwrap();
    assert!(!stored.contains(picture), "the picture is not in the run's events");
    // Nor in the database (its WAL included), where the thread's messages are kept.
    super::support::settled(&hearth).await;
    let needle = &picture.as_bytes()[picture.len() / 2..picture.len() / 2 + 64];
    for file in ["hearth.db", "hearth.db-wal"] {
        let raw = std::fs::read(web._dir.path().join(file)).unwrap_or_default();
        assert!(!raw.windows(needle.len()).any(|w| w == needle), "the picture is in {file}");
    }
}

/// What one task run of the checkout test saw: each call's output, by step.
type Seen = Vec<(String, Value, bool)>;

/// A task run's calls through the one tool path, each keyed by the task's own step, and what
/// each answered.
struct TaskCalls {
    tools: hearth_core::tools::ToolContext,
    out: Seen,
    step: u64,
}

impl TaskCalls {
    async fn call(&mut self, tool: &str, args: Value) -> hearth_core::tools::ToolOutput {
        self.step += 1;
        let o = dispatch(&self.tools, tool, &args.to_string(), StepId::Step(self.step)).await;
        self.out.push((tool.to_owned(), serde_json::from_str(&o.content).unwrap_or(Value::Null), o.is_error));
        o
    }

    /// Opens `url` and lists its elements.
    async fn open(&mut self, url: &str) -> PageElements {
        self.call("browse_web", json!({ "url": url })).await;
        serde_json::from_str(&self.call("page_elements", json!({})).await.content).unwrap()
    }

    /// page_act on `reference` under the operation id `op`.
    async fn act(&mut self, reference: &str, action: &str, value: Option<&str>, op: &str) {
        self.call("page_act", json!({ "ref": reference, "action": action, "value": value, "operationId": op })).await;
    }
}

/// Registers the Monitor task of a form test: each task's first run makes `steps`' calls, the
/// last of which prepares a submission, and ends waiting for its approval, sending what every
/// call answered to `seen`; a later run of the same task (after the decision) only finishes.
fn register_task(
    web: &Web,
    seen: tokio::sync::mpsc::UnboundedSender<(String, Seen)>,
    steps: impl Fn(TaskCalls) -> futures::future::BoxFuture<'static, (TaskCalls, hearth_core::tools::ToolOutput)> + Send + Sync + 'static,
) {
    use hearth_core::tasks::{TaskContext, TaskOutcome};
    let hearth = web.hearth.clone();
    let steps = std::sync::Arc::new(steps);
    let runs = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::<String>::new()));
    web.hearth.tasks().register(hearth_protocol::tasks::TaskKind::Monitor, move |ctx: TaskContext| {
        let (hearth, seen, runs, steps) = (hearth.clone(), seen.clone(), runs.clone(), steps.clone());
        async move {
            let task_id = ctx.task().id.clone();
            if !runs.lock().unwrap().insert(task_id.clone()) {
                return TaskOutcome::Succeeded("decided".into());
            }
            // The task's own mechanics, apart from the trust policy (`suite::trust`).
            let calls = TaskCalls { tools: hearth.toolbox().for_task(ctx).for_workflow(), out: Vec::new(), step: 0 };
            let (calls, prepared) = steps(calls).await;
            let _ = seen.send((task_id, calls.out));
            match prepared.outcome {
                Some(hearth_core::tools::RunOutcome::WaitingApproval(id)) => TaskOutcome::WaitingApproval(id),
                other => TaskOutcome::Failed(format!("{other:?}: {}", prepared.content)),
            }
        }
    });
}

/// The checkout task: it opens the page, tries to send the order itself (refused), fills it,
/// tries Enter in two forms (refused), presses a button that sends nothing and one whose script
/// posts, and prepares the order for review.
fn register_checkout(web: &Web, seen: tokio::sync::mpsc::UnboundedSender<(String, Seen)>) {
    let url = web.url("/checkout.html");
    register_task(web, seen, move |mut calls| {
        let url = url.clone();
        Box::pin(async move {
            let listed = calls.open(&url).await;
            let [name, pin, order, q, more, quick] =
                ["Name", "PIN", "Place order", "Search", "More", "Quick order"].map(|n| reference(&listed, n));
            calls.act(&order, "click", None, "order-early").await;
            calls.act(&name, "type", Some("Ada"), "name").await;
            calls.act(&name, "press", Some("Enter"), "enter-order").await;
            calls.act(&q, "press", Some("Enter"), "enter-search").await;
            calls.act(&more, "click", None, "more").await;
            calls.act(&quick, "click", None, "quick").await;
            // Last, so the PIN field keeps the keyboard (the owner types into it below).
            calls.act(&pin, "type", Some("4321"), "pin").await;
            let prepared = calls.call("prepare_form_submission", json!({ "ref": order, "gesture": "click" })).await;
            (calls, prepared)
        })
    });
}

/// Starts one form test's task and waits for its run to end.
async fn run_task(web: &Web, key: &str, seen: &mut tokio::sync::mpsc::UnboundedReceiver<(String, Seen)>) -> (String, Seen) {
    let engine = web.hearth.tasks().clone();
    let input = json!({});
    let task = engine.create(super::support::new_task(key, &input)).await.unwrap();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    super::support::engine_idle(&engine, &mut changes).await;
    let (id, out) = seen.recv().await.unwrap();
    assert_eq!(id, task.id);
    (id, out)
}

/// The proposal a task's run prepared (the last call's result).
fn proposal_of(out: &Seen) -> String {
    let (tool, prepared, error) = out.last().unwrap();
    assert_eq!(tool, "prepare_form_submission");
    assert!(!error, "{prepared}");
    prepared["proposalId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_tasks_form_is_sent_only_once_the_owner_approves_exactly_what_was_shown() {
    use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalDraft, ProposalStatus, SubmitGesture};
    use hearth_protocol::tasks::TaskStatus;
    let web = Web::new().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    register_checkout(&web, tx);

    // The task's own attempts to send: refused before any input, each saying what to do.
    let (task_id, out) = run_task(&web, "checkout-1", &mut rx).await;
    let refusal = |i: usize| out[i].1["error"].as_str().unwrap_or_default().to_owned();
    assert!(out[2].2 && refusal(2).contains("prepare_form_submission") && refusal(2).contains("/order (POST)"), "{:?}", out[2]);
    assert!(!out[3].2 && !out[8].2, "typing is not sending: {:?} {:?}", out[3], out[8]);
    assert!(out[4].2 && refusal(4).contains("/order (POST)"), "Enter in the name field sends the order: {:?}", out[4]);
    assert!(out[5].2 && refusal(5).contains("/search (GET)"), "Enter in the search field sends a GET: {:?}", out[5]);
    assert!(!out[6].2, "a button that sends no form is pressed: {:?}", out[6]);
    // The plain button's script posts the name: pressed, but its POST is held back inside
    // Chromium before it leaves (waited for on the guard's own record, not on the clock).
    assert!(!out[7].2, "{:?}", out[7]);
    let profile = ProfileId::for_task(&task_id);
    let guard_of = async |profile: &ProfileId| web.hearth.browsers().existing(profile).await.unwrap();
    let browser = guard_of(&profile).await;
    let held = tokio::time::timeout(Duration::from_secs(30), browser.send_guard().until_held(0))
        .await
        .expect("the script's POST was never held back");
    assert_eq!((held[0].method.as_str(), held[0].url.as_str()), ("POST", web.url("/sneak").as_str()));
    assert!(web.server.submissions().is_empty(), "nothing was sent: {:?}", web.server.submissions());
    assert!(web.received("/search").is_empty() && web.received("/order").is_empty() && web.received("/sneak").is_empty());
    let scope = hearth_core::store::tasks::task_scope(&task_id);
    assert_eq!(web.hearth.store().count_operations(&scope, OpStatus::Failed).await.unwrap(), 3, "three refused sends");

    // The review shows the page, the button, where it goes and every field; the PIN hidden.
    let proposal_id = proposal_of(&out);
    let view = web.hearth.approvals().get(&proposal_id).await.unwrap();
    assert_eq!(view.status, ProposalStatus::AwaitingReview);
    let ProposalDraft::WebSubmit(form) = &view.draft else { panic!("{:?}", view.draft) };
    assert_eq!((form.method.as_str(), form.destination.as_str()), ("POST", web.url("/order").as_str()));
    assert_eq!((form.page_url.as_str(), form.page_title.as_str()), (web.url("/checkout.html").as_str(), "Checkout"));
    assert_eq!((form.element.as_str(), form.gesture), ("button \"Place order\"", SubmitGesture::Click));
    let fields: Vec<(&str, &str, bool)> = form.fields.iter().map(|f| (f.name.as_str(), f.value.as_str(), f.hidden)).collect();
    assert_eq!(fields, [("name", "Ada", false), ("pin", "", true), ("note", "", false)]);
    assert_eq!(form.profile, profile.as_str());
    assert_eq!(web.hearth.store().get_task(&task_id).await.unwrap().unwrap().status, TaskStatus::WaitingApproval);

    // Approved: the site receives exactly the reviewed form, once; approving again sends nothing.
    let decide = |hash: &str| ApprovalDecideParams { proposal_id: view.id.clone(), hash: hash.to_owned(), decision: Decision::Approve };
    let done = web.hearth.approval_decide(&decide(&view.hash)).await.unwrap();
    assert_eq!(done.status, ProposalStatus::Succeeded, "{:?}", done.error);
    assert!(done.receipt.as_deref().unwrap().contains("/order"), "{:?}", done.receipt);
    web.until_received("/order").await;
    let again = web.hearth.approval_decide(&decide(&view.hash)).await.unwrap();
    assert_eq!(again, done, "the same receipt");
    assert_eq!(web.server.submissions(), [("POST".to_owned(), "/order".to_owned(), "name=Ada&pin=4321&note=".to_owned())]);
    assert_eq!(browser.send_guard().held().len(), 1, "the approved POST went through the guard, and only it");

    // A second task prepares the same order; the owner then changes the PIN under Take control.
    // The form no longer hashes as reviewed: approving sends nothing and says why.
    let (second, out) = run_task(&web, "checkout-2", &mut rx).await;
    let proposal_id = proposal_of(&out);
    let view = web.hearth.approvals().get(&proposal_id).await.unwrap();
    let profile = ProfileId::for_task(&second);
    let (frames, _keep) = tokio::sync::mpsc::channel(4);
    let ticket = web.hearth.browser_control_start(profile.as_str(), frames).await.unwrap();
    // The PIN field has the keyboard (the task typed into it last).
    web.hearth.browser_control_input(profile.as_str(), &hearth_protocol::browser::ControlInput::Text { text: "9".into() }).await.unwrap();
    web.hearth.browser_control_stop(profile.as_str(), Some(ticket)).await.unwrap();
    let refused = web
        .hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: view.id.clone(), hash: view.hash.clone(), decision: Decision::Approve })
        .await
        .unwrap();
    assert_eq!(refused.status, ProposalStatus::Failed, "{:?}", refused.receipt);
    assert!(refused.error.as_deref().unwrap().contains("changed since it was reviewed"), "{:?}", refused.error);
    assert_eq!(web.server.submissions().len(), 1, "only the first, reviewed order was sent: {:?}", web.server.submissions());
    assert!(web.received("/search").is_empty(), "the owner's typing sent nothing either");

    // In the owner's own chat the same plain button's POST goes out: the guard is a task's.
    let ctx = web.chat("t-checkout", "r1");
    let (error, out) = call(&ctx, "browse_web", json!({ "url": web.url("/checkout.html") }), "open").await;
    assert!(!error, "{out}");
    let quick = reference(&elements(&ctx, "list").await, "Quick order");
    let (error, out) = call(&ctx, "page_act", json!({ "ref": quick, "action": "click", "operationId": "quick" }), "c1").await;
    assert!(!error, "{out}");
    web.until_received("/sneak").await;
    assert!(guard_of(&ProfileId::for_thread("t-checkout")).await.send_guard().held().is_empty());
}

#[tokio::test]
async fn enter_sends_through_the_default_button_and_every_secret_is_hidden() {
    use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalDraft, ProposalStatus, SubmitGesture};
    let web = Web::new().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Seen)>();
    let url = web.url("/signin.html");
    register_task(&web, tx, move |mut calls| {
        let url = url.clone();
        Box::pin(async move {
            let listed = calls.open(&url).await;
            let [user, pw, remember] = ["User", "Password", "Remember me"].map(|n| reference(&listed, n));
            calls.act(&user, "type", Some("ada\n"), "user-enter").await;
            calls.act(&user, "type", Some("ada"), "user").await;
            calls.act(&remember, "press", Some("Enter"), "remember-enter").await;
            calls.act(&pw, "type", Some("s3cret-Pw"), "pw").await;
            let prepared = calls.call("prepare_form_submission", json!({ "ref": pw, "gesture": "press_enter" })).await;
            (calls, prepared)
        })
    });
    let (task_id, out) = run_task(&web, "signin", &mut rx).await;
    let refusal = |i: usize| out[i].1["error"].as_str().unwrap_or_default().to_owned();
    assert!(out[2].2 && refusal(2).contains("/signin-alt (POST)"), "a line break typed is Enter: {:?}", out[2]);
    assert!(!out[3].2, "{:?}", out[3]);
    assert!(out[4].2 && refusal(4).contains("/signin-alt (POST)"), "Enter on a checkbox sends the form: {:?}", out[4]);
    assert!(!out[5].2, "{:?}", out[5]);
    assert!(web.server.submissions().is_empty(), "{:?}", web.server.submissions());

    let proposal_id = proposal_of(&out);
    let view = web.hearth.approvals().get(&proposal_id).await.unwrap();
    let ProposalDraft::WebSubmit(form) = &view.draft else { panic!("{:?}", view.draft) };
    assert_eq!(form.gesture, SubmitGesture::PressEnter);
    assert_eq!(form.destination, web.url("/signin-alt"), "Enter goes where the default button sends");
    let fields: Vec<(&str, &str, bool)> = form.fields.iter().map(|f| (f.name.as_str(), f.value.as_str(), f.hidden)).collect();
    assert_eq!(fields, [("user", "ada", false), ("pw", "", true), ("action", "login", false), ("go", "1", false), ("pw", "", true)]);
    // The secret is in no stored proposal (its version is keyed: see the unit tests).
    let stored = web.hearth.store().get_proposal(&proposal_id).await.unwrap().unwrap();
    assert!(!serde_json::to_string(&stored.draft).unwrap().contains("s3cret"));

    let done = web
        .hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: view.id.clone(), hash: view.hash.clone(), decision: Decision::Approve })
        .await
        .unwrap();
    assert_eq!(done.status, ProposalStatus::Succeeded, "{:?}", done.error);
    // Released by the guard before the server has it: wait for the server's own record.
    web.until_received("/signin-alt").await;
    assert_eq!(
        web.server.submissions(),
        [("POST".to_owned(), "/signin-alt".to_owned(), "user=ada&pw=decoy&action=login&go=1&pw=s3cret-Pw".to_owned())]
    );
    let _ = task_id;
}

#[tokio::test]
async fn a_form_the_page_changes_after_review_is_held_back_and_left_uncertain() {
    use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalDraft, ProposalStatus};
    let web = Web::new().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Seen)>();
    let url = web.url("/pay.html");
    register_task(&web, tx, move |mut calls| {
        let url = url.clone();
        Box::pin(async move {
            let listed = calls.open(&url).await;
            let [inner, holder] = ["Inner pay", "Card holder"].map(|n| reference(&listed, n));
            calls.act(&inner, "click", None, "inner").await;
            calls.act(&holder, "type", Some("Ada"), "holder").await;
            let prepared = calls.call("prepare_form_submission", json!({ "ref": inner, "gesture": "click" })).await;
            (calls, prepared)
        })
    });
    let (task_id, out) = run_task(&web, "pay", &mut rx).await;
    // The span inside the button presses the button: a submission, refused before any input.
    assert!(out[2].2 && out[2].1["error"].as_str().unwrap_or_default().contains("/pay (POST)"), "{:?}", out[2]);
    let proposal_id = proposal_of(&out);
    let view = web.hearth.approvals().get(&proposal_id).await.unwrap();
    let ProposalDraft::WebSubmit(form) = &view.draft else { panic!("{:?}", view.draft) };
    let fields: Vec<(&str, &str)> = form.fields.iter().map(|f| (f.name.as_str(), f.value.as_str())).collect();
    assert_eq!(fields, [("amount", "10"), ("holder", "Ada")], "the owner reviews 10");

    // Approved: the page's handler makes it 9999 on the way out. The guard compares the body
    // with the reviewed fields, holds it back, and the approval is uncertain, not "sent".
    let decided = web
        .hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: view.id.clone(), hash: view.hash.clone(), decision: Decision::Approve })
        .await
        .unwrap();
    assert_eq!(decided.status, ProposalStatus::OutcomeUnknown, "{:?}", decided.receipt);
    assert!(decided.error.as_deref().unwrap_or_default().contains("changed the form"), "{:?}", decided.error);
    let browser = web.hearth.browsers().existing(&ProfileId::for_task(&task_id)).await.unwrap();
    let held = browser.send_guard().held();
    assert_eq!(held.len(), 1, "the changed POST was held back: {held:?}");
    assert_eq!((held[0].method.as_str(), held[0].url.as_str()), ("POST", web.url("/pay").as_str()));
    assert!(web.server.submissions().is_empty(), "nothing reached the site: {:?}", web.server.submissions());
    // The uncertain send closed its tab; the guard is the browser's and answers the fresh tab's
    // navigations (a paused request nobody answered would hang this look).
    let seen = browser.look(&web.url("/article.html"), &CancellationToken::new(), false).await.unwrap();
    assert!(seen.title.starts_with("Family Day"), "{}", seen.title);
}

/// A reviewed form the page changed on its way out: held back, the approval uncertain, and
/// nothing reached the site (its own log).
fn assert_held_back_as_changed(web: &Web, decided: &hearth_protocol::approvals::ProposalView) {
    use hearth_protocol::approvals::ProposalStatus;
    assert_eq!(decided.status, ProposalStatus::OutcomeUnknown, "{:?}", decided.receipt);
    assert!(decided.error.as_deref().unwrap_or_default().contains("changed the form"), "{:?}", decided.error);
    assert!(web.server.submissions().is_empty(), "nothing reached the site: {:?}", web.server.submissions());
}

/// Runs a task that opens `url`, types "Ada" as the card holder and prepares the form `button`
/// sends; answers the task's id and what its calls answered.
async fn prepare_payment(web: &Web, url: String, button: &'static str) -> (String, Seen) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Seen)>();
    register_task(web, tx, move |mut calls| {
        let url = url.clone();
        Box::pin(async move {
            let listed = calls.open(&url).await;
            let [pay, holder] = [button, "Card holder"].map(|n| reference(&listed, n));
            calls.act(&holder, "type", Some("Ada"), "holder").await;
            let prepared = calls.call("prepare_form_submission", json!({ "ref": pay, "gesture": "click" })).await;
            (calls, prepared)
        })
    });
    run_task(web, "pay", &mut rx).await
}

/// The owner approves, as shown, the proposal a task's run prepared: what was shown, and the
/// decision's outcome.
async fn approve_as_shown(web: &Web, out: &Seen) -> (hearth_protocol::approvals::ProposalView, hearth_protocol::approvals::ProposalView) {
    use hearth_protocol::approvals::{ApprovalDecideParams, Decision};
    let proposal_id = proposal_of(out);
    let view = web.hearth.approvals().get(&proposal_id).await.unwrap();
    let decided = web
        .hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: view.id.clone(), hash: view.hash.clone(), decision: Decision::Approve })
        .await
        .unwrap();
    (view, decided)
}

/// Released is not arrived: a reviewed form whose destination's name answers with an address
/// the egress policy refuses leaves the guard, and the proxy refuses it. The approval is then
/// uncertain and names the refusal, not "sent"; nothing reached any server. Before, the guard's
/// release alone made it "succeeded".
#[tokio::test]
async fn a_reviewed_form_the_proxy_refuses_on_its_way_is_not_called_sent() {
    use hearth_protocol::approvals::{ProposalDraft, ProposalStatus};
    // Over http the proxy answers the request with its refusal; over https it refuses the
    // tunnel, which Chromium turns into a network error.
    for scheme in ["http", "https"] {
        let web = Web::new().await;
        // The name passes the address check (it names no local host) and answers with loopback.
        web.dns.answer("shop.test", &[std::net::Ipv4Addr::LOCALHOST]);
        let destination = format!("{scheme}://shop.test:{}/pay", web.server.address().port());
        web.server.set_page(
            "/pay-away.html",
            &format!(
                r#"<!doctype html><title>Pay</title><form action="{destination}" method="post"><input type="hidden" name="amount" value="10">
<label>Card holder <input name="holder"></label><button>Pay now</button></form>"#
            ),
        );
        let (task_id, out) = prepare_payment(&web, web.url("/pay-away.html"), "Pay now").await;
        let (view, decided) = approve_as_shown(&web, &out).await;
        let ProposalDraft::WebSubmit(form) = &view.draft else { panic!("{:?}", view.draft) };
        assert_eq!(form.destination, destination);
        assert_eq!(decided.status, ProposalStatus::OutcomeUnknown, "{scheme}: {:?}", decided.receipt);
        // The reason is the proxy's own record of its refusal (the browser may since have been
        // ended with the abandoned tab, its proxy with it).
        let error = decided.error.unwrap_or_default();
        assert!(error.contains("egress policy refused a request to shop.test") && error.contains("loopback"), "{scheme}: {error}");
        let browser = web.hearth.browsers().existing(&ProfileId::for_task(&task_id)).await.unwrap();
        assert!(browser.send_guard().held().is_empty(), "the guard released it: the policy stopped it");
        assert!(web.server.submissions().is_empty(), "nothing reached the server: {:?}", web.server.submissions());
    }
}

/// A reviewed form the site answers with a redirect (post, then a result page) is sent, once:
/// the redirect is the site's answer, and the page it leads to is an ordinary read.
#[tokio::test]
async fn a_reviewed_form_answered_by_a_redirect_is_sent_once() {
    use hearth_protocol::approvals::ProposalStatus;
    let web = Web::new().await;
    let (_, out) = prepare_payment(&web, web.url("/pay-redirect.html"), "Pay now").await;
    let (_, decided) = approve_as_shown(&web, &out).await;
    assert_eq!(decided.status, ProposalStatus::Succeeded, "{:?}", decided.error);
    web.until_received("/article.html").await;
    let sent = web.server.submissions();
    assert_eq!(sent, [("POST".to_owned(), "/redirect?to=/article.html".to_owned(), "amount=10&holder=Ada".to_owned())]);
}

/// A multipart form, and one sent by an image button, are compared on their way out: as
/// reviewed, the site receives each once (the multipart note's line break as CRLF and its empty
/// attachment as an empty file part, as the browser sends them; the image button's click
/// position after the fields, the one thing added to what was reviewed); changed by the page
/// after the review, each is held back and the approval left uncertain. Before, both were
/// compared by method and address only.
#[tokio::test]
async fn multipart_and_image_button_forms_go_as_reviewed_and_are_held_back_when_changed() {
    use hearth_protocol::approvals::{ProposalDraft, ProposalStatus};
    for (page, button) in [("/pay-multipart.html", "Pay now"), ("/pay-image.html", "Pay by card")] {
        for (query, changes) in [("", false), ("?changes", true)] {
            let web = Web::new().await;
            let (task_id, out) = prepare_payment(&web, format!("{}{query}", web.url(page)), button).await;
            let (view, decided) = approve_as_shown(&web, &out).await;
            let ProposalDraft::WebSubmit(form) = &view.draft else { panic!("{:?}", view.draft) };
            let fields: Vec<(&str, &str)> = form.fields.iter().map(|f| (f.name.as_str(), f.value.as_str())).collect();
            assert_eq!(fields[..2], [("amount", "10"), ("holder", "Ada")], "the owner reviews 10");
            if changes {
                assert_held_back_as_changed(&web, &decided);
                let browser = web.hearth.browsers().existing(&ProfileId::for_task(&task_id)).await.unwrap();
                assert_eq!(browser.send_guard().held().len(), 1, "the changed POST was held back");
                continue;
            }
            assert_eq!(decided.status, ProposalStatus::Succeeded, "{page}: {:?}", decided.error);
            web.until_received("/pay").await;
            let sent = web.server.submissions();
            assert_eq!(sent.len(), 1, "{sent:?}");
            let (method, target, body) = &sent[0];
            assert_eq!((method.as_str(), target.as_str()), ("POST", "/pay"));
            if page == "/pay-image.html" {
                let click = body.strip_prefix("amount=10&holder=Ada&").unwrap_or_else(|| panic!("the reviewed fields first: {body}"));
                let parts: Vec<&str> = click.split('&').collect();
                let [x, y] = parts[..] else { panic!("one click position: {body}") };
                assert!(x.starts_with("go.x=") && y.starts_with("go.y="), "{body}");
                continue;
            }
            assert_eq!(fields[2..], [("memo", "line one\nline two"), ("receipt", "")]);
            for part in [
                "name=\"amount\"\r\n\r\n10\r\n",
                "name=\"holder\"\r\n\r\nAda\r\n",
                "name=\"memo\"\r\n\r\nline one\r\nline two\r\n",
                "name=\"receipt\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n",
            ] {
                assert!(body.contains(part), "{part:?} in {body:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_post_a_tasks_page_sends_from_a_new_tab_is_held_back_too() {
    let web = Web::new().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Seen)>();
    let url = web.url("/popup.html");
    register_task(&web, tx, move |mut calls| {
        let url = url.clone();
        Box::pin(async move {
            let listed = calls.open(&url).await;
            let [note, open] = ["Note", "Open in a new window"].map(|n| reference(&listed, n));
            calls.act(&note, "type", Some("private"), "note").await;
            calls.act(&open, "click", None, "open").await;
            // Nothing to review here: the run ends on this refusal.
            let prepared = calls.call("prepare_form_submission", json!({ "ref": open, "gesture": "click" })).await;
            (calls, prepared)
        })
    });
    let (task_id, out) = run_task(&web, "popup", &mut rx).await;
    assert!(!out[3].2, "the plain button is pressed: {:?}", out[3]);
    let browser = web.hearth.browsers().existing(&ProfileId::for_task(&task_id)).await.unwrap();
    let held = tokio::time::timeout(Duration::from_secs(30), browser.send_guard().until_held(0))
        .await
        .expect("the new tab's POST was never held back");
    assert_eq!((held[0].method.as_str(), held[0].url.as_str()), ("POST", web.url("/popup").as_str()));
    assert!(web.server.submissions().is_empty(), "nothing reached the site: {:?}", web.server.submissions());
}
