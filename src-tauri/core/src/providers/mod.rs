//! Model providers: one [`ModelProvider`] trait that streams a model's answer as
//! [`ModelEvent`]s, and its implementations over the three wire formats Hearth speaks —
//! OpenAI Chat Completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio), Anthropic Messages
//! and OpenAI Responses.
//!
//! Every provider retries only before anything has streamed (429, 5xx, unreachable; never
//! 401/403 or another 4xx), honours cancellation by dropping the connection, and fails with a
//! [`ProviderError`] that says what to do and never carries the API key or the request.

mod anthropic;
mod config;
mod error;
mod http;
mod openai_chat;
mod openai_responses;

mod sse;
mod types;

pub use anthropic::Anthropic;
pub use config::{ProviderConfig, RetryPolicy};
pub use error::ProviderError;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;

pub use types::{FinishReason, Message, ModelEvent, ModelProvider, ModelRequest, ToolCall, ToolSpec};
