//! Hearth's footprint against the Tauri floor (tests/floor: Tauri v2 + a Leptos hello world,
//! same toolchain, same release profile), both measured the same way in one run:
//!
//! - cold start to first paint: from just before the process is spawned to the line each app
//!   prints when its window has drawn its first frame of the app (the UI's second animation
//!   frame after it shows the app calls `app_painted`: the floor's page on mount, Hearth's
//!   shell once its core has opened, not the loading line before it), medians of 10 starts,
//!   the two apps alternating;
//! - idle memory 60 s after start: PSS and private dirty (`/proc/PID/smaps_rollup`) summed over
//!   the app and the WebKit processes it started;
//! - Hearth again after `HEARTH_IDLE_SECS` (600 by default): growth over 10 idle minutes.
//!
//! The browser and the computer start only when used, so an idle Hearth has neither.
//! Prints figures; asserts nothing about time. `scripts/footprint.sh` builds both apps and
//! runs this under Xvfb:
//!
//! `HEARTH_BENCH_APP=<hearth> HEARTH_BENCH_FLOOR=<hearth-floor> xvfb-run -a cargo bench -p hearth-testkit --features webdriver --bench footprint`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use hearth_testkit::TestHome;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const STARTS: usize = 10;
const IDLE_AFTER: Duration = Duration::from_secs(60);
/// What both apps print (Hearth through its log, the floor on stderr) at first paint.
const PAINTED: &str = "the window painted its first frame";
/// An app that has not painted by then is broken, not slow.
const PATIENCE: Duration = Duration::from_secs(120);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let hearth = App::from_env("Hearth", "HEARTH_BENCH_APP");
    let floor = App::from_env("the Tauri floor", "HEARTH_BENCH_FLOOR");
    println!("load average before: {}", load_average());

    // One untimed start each: the data folder is created and seeded, and the binaries and
    // WebKit's libraries are in the page cache, as for every start after the first.
    for app in [&floor, &hearth] {
        app.start().await.stop().await;
    }
    let (mut hearth_paint, mut floor_paint) = (Vec::new(), Vec::new());
    for _ in 0..STARTS {
        for (app, times) in [(&floor, &mut floor_paint), (&hearth, &mut hearth_paint)] {
            let running = app.start().await;
            times.push(running.painted_after);
            running.stop().await;
        }
    }
    let hearth_median = median(&mut hearth_paint);
    let floor_median = median(&mut floor_paint);
    for (app, times) in [(&floor, &floor_paint), (&hearth, &hearth_paint)] {
        println!("{}: process start → first paint, {STARTS} starts: {}", app.name, list(times));
    }
    println!(
        "FIGURE | cold start to first paint (process start → first frame), median of {STARTS} | {} | the Tauri floor: {} → {:.2}× | ≤ 1.5× the floor",
        ms(hearth_median),
        ms(floor_median),
        hearth_median.as_secs_f64() / floor_median.as_secs_f64()
    );

    // Idle memory: the floor at 60 s, then Hearth at 60 s and after the long wait. One app at a
    // time, so that no WebKit library pages are shared between the two (PSS would halve them).
    let running = floor.start().await;
    let floor_idle = running.memory_at(IDLE_AFTER).await;
    running.stop().await;
    let long = std::env::var("HEARTH_IDLE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(600u64);
    let running = hearth.start().await;
    let hearth_idle = running.memory_at(IDLE_AFTER).await;
    let hearth_later = running.memory_at(Duration::from_secs(long)).await;
    running.stop().await;
    println!(
        "FIGURE | idle memory 60 s after start, app + WebKit processes: PSS (private dirty) | {} ({}) | the Tauri floor: {} ({}) → {:.2}× PSS | ≤ 1.15× the floor's PSS",
        mb(hearth_idle.pss),
        mb(hearth_idle.dirty),
        mb(floor_idle.pss),
        mb(floor_idle.dirty),
        hearth_idle.pss as f64 / floor_idle.pss as f64
    );
    println!(
        "FIGURE | idle memory growth, 60 s → {long} s after start | PSS {:+.1} MB, private dirty {:+.1} MB | none | no growth",
        (hearth_later.pss as f64 - hearth_idle.pss as f64) / 1024.0,
        (hearth_later.dirty as f64 - hearth_idle.dirty as f64) / 1024.0
    );
    println!("load average after: {}", load_average());
}

/// One of the two binaries, with a data folder of its own that lives for the whole run.
struct App {
    name: &'static str,
    exe: PathBuf,
    home: TestHome,
}

impl App {
    fn from_env(name: &'static str, var: &str) -> App {
        let path = std::env::var(var).unwrap_or_else(|_| panic!("set {var} to the built binary of {name}"));
        let exe = std::fs::canonicalize(&path).unwrap_or_else(|err| panic!("{var}={path}: {err}"));
        println!("{name}: {} ({:.2} MB)", exe.display(), std::fs::metadata(&exe).unwrap().len() as f64 / 1e6);
        App { name, exe, home: TestHome::new().unwrap() }
    }

    /// Spawns the app and waits for its first paint.
    async fn start(&self) -> Running {
        let mut command = Command::new(&self.exe);
        command.envs(self.home.env()).env("HEARTH_LOG", "info").stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true);
        let spawned = Instant::now();
        let mut child = command.spawn().unwrap_or_else(|err| panic!("could not start {}: {err}", self.name));
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let painted = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains(PAINTED) {
                    return Some(spawned.elapsed());
                }
            }
            None
        };
        let painted_after = match tokio::time::timeout(PATIENCE, painted).await {
            Ok(Some(after)) => after,
            Ok(None) => panic!("{} ended before its first paint (is DISPLAY set? run under xvfb-run)", self.name),
            Err(_) => panic!("{} did not paint within {PATIENCE:?}", self.name),
        };
        // Keep reading, so that a full pipe never blocks the app's logging.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let pid = child.id().unwrap();
        Running { name: self.name, child, pid, spawned, painted_after }
    }
}

struct Running {
    name: &'static str,
    child: Child,
    pid: u32,
    spawned: Instant,
    painted_after: Duration,
}

#[derive(Clone, Copy)]
struct Memory {
    /// kB
    pss: u64,
    /// kB
    dirty: u64,
}

impl Running {
    /// PSS and private dirty over the app and its WebKit processes, `after` its start.
    async fn memory_at(&self, after: Duration) -> Memory {
        tokio::time::sleep_until((self.spawned + after).into()).await;
        let family = family(self.pid);
        let mut total = Memory { pss: 0, dirty: 0 };
        for pid in &family {
            let (name, pss, dirty) = memory(*pid);
            println!("  {pid:>7} {name:<24} PSS {} private dirty {}", mb(pss), mb(dirty));
            total.pss += pss;
            total.dirty += dirty;
        }
        println!(
            "{}, idle {} s after start, app + {} WebKit processes: PSS {}, private dirty {}",
            self.name,
            after.as_secs(),
            family.len() - 1,
            mb(total.pss),
            mb(total.dirty)
        );
        total
    }

    /// Ends the app, and waits until its WebKit processes are gone too, so that the next start
    /// is counted alone.
    async fn stop(mut self) {
        let family = family(self.pid);
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while family.iter().any(|pid| Path::new(&format!("/proc/{pid}")).exists()) {
            assert!(Instant::now() < deadline, "{}'s WebKit processes outlived it by 30 s", self.name);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The app and its WebKit processes. WebKitGTK starts its web process through bubblewrap, which
/// leaves it a child of neither the app nor the network process, so besides the app's
/// descendants every WebKit process that started after the app is counted (one app runs at a
/// time; the WebDriver of the webview tests is not the app's).
fn family(app_pid: u32) -> Vec<u32> {
    let mut family = vec![app_pid];
    family.extend(descendants(app_pid));
    let app_start = start_ticks(app_pid);
    for pid in pids() {
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
    std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
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

/// (name, PSS kB, private dirty kB)
fn memory(pid: u32) -> (String, u64, u64) {
    let field = |text: &str, key: &str| -> u64 {
        text.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
    };
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).map_or_else(|_| "?".into(), |c| c.trim().to_owned());
    (name, field(&rollup, "Pss:"), field(&rollup, "Private_Dirty:"))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn list(times: &[Duration]) -> String {
    times.iter().map(|t| format!("{:.0}", t.as_secs_f64() * 1e3)).collect::<Vec<_>>().join(", ") + " ms"
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 / 1024.0)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
