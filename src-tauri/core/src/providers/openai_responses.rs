//! OpenAI Responses (`POST {base}/responses`, `stream: true`): typed `response.*` events for
//! output text, reasoning summaries and function calls. Nothing is stored on OpenAI's side
//! (`store: false`); the conversation is sent whole each time, as for Chat Completions.

use std::collections::{BTreeMap, VecDeque};

use futures::stream::BoxStream;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Endpoint, Flow, KeyHeader, SseEvent, WireDecoder, error_message, json};
use super::{FinishReason, Message, ModelEvent, ModelProvider, ModelRequest, ProviderConfig, ProviderError, TryReport};

/// A provider that speaks OpenAI Responses.
#[derive(Debug)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
}

impl OpenAiResponses {
    /// A client for `config.base_url` (`https://api.openai.com/v1`); the key, if any, goes in
    /// `Authorization: Bearer`.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(config, "responses", KeyHeader::Bearer, &[])? })
    }
}

impl ModelProvider for OpenAiResponses {
    fn stream_reporting<'a>(
        &'a self,
        request: &'a ModelRequest,
        cancel: &'a CancellationToken,
        tries: TryReport,
    ) -> BoxStream<'a, Result<ModelEvent, ProviderError>> {
        let decoder = ResponsesDecoder { provider: self.endpoint.provider.clone(), ..ResponsesDecoder::default() };
        self.endpoint.stream(body(request), decoder, cancel, tries)
    }
}

/// The request body.
pub(crate) fn body(request: &ModelRequest) -> Value {
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { text } => {
                input.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] }));
            }
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    input.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": text }] }));
                }
                for call in tool_calls {
                    input.push(json!({ "type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments }));
                }
            }
            Message::ToolResult { call_id, content, images, .. } => {
                // A function's output is its text, or, with pictures, a list of input parts.
                let output = if images.is_empty() {
                    json!(content)
                } else {
                    let mut parts = vec![json!({ "type": "input_text", "text": content })];
                    parts.extend(images.iter().map(|image| json!({ "type": "input_image", "image_url": image.data_url() })));
                    Value::Array(parts)
                };
                input.push(json!({ "type": "function_call_output", "call_id": call_id, "output": output }));
            }
        }
    }
    let mut body = json!({ "model": request.model, "input": input, "stream": true, "store": false });
    if let Some(system) = &request.system {
        body["instructions"] = json!(system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({ "type": "function", "name": t.name, "description": t.description, "parameters": t.parameters }))
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body["max_output_tokens"] = json!(max);
    }
    body
}

/// This format's stream decoder, for the fuzz target (`providers::fuzz_stream`).
pub(super) fn wire_decoder(provider: &str) -> Box<dyn super::http::WireDecoder> {
    Box::new(ResponsesDecoder { provider: provider.to_owned(), ..ResponsesDecoder::default() })
}

#[derive(Debug, Default)]
struct ResponsesDecoder {
    provider: String,
    /// Open function calls: item id → call id.
    calls: BTreeMap<String, String>,
    saw_call: bool,
}

impl ResponsesDecoder {
    fn close_calls(&mut self, out: &mut VecDeque<ModelEvent>) {
        for (_, id) in std::mem::take(&mut self.calls) {
            out.push_back(ModelEvent::ToolCallEnd { id });
        }
    }
}

impl WireDecoder for ResponsesDecoder {
    fn feed(&mut self, event: SseEvent, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ProviderError> {
        let data = json(&self.provider, &event)?;
        let kind = data.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        let delta = || data.get("delta").and_then(Value::as_str).filter(|d| !d.is_empty()).map(str::to_owned);
        let item_id = data.get("item_id").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "response.output_text.delta" => out.extend(delta().map(ModelEvent::TextDelta)),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.extend(delta().map(ModelEvent::ReasoningDelta));
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let item_id = item.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                    let id = item.get("call_id").and_then(Value::as_str).map_or_else(|| item_id.clone(), str::to_owned);
                    let name = item.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    self.calls.insert(item_id, id.clone());
                    self.saw_call = true;
                    out.push_back(ModelEvent::ToolCallStart { id: id.clone(), name });
                    if let Some(args) = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                        out.push_back(ModelEvent::ToolCallArgs { id, delta: args.to_owned() });
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(id), Some(delta)) = (self.calls.get(item_id), delta()) {
                    out.push_back(ModelEvent::ToolCallArgs { id: id.clone(), delta });
                }
            }
            "response.output_item.done" => {
                let done = data.pointer("/item/id").and_then(Value::as_str).unwrap_or_default();
                if let Some(id) = self.calls.remove(done) {
                    out.push_back(ModelEvent::ToolCallEnd { id });
                }
            }
            "response.completed" => {
                self.close_calls(out);
                let reason = if self.saw_call { FinishReason::ToolCalls } else { FinishReason::Stop };
                out.push_back(ModelEvent::Finished { reason });
                return Ok(Flow::Done);
            }
            "response.incomplete" => {
                self.close_calls(out);
                let reason = match data.pointer("/response/incomplete_details/reason").and_then(Value::as_str) {
                    Some("max_output_tokens") => FinishReason::Length,
                    Some(other) => FinishReason::Other(other.to_owned()),
                    None => FinishReason::Other("incomplete".to_owned()),
                };
                out.push_back(ModelEvent::Finished { reason });
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let detail = data.get("response").map_or_else(|| error_message(&data), error_message);
                return Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail });
            }
            "error" => return Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: error_message(&data) }),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn eof(&mut self, _out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        Err(ProviderError::StreamFailed { provider: self.provider.clone(), detail: "the answer ended before it was complete".to_owned() })
    }
}
