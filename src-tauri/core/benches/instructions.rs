//! Instruction counts of the hot paths, under callgrind (gungraun): the per-change baseline.
//!
//! Why instructions and not seconds: the machines this runs on are shared and noisy, and a
//! 5% regression is invisible in wall-clock medians there; callgrind counts the same work the
//! same way whatever else the machine does. `scripts/perf-gate.sh` (part of the test command)
//! runs this bench and compares every count with `benches/instructions.baseline.json`,
//! failing on growth above 5% (and on a gain above 5% until the baseline records it, so the
//! room it frees cannot hide a later regression); `scripts/perf-gate.sh --update` rewrites it,
//! which is then committed like any other change.
//!
//! Counting: every path here runs on more than one thread (sqlx runs each SQLite connection on
//! a worker thread of its own, the runs spawn tasks), so collection is not tied to the bench
//! function (gungraun's default entry point counts only the thread that enters it). Each bench
//! instead switches callgrind's instrumentation on and off around exactly the measured work
//! (`counted`), with instrumentation off from the start: the setup (opening the store, running
//! the migrations, loading PDFium) is never counted, and every thread is counted while on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use gungraun::client_requests::callgrind::{start_instrumentation, stop_instrumentation};
use gungraun::{Callgrind, EntryPoint, LibraryBenchmarkConfig, library_benchmark, library_benchmark_group, main};
use hearth_core::journal::Operation;
use hearth_core::pdf::{FieldValues, FillPath, PdfEngine, default_library_path, fill_with_report, inspect};
use hearth_core::store::journal::OpKey;
use hearth_core::store::tasks::{NewTask, RunEnding};
use hearth_core::{Config, Hearth};
use hearth_protocol::agui::Event;
use hearth_protocol::agui::sse::SseDecoder;
use hearth_protocol::agui::verify::Verifier;
use hearth_protocol::ipc::RunStartParams;
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The fixed 100,000-event stream of the wall-clock decode bench; a tenth of it here, which is
/// enough to dominate the fixed costs and keeps this bench under a few seconds in valgrind.
const AGUI: &[u8] = include_bytes!("../../protocol/benches/data/agui-100k.sse");
const AGUI_BYTES: usize = 1_000_000;
const FORM: &[u8] = include_bytes!("data/permission-form.pdf");
const FORM_VALUES: &str = include_str!("data/permission-form.fill.json");
/// Operations per journal / task bench: enough that one-off costs (a statement's first
/// preparation) are a small part of the count.
const ROUNDS: usize = 50;
/// Chat turns in the dispatch bench.
const TURNS: usize = 5;

/// Runs `work` with callgrind's instrumentation (and so its counting, on every thread) on.
fn counted<T>(work: impl FnOnce() -> T) -> T {
    start_instrumentation();
    let out = work();
    stop_instrumentation();
    out
}

/// A Hearth on a fresh SQLite file, workers off (nothing runs that the bench did not start),
/// and the runtime that drives it. Made before counting starts.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    hearth: Hearth,
    _dir: tempfile::TempDir,
}

fn hearth() -> Fixture {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.start_workers = false;
    let hearth = runtime.block_on(Hearth::open(config)).unwrap();
    // Open every reader connection now: the read pool opens them lazily (a new SQLite
    // connection costs ≈ 2.8 M instructions), and whether a measured read found one idle
    // depended on when the previous read's connection got back to the pool — a bimodal
    // count (19.1 M or 21.9 M for the journal bench) until this.
    runtime.block_on(async {
        let store = hearth.store();
        let (a, b, c, d, e) =
            tokio::join!(store.list_tasks(1), store.list_tasks(1), store.list_tasks(1), store.list_tasks(1), store.list_tasks(1));
        for listed in [a, b, c, d, e] {
            listed.unwrap();
        }
    });
    Fixture { runtime, hearth, _dir: dir }
}

fn pdfium() -> (PdfEngine, FieldValues) {
    (PdfEngine::load(&default_library_path()).unwrap(), serde_json::from_str(FORM_VALUES).unwrap())
}

// AG-UI decode + schema check + order verification, fed in 64 KiB chunks as a socket would.
#[library_benchmark]
fn agui_decode_verify() -> usize {
    // Whole events only: cut at the last event boundary before AGUI_BYTES.
    let end = AGUI[..AGUI_BYTES].windows(2).rposition(|w| w == b"\n\n").unwrap() + 2;
    let input = &AGUI[..end];
    counted(|| {
        let mut decoder = SseDecoder::new();
        let mut verifier = Verifier::new();
        let mut events = 0usize;
        for chunk in input.chunks(64 * 1024) {
            decoder.feed_with(black_box(chunk), |decoded| {
                let event = decoded.unwrap();
                verifier.check(&event).unwrap();
                events += 1;
            });
        }
        black_box(events)
    })
}

// Inspect of the fixed 2-page, 6-field form (load, fields and their values).
#[library_benchmark]
#[bench::form(setup = pdfium)]
fn pdf_inspect((engine, _values): (PdfEngine, FieldValues)) -> usize {
    counted(|| black_box(inspect(&engine, black_box(FORM)).unwrap()).fields.len())
}

// Fill of the same form: load, fill 6 fields, save, and PDFium's read-back of every value.
#[library_benchmark]
#[bench::form(setup = pdfium)]
fn pdf_fill((engine, values): (PdfEngine, FieldValues)) -> usize {
    counted(|| {
        let (filled, path) = fill_with_report(&engine, black_box(FORM), &values).unwrap();
        assert_eq!(path, FillPath::Direct);
        black_box(filled.len())
    })
}

// The journal's perform: ROUNDS new operations (intent row, effect, result) and ROUNDS
// identical retries of them (the stored receipt, no effect).
#[library_benchmark]
#[bench::fresh_store(setup = hearth)]
fn journal_perform(fixture: Fixture) -> Fixture {
    let journal = fixture.hearth.tasks().journal().clone();
    let cancel = CancellationToken::new();
    let ids: Vec<String> = (0..ROUNDS).map(|n| format!("op-{n}")).collect();
    let action = json!({ "to": ["sam@example.com"], "subject": "Hi", "body": "See you Saturday" });
    counted(|| {
        fixture.runtime.block_on(async {
            for _pass in 0..2 {
                for id in &ids {
                    let op = Operation {
                        key: OpKey { scope: "task:bench", op_id: id },
                        tool: "bench_send",
                        action: &action,
                        claimant: "bench",
                        fence: None,
                        cancel: &cancel,
                    };
                    let receipt = journal.perform(&op, |_| async { Ok(json!({ "messageId": "m-1" })) }).await.unwrap();
                    black_box(receipt);
                }
            }
        });
    });
    fixture
}

// A task's life in the store: create, claim (lease), checkpoint, finish — ROUNDS times.
#[library_benchmark]
#[bench::fresh_store(setup = hearth)]
fn task_claim_finish(fixture: Fixture) -> Fixture {
    let store = fixture.hearth.store().clone();
    let input = json!({});
    let keys: Vec<String> = (0..ROUNDS).map(|n| format!("bench-{n}")).collect();
    let ending = RunEnding {
        status: TaskStatus::Succeeded,
        result: Some("ok".into()),
        error: None,
        question: None,
        next_run_at: None,
        action_id: None,
    };
    counted(|| {
        fixture.runtime.block_on(async {
            for key in &keys {
                let new = NewTask { idempotency_key: key, kind: TaskKind::Monitor, title: key, input: &input, thread_id: None };
                store.create_task(new).await.unwrap();
                let claim = store.claim_next("bench", 60_000).await.unwrap().unwrap();
                assert!(store.checkpoint(&claim.task.id, &claim.lease_id, &json!({ "step": 1 })).await.unwrap());
                assert!(store.finish_run(&claim.task.id, &claim.lease_id, &ending).await.unwrap());
            }
        });
    });
    fixture
}

// A chat turn of the offline sample agent with one journaled tool call (remember_fact):
// the run, tool dispatch with its argument check, the journal, the store, the event stream.
#[library_benchmark]
#[bench::fresh_store(setup = hearth)]
fn tool_dispatch_turn(fixture: Fixture) -> Fixture {
    let hearth = &fixture.hearth;
    counted(|| {
        fixture.runtime.block_on(async {
            let mut thread_id = None;
            for n in 0..TURNS {
                let text = format!("remember that my locker number is {n}");
                let (started, mut events) = hearth.start_run(RunStartParams { thread_id: thread_id.clone(), text }).await.unwrap();
                thread_id = Some(started.thread_id);
                let mut results = 0;
                while let Some(event) = events.recv().await {
                    if let Event::ToolCallResult(_) = event {
                        results += 1;
                    }
                }
                assert_eq!(results, 1, "one tool call per turn");
                while hearth.active_runs() > 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
    });
    fixture
}

library_benchmark_group!(
    name = hot_paths,
    benchmarks = [agui_decode_verify, pdf_inspect, pdf_fill, journal_perform, task_claim_finish, tool_dispatch_turn]
);

main!(
    config = LibraryBenchmarkConfig::default()
        .tool(Callgrind::with_args(["--instr-atstart=no"]).entry_point(EntryPoint::None))
        .pass_through_envs(["HEARTH_PDFIUM_LIB"]);
    library_benchmark_groups = hot_paths
);
