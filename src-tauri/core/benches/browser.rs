//! The browser's observe (goto to DOMContentLoaded, re-check of the final URL, title, visible
//! text and a PNG screenshot) on the three fixed pages, 30 runs each after 3 warm-ups, and a
//! cold launch (to a ready tab) 5 times — then the same through Playwright (`playwright-core`
//! 1.65.1, the stack OpenMuse uses) on the same Chromium binary and the same server, in the
//! same session, when `benches/playwright/node_modules` is installed (`npm ci` there).
//!
//! Hearth's requests go through its egress proxy (the pages are allow-listed on 127.0.0.2);
//! Playwright's go straight to the server. Prints p50 and p95 of each, the screenshot sizes,
//! and the load average; asserts only that the work was done.
//!
//! `cargo bench -p hearth-core --bench browser` (needs Debian's chromium; node for the reference).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hearth_core::browser::chromium::{Chromium, ChromiumConfig};
use hearth_core::browser::egress::AllowList;
use hearth_core::browser::proxy::system_resolver;
use hearth_testkit::pages::PageServer;
use tokio_util::sync::CancellationToken;

const PAGES: [(&str, &str); 3] = [
    ("/article.html", include_str!("../tests/fixtures/pages/article.html")),
    ("/prices.html", include_str!("../tests/fixtures/pages/prices.html")),
    ("/form.html", include_str!("../tests/fixtures/pages/form.html")),
];
const RUNS: usize = 30;
const WARMUPS: usize = 3;
const LAUNCHES: usize = 5;
const CHROMIUM: &str = "/usr/bin/chromium";

#[tokio::main]
async fn main() {
    let pages: HashMap<String, String> = PAGES.iter().map(|(p, h)| ((*p).to_owned(), (*h).to_owned())).collect();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let base = format!("http://{}", server.address());
    println!("load average before: {}", load_average());

    let config = |dir: &std::path::Path| {
        let mut config = ChromiumConfig::for_data_dir(dir);
        config.executable = CHROMIUM.into();
        config.allow = AllowList::of([server.address()]);
        config
    };
    // One launch first, untimed: the binary and its libraries come into the page cache for
    // both stacks alike.
    let warm = tempfile::tempdir().unwrap();
    let first = Chromium::new(config(warm.path()), system_resolver().unwrap());
    first.start().await.unwrap();
    first.close().await;
    let mut launches = Vec::new();
    for _ in 0..LAUNCHES {
        let dir = tempfile::tempdir().unwrap();
        let browser = Chromium::new(config(dir.path()), system_resolver().unwrap());
        let started = Instant::now();
        browser.start().await.unwrap();
        launches.push(started.elapsed());
        browser.close().await;
    }
    println!("hearth cold launch (to a ready tab), {LAUNCHES} runs: {}", stats(launches));

    let dir = tempfile::tempdir().unwrap();
    let browser = Chromium::new(config(dir.path()), system_resolver().unwrap());
    browser.start().await.unwrap();
    for (path, _) in PAGES {
        let url = format!("{base}{path}");
        let mut times = Vec::new();
        let mut bytes = 0;
        for run in 0..WARMUPS + RUNS {
            let started = Instant::now();
            let seen = browser.observe(&url, &CancellationToken::new()).await.unwrap();
            if run >= WARMUPS {
                times.push(started.elapsed());
            }
            assert!(!seen.text.is_empty());
            bytes = seen.screenshot_png.len();
        }
        println!("hearth observe {path}, {RUNS} runs: {}, screenshot {bytes} bytes", stats(times));
    }
    browser.close().await;

    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright");
    if reference.join("node_modules/playwright-core").exists() {
        let out = std::process::Command::new("node").arg("run.mjs").arg(&base).arg(CHROMIUM).current_dir(&reference).output().unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            println!("playwright failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    } else {
        println!("playwright reference not installed: (cd src-tauri/core/benches/playwright && npm ci)");
    }
    println!("load average after: {}", load_average());
}

fn stats(mut times: Vec<Duration>) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    // Five launches have no p95: their slowest is printed as the max.
    let tail = if times.len() >= 20 { format!("p95 {:.1}", ms(times[times.len() * 95 / 100])) } else { format!("max {:.1}", ms(times[times.len() - 1])) };
    format!("p50 {:.1} ms, {tail} ms", ms(times[times.len() / 2]))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
