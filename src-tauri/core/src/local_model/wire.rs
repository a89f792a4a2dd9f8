//! What the app and its model worker say to each other: one JSON object per line, requests on
//! the worker's stdin, replies on its stdout. Plain types, so both ends (and the tests) share
//! them; the worker is Hearth's own binary in a hidden mode (`super::worker`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::providers::Message;

/// What the app asks of the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Reads a model file's facts (loads it memory-mapped, then lets it go). Answered by
    /// [`Reply::Info`] or [`Reply::Failed`].
    Inspect {
        /// The GGUF file.
        path: PathBuf,
        /// The context the owner would run it with, for the memory estimate.
        context: u32,
    },
    /// Loads a model and makes its context; a worker loads one model in its life (the app
    /// starts another worker for another file). Answered by [`Reply::Loaded`] or [`Reply::Failed`].
    Load {
        /// The GGUF file.
        path: PathBuf,
        /// The context length in tokens.
        context: u32,
        /// CPU threads for reading the prompt and for writing.
        threads: u32,
    },
    /// Writes one answer. Answered by [`Reply::Token`]s, then [`Reply::Done`] (or [`Reply::Failed`]).
    Generate(Generate),
    /// Ends generation `id` at the next token or prompt chunk; answered by its [`Reply::Done`]
    /// with [`End::Stopped`]. Read on its own thread, so it lands while the model works.
    Stop {
        /// The generation to stop.
        id: u64,
    },
}

/// One answer to write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generate {
    /// Names this generation in its replies and in [`Request::Stop`].
    pub id: u64,
    /// The conversation. The worker renders it with the model's chat template
    /// (`super::template`): the template comes from the file, so its rendering — and whatever
    /// memory a hostile one asks for — stays in the worker too.
    pub conversation: Conversation,
    /// The llguidance Lark grammar every token is constrained by (`super::grammar`).
    pub grammar: String,
    /// At most this many tokens are written.
    pub max_tokens: u32,
}

/// What the model is asked: rules, conversation and the tools it is offered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Instructions ahead of the conversation.
    pub system: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools offered: name, description and JSON Schema of each.
    pub tools: Vec<(String, String, serde_json::Value)>,
}

/// A piece of the prompt: the chat template's own text (where its special tokens are read as
/// such) or the conversation's (where `<|im_start|>` is just text, so nothing the agent read
/// can open a turn of its own).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// The text.
    pub text: String,
    /// Whether special tokens in it are read as special (the template's own text only).
    pub special: bool,
}

/// What the worker says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Reply {
    /// The worker is up and reads requests.
    Ready,
    /// A model's facts ([`Request::Inspect`]).
    Info(ModelInfo),
    /// The model is loaded and its context made ([`Request::Load`]).
    Loaded(ModelInfo),
    /// Text of generation `id`, whole UTF-8 characters.
    Token {
        /// The generation.
        id: u64,
        /// The text.
        text: String,
    },
    /// Generation `id` ended.
    Done {
        /// The generation.
        id: u64,
        /// Why.
        end: End,
        /// Its counters.
        stats: Stats,
    },
    /// A request failed; the worker goes on (a model that failed to load leaves none loaded).
    Failed {
        /// The generation it ends, if it answers [`Request::Generate`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u64>,
        /// What went wrong, for the owner.
        message: String,
    },
}

/// Why a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The grammar's answer is complete (or the model ended it where the grammar allows).
    Finished,
    /// It wrote `max_tokens`.
    Length,
    /// [`Request::Stop`] ended it.
    Stopped,
}

/// A generation's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Tokens in the prompt.
    pub prompt_tokens: u32,
    /// Of those, how many were already in the context from the previous generation (the
    /// cached prefix) and were not read again.
    pub reused_tokens: u32,
    /// Prompt tokens this generation sent to the model (`prompt_tokens - reused_tokens`, or
    /// fewer when stopped while reading).
    pub evaluated_tokens: u32,
    /// llama.cpp's own count of prompt tokens it evaluated (`llama_perf_context`'s
    /// `n_p_eval`), reset before each generation: the cross-check of `evaluated_tokens`.
    pub llama_prompt_evals: i32,
    /// Tokens written.
    pub generated_tokens: u32,
    /// Milliseconds reading the prompt.
    pub prompt_ms: f64,
    /// Milliseconds from the request to the first written token (0 when none was).
    pub first_token_ms: f64,
    /// Milliseconds writing.
    pub generate_ms: f64,
    /// Milliseconds in llama.cpp's decode calls while reading: `prompt_ms` without the
    /// template, the tokenizer and the grammar's set-up. (llama.cpp's own timers are off: the
    /// binding does not let them be turned on.)
    #[serde(default)]
    pub prompt_decode_ms: f64,
    /// Decode calls while writing (one per written token but the last).
    #[serde(default)]
    pub write_decodes: u32,
    /// Milliseconds in them: `generate_ms` without the grammar's mask and the choice of each
    /// token.
    #[serde(default)]
    pub write_decode_ms: f64,
}

/// What Settings shows of a model file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// `general.name`, else the file's name.
    pub name: String,
    /// `general.architecture`.
    pub architecture: String,
    /// The file's size.
    pub file_bytes: u64,
    /// Parameters.
    pub parameters: u64,
    /// The context it was trained for.
    pub trained_context: u32,
    /// The start of the chat template the file carries (`tokenizer.chat_template`), if any.
    pub chat_template: Option<String>,
    /// Why Hearth cannot write a conversation with that template (compiled and tried in the
    /// worker), if it cannot.
    pub template_problem: Option<String>,
    /// The memory it needs at the requested context: the weights plus the KV cache.
    pub memory_bytes: u64,
    /// Layers, for the KV estimate.
    pub layers: u32,
    /// The text of its begin-of-sequence token (templates write it as `bos_token`).
    pub bos_token: String,
    /// The text of its end-of-sequence token (`eos_token`).
    pub eos_token: String,
}
