//! The local model as a [`ModelProvider`]: the app's side of the worker. It checks a file
//! before any of llama.cpp touches it, renders the conversation with the model's own
//! template, constrains the answer by the tools' grammar, and streams the worker's tokens as
//! the other providers stream theirs.
//!
//! One generation at a time per model (the slot's lock; others wait their turn). Stop sends
//! [`Request::Stop`] and waits [`STOP_GRACE`] for the worker to confirm, then kills it: a
//! stopped answer never goes on writing. A worker that dies (llama.cpp aborted) is reported
//! and replaced by the next request; the app is untouched.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, MutexGuard};
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::file_stamp::FileStamp;
use super::grammar::{Answer, answer_grammar, read_answer};
use super::wire::{Conversation, End, Generate, ModelInfo, Reply, Request, Stats};
use crate::providers::{FinishReason, ModelEvent, ModelProvider, ModelRequest, ProviderError};
use hearth_protocol::settings::{LocalModelActivity, LocalModelState};

/// The hidden argument that makes Hearth's binary a model worker.
pub const WORKER_FLAG: &str = "--local-model-worker";

/// How long a stopped worker has to confirm before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// The default answer length when the request sets none.
const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The longest line the worker may send (a token's text, a model's facts).
const MAX_LINE: usize = 1 << 20;

/// How long a worker may take to start, and to read or load a model (a 1.5B model maps in
/// about a second; a slow disk and a large file take longer).
const START_TIMEOUT: Duration = Duration::from_secs(30);
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// How to start a worker.
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    /// This very binary in its worker mode: what the app runs.
    pub fn this_binary() -> std::io::Result<Self> {
        Ok(Self { program: std::env::current_exe()?, args: vec![WORKER_FLAG.into()] })
    }
}

/// A local model, as Settings describes it.
#[derive(Clone, Debug)]
pub struct LocalModelConfig {
    /// How to start a worker.
    pub worker: WorkerCommand,
    /// The GGUF file.
    pub path: PathBuf,
    /// The context length in tokens.
    pub context: u32,
    /// CPU threads.
    pub threads: u32,
    /// The model is unloaded (its worker ended) after this long without a request; `None`
    /// keeps it loaded while the model is open.
    pub idle_unload: Option<Duration>,
    /// The file its permissions to act were given to (a probe report, the owner's override):
    /// a worker loads the file only while it is still that one, so a file replaced while
    /// Hearth runs is never loaded with another file's tools. `None`: it may only read.
    pub permitted_file: Option<FileStamp>,
}

impl LocalModelConfig {
    /// `path` with the defaults: a 4096-token context, every core but one, unloaded after ten
    /// idle minutes. Every core but one: ggml's threads wait for each other by spinning, so
    /// when another program holds a core, two threads on two cores wrote 3 tokens/s where one
    /// wrote 16 (Qwen2.5-1.5B, issue 33's measurements); the app is rarely alone.
    pub fn new(worker: WorkerCommand, path: PathBuf) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1) as u32);
        Self { worker, path, context: 4096, threads, idle_unload: Some(Duration::from_secs(600)), permitted_file: None }
    }
}

fn local(detail: impl Into<String>) -> ProviderError {
    ProviderError::Local { detail: detail.into() }
}

/// Whether this computer's processor can run the built-in engine, which is built for AVX2
/// (`.cargo/config.toml`): a processor without it would stop the worker on its first
/// instruction, so the app says so instead.
pub fn check_cpu() -> Result<(), ProviderError> {
    #[cfg(target_arch = "x86_64")]
    {
        let missing: Vec<&str> = [
            ("AVX", std::arch::is_x86_feature_detected!("avx")),
            ("AVX2", std::arch::is_x86_feature_detected!("avx2")),
            ("FMA", std::arch::is_x86_feature_detected!("fma")),
            ("F16C", std::arch::is_x86_feature_detected!("f16c")),
        ]
        .into_iter()
        .filter_map(|(name, present)| (!present).then_some(name))
        .collect();
        if !missing.is_empty() {
            return Err(local(format!(
                "this computer's processor lacks {}, which Hearth's built-in model engine needs (most processors since 2013 have them); \
                 use a model server or a provider instead",
                missing.join(", ")
            )));
        }
    }
    Ok(())
}

/// This computer's memory in bytes, where the system says.
fn total_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Checks a file before llama.cpp reads any of it: that it exists, is GGUF, and could fit in
/// this computer's memory. Returns its size.
pub fn check_file(path: &Path) -> Result<u64, ProviderError> {
    let shown = path.display();
    // A folder, a pipe or a device is no model file (and opening a pipe would wait forever).
    let kind = std::fs::metadata(path).map_err(|err| local(format!("{shown} cannot be read: {err}")))?;
    if !kind.is_file() {
        return Err(local(format!("{shown} is not a file; choose a .gguf file")));
    }
    let mut file = std::fs::File::open(path).map_err(|err| local(format!("{shown} cannot be opened: {err}")))?;
    let size = file.metadata().map_err(|err| local(format!("{shown} cannot be read: {err}")))?.len();
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
        return Err(local(format!("{shown} is not a GGUF model file; choose a .gguf file (llama.cpp's format)")));
    }
    if let Some(memory) = total_memory()
        && size > memory
    {
        return Err(local(format!("{shown} is {}, more than this computer's memory ({}); choose a smaller model", gib(size), gib(memory))));
    }
    Ok(size)
}

/// A model file's facts, read by a worker of its own (which then ends), after
/// [`check_file`] and [`check_cpu`]; refused if the model and its context would not fit in
/// memory or it has no chat template Hearth can use.
pub async fn inspect(config: &LocalModelConfig) -> Result<ModelInfo, ProviderError> {
    check_cpu()?;
    // Off the async threads: a file on a slow or network disk can take its time to answer.
    let path = config.path.clone();
    tokio::task::spawn_blocking(move || check_file(&path)).await.map_err(|err| local(format!("checking the file stopped: {err}")))??;
    let mut worker = Worker::start(&config.worker).await?;
    worker.send(&Request::Inspect { path: config.path.clone(), context: config.context }).await?;
    let info = match worker.reply_within(LOAD_TIMEOUT).await? {
        Reply::Info(info) => info,
        Reply::Failed { message, .. } => return Err(local(format!("{} is not a usable model: {message}", config.path.display()))),
        other => return Err(local(format!("the model worker answered out of turn: {}", kind_of(&other)))),
    };
    worker.end().await;
    if info.chat_template.is_none() {
        return Err(local(format!(
            "{} carries no chat template, so Hearth cannot tell how to write a conversation for it; choose an instruction-tuned (chat) model",
            info.name
        )));
    }
    if let Some(problem) = &info.template_problem {
        return Err(local(format!("{} has a chat template Hearth cannot use: {problem}", info.name)));
    }
    if let Some(memory) = total_memory()
        && info.memory_bytes > memory
    {
        return Err(local(format!(
            "{} needs about {} with a {}-token context, more than this computer's memory ({}); choose a smaller model or a shorter context",
            info.name,
            gib(info.memory_bytes),
            config.context,
            gib(memory)
        )));
    }
    Ok(info)
}

/// A reply's kind, for a message (never its text: a token is the owner's data).
fn kind_of(reply: &Reply) -> &'static str {
    match reply {
        Reply::Ready => "ready",
        Reply::Info(_) => "a model's facts",
        Reply::Loaded(_) => "loaded",
        Reply::Token { .. } => "a token",
        Reply::Done { .. } => "done",
        Reply::Failed { .. } => "failed",
    }
}

/// A running worker: its process and pipes.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: FramedRead<ChildStdout, LinesCodec>,
}

impl Worker {
    async fn start(command: &WorkerCommand) -> Result<Self, ProviderError> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| local(format!("the model worker {} did not start: {err}", command.program.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(local("the model worker has no pipes"));
        };
        let mut worker = Self { child, stdin, replies: FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE)) };
        match worker.reply_within(START_TIMEOUT).await? {
            Reply::Ready => Ok(worker),
            Reply::Failed { message, .. } => Err(local(message)),
            other => Err(local(format!("the model worker answered out of turn: {}", kind_of(&other)))),
        }
    }

    async fn send(&mut self, request: &Request) -> Result<(), ProviderError> {
        let mut line = serde_json::to_vec(request).map_err(|err| local(format!("a request could not be written: {err}")))?;
        line.push(b'\n');
        self.stdin.write_all(&line).await.map_err(|_| local("the model worker stopped (its input is closed)"))?;
        self.stdin.flush().await.map_err(|_| local("the model worker stopped (its input is closed)"))
    }

    /// The next reply; the worker's end (llama.cpp aborted, or it was killed) is an error
    /// that says how it ended.
    async fn reply(&mut self) -> Result<Reply, ProviderError> {
        match self.replies.next().await {
            Some(Ok(line)) => {
                serde_json::from_str(&line).map_err(|err| local(format!("the model worker said something unreadable: {err}")))
            }
            Some(Err(_)) | None => {
                // Killed on its way out if it is still there (a line too long, a broken pipe).
                let _ = self.child.start_kill();
                let status = self.child.wait().await.map(|s| s.to_string()).unwrap_or_else(|err| err.to_string());
                Err(local(format!("the model worker ended ({status}): llama.cpp could not go on with this model")))
            }
        }
    }

    /// [`Self::reply`], or an error (and the worker killed as it drops) after `limit`.
    async fn reply_within(&mut self, limit: Duration) -> Result<Reply, ProviderError> {
        tokio::time::timeout(limit, self.reply())
            .await
            .unwrap_or_else(|_| Err(local(format!("the model worker did not answer within {} s", limit.as_secs()))))
    }

    /// Closes its input (the worker ends when it reads the end) and waits for it.
    async fn end(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(STOP_GRACE, self.child.wait()).await;
    }
}

/// The one generation slot: the worker (none until the first request, and after an idle
/// unload or a crash) and when it was last used.
struct Slot {
    worker: Option<Worker>,
    last_used: Instant,
    /// A generation the worker may still be writing: its stream was dropped before its end
    /// (Stop drops it; so do a lost lease and a closed client). The next request stops it
    /// first, so no token of it is read as the next answer's.
    unfinished: Option<u64>,
}

impl Slot {
    /// Replaces the worker (the old one, if any, is killed as it drops) and notes its pid.
    fn set(&mut self, worker: Option<Worker>, pid: &AtomicU32) {
        pid.store(worker.as_ref().and_then(|w| w.child.id()).unwrap_or(0), Ordering::SeqCst);
        self.worker = worker;
        self.unfinished = None;
    }
}

struct Inner {
    config: LocalModelConfig,
    info: ModelInfo,
    slot: Mutex<Slot>,
    next_id: AtomicU64,
    last_stats: StdMutex<Option<Stats>>,
    /// The running worker's process id (0: none), readable while an answer holds the slot.
    pid: AtomicU32,
    /// What the model is doing and since when (for the chat's header), and how many answers
    /// wait for the slot.
    doing: StdMutex<(LocalModelState, Instant)>,
    waiting: AtomicU32,
    /// The stamp of the file as the last worker was started on it.
    loaded_file: StdMutex<Option<FileStamp>>,
}

impl Inner {
    fn doing(&self, state: LocalModelState) {
        *self.doing.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (state, Instant::now());
    }
}

/// A GGUF model run by Hearth's own worker.
#[derive(Clone)]
pub struct LocalModel {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel").field("name", &self.inner.info.name).field("path", &self.inner.config.path).finish()
    }
}

impl LocalModel {
    /// Checks the file ([`inspect`]) and its chat template; the model loads on the first
    /// request. Must be called inside a tokio runtime (the idle unloader runs there).
    pub async fn open(config: LocalModelConfig) -> Result<Self, ProviderError> {
        let info = inspect(&config).await?;
        let inner = Arc::new(Inner {
            config,
            info,
            slot: Mutex::new(Slot { worker: None, last_used: Instant::now(), unfinished: None }),
            next_id: AtomicU64::new(1),
            last_stats: StdMutex::new(None),
            pid: AtomicU32::new(0),
            doing: StdMutex::new((LocalModelState::Idle, Instant::now())),
            waiting: AtomicU32::new(0),
            loaded_file: StdMutex::new(None),
        });
        tokio::spawn(unload_when_idle(Arc::downgrade(&inner)));
        Ok(Self { inner })
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.inner.config.path
    }

    /// The file its permissions to act were given to ([`LocalModelConfig::permitted_file`]).
    pub fn permitted_file(&self) -> Option<FileStamp> {
        self.inner.config.permitted_file
    }

    /// The stamp the model file had as the last worker was started on it (none before one was).
    pub fn loaded_file(&self) -> Option<FileStamp> {
        *self.inner.loaded_file.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The model's facts.
    pub fn info(&self) -> &ModelInfo {
        &self.inner.info
    }

    /// The counters of the last generation that ended.
    pub fn last_stats(&self) -> Option<Stats> {
        *self.inner.last_stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What the model is doing, for the chat's header: waiting for another answer to end,
    /// reading the prompt, writing; and the last answer's speed and first-token time.
    pub fn activity(&self) -> LocalModelActivity {
        let (state, since) = *self.inner.doing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let last = self.last_stats();
        LocalModelActivity {
            name: self.inner.info.name.clone(),
            state,
            for_ms: u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX),
            waiting: self.inner.waiting.load(Ordering::SeqCst),
            tokens_per_second: last
                .filter(|s| s.generated_tokens > 1 && s.generate_ms > 0.0)
                .map(|s| (f64::from(s.generated_tokens - 1) / (s.generate_ms / 1000.0)) as f32),
            first_token_ms: last.filter(|s| s.first_token_ms > 0.0).map(|s| s.first_token_ms as u32),
        }
    }

    /// The worker's process id, while one runs (for tests that end it from outside).
    pub fn worker_pid(&self) -> Option<u32> {
        Some(self.inner.pid.load(Ordering::SeqCst)).filter(|&pid| pid != 0)
    }
}

/// Ends the worker once the model has been idle for the configured time; stops with the model.
async fn unload_when_idle(inner: Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let Some(idle) = strong.config.idle_unload else { return };
        let wait = match strong.slot.try_lock() {
            Ok(mut slot) => {
                let since = slot.last_used.elapsed();
                if since >= idle {
                    strong.pid.store(0, Ordering::SeqCst);
                    slot.unfinished = None;
                    if let Some(worker) = slot.worker.take() {
                        worker.end().await;
                    }
                    idle
                } else {
                    idle - since
                }
            }
            // In use: look again a full period later.
            Err(_) => idle,
        };
        drop(strong);
        tokio::time::sleep(wait.max(Duration::from_secs(1))).await;
    }
}

impl ModelProvider for LocalModel {
    /// No request leaves this computer, so there is no try to report.
    fn stream_reporting<'a>(
        &'a self,
        request: &'a ModelRequest,
        cancel: &'a CancellationToken,
        _tries: crate::providers::TryReport,
    ) -> BoxStream<'a, Result<ModelEvent, ProviderError>> {
        let state = Drive {
            model: &self.inner,
            request,
            cancel,
            phase: Phase::Start,
            out: VecDeque::new(),
            stopped: false,
            leading: true,
            active: false,
        };
        futures::stream::unfold(state, Drive::next).boxed()
    }
}

enum Phase<'a> {
    Start,
    Writing {
        slot: MutexGuard<'a, Slot>,
        id: u64,
        call: Option<String>,
        started: bool,
    },
    /// Ended; what is left in `out` is passed on unless Stop came first.
    Over,
}

struct Drive<'a> {
    model: &'a Inner,
    request: &'a ModelRequest,
    cancel: &'a CancellationToken,
    phase: Phase<'a>,
    out: VecDeque<Result<ModelEvent, ProviderError>>,
    /// The stop was passed on: nothing follows it.
    stopped: bool,
    /// No text has been passed on yet.
    leading: bool,
    /// This answer holds the model (reading or writing).
    active: bool,
}

/// One answer waiting for the slot, counted while it waits (a dropped wait counts down too).
struct Waiting<'a>(&'a AtomicU32);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicU32) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Drive<'_> {
    /// However the answer ends — finished, failed, stopped, or its stream dropped — the model
    /// is no longer reading or writing it.
    fn drop(&mut self) {
        if self.active {
            self.model.doing(LocalModelState::Idle);
        }
    }
}

impl<'a> Drive<'a> {
    async fn next(mut self) -> Option<(Result<ModelEvent, ProviderError>, Self)> {
        loop {
            // After Stop nothing but the stop itself is passed on, whatever was queued.
            if self.cancel.is_cancelled() && !matches!(self.phase, Phase::Writing { .. }) && !self.stopped {
                self.stopped = true;
                self.out.clear();
                self.phase = Phase::Over;
                return Some((Err(ProviderError::Cancelled), self));
            }
            if self.active && matches!(self.phase, Phase::Over) {
                self.active = false;
                self.model.doing(LocalModelState::Idle);
            }
            if let Some(event) = self.out.pop_front() {
                if matches!(event, Err(ProviderError::Cancelled)) {
                    self.stopped = true;
                }
                return Some((event, self));
            }
            match std::mem::replace(&mut self.phase, Phase::Over) {
                Phase::Over => return None,
                Phase::Start => match self.begin().await {
                    Ok(phase) => self.phase = phase,
                    Err(err) => self.out.push_back(Err(err)),
                },
                Phase::Writing { mut slot, id, mut call, mut started } => {
                    let reply = {
                        let worker = slot.worker.as_mut()?;
                        tokio::select! {
                            biased;
                            () = self.cancel.cancelled() => None,
                            reply = worker.reply() => Some(reply),
                        }
                    };
                    let Some(reply) = reply else {
                        if let Some(stats) = stop(&mut slot, id, &self.model.pid).await {
                            *self.model.last_stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(stats);
                        }
                        self.out.push_back(Err(ProviderError::Cancelled));
                        continue;
                    };
                    match reply {
                        Ok(Reply::Token { id: of, text }) if of == id => {
                            if !started && !text.is_empty() {
                                started = true;
                                self.model.doing(LocalModelState::Writing);
                                if text.starts_with('<') {
                                    call = Some(String::new());
                                }
                            }
                            match &mut call {
                                Some(buffer) => buffer.push_str(&text),
                                // The grammar lets text open with one space (SentencePiece
                                // models write their first word so); the owner sees none.
                                None if self.leading => {
                                    let trimmed = text.trim_start_matches(' ');
                                    if !trimmed.is_empty() {
                                        self.leading = false;
                                        self.out.push_back(Ok(ModelEvent::TextDelta(trimmed.to_owned())));
                                    }
                                }
                                None => self.out.push_back(Ok(ModelEvent::TextDelta(text))),
                            }
                            self.phase = Phase::Writing { slot, id, call, started };
                        }
                        Ok(Reply::Done { id: of, end, stats }) if of == id => {
                            *self.model.last_stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(stats);
                            slot.last_used = Instant::now();
                            slot.unfinished = None;
                            self.finish(id, end, call);
                        }
                        Ok(Reply::Failed { id: Some(of), message }) if of == id => {
                            slot.last_used = Instant::now();
                            slot.unfinished = None;
                            self.out.push_back(Err(local(message)));
                        }
                        Ok(other) => {
                            slot.set(None, &self.model.pid);
                            self.out.push_back(Err(local(format!("the model worker answered out of turn: {}", kind_of(&other)))));
                        }
                        Err(err) => {
                            slot.set(None, &self.model.pid);
                            self.out.push_back(Err(err));
                        }
                    }
                }
            }
        }
    }

    /// Renders the prompt, takes the slot (waiting for another answer to end), starts and
    /// loads the worker if none runs, and asks for the answer.
    async fn begin(&mut self) -> Result<Phase<'a>, ProviderError> {
        let model = self.model;
        let conversation = Conversation {
            system: self.request.system.clone(),
            messages: self.request.messages.clone(),
            tools: self.request.tools.iter().map(|t| (t.name.clone(), t.description.clone(), t.parameters.clone())).collect(),
        };
        let grammar = answer_grammar(&self.request.tools);
        let waiting = Waiting::new(&model.waiting);
        let mut slot = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(ProviderError::Cancelled),
            slot = model.slot.lock() => slot,
        };
        drop(waiting);
        // An answer whose stream was dropped may still be being written: stopped first.
        if let Some(old) = slot.unfinished {
            let _ = stop(&mut slot, old, &model.pid).await;
        }
        if slot.worker.is_none() {
            let started = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(ProviderError::Cancelled),
                worker = load(&model.config) => worker?,
            };
            let (started, file) = started;
            *model.loaded_file.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = file;
            slot.set(Some(started), &model.pid);
        }
        let id = model.next_id.fetch_add(1, Ordering::Relaxed);
        let max_tokens = self.request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let sent = match slot.worker.as_mut() {
            Some(worker) => worker.send(&Request::Generate(Generate { id, conversation, grammar, max_tokens })).await,
            None => Err(local("the model worker is gone")),
        };
        if let Err(err) = sent {
            slot.set(None, &model.pid);
            return Err(err);
        }
        slot.unfinished = Some(id);
        model.doing(LocalModelState::Reading);
        self.active = true;
        Ok(Phase::Writing { slot, id, call: None, started: false })
    }

    fn finish(&mut self, id: u64, end: End, call: Option<String>) {
        let reason = match end {
            End::Finished => FinishReason::Stop,
            End::Length => FinishReason::Length,
            End::Stopped => {
                self.out.push_back(Err(ProviderError::Cancelled));
                return;
            }
        };
        let Some(text) = call else {
            self.out.push_back(Ok(ModelEvent::Finished { reason }));
            return;
        };
        match read_answer(&text) {
            Ok(Answer::Call { name, arguments }) => {
                let call_id = format!("local-{id}");
                self.out.push_back(Ok(ModelEvent::ToolCallStart { id: call_id.clone(), name }));
                self.out.push_back(Ok(ModelEvent::ToolCallArgs { id: call_id.clone(), delta: arguments }));
                self.out.push_back(Ok(ModelEvent::ToolCallEnd { id: call_id }));
                self.out.push_back(Ok(ModelEvent::Finished { reason: FinishReason::ToolCalls }));
            }
            // The grammar keeps `<` from starting text, so this is a call cut off by the length limit.
            Ok(Answer::Text(text)) => {
                self.out.push_back(Ok(ModelEvent::TextDelta(text)));
                self.out.push_back(Ok(ModelEvent::Finished { reason }));
            }
            Err(detail) => self.out.push_back(Err(local(format!("the model's tool call is incomplete: {detail}")))),
        }
    }
}

/// Starts a worker and loads the model into it, if the file is still the one its permissions
/// were given to. (The stamp is read just before the worker opens the file: a file swapped in
/// that instant is the one window left, on the owner's own disk.)
async fn load(config: &LocalModelConfig) -> Result<(Worker, Option<FileStamp>), ProviderError> {
    let file = FileStamp::of(&config.path).await;
    if let Some(permitted) = config.permitted_file
        && file != Some(permitted)
    {
        return Err(local(format!(
            "{} has changed since it was tested, so it may not act on what it was allowed to; test it again in Settings → Model provider (or choose it again)",
            config.path.display()
        )));
    }
    let mut worker = Worker::start(&config.worker).await?;
    worker.send(&Request::Load { path: config.path.clone(), context: config.context, threads: config.threads }).await?;
    match worker.reply_within(LOAD_TIMEOUT).await? {
        Reply::Loaded(_) => Ok((worker, file)),
        Reply::Failed { message, .. } => Err(local(format!("{} did not load: {message}", config.path.display()))),
        other => Err(local(format!("the model worker answered out of turn: {}", kind_of(&other)))),
    }
}

/// Stops generation `id`: asks the worker, drains what it still says until its end, and kills
/// it if that takes longer than [`STOP_GRACE`]. Nothing it says after Stop is passed on.
/// Returns the stopped generation's counters when the worker confirmed.
async fn stop(slot: &mut Slot, id: u64, pid: &AtomicU32) -> Option<Stats> {
    let worker = slot.worker.as_mut()?;
    let mut stats = None;
    let confirmed = worker.send(&Request::Stop { id }).await.is_ok()
        && tokio::time::timeout(STOP_GRACE, async {
            loop {
                match worker.reply().await {
                    Ok(Reply::Done { id: of, stats: counted, .. }) if of == id => {
                        stats = Some(counted);
                        return true;
                    }
                    Ok(Reply::Failed { id: Some(of), .. }) if of == id => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        })
        .await
        .unwrap_or(false);
    slot.last_used = Instant::now();
    slot.unfinished = None;
    if !confirmed {
        // Killed on drop (kill_on_drop); the next request starts a new worker.
        slot.set(None, pid);
    }
    stats
}
