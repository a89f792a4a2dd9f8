//! Decode + schema-check + order-verify the fixed 100,000-event AG-UI stream
//! (`benches/data/agui-100k.sse`, 9.6 MB, made by @ag-ui/encoder 1.0.0) and print events/s.
//!
//! The stream is fed in 64 KiB chunks, as a socket would deliver it. "Schema-check" is the
//! typed decode itself (every field and tag checked by serde); "order-verify" is the
//! `Verifier` over every event. The target is ≥ 2.5 M events/s on a quiet machine (the
//! official TypeScript client does 210,000–255,000).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hearth_protocol::agui::sse::SseDecoder;
use hearth_protocol::agui::verify::Verifier;

#[path = "../../core/benches/support/figure.rs"]
mod figure;

const DATA: &[u8] = include_bytes!("data/agui-100k.sse");
const EVENTS: usize = 100_000;
const CHUNK: usize = 64 * 1024;
const ROUNDS: usize = 15;

fn one_pass() -> (usize, Duration) {
    let start = Instant::now();
    let mut decoder = SseDecoder::new();
    let mut verifier = Verifier::new();
    let mut events = 0usize;
    let mut failures = 0usize;
    for chunk in DATA.chunks(CHUNK) {
        decoder.feed_with(chunk, |decoded| match decoded {
            Ok(event) => {
                if verifier.check(&event).is_err() {
                    failures += 1;
                }
                events += 1;
            }
            Err(_) => failures += 1,
        });
    }
    let elapsed = start.elapsed();
    assert_eq!(failures, 0, "the fixed stream decodes and verifies cleanly");
    (events, elapsed)
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.trim());
    let (events, _) = one_pass(); // warm-up
    assert_eq!(events, EVENTS);
    let mut rates: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let (n, elapsed) = one_pass();
            n as f64 / elapsed.as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    let median = rates[ROUNDS / 2];
    let mb_s = DATA.len() as f64 * median / EVENTS as f64 / 1e6;
    println!(
        "agui-100k.sse ({} bytes, {events} events), decode + schema-check + order-verify, {ROUNDS} passes: \
         median {:.2} M events/s ({mb_s:.0} MB/s), min {:.2}, max {:.2}",
        DATA.len(),
        median / 1e6,
        rates[0] / 1e6,
        rates[ROUNDS - 1] / 1e6,
    );

    // The official TypeScript client on the same bytes, in the same run.
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui_client");
    let reference = figure::run_reference(&client, "decode_bench.mjs", &[])
        .and_then(|out| out.lines().find_map(|line| figure::number_after(line, "median")));
    let reference_text = reference.map_or_else(|| "not run".to_owned(), |r| format!("{r:.3} M events/s"));
    let times = reference.map_or_else(|| "no reference".to_owned(), |r| format!("{:.1}× the reference", median / 1e6 / r));
    figure::figure(
        "AG-UI decode + schema check + verify (100k events)",
        &format!("{:.2} M events/s ({times})", median / 1e6),
        &format!("@ag-ui/client 1.0.0: {reference_text}"),
        "≥ 2.5 M events/s and ≥ 10× the reference",
    );
}
