//! Anthropic Messages (`POST {base}/messages`, `stream: true`): text, thinking and tool_use
//! content blocks over `event:`/`data:` SSE. The key goes in `x-api-key` with
//! `anthropic-version`.

use std::collections::{BTreeMap, VecDeque};

use futures::stream::BoxStream;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Endpoint, Flow, KeyHeader, SseEvent, WireDecoder, error_message, json};
use super::{FinishReason, Message, ModelEvent, ModelProvider, ModelRequest, ProviderConfig, ProviderError, TryReport};

/// The API version Hearth speaks.
const API_VERSION: &str = "2023-06-01";
/// Anthropic requires a length limit; this one is used when the request sets none.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// A provider that speaks Anthropic Messages.
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Endpoint,
}

impl Anthropic {
    /// A client for `config.base_url` (`https://api.anthropic.com/v1`).
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let headers = [("anthropic-version", API_VERSION)];
        Ok(Self { endpoint: Endpoint::new(config, "messages", KeyHeader::Named("x-api-key"), &headers)? })
    }
}

impl ModelProvider for Anthropic {
    fn stream_reporting<'a>(
        &'a self,
        request: &'a ModelRequest,
        cancel: &'a CancellationToken,
        tries: TryReport,
    ) -> BoxStream<'a, Result<ModelEvent, ProviderError>> {
        let decoder = MessagesDecoder { provider: self.endpoint.provider.clone(), ..MessagesDecoder::default() };
        self.endpoint.stream(body(request), decoder, cancel, tries)
    }
}

/// The request body. Consecutive messages of one role merge into one (tool results answer
/// in a single user message, as the API requires).
pub(crate) fn body(request: &ModelRequest) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            Message::User { text } => ("user", vec![json!({ "type": "text", "text": text })]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in tool_calls {
                    // The API takes the input as an object; arguments that are not one (the
                    // model's own malformed output) are sent as an empty object.
                    let input = serde_json::from_str::<Value>(&call.arguments).ok().filter(Value::is_object).unwrap_or_else(|| json!({}));
                    blocks.push(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }));
                }
                ("assistant", blocks)
            }
            Message::ToolResult { call_id, content, is_error, images } => {
                // A result's content is its text, or, with pictures, text and image blocks.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut blocks = vec![json!({ "type": "text", "text": content })];
                    blocks.extend(images.iter().map(|image| {
                        json!({ "type": "image", "source": { "type": "base64", "media_type": image.media_type, "data": image.base64 } })
                    }));
                    Value::Array(blocks)
                };
                ("user", vec![json!({ "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error })])
            }
        };
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages.into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if let Some(system) = &request.system {
        body["system"] = json!(system);
    }
    if !request.tools.is_empty() {
        body["tools"] =
            request.tools.iter().map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters })).collect();
    }
    body
}

/// This format's stream decoder, for the fuzz target (`providers::fuzz_stream`).
pub(super) fn wire_decoder(provider: &str) -> Box<dyn super::http::WireDecoder> {
    Box::new(MessagesDecoder { provider: provider.to_owned(), ..MessagesDecoder::default() })
}

#[derive(Debug, Default)]
struct MessagesDecoder {
    provider: String,
    /// Open tool_use blocks: content index → call id.
    tool_blocks: BTreeMap<u64, String>,
    stop_reason: Option<String>,
}

impl WireDecoder for MessagesDecoder {
    fn feed(&mut self, event: SseEvent, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ProviderError> {
        let data = json(&self.provider, &event)?;
        let kind = data.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let id = block
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("toolu_{}", uuid::Uuid::new_v4().simple()), str::to_owned);
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    self.tool_blocks.insert(index, id.clone());
                    out.push_back(ModelEvent::ToolCallStart { id, name });
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| delta.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => out.extend(text("text").map(ModelEvent::TextDelta)),
                    Some("thinking_delta") => out.extend(text("thinking").map(ModelEvent::ReasoningDelta)),
                    Some("input_json_delta") => {
                        if let (Some(id), Some(delta)) = (self.tool_blocks.get(&index), text("partial_json")) {
                            out.push_back(ModelEvent::ToolCallArgs { id: id.clone(), delta });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(id) = self.tool_blocks.remove(&index) {
                    out.push_back(ModelEvent::ToolCallEnd { id });
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
            }
            "message_stop" => {
                for (_, id) in std::mem::take(&mut self.tool_blocks) {
                    out.push_back(ModelEvent::ToolCallEnd { id });
                }
                let reason = match self.stop_reason.as_deref() {
                    None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
                    Some("tool_use") => FinishReason::ToolCalls,
                    Some("max_tokens") => FinishReason::Length,
                    Some(other) => FinishReason::Other(other.to_owned()),
                };
                out.push_back(ModelEvent::Finished { reason });
                return Ok(Flow::Done);
            }
            "error" => {
                return Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: error_message(&data) });
            }
            // message_start, ping, signature deltas and what later API versions add.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn eof(&mut self, _out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: "the answer ended before it was complete".to_owned() })
    }
}
