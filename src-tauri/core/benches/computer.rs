//! The computer's latencies against the real engine and the locally built image (medians and
//! p95 of 20 each): container create + start, attach (inspect + verify), the round trip of
//! `true`, Stop pressed → container stopped, and the first output byte of `echo`; then the
//! process's peak resident size around ten 10 MB prints.
//!
//! `cargo bench -p hearth-core --bench computer` (needs dockerd and the base from
//! scripts/computer-image.sh; Hearth's layer is built over it first when missing).
//! No published figure exists for any peer; these are Hearth's own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::computer::{CommandRequest, Computer, ComputerSpec, default_image, engine, image};
use tokio_util::sync::CancellationToken;

#[path = "support/figure.rs"]
mod figure;
const RUNS: usize = 20;

#[tokio::main]
async fn main() {
    let docker = engine::connect().await.expect("a Docker engine must answer");
    image::ensure(&docker, &default_image()).await.expect("build the base first: scripts/computer-image.sh");
    println!("load average before: {}", load_average());

    let mut create = Vec::new();
    for i in 0..RUNS {
        let computer = Computer::new(ComputerSpec::new(default_image(), &format!("bench{i}-{}", std::process::id()), "owner"), true);
        let started = Instant::now();
        computer.start().await.unwrap();
        create.push(started.elapsed());
        computer.reset().await.unwrap();
    }
    report("create + start (volume, container, verify, start, verify)", create);

    let computer = Computer::new(ComputerSpec::new(default_image(), &format!("bench-{}", std::process::id()), "owner"), true);
    computer.start().await.unwrap();
    let spec = computer.spec().clone();
    let attach = measure(|| async { engine::verify_running(&docker, &spec).await.unwrap() }).await;
    report("attach (inspect image, volume, container + every predicate)", attach);

    let truthy = CommandRequest::new("true", None).unwrap();
    let round_trip = measure(|| async { computer.run(&truthy, &CancellationToken::new(), None).await.unwrap() }).await;
    report("round trip of `true` (verify, exec, wait, end leftovers)", round_trip);

    let echo = CommandRequest::new("echo x", None).unwrap();
    let mut first_byte = Vec::new();
    for _ in 0..RUNS {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let never = CancellationToken::new();
        let started = Instant::now();
        let run = computer.run(&echo, &never, Some(&tx));
        tokio::pin!(run);
        let first = tokio::select! {
            chunk = rx.recv() => { let at = started.elapsed(); assert!(chunk.is_some()); at }
            _ = &mut run => panic!("ended before its output"),
        };
        run.await.unwrap();
        first_byte.push(first);
    }
    report("first output byte of `echo x`", first_byte);

    let sleeper = CommandRequest::new("echo go; sleep 60", None).unwrap();
    let mut stop = Vec::new();
    for _ in 0..RUNS {
        let cancel = CancellationToken::new();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let run = computer.run(&sleeper, &cancel, Some(&tx));
        tokio::pin!(run);
        tokio::select! {
            chunk = rx.recv() => assert!(chunk.is_some()),
            _ = &mut run => panic!("ended before its output"),
        }
        let pressed = Instant::now();
        cancel.cancel();
        assert!(run.await.is_err());
        stop.push(pressed.elapsed());
    }
    report("Stop pressed → container stopped (SIGTERM to the command, then the engine's stop)", stop);

    // Memory: a command printing 10 MB, ten times; the process's peak resident size before and
    // after (the receipt keeps 128 KiB; the rest is read and dropped).
    let flood = CommandRequest::new("head -c 10000000 /dev/zero | tr '\\0' a", None).unwrap();
    let before = peak_rss_kib();
    for _ in 0..10 {
        let receipt = computer.run(&flood, &CancellationToken::new(), None).await.unwrap();
        assert!(receipt.truncated);
    }
    println!("peak RSS of this process: {before} KiB before ten 10 MB prints, {} KiB after", peak_rss_kib());

    computer.reset().await.unwrap();
    println!("load average after: {}", load_average());
}

async fn measure<F, Fut, T>(mut run: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    for _ in 0..3 {
        run().await;
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        run().await;
        times.push(started.elapsed());
    }
    times
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    println!("{what}, {RUNS} runs: median {:?}, p95 {:?}", times[RUNS / 2], times[RUNS * 95 / 100]);
    figure::figure(
        &format!("computer: {what}, median"),
        &format!("{:.1} ms (slowest of {RUNS} {:.1})", times[RUNS / 2].as_secs_f64() * 1e3, times[RUNS - 1].as_secs_f64() * 1e3),
        "none (no peer publishes it)",
        "no target (reported)",
    );
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
