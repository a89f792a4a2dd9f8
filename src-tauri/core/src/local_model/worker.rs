//! The model worker: Hearth's own binary in a hidden mode (`hearth --local-model-worker`),
//! where llama.cpp runs. llama.cpp stops the process on some bad files and misuses
//! (`GGML_ASSERT` calls `abort`), so it never runs inside the app: a broken or hostile GGUF
//! file ends this process, and the app reports it (`super::provider`).
//!
//! Requests arrive on stdin, one JSON line each ([`super::wire`]); a reader thread passes
//! them on and sets the stop flag at once for [`Request::Stop`], which the model's thread
//! reads between prompt chunks and between tokens.

use std::io::{BufRead, Write};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};

use super::template::ChatTemplate;
use super::wire::{End, Generate, ModelInfo, Reply, Request, Stats};
use crate::providers::{ModelRequest, ToolSpec};

/// The most of a template Settings is sent (it shows the first line).
const TEMPLATE_SHOWN: usize = 4096;
/// The longest name or token text sent back from a file's metadata.
const META_SHOWN: usize = 256;

/// Prompt tokens read per decode call at first; then sized so a chunk takes about
/// [`CHUNK_SECONDS`], which bounds how long Stop waits while a prompt is read (it should land
/// within 0.3 s). That bound has a price on a small machine: llama.cpp's own loop
/// (benches/llama_reference.c, Qwen2.5-Coder-1.5B, 2 threads, 2026-12-06) read 35 tokens/s in
/// chunks of 8, 50 in 16, 58 in 32, 64 in 64 and 68 in 512, and Hearth's chunks, sized for 0.25
/// s (or for 0.1 s), read that model's prompt at 31.7 tokens/s.
const FIRST_CHUNK: usize = 16;
const CHUNK_SECONDS: f64 = 0.25;
const MAX_CHUNK: usize = 512;

/// No generation is being stopped.
const NONE: u64 = u64::MAX;

/// Runs the worker until stdin closes. Returns the process's exit code.
pub fn run() -> i32 {
    let send = send_from_reader;
    let mut backend = match LlamaBackend::init() {
        Ok(backend) => backend,
        Err(err) => {
            send(&Reply::Failed { id: None, message: format!("llama.cpp did not start: {err}") });
            return 1;
        }
    };
    backend.void_logs();
    send(&Reply::Ready);

    let stop = Arc::new(AtomicU64::new(NONE));
    let (requests, inbox) = mpsc::channel::<Request>();
    {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Request>(&line) {
                    Ok(Request::Stop { id }) => stop.store(id, Ordering::SeqCst),
                    Ok(request) => {
                        if requests.send(request).is_err() {
                            break;
                        }
                    }
                    // The app wrote it: a line that does not parse is a bug there, said back.
                    Err(err) => {
                        send_from_reader(&Reply::Failed { id: None, message: format!("the worker could not read a request: {err}") })
                    }
                }
            }
        });
    }

    let mut loaded: Option<Loaded> = None;
    while let Ok(request) = inbox.recv() {
        match request {
            Request::Inspect { path, context } => match load_model(&backend, &path) {
                Ok(model) => send(&Reply::Info(info(&model, &path, context).0)),
                Err(message) => send(&Reply::Failed { id: None, message }),
            },
            Request::Load { path, context, threads } => {
                if loaded.is_some() {
                    send(&Reply::Failed { id: None, message: "this worker has a model loaded already".into() });
                    continue;
                }
                match Loaded::new(&backend, &path, context, threads) {
                    Ok(model) => {
                        send(&Reply::Loaded(info(model.model, &path, context).0));
                        loaded = Some(model);
                    }
                    Err(message) => send(&Reply::Failed { id: None, message }),
                }
            }
            Request::Generate(generate) => match loaded.as_mut() {
                Some(model) => {
                    let id = generate.id;
                    match model.generate(&generate, &stop, &send) {
                        Ok((end, stats)) => send(&Reply::Done { id, end, stats }),
                        Err(message) => send(&Reply::Failed { id: Some(id), message }),
                    }
                }
                None => send(&Reply::Failed { id: Some(generate.id), message: "no model is loaded".into() }),
            },
            Request::Stop { .. } => {}
        }
    }
    0
}

/// Writes one reply line (stdout's lock keeps lines whole when two threads write).
fn send_from_reader(reply: &Reply) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the app is gone: the next read of stdin ends the worker.
    let _ = serde_json::to_writer(&mut out, reply).map(|()| out.write_all(b"\n")).map(|_| out.flush());
}

fn load_model(backend: &LlamaBackend, path: &Path) -> Result<LlamaModel, String> {
    let params = LlamaModelParams::default().with_n_gpu_layers(0).with_use_mmap(true);
    LlamaModel::load_from_file(backend, path, &params).map_err(|err| format!("llama.cpp could not load the file ({err})"))
}

/// A model's facts, and its chat template compiled (when it has one Hearth can use).
fn info(model: &LlamaModel, path: &Path, context: u32) -> (ModelInfo, Result<ChatTemplate, String>) {
    let meta = |key: &str| model.meta_val_str(key).ok().filter(|v| !v.is_empty()).map(|v| v.chars().take(META_SHOWN).collect::<String>());
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let layers = model.n_layer();
    // The KV cache in f16: keys and values, per layer, per position, of the KV heads' width.
    let head_width = u64::from(model.n_embd().unsigned_abs()) / u64::from(model.n_head().max(1));
    let kv = 2 * 2 * u64::from(layers) * u64::from(context) * head_width * u64::from(model.n_head_kv());
    let vocab = model.vocab();
    let piece = |token: LlamaToken| {
        if token.0 < 0 {
            return String::new();
        }
        String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).chars().take(META_SHOWN).collect()
    };
    let source = model.chat_template(None).ok().and_then(|t| t.to_string().ok());
    let (bos_token, eos_token) = (piece(vocab.bos()), piece(vocab.eos()));
    let template = match &source {
        Some(source) => ChatTemplate::new(source, &bos_token, &eos_token),
        None => Err("the file carries no chat template".to_owned()),
    };
    let info = ModelInfo {
        name: meta("general.name").unwrap_or(file_name),
        architecture: meta("general.architecture").unwrap_or_default(),
        file_bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(model.size()),
        parameters: model.n_params(),
        trained_context: model.n_ctx_train(),
        chat_template: source.map(|s| s.chars().take(TEMPLATE_SHOWN).collect()),
        template_problem: template.as_ref().err().cloned(),
        memory_bytes: model.size() + kv,
        layers,
        bos_token,
        eos_token,
    };
    (info, template)
}

/// A loaded model and its one context. The worker loads one model in its life, so the model
/// is leaked to give the context its `'static` borrow.
struct Loaded {
    model: &'static LlamaModel,
    context: LlamaContext<'static>,
    factory: ParserFactory,
    template: ChatTemplate,
    /// The tokens in the context's sequence 0, in order: the cached prefix of the next prompt.
    cached: Vec<LlamaToken>,
    chunk: usize,
}

impl Loaded {
    fn new(backend: &LlamaBackend, path: &Path, context: u32, threads: u32) -> Result<Self, String> {
        let model: &'static LlamaModel = Box::leak(Box::new(load_model(backend, path)?));
        let template = info(model, path, context).1?;
        let threads = i32::try_from(threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(context))
            .with_n_batch(MAX_CHUNK as u32)
            .with_n_ubatch(MAX_CHUNK as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let context =
            model.new_context(backend, params).map_err(|err| format!("llama.cpp could not make a context of {context} tokens ({err})"))?;
        let env = llama_cpp_2::sampling::LlamaSampler::llguidance_tok_env(model);
        let factory = ParserFactory::new_simple(&env).map_err(|err| format!("the grammar engine did not start: {err}"))?;
        Ok(Self { model, context, factory, template, cached: Vec::new(), chunk: FIRST_CHUNK })
    }

    fn generate(&mut self, request: &Generate, stop: &AtomicU64, send: &impl Fn(&Reply)) -> Result<(End, Stats), String> {
        let started = Instant::now();
        let stopped = || stop.load(Ordering::SeqCst) == request.id;
        let vocab = self.model.vocab();
        let conversation = &request.conversation;
        let asked = ModelRequest {
            system: conversation.system.clone(),
            messages: conversation.messages.clone(),
            tools: conversation
                .tools
                .iter()
                .map(|(name, description, parameters)| ToolSpec {
                    name: name.clone(),
                    description: description.clone(),
                    parameters: parameters.clone(),
                })
                .collect(),
            ..ModelRequest::default()
        };
        let segments = self.template.render(&asked)?;
        let mut prompt = Vec::new();
        for segment in &segments {
            prompt.extend(vocab.tokenize(segment.text.as_bytes(), false, segment.special));
        }
        if prompt.is_empty() {
            return Err("the prompt is empty".into());
        }
        let room = self.context.n_ctx() as usize;
        if prompt.len() + 1 >= room {
            return Err(format!(
                "the conversation is {} tokens, more than this model's context of {room} holds; start a new chat or raise the context in Settings",
                prompt.len()
            ));
        }
        let max_tokens = (request.max_tokens as usize).min(room - prompt.len());
        let mut matcher = Matcher::new(self.factory.create_parser(TopLevelGrammar::from_lark(request.grammar.clone())));
        if let Some(err) = matcher.get_error() {
            return Err(format!("the answer's grammar does not compile: {err}"));
        }

        // The cached prefix: what the context holds already, less at least one token (the
        // last one's logits are needed to write the first new token).
        let mut reused = self.cached.iter().zip(&prompt).take_while(|(a, b)| a == b).count().min(prompt.len() - 1);
        if self.context.kv_cache_seq_rm(0, Some(reused as u32), None).is_err() {
            self.context.clear_kv_cache();
            reused = 0;
        }
        self.cached.truncate(reused);
        self.context.reset_timings();
        let mut stats = Stats { prompt_tokens: prompt.len() as u32, reused_tokens: reused as u32, ..Stats::default() };

        // The rest of the prompt in chunks, Stop checked between them. A chunk is never one
        // token unless the whole rest is (llama.cpp counts one-token decodes as writing).
        let mut batch = LlamaBatch::new(MAX_CHUNK, 1);
        let mut at = reused;
        while at < prompt.len() {
            if stopped() {
                self.context.synchronize();
                stats.prompt_ms = ms(started);
                stats.llama_prompt_evals = self.context.timings().n_p_eval();
                return Ok((End::Stopped, stats));
            }
            let mut end = (at + self.chunk).min(prompt.len());
            // Never leave one token alone for the last chunk: take it now if the batch has
            // room, else leave two.
            if prompt.len() - end == 1 {
                end = if end - at < MAX_CHUNK { prompt.len() } else { end - 1 };
            }
            let chunk_started = Instant::now();
            batch.clear();
            for (pos, token) in prompt.iter().enumerate().take(end).skip(at) {
                batch
                    .add(*token, pos as i32, &[0], pos + 1 == prompt.len())
                    .map_err(|err| format!("the prompt did not fit a batch: {err}"))?;
            }
            let decoding = Instant::now();
            self.context.decode(&mut batch).map_err(|err| format!("llama.cpp could not read the prompt: {err}"))?;
            stats.prompt_decode_ms += ms(decoding);
            self.cached.extend_from_slice(&prompt[at..end]);
            stats.evaluated_tokens += (end - at) as u32;
            // Size the next chunk to take about CHUNK_SECONDS at the speed just seen.
            let per_token = chunk_started.elapsed().as_secs_f64() / (end - at) as f64;
            if per_token > 0.0 {
                self.chunk = ((CHUNK_SECONDS / per_token) as usize).clamp(4, MAX_CHUNK);
            }
            at = end;
        }
        // llama.cpp adds what it read to its counters when the context synchronizes.
        self.context.synchronize();
        stats.prompt_ms = ms(started);
        stats.llama_prompt_evals = self.context.timings().n_p_eval();

        // Writing: the grammar masks every token it does not allow; the likeliest allowed one
        // is taken (greedy: the same prompt gives the same answer).
        let writing = Instant::now();
        let mut logits_at = batch.n_tokens() - 1;
        let mut pending: Vec<u8> = Vec::new();
        let mut end = End::Length;
        while (stats.generated_tokens as usize) < max_tokens {
            if stopped() {
                end = End::Stopped;
                break;
            }
            let mask = matcher.compute_mask().map_err(|err| format!("the answer's grammar failed: {err}"))?;
            let logits = self.context.get_logits_ith(logits_at);
            let token = logits
                .iter()
                .enumerate()
                .filter(|(i, _)| mask.is_allowed(*i as u32))
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, _)| LlamaToken(i as i32))
                .ok_or("the answer's grammar allows no token here")?;
            if vocab.is_eog(token) {
                end = End::Finished;
                break;
            }
            matcher.consume_token(token.0 as u32).map_err(|err| format!("the answer's grammar failed: {err}"))?;
            stats.generated_tokens += 1;
            pending.extend(vocab.token_to_piece(token, false, None));
            let whole = match std::str::from_utf8(&pending) {
                Ok(text) => text.len(),
                Err(err) if err.error_len().is_none() => err.valid_up_to(),
                Err(_) => pending.len(),
            };
            if whole > 0 {
                let text = String::from_utf8_lossy(&pending[..whole]).into_owned();
                pending.drain(..whole);
                if stats.first_token_ms == 0.0 {
                    stats.first_token_ms = ms(started);
                }
                // Stop may have landed while the token was computed: nothing is said after it.
                if stopped() {
                    end = End::Stopped;
                    break;
                }
                send(&Reply::Token { id: request.id, text });
            }
            if matcher.is_stopped() {
                end = End::Finished;
                break;
            }
            batch.clear();
            let pos = self.cached.len();
            batch.add(token, pos as i32, &[0], true).map_err(|err| format!("the batch is full: {err}"))?;
            let decoding = Instant::now();
            self.context.decode(&mut batch).map_err(|err| format!("llama.cpp could not write: {err}"))?;
            stats.write_decode_ms += ms(decoding);
            stats.write_decodes += 1;
            self.cached.push(token);
            logits_at = 0;
        }
        stats.generate_ms = ms(writing);
        Ok((end, stats))
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
