//! The model on this computer: a GGUF file run by llama.cpp (through `llama-cpp-2`) in a
//! worker process of Hearth's own binary, behind the same [`ModelProvider`] trait as the
//! remote providers.
//!
//! - [`provider`]: the app's side — file checks, one generation at a time, Stop, the worker's
//!   life (started on first use, ended when idle, replaced when it dies).
//! - [`template`]: the conversation in the model's own chat template (minijinja), cut so
//!   that text the agent read can never become the template's control tokens.
//! - [`grammar`]: every answer is text or one well-formed call of an offered tool.
//! - [`file_stamp`]: which file a model's permissions to act were given to.
//! - [`wire`]: the JSON lines between app and worker.
//! - `worker` (feature `local-model`): llama.cpp itself, only ever in the worker process.
//!
//! [`ModelProvider`]: crate::providers::ModelProvider

pub mod file_stamp;
pub mod grammar;
pub mod probe;
pub mod provider;
pub mod template;
pub mod wire;
#[cfg(feature = "local-model")]
mod worker;

pub use file_stamp::FileStamp;
pub use provider::{LocalModel, LocalModelConfig, WORKER_FLAG, WorkerCommand, check_cpu, check_file, inspect};
pub use wire::{ModelInfo, Stats};

/// Runs this process as a model worker until its input closes; returns the exit code. The
/// app's `main` calls it when started with [`WORKER_FLAG`].
#[cfg(feature = "local-model")]
pub fn run_worker() -> i32 {
    worker::run()
}
