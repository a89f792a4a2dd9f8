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

#[path = "support/figure.rs"]
mod figure;

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
    let launch_ms = p50_ms(&launches);
    println!("hearth cold launch (to a ready tab), {LAUNCHES} runs: {}", stats(launches));
    let mut observe_ms = Vec::new();

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
        observe_ms.push((path, p50_ms(&times)));
        println!("hearth observe {path}, {RUNS} runs: {}, screenshot {bytes} bytes", stats(times));
    }
    browser.close().await;

    // Playwright (the stack OpenMuse uses) on the same Chromium and server, in the same run.
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright");
    let out = figure::run_reference(&reference, "run.mjs", &[&base, CHROMIUM]).unwrap_or_default();
    println!("load average after: {}", load_average());
    // Playwright as OpenMuse runs it (its own screenshot, the default PNG encoder) is the
    // target's reference; its line with Hearth's fast encoder is printed beside it, since that
    // holds the encoder equal.
    let playwright = |prefix: &str| out.lines().find(|l| l.starts_with(prefix)).and_then(|l| figure::number_after(l, "p50"));
    for (path, hearth) in observe_ms {
        let reference = playwright(&format!("playwright observe {path},"));
        let same_encoder = playwright(&format!("playwright observe (fast encoder) {path},"));
        figure::figure(
            &format!("browser observe {path} (navigate, text, PNG), p50"),
            &format!(
                "{hearth:.1} ms ({}; {} of Playwright on the same encoder)",
                figure::ratio(hearth, reference),
                figure::ratio(hearth, same_encoder)
            ),
            &match (reference, same_encoder) {
                (Some(r), Some(s)) => format!("Playwright 1.65.1: {r:.1} ms (same encoder: {s:.1} ms)"),
                (Some(r), None) => format!("Playwright 1.65.1: {r:.1} ms"),
                (None, _) => "Playwright: not run".to_owned(),
            },
            "≤ 0.7× Playwright",
        );
    }
    let reference = playwright("playwright cold launch");
    figure::figure(
        "browser cold launch to a ready tab, p50",
        &format!("{launch_ms:.1} ms ({})", figure::ratio(launch_ms, reference)),
        &reference.map_or_else(|| "Playwright: not run".to_owned(), |r| format!("Playwright 1.65.1: {r:.1} ms")),
        "no target (reported)",
    );
}

fn p50_ms(times: &[Duration]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2].as_secs_f64() * 1000.0
}

fn stats(mut times: Vec<Duration>) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    // Five launches have no p95: their slowest is printed as the max.
    let tail = if times.len() >= 20 {
        format!("p95 {:.1}", ms(times[times.len() * 95 / 100]))
    } else {
        format!("max {:.1}", ms(times[times.len() - 1]))
    };
    format!("p50 {:.1} ms, {tail} ms", ms(times[times.len() / 2]))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
