//! The model on this computer, beside llama.cpp's own speed on the same file and threads:
//! scripts/bench.sh runs benches/llama_reference.c (llama-bench's loops on llama.cpp's C API,
//! linked from the libraries this bench's worker uses) and passes its JSON rows in
//! HEARTH_LLAMA_BENCH_JSON (without them the column says "—"). For SmolLM2-135M
//! (HEARTH_TEST_GGUF) and any GGUF in
//! HEARTH_BENCH_GGUF: load time, prompt and writing speed, the first token's time without and
//! with the cached prefix, the worker's peak memory, and the probe suite's score per family.
//! Prints `FIGURE | …` lines; asserts nothing.
//!
//! This binary is also its own model worker (the app's `--local-model-worker` mode), so the
//! bench needs no other build.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Instant;

use futures::StreamExt;
use hearth_core::local_model::probe;
use hearth_core::local_model::{LocalModel, LocalModelConfig, WORKER_FLAG, WorkerCommand};
use hearth_core::providers::{Message, ModelEvent, ModelProvider, ModelRequest, ToolSpec};
use hearth_core::tools::{Vision, tool_specs};
use tokio_util::sync::CancellationToken;

fn main() {
    if std::env::args_os().nth(1).is_some_and(|a| a == WORKER_FLAG) {
        std::process::exit(hearth_core::local_model::run_worker());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut files = vec![PathBuf::from(
        std::env::var("HEARTH_TEST_GGUF").unwrap_or_else(|_| "/var/tmp/hearth-models/SmolLM2-135M-Instruct.Q4_1.gguf".into()),
    )];
    if let Ok(more) = std::env::var("HEARTH_BENCH_GGUF") {
        files.push(more.into());
    }
    let reference: serde_json::Value = std::env::var("HEARTH_LLAMA_BENCH_JSON")
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    for file in files {
        runtime.block_on(bench(file, &reference));
    }
}

fn tools() -> Vec<ToolSpec> {
    tool_specs(Vision::TextOnly)
        .into_iter()
        .map(|t| ToolSpec { name: t.name, description: t.description, parameters: t.parameters })
        .collect()
}

async fn answer(model: &LocalModel, request: &ModelRequest) -> String {
    let cancel = CancellationToken::new();
    let events: Vec<_> = model.stream(request, &cancel).collect().await;
    events.into_iter().filter_map(|e| if let Ok(ModelEvent::TextDelta(t)) = e { Some(t) } else { None }).collect()
}

/// The reference's average tokens/s (llama-bench's JSON rows) for `file` with only prompt (`n_prompt > 0`) or only writing.
fn reference_speed(reference: &serde_json::Value, file: &std::path::Path, prompt: bool) -> Option<f64> {
    let name = file.file_name()?.to_str()?;
    reference.as_array()?.iter().find_map(|row| {
        let model = row["model_filename"].as_str()?;
        let is_prompt = row["n_prompt"].as_u64()? > 0 && row["n_gen"].as_u64()? == 0;
        (model.ends_with(name) && is_prompt == prompt).then(|| row["avg_ts"].as_f64()).flatten()
    })
}

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

async fn bench(file: PathBuf, reference: &serde_json::Value) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
    let worker = WorkerCommand { program: std::env::current_exe().unwrap(), args: vec![WORKER_FLAG.into()] };
    let mut config = LocalModelConfig::new(worker, file.clone());
    config.threads = threads;
    let started = Instant::now();
    let model = LocalModel::open(config).await.unwrap();
    let name = model.info().name.clone();
    // The first turn loads the model and reads the agent's whole prompt (rules and every tool).
    let mut request = ModelRequest {
        model: String::new(),
        system: Some(hearth_core::agent::SYSTEM_PROMPT.into()),
        messages: vec![Message::User { text: "Tell me a long story about a lighthouse keeper and a storm.".into() }],
        tools: tools(),
        max_tokens: Some(128),
    };
    let reply = answer(&model, &request).await;
    let first_total = started.elapsed().as_secs_f64();
    let one = model.last_stats().unwrap();
    let pid = model.worker_pid().unwrap();
    request.messages.push(Message::Assistant { text: reply, tool_calls: vec![] });
    request.messages.push(Message::User { text: "Thank you. And how does it end?".into() });
    answer(&model, &request).await;
    let two = model.last_stats().unwrap();
    let peak = peak_kib(pid).unwrap_or(0);

    // Hearth's reading: from the request to the last prompt chunk (the template, the tokenizer
    // and the grammar's set-up included), and the time in llama.cpp's decode calls alone.
    let per_second = |tokens: f64, ms: f64| if ms > 0.0 { tokens / (ms / 1000.0) } else { 0.0 };
    let prompt_speed = per_second(f64::from(one.evaluated_tokens), one.prompt_ms);
    let prompt_decode = per_second(f64::from(one.evaluated_tokens), one.prompt_decode_ms);
    // Writing over both turns (a short first answer alone is a small sample): every token, and
    // the time in llama.cpp's decode calls alone (without the grammar's mask and each choice).
    let written = one.generated_tokens + two.generated_tokens;
    let write_speed = per_second(f64::from(written.saturating_sub(2)), one.generate_ms + two.generate_ms);
    let write_decode = per_second(f64::from(one.write_decodes + two.write_decodes), one.write_decode_ms + two.write_decode_ms);
    let show = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.1} tokens/s"));
    println!(
        "FIGURE | local model {name}: prompt reading ({} tokens, {threads} threads) | {prompt_speed:.1} tokens/s (llama.cpp's decode calls in it: {prompt_decode:.1}) | llama.cpp pp1536 {} | within 5%",
        one.evaluated_tokens,
        show(reference_speed(reference, &file, true))
    );
    println!(
        "FIGURE | local model {name}: writing ({written} tokens in two turns, grammar on) | {write_speed:.1} tokens/s (llama.cpp's decode calls in it: {write_decode:.1}) | llama.cpp tg128 after 1536 {} | within 5%",
        show(reference_speed(reference, &file, false))
    );
    println!(
        "FIGURE | local model {name}: first token, uncached ({} prompt tokens) | {:.2} s (load and first turn {first_total:.1} s) | — | reported",
        one.prompt_tokens,
        one.first_token_ms / 1000.0
    );
    println!(
        "FIGURE | local model {name}: first token, follow-up turn ({} of {} tokens cached, {} read) | {:.2} s | the uncached turn {:.2} s | under 1 s for a 1–2B model",
        two.reused_tokens,
        two.prompt_tokens,
        two.evaluated_tokens,
        two.first_token_ms / 1000.0,
        one.first_token_ms / 1000.0
    );
    println!(
        "FIGURE | local model {name}: worker's peak memory | {:.0} MiB | the file, {:.0} MiB | —",
        peak as f64 / 1024.0,
        model.info().file_bytes as f64 / 1048576.0
    );

    let report = probe::run(&model, &tools(), &CancellationToken::new(), &|_, _| {}).await.unwrap();
    for score in report.scores() {
        println!(
            "FIGURE | local model {name}: probe \"{}\" | {} of {} | — | passes: {}",
            score.family.label(),
            score.passed,
            score.total,
            if score.passes() { "yes" } else { "no" }
        );
    }
}
