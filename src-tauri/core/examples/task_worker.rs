//! A Hearth task worker in its own process, for the crash and multi-process tests (they
//! SIGKILL it or run two at once on one database). Also a small demo of the engine.
//!
//! `task_worker <data dir> <effects db> <mode>` where mode is:
//! - `after-effect`: claim one task, perform its effect, print `EFFECT_DONE`, then hang;
//! - `during-effect`: claim one task, print `EFFECT_DONE` inside the effect, then hang;
//! - `drain`: run every due task (each succeeds at once) until none is left, then exit;
//! - `fire-schedules:<unix ms>`: print `READY` once open, wait for a line on stdin (so two
//!   workers tick together), tick the schedules once as if it were that moment, print how many
//!   tasks this process made, then exit;
//! - `chat-run`: start a chat reply that counts slowly, print `EFFECT_DONE` once it streams, then hang.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/suite/effects.rs"]
mod effects;

use std::io::Write;
use std::path::PathBuf;

use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::{Config, Hearth};
use hearth_protocol::tasks::{TaskKind, TaskStatus};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(data), Some(effects_db), Some(mode)) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: task_worker <data dir> <effects db> <after-effect|during-effect|drain>");
        std::process::exit(2);
    };
    let mut config = Config::new(PathBuf::from(data));
    config.start_workers = false;
    config.sample_slow_step = std::time::Duration::from_secs(3600);
    let hearth = Hearth::open(config).await.unwrap();
    let engine = hearth.tasks().clone();
    match mode.as_str() {
        "after-effect" | "during-effect" => {
            // Only these modes perform effects; two drain workers starting at once would
            // otherwise race to create the effects file.
            let effects = effects::Effects::open(&PathBuf::from(effects_db)).await;
            let during = mode == "during-effect";
            engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
                let effects = effects.clone();
                async move {
                    let action = serde_json::json!({ "to": "sam@example.com", "body": "hello" });
                    let receipt = ctx
                        .test_effect("send-1", "test_send", &action, move |_cancel| async move {
                            effects.record("send-1", "hello").await;
                            if during {
                                announce();
                                std::future::pending::<()>().await;
                            }
                            Ok(serde_json::json!({ "sent": true }))
                        })
                        .await;
                    assert!(receipt.is_ok(), "{receipt:?}");
                    announce();
                    std::future::pending::<TaskOutcome>().await
                }
            });
            assert_eq!(engine.tick().await.unwrap(), 1, "no task was due");
            std::future::pending::<()>().await;
        }
        "drain" => {
            engine.register(TaskKind::Monitor, |_ctx: TaskContext| async { TaskOutcome::Succeeded("done".into()) });
            let mut changes = engine.subscribe();
            loop {
                engine.tick().await.unwrap();
                if engine.running() == 0 {
                    let open = hearth.store().list_tasks(1000).await.unwrap();
                    if !open.iter().any(|t| matches!(t.status, TaskStatus::Queued | TaskStatus::Running)) {
                        break;
                    }
                    if !open.iter().any(|t| t.status == TaskStatus::Queued) {
                        // The other worker holds the rest: wait for any change, then look again.
                        let _ = tokio::time::timeout(std::time::Duration::from_millis(200), changes.recv()).await;
                        continue;
                    }
                } else {
                    let _ = changes.recv().await;
                }
            }
        }
        fire if fire.starts_with("fire-schedules:") => {
            let now: i64 = fire["fire-schedules:".len()..].parse().unwrap();
            println!("READY");
            std::io::stdout().flush().unwrap();
            let mut go = String::new();
            std::io::stdin().read_line(&mut go).unwrap();
            let made = hearth.schedules().fire_due(now).await.unwrap();
            println!("{made}");
        }
        "chat-run" => {
            let params = hearth_protocol::ipc::RunStartParams { thread_id: None, text: "count to 50 slowly".into() };
            let (started, mut events) = hearth.start_run(params).await.unwrap();
            while !matches!(events.recv().await, Some(hearth_protocol::agui::Event::TextMessageStart(_))) {}
            println!("{}", started.thread_id);
            announce();
            std::future::pending::<()>().await;
        }
        other => panic!("unknown mode {other}"),
    }
}

fn announce() {
    let mut out = std::io::stdout();
    writeln!(out, "EFFECT_DONE").unwrap();
    out.flush().unwrap();
}
