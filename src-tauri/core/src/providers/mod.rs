//! Model providers: one [`ModelProvider`] trait that streams a model's answer as
//! [`ModelEvent`]s, and its implementations over the three wire formats Hearth speaks —
//! OpenAI Chat Completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio), Anthropic Messages
//! and OpenAI Responses.
//!
//! Every provider retries only before anything has streamed (429, 5xx, unreachable; never
//! 401/403 or another 4xx), honours cancellation by dropping the connection, and fails with a
//! [`ProviderError`] that says what to do and never carries the API key or the request.
//!
//! Outbound bounds: a base URL is `https://`, or `http://` only to this computer; redirects
//! are never followed (they would resend the key and the conversation); one SSE line or
//! event is at most 4 MiB; one answer makes at most [`MAX_TOOL_CALLS_PER_TURN`] tool calls.

mod anthropic;
pub(crate) mod config;
mod error;
mod http;
mod openai_chat;
mod openai_responses;

mod types;

/// The most tool calls one model answer may make. An answer that starts one more ends with
/// [`ProviderError::TooManyToolCalls`] before any of its calls run.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 16;

pub use anthropic::Anthropic;
pub use config::{ProviderConfig, RetryPolicy};
pub(crate) use config::{is_loopback, without_credentials};
pub use error::ProviderError;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;

pub use types::{
    FinishReason, IMAGE_DROPPED_NOTE, ImagePart, Message, ModelEvent, ModelProvider, ModelRequest, ProviderTry, ToolCall, ToolSpec,
    TryReport,
};

/// The providers' stream decoding end to end, for the fuzz target: `bytes` split into pushes
/// at `cuts`, framed by the SSE decoder and handed to format `kind`'s decoder (0 Anthropic,
/// 1 OpenAI Chat, else OpenAI Responses), then the end of the body. Errors are fine; panics
/// and unbounded growth are not.
#[doc(hidden)]
pub fn fuzz_stream(kind: u8, cuts: &[usize], bytes: &[u8]) {
    let mut decoder = match kind {
        0 => anthropic::wire_decoder("fuzz"),
        1 => openai_chat::wire_decoder("fuzz"),
        _ => openai_responses::wire_decoder("fuzz"),
    };
    let mut sse = hearth_protocol::sse::Framer::with_max_event_bytes(http::MAX_EVENT_BYTES);
    let mut out = std::collections::VecDeque::new();
    let mut feed = |event, out: &mut std::collections::VecDeque<ModelEvent>| match decoder.feed(event, out) {
        Ok(http::Flow::Continue) => true,
        Ok(http::Flow::Done) | Err(_) => false,
    };
    let mut start = 0;
    let mut pieces: Vec<&[u8]> = Vec::new();
    for &cut in cuts {
        let cut = cut.min(bytes.len()).max(start);
        pieces.push(&bytes[start..cut]);
        start = cut;
    }
    pieces.push(&bytes[start..]);
    for piece in pieces {
        // The driver's own framing step (`http::frames`): events up to an over-long one.
        let (events, too_large) = http::frames(&mut sse, piece);
        for event in events {
            if !feed(event, &mut out) {
                return;
            }
            out.clear();
        }
        if too_large.is_some() {
            return;
        }
    }
    if let Some(event) = http::last_event(&mut sse)
        && !feed(event, &mut out)
    {
        return;
    }
    let _ = decoder.eof(&mut out);
}
