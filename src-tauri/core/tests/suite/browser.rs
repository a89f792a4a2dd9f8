//! The agent's Chromium (Debian's, real) through the egress proxy, against pages served on
//! loopback under the test allow-list. Oracles: what the page servers received and the
//! connections they accepted, and the PNG's own header.

use std::collections::HashMap;
use std::net::SocketAddr;

use hearth_core::browser::chromium::{Chromium, ChromiumConfig, VIEWPORT};
use hearth_core::browser::egress::AllowList;
use hearth_core::browser::proxy::resolver_at;
use hearth_testkit::dns_stub::DnsStub;
use hearth_testkit::pages::PageServer;
use tokio_util::sync::CancellationToken;

const PAGES: [(&str, &str); 3] = [
    ("/article.html", include_str!("../fixtures/pages/article.html")),
    ("/form.html", include_str!("../fixtures/pages/form.html")),
    ("/prices.html", include_str!("../fixtures/pages/prices.html")),
];

/// A private server on 127.0.0.1:P, an allowed one on 127.0.0.2:P serving `pages(P)`, and a
/// browser that may reach only the second: the two share a port, so only the address differs.
async fn setup(pages: impl Fn(u16) -> HashMap<String, String>) -> (PageServer, PageServer, Chromium, DnsStub, tempfile::TempDir) {
    let (allowed, private) = loop {
        let private = PageServer::bind(SocketAddr::from(([127, 0, 0, 1], 0)), HashMap::new()).await.unwrap();
        let port = private.address().port();
        if let Ok(allowed) = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], port)), pages(port)).await {
            break (allowed, private);
        }
    };
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = ChromiumConfig::for_data_dir(dir.path());
    config.allow = AllowList::of([allowed.address()]);
    let browser = Chromium::new(config, resolver_at(dns.address()));
    (allowed, private, browser, dns, dir)
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (be(16), be(20))
}

/// The three fixed pages: their text and title come back, with a 1280×800 PNG, and each was
/// fetched from the server once, through the proxy.
#[tokio::test]
async fn browse_reads_the_three_pages_with_their_text_and_a_screenshot() {
    let pages = |_| PAGES.iter().map(|(p, html)| ((*p).to_owned(), (*html).to_owned())).collect();
    let (allowed, private, browser, _dns, _dir) = setup(pages).await;
    let base = format!("http://{}", allowed.address());
    for (path, title, phrase) in [
        ("/article.html", "Family Day, bus changes and a busy month for Northside volunteers", "Northside"),
        ("/form.html", "Community visit – sign-up", "sign-up"),
        ("/prices.html", "Weekly grocery prices", "grocery"),
    ] {
        let seen = browser.observe(&format!("{base}{path}"), &CancellationToken::new()).await.unwrap();
        assert_eq!(seen.title, title);
        assert!(seen.text.contains(phrase), "{path}: {}", seen.text.chars().take(200).collect::<String>());
        assert!(!seen.text.contains("box-sizing"), "{path}: styles counted as text");
        assert!(!seen.truncated);
        assert_eq!(seen.final_url, format!("{base}{path}"));
        assert_eq!(png_size(&seen.screenshot_png), VIEWPORT);
    }
    let requests = allowed.requests();
    for (path, _) in PAGES {
        assert_eq!(requests.iter().filter(|r| *r == path).count(), 1, "{path}: {requests:?}");
    }
    assert_eq!(private.connections(), 0);
    browser.close().await;
}

/// From an allowed page, an image, a frame, a fetch and a websocket aimed at the private
/// address (and a fetch to `localhost`) all go through the proxy and are refused: the private
/// server accepts no connection. The page asks for `/after` on the allowed server once every
/// attempt has settled, so the test knows they were made.
#[tokio::test]
async fn a_pages_own_requests_to_a_private_address_reach_nothing() {
    let page = |port: u16| {
        let target = format!("127.0.0.1:{port}");
        let html = format!(
            r#"<!doctype html><title>hostile</title><body>
            <script>
              const settle = p => p.then(() => "done", () => "refused");
              const tries = [
                settle(fetch("http://{target}/fetch")),
                settle(fetch("http://localhost:{port}/local")),
                new Promise(done => {{ const i = new Image(); i.onload = done; i.onerror = done; i.src = "http://{target}/img.png"; }}),
                new Promise(done => {{ const f = document.createElement("iframe"); f.onload = done; f.onerror = done; f.src = "http://{target}/frame"; document.body.appendChild(f); }}),
                new Promise(done => {{ const ws = new WebSocket("ws://{target}/ws"); ws.onerror = done; ws.onclose = done; }}),
              ];
              Promise.allSettled(tries).then(() => fetch("/after"));
            </script>"#
        );
        HashMap::from([("/".to_owned(), html)])
    };
    let (allowed, private, browser, _dns, _dir) = setup(page).await;
    let seen = browser.observe(&format!("http://{}/", allowed.address()), &CancellationToken::new()).await.unwrap();
    assert_eq!(seen.title, "hostile");
    let settled = async {
        while !allowed.requests().iter().any(|r| r == "/after") {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), settled).await.expect("the page's attempts settled");
    assert_eq!(private.connections_settled().await, 0, "a page's request reached the private address");
    // Each attempt was refused by the policy: fetch, image, frame and the websocket's tunnel.
    let refused = browser.refused().await;
    let to_private = refused.iter().filter(|r| r.host == "127.0.0.1").count();
    assert!(to_private >= 4, "{refused:?}");
    assert!(refused.iter().any(|r| r.host == "localhost"), "{refused:?}");
    browser.close().await;
}

/// A navigation straight to a refused address is refused before Chromium starts, naming why.
#[tokio::test]
async fn a_refused_address_is_refused_with_its_reason() {
    let (_allowed, private, browser, _dns, _dir) = setup(|_| HashMap::new()).await;
    let err = browser.observe(&format!("http://127.0.0.1:{}/", private.address().port()), &CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("loopback"), "{err}");
    let err = browser.observe("http://169.254.169.254/latest/meta-data/", &CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("link-local"), "{err}");
    let err = browser.observe(&"http://example.com/".repeat(300), &CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("4,096"), "{err}");
    assert!(!browser.is_running().await, "Chromium was started for an address refused up front");
}

/// A page whose name passes the URL check but whose DNS answer is private: the proxy refuses
/// the document, and the look is a refusal (not the 403 page read as text); nothing reached.
#[tokio::test]
async fn a_page_the_proxy_refuses_is_a_refusal_not_a_page() {
    let (allowed, private, browser, dns, _dir) = setup(|_| HashMap::new()).await;
    dns.answer("inside.test", &[std::net::Ipv4Addr::LOCALHOST]);
    let url = format!("http://inside.test:{}/", allowed.address().port());
    let err = browser.observe(&url, &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(err, hearth_core::browser::chromium::BrowserError::RefusedByProxy(ref h) if h == "inside.test"), "{err}");
    let refused = browser.refused().await;
    assert!(refused.iter().any(|r| r.host == "inside.test" && r.refusal.to_string().contains("loopback")), "{refused:?}");
    assert_eq!(private.connections_settled().await, 0, "the refused page reached the private address");
    browser.close().await;
}

/// Stop before the look: nothing is launched or loaded.
#[tokio::test]
async fn a_look_stopped_before_it_starts_launches_nothing() {
    let (allowed, _private, browser, _dns, _dir) = setup(|_| HashMap::new()).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = browser.observe(&format!("http://{}/", allowed.address()), &cancel).await.unwrap_err();
    assert!(matches!(err, hearth_core::browser::chromium::BrowserError::Stopped), "{err}");
    assert!(!browser.is_running().await);
    assert!(allowed.requests().is_empty());
}

/// The browser process's environment keeps only what a browser needs: every other variable of
/// this (test) process — cargo's, the build's — reaches Chromium empty. Oracle: Chromium's own
/// `/proc/<pid>/environ`, found by its profile folder on the command line.
#[tokio::test]
async fn the_browser_process_gets_no_variable_of_hearths_but_its_own_few() {
    let (allowed, _private, browser, _dns, dir) = setup(|_| HashMap::new()).await;
    browser.observe(&format!("http://{}/", allowed.address()), &CancellationToken::new()).await.unwrap();
    let profile = dir.path().join("browser").join("default");
    let environs: Vec<Vec<u8>> =
        browser_processes(&profile).iter().map(|pid| std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()).collect();
    assert!(!environs.is_empty(), "no process runs with the profile {}", profile.display());
    // Kept by Hearth, plus what Debian's `chromium` wrapper script's shell sets by itself.
    let kept = [
        "PATH",
        "HOME",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
        "LANG",
        "LC_ALL",
        "TZ",
        "FONTCONFIG_PATH",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
    ];
    let ours: Vec<(String, String)> = std::env::vars().filter(|(k, v)| !v.is_empty() && !kept.contains(&k.as_str())).collect();
    assert!(ours.iter().any(|(k, _)| k.starts_with("CARGO")), "the oracle needs variables of this process to look for");
    for environ in environs {
        let theirs: HashMap<String, String> = environ
            .split(|b| *b == 0)
            .filter_map(|pair| std::str::from_utf8(pair).ok()?.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
            .collect();
        for (key, _) in &ours {
            assert!(theirs.get(key).is_none_or(String::is_empty), "{key} reached the browser with its value");
        }
    }
    browser.close().await;
}

/// An https page whose certificate no authority signed is refused by the browser (chromiumoxide
/// would ignore it unless told not to), and no request reaches it over that TLS.
#[tokio::test]
async fn an_untrusted_certificate_fails_the_look() {
    let server = PageServer::bind_tls(
        SocketAddr::from(([127, 0, 0, 2], 0)),
        HashMap::new(),
        include_bytes!("../fixtures/tls/self-signed.cert.pem"),
        include_bytes!("../fixtures/tls/self-signed.key.pem"),
    )
    .await
    .unwrap();
    let plain = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), HashMap::new()).await.unwrap();
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = ChromiumConfig::for_data_dir(dir.path());
    config.allow = AllowList::of([server.address(), plain.address()]);
    let browser = Chromium::new(config, resolver_at(dns.address()));
    let err = browser.observe(&format!("https://{}/", server.address()), &CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("ERR_CERT"), "{err}");
    assert!(server.connections() >= 1, "the tunnel never reached the server: the test proves nothing");
    assert!(server.requests().is_empty(), "a request went over the untrusted TLS: {:?}", server.requests());
    // The tab now shows Chromium's error page; the next look leaves it as from any page.
    let next = browser.observe(&format!("http://{}/after", plain.address()), &CancellationToken::new()).await.unwrap();
    assert_eq!(plain.requests().iter().filter(|r| *r == "/after").count(), 1);
    assert!(next.text.contains("served by"), "{}", next.text);
    browser.close().await;
}

/// A browser that exits as it starts fails the look with its exit status and its last words
/// on stderr (it had no DevTools line to wait for), and nothing is left running. Oracle: the
/// error, and the fake browser's own record that it ran.
#[tokio::test]
async fn a_browser_that_exits_at_start_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake-chromium");
    let ran = dir.path().join("ran");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"$@\" > '{}'\necho 'Missing X server or $DISPLAY' >&2\nexit 3\n", ran.display()))
        .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut config = ChromiumConfig::for_data_dir(dir.path());
    config.executable = fake;
    let browser = Chromium::new(config, resolver_at(dns.address()));
    let err = browser.observe("http://example.com/", &CancellationToken::new()).await.unwrap_err();
    let said = err.to_string();
    assert!(matches!(err, hearth_core::browser::chromium::BrowserError::Launch(_)), "{said}");
    assert!(said.contains("exit status: 3") && said.contains("Missing X server"), "{said}");
    assert!(std::fs::read_to_string(&ran).unwrap().contains("--remote-debugging-pipe"), "the fake browser never ran");
    assert!(!browser.is_running().await);
}

/// The processes running with `profile` as their user-data folder (Chromium and its helpers).
fn browser_processes(profile: &std::path::Path) -> Vec<u32> {
    let marker = format!("--user-data-dir={}", profile.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            cmdline.split(|b| *b == 0).any(|arg| arg == marker.as_bytes()).then_some(pid)
        })
        .collect()
}

/// The parent of `pid`: field 4 of /proc/<pid>/stat, after the command name in parentheses.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
}

/// `roots` and every process descended from them.
fn process_tree(roots: &[u32]) -> Vec<u32> {
    let all: Vec<(u32, Option<u32>)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .map(|pid| (pid, parent_of(pid)))
        .collect();
    let mut tree = roots.to_vec();
    let mut next = 0;
    while next < tree.len() {
        let parent = tree[next];
        tree.extend(all.iter().filter(|(_, p)| *p == Some(parent)).map(|(pid, _)| *pid));
        next += 1;
    }
    tree
}

/// The TCP sockets in LISTEN state that an fd of one of `pids` holds, IPv4 and IPv6.
fn listening(pids: &[u32]) -> Vec<SocketAddr> {
    use std::collections::HashSet;
    let inodes: HashSet<u64> = pids
        .iter()
        .filter_map(|pid| procfs::process::Process::new(i32::try_from(*pid).ok()?).ok()?.fd().ok())
        .flat_map(|fds| fds.flatten())
        .filter_map(|fd| match fd.target {
            procfs::process::FDTarget::Socket(inode) => Some(inode),
            _ => None,
        })
        .collect();
    procfs::net::tcp()
        .unwrap()
        .into_iter()
        .chain(procfs::net::tcp6().unwrap())
        .filter(|entry| entry.state == procfs::net::TcpState::Listen && inodes.contains(&entry.inode))
        .map(|entry| entry.local_address)
        .collect()
}

/// While the browser runs and answers, none of its processes listens on TCP: there is no
/// DevTools port for another local account to open (CDP goes over a pipe), and none of their
/// ports answers `GET /json/version`. Oracles: the LISTEN sockets of /proc/net/tcp and tcp6
/// whose inode is an fd of the browser's process tree (the browser, this process's child on the
/// profile, and all it started; the same finder sees this test's own page servers), and the
/// page server's count of the look's request.
#[tokio::test]
async fn the_running_browser_listens_on_no_port() {
    let (allowed, _private, browser, _dns, dir) = setup(|_| HashMap::new()).await;
    browser.observe(&format!("http://{}/", allowed.address()), &CancellationToken::new()).await.unwrap();
    assert_eq!(allowed.requests().iter().filter(|r| *r == "/").count(), 1, "the browser did not load the page over CDP");
    let main: Vec<u32> = browser_processes(&dir.path().join("browser").join("default"))
        .into_iter()
        .filter(|pid| parent_of(*pid) == Some(std::process::id()))
        .collect();
    assert_eq!(main.len(), 1, "one browser process is this process's child: {main:?}");
    let processes = process_tree(&main);
    assert!(processes.len() >= 3, "the browser and its helpers should be running: {processes:?}");
    assert!(listening(&[std::process::id()]).contains(&allowed.address()), "the finder does not see this process's own page server");
    let ports = listening(&processes);
    for port in &ports {
        let asked = async {
            let mut stream = tokio::net::TcpStream::connect(port).await.ok()?;
            tokio::io::AsyncWriteExt::write_all(&mut stream, b"GET /json/version HTTP/1.0\r\n\r\n").await.ok()?;
            let mut answer = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut answer).await.ok()?;
            Some(String::from_utf8_lossy(&answer).into_owned())
        };
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), asked).await.ok().flatten().unwrap_or_default();
        assert!(!answer.contains("webSocketDebuggerUrl"), "{port} answers DevTools: {answer}");
    }
    assert!(ports.is_empty(), "the browser's processes listen on {ports:?}");
    // Still driven: the next look goes over the same pipe.
    browser.observe(&format!("http://{}/again", allowed.address()), &CancellationToken::new()).await.unwrap();
    assert_eq!(allowed.requests().iter().filter(|r| *r == "/again").count(), 1);
    // Close ends the browser: its process, Hearth's child, is gone (killed and reaped) when
    // close returns.
    browser.close().await;
    assert!(!std::path::Path::new(&format!("/proc/{}", main[0])).exists(), "close left the browser process {}", main[0]);
}

/// A Chromium killed under Hearth is noticed on the next look, started again, and that look
/// says so; the look after it does not.
#[tokio::test]
async fn a_killed_browser_is_started_again_on_the_next_look() {
    let (allowed, _private, browser, _dns, dir) = setup(|_| HashMap::new()).await;
    let url = format!("http://{}/", allowed.address());
    let first = browser.observe(&url, &CancellationToken::new()).await.unwrap();
    assert!(!first.restarted);
    let profile = dir.path().join("browser").join("default");
    let before = browser_processes(&profile);
    assert!(!before.is_empty());
    for pid in &before {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    let again = browser.observe(&url, &CancellationToken::new()).await.unwrap();
    assert!(again.restarted, "the look after the kill did not say the browser was started again");
    assert!(browser_processes(&profile).iter().all(|pid| !before.contains(pid)), "an old process is still there");
    let third = browser.observe(&url, &CancellationToken::new()).await.unwrap();
    assert!(!third.restarted);
    assert_eq!(allowed.requests().iter().filter(|r| *r == "/").count(), 3, "{:?}", allowed.requests());
    browser.close().await;
}
