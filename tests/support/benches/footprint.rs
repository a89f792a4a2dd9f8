//! Footprint of the built app: start to the app shell found over WebDriver, idle memory 60 s and
//! 10 min after start (PSS and private dirty over the app and its WebKit processes), and
//! the binary's size. Prints figures; asserts nothing about time.
//!
//! `HEARTH_BENCH_APP=<binary> xvfb-run -a cargo bench -p hearth-testkit --features webdriver --bench footprint`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::Duration;

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

const STARTS: usize = 5;
const IDLE_AFTER: Duration = Duration::from_secs(60);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let app = std::env::var("HEARTH_BENCH_APP")
        .expect("set HEARTH_BENCH_APP to the built hearth binary");
    let app = std::fs::canonicalize(&app).unwrap();
    println!("app binary: {} ({:.1} MB)", app.display(), std::fs::metadata(&app).unwrap().len() as f64 / 1e6);

    let mut first_paint = Vec::new();
    for _ in 0..STARTS {
        let home = TestHome::new().unwrap();
        let session = Session::start_app(app.to_str().unwrap(), &home).await;
        session.find(".shell").await;
        first_paint.push(session.launch_requested_at.elapsed());
        session.close().await;
    }
    first_paint.sort();
    println!(
        "cold start to first paint (launch requested → app shell rendered), {STARTS} starts: median {:?}, min {:?}, max {:?}",
        first_paint[STARTS / 2],
        first_paint[0],
        first_paint[STARTS - 1]
    );

    // Idle memory of one app left alone: at 60 s and at HEARTH_IDLE_SECS (600 by default),
    // summed over the app and its WebKit processes. The browser and the computer start only
    // when used, so an idle app has neither.
    let long = std::env::var("HEARTH_IDLE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(600u64);
    let home = TestHome::new().unwrap();
    let session = Session::start_app(app.to_str().unwrap(), &home).await;
    session.find(".shell").await;
    let app_pid = find_pid(&app).expect("the app process is not running");
    let mut samples = Vec::new();
    for after in [IDLE_AFTER, Duration::from_secs(long)] {
        tokio::time::sleep_until((session.launch_requested_at + after).into()).await;
        let family = app_family(app_pid);
        let (mut pss, mut dirty) = (0, 0);
        for pid in &family {
            let (name, r, p, d) = memory(*pid);
            println!("  {pid:>7} {name:<24} RSS {:>7.1} MB  PSS {:>7.1} MB  private dirty {:>7.1} MB", r as f64 / 1024.0, p as f64 / 1024.0, d as f64 / 1024.0);
            pss += p;
            dirty += d;
        }
        println!(
            "idle {}s after start, app + {} WebKit processes: PSS {:.1} MB, private dirty {:.1} MB",
            after.as_secs(),
            family.len() - 1,
            pss as f64 / 1024.0,
            dirty as f64 / 1024.0
        );
        samples.push((after, pss, dirty));
    }
    let mb = |kib: u64| kib as f64 / 1024.0;
    let ((_, pss_1, dirty_1), (long_after, pss_2, dirty_2)) = (samples[0], samples[1]);
    println!(
        "FIGURE | idle memory of the app + WebKit, 60 s after start | PSS {:.1} MB, private dirty {:.1} MB | the hello-world Tauri + Leptos floor: not built yet | ≤ 1.15× the floor's PSS",
        mb(pss_1),
        mb(dirty_1)
    );
    println!(
        "FIGURE | idle memory growth, 60 s → {} s | PSS {:+.1} MB, private dirty {:+.1} MB | none | no growth",
        long_after.as_secs(),
        mb(pss_2) - mb(pss_1),
        mb(dirty_2) - mb(dirty_1)
    );
    session.close().await;
}

/// The app and its WebKit processes. WebKitGTK starts its web process through bubblewrap, which
/// leaves it a child of neither the app nor the network process, so besides the app's
/// descendants every WebKit process that started after the app is counted (the bench runs one
/// app at a time).
fn app_family(app_pid: u32) -> Vec<u32> {
    let mut family = vec![app_pid];
    family.extend(descendants(app_pid));
    let app_start = start_ticks(app_pid);
    for pid in pids() {
        // WebKitWebDriver is the test's driver, not the app's.
        let webkit = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.starts_with("WebKit") && !c.starts_with("WebKitWebDriver"));
        if webkit && start_ticks(pid) >= app_start && !family.contains(&pid) {
            family.push(pid);
        }
    }
    family
}

/// When a process started, in clock ticks since boot (`/proc/PID/stat` field 22).
fn start_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok())
        .unwrap_or(0)
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The newest process running `exe`: an app of an earlier start may still be ending.
fn find_pid(exe: &Path) -> Option<u32> {
    pids()
        .into_iter()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_deref() == Some(exe))
        .max_by_key(|pid| start_ticks(*pid))
}

fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<(u32, Option<u32>)> = pids().into_iter().map(|p| (p, parent(p))).collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (child, _) in all.iter().filter(|(_, pp)| *pp == Some(p)) {
            found.push(*child);
            frontier.push(*child);
        }
    }
    found
}

/// (name, RSS kB, PSS kB, private dirty kB)
fn memory(pid: u32) -> (String, u64, u64, u64) {
    let field = |text: &str, key: &str| -> u64 {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let name = status.lines().next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("?").to_owned();
    (name, field(&status, "VmRSS:"), field(&rollup, "Pss:"), field(&rollup, "Private_Dirty:"))
}

