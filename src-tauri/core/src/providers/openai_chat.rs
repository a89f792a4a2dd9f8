//! OpenAI Chat Completions (`POST {base}/chat/completions`, `stream: true`): OpenAI and every
//! server that copies it (Ollama, llama.cpp, vLLM, LM Studio). Reasoning arrives as
//! `delta.reasoning_content` (DeepSeek, vLLM, llama.cpp) or `delta.reasoning` (Ollama,
//! OpenRouter).

use std::collections::{BTreeMap, VecDeque};

use futures::stream::BoxStream;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Endpoint, Flow, KeyHeader, SseEvent, WireDecoder, error_message, json};
use super::{FinishReason, Message, ModelEvent, ModelProvider, ModelRequest, ProviderConfig, ProviderError, TryReport};

/// A provider that speaks OpenAI Chat Completions.
#[derive(Debug)]
pub struct OpenAiChat {
    endpoint: Endpoint,
}

impl OpenAiChat {
    /// A client for `config.base_url` (`https://api.openai.com/v1`, `http://localhost:11434/v1`);
    /// the key, if any, goes in `Authorization: Bearer`.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(config, "chat/completions", KeyHeader::Bearer, &[])? })
    }
}

impl ModelProvider for OpenAiChat {
    fn stream_reporting<'a>(
        &'a self,
        request: &'a ModelRequest,
        cancel: &'a CancellationToken,
        tries: TryReport,
    ) -> BoxStream<'a, Result<ModelEvent, ProviderError>> {
        let decoder = ChatDecoder { provider: self.endpoint.provider.clone(), ..ChatDecoder::default() };
        self.endpoint.stream(body(request), decoder, cancel, tries)
    }
}

/// The request body.
pub(crate) fn body(request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    // Chat Completions takes pictures only in user messages, and a run of tool messages must
    // follow its assistant message unbroken: a run's pictures go in one user message after it.
    let mut pictures: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::ToolResult { .. }) {
            flush_pictures(&mut messages, &mut pictures);
        }
        messages.push(match message {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_calls } => {
                let mut m = json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) } });
                if !tool_calls.is_empty() {
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
                        .collect();
                }
                m
            }
            Message::ToolResult { call_id, content, images, .. } => {
                if !images.is_empty() {
                    pictures.push(json!({ "type": "text", "text": format!("The picture the tool call {call_id} returned. {}", super::types::PICTURE_NOTE) }));
                    pictures.extend(images.iter().map(|image| json!({ "type": "image_url", "image_url": { "url": image.data_url() } })));
                }
                json!({ "role": "tool", "tool_call_id": call_id, "content": content })
            }
        });
    }
    flush_pictures(&mut messages, &mut pictures);
    let mut body = json!({ "model": request.model, "messages": messages, "stream": true });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(
                |t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } }),
            )
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body["max_tokens"] = json!(max);
    }
    body
}

/// The pictures of the tool results just written, as one user message.
fn flush_pictures(messages: &mut Vec<Value>, pictures: &mut Vec<Value>) {
    if !pictures.is_empty() {
        messages.push(json!({ "role": "user", "content": std::mem::take(pictures) }));
    }
}

/// This format's stream decoder, for the fuzz target (`providers::fuzz_stream`).
pub(super) fn wire_decoder(provider: &str) -> Box<dyn super::http::WireDecoder> {
    Box::new(ChatDecoder { provider: provider.to_owned(), ..ChatDecoder::default() })
}

#[derive(Debug, Default)]
struct ChatDecoder {
    provider: String,
    /// Open tool calls by their index in the choice.
    calls: BTreeMap<u64, String>,
    saw_call: bool,
    finished: bool,
}

impl ChatDecoder {
    fn close_calls(&mut self, out: &mut VecDeque<ModelEvent>) {
        for (_, id) in std::mem::take(&mut self.calls) {
            out.push_back(ModelEvent::ToolCallEnd { id });
        }
    }
}

impl WireDecoder for ChatDecoder {
    fn feed(&mut self, event: SseEvent, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ProviderError> {
        if event.data.trim() == "[DONE]" {
            if !self.finished {
                self.close_calls(out);
                let reason = if self.saw_call { FinishReason::ToolCalls } else { FinishReason::Stop };
                out.push_back(ModelEvent::Finished { reason });
            }
            return Ok(Flow::Done);
        }
        let chunk = json(&self.provider, &event)?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: error_message(&chunk) });
        }
        let Some(choice) = chunk.pointer("/choices/0") else { return Ok(Flow::Continue) };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()) {
                out.push_back(ModelEvent::ReasoningDelta(text.to_owned()));
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push_back(ModelEvent::TextDelta(text.to_owned()));
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let new_id = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
            // Some servers (Gemini's compatibility layer) send parallel calls all at index 0,
            // each with its own id: a new id at an open index is a new call.
            let open = self.calls.get(&index).filter(|open| new_id.is_none_or(|new| new == open.as_str()));
            let id = match open {
                Some(id) => id.clone(),
                None => {
                    if let Some(previous) = self.calls.remove(&index) {
                        out.push_back(ModelEvent::ToolCallEnd { id: previous });
                    }
                    // A server that leaves the id out gets a unique one: ids key idempotent effects.
                    let id = new_id.map_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()), str::to_owned);
                    let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    self.calls.insert(index, id.clone());
                    self.saw_call = true;
                    out.push_back(ModelEvent::ToolCallStart { id: id.clone(), name });
                    id
                }
            };
            if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                out.push_back(ModelEvent::ToolCallArgs { id, delta: args.to_owned() });
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.close_calls(out);
            self.finished = true;
            let reason = match reason {
                // Ollama and some llama.cpp builds say "stop" after tool calls.
                "stop" if self.saw_call => FinishReason::ToolCalls,
                "stop" => FinishReason::Stop,
                "tool_calls" | "function_call" => FinishReason::ToolCalls,
                "length" => FinishReason::Length,
                other => FinishReason::Other(other.to_owned()),
            };
            out.push_back(ModelEvent::Finished { reason });
        }
        Ok(Flow::Continue)
    }

    fn eof(&mut self, _out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        if self.finished {
            // Some servers end after the finish reason without `[DONE]`.
            return Ok(());
        }
        Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: "the answer ended before it was complete".to_owned() })
    }
}

#[cfg(test)]
#[path = "openai_chat_tests.rs"]
mod tests;
