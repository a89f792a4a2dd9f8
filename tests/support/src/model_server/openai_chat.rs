//! OpenAI Chat Completions streaming: `data: {chat.completion.chunk}` lines and `data: [DONE]`.
//! Reasoning goes in `delta.reasoning_content` (DeepSeek, vLLM, llama.cpp).

use serde_json::{Value, json};

use super::script::{Reply, Step};
use super::server::Encoded;

const ID: &str = "chatcmpl-scripted";
const CREATED: u64 = 1_764_000_000;

fn chunk(model: &str, delta: Value, finish_reason: Value) -> String {
    let body = json!({
        "id": ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason }],
    });
    format!("data: {body}\n\n")
}

pub(crate) fn encode(reply: &Reply, model: &str) -> Encoded {
    let mut events = vec![chunk(model, json!({ "role": "assistant", "content": "", "refusal": null }), Value::Null)];
    for step in &reply.steps {
        match step {
            Step::Text(chunks) => {
                events.extend(chunks.iter().map(|c| chunk(model, json!({ "content": c }), Value::Null)));
            }
            Step::Reasoning(chunks) => {
                events.extend(chunks.iter().map(|c| chunk(model, json!({ "reasoning_content": c }), Value::Null)));
            }
            Step::ToolCalls(calls) => {
                for (index, call) in calls.iter().enumerate() {
                    let start = json!({ "tool_calls": [{
                        "index": index, "id": call.id, "type": "function",
                        "function": { "name": call.name, "arguments": "" },
                    }]});
                    events.push(chunk(model, start, Value::Null));
                }
                // Interleave the argument pieces of parallel calls, as real servers do.
                let longest = calls.iter().map(|c| c.argument_pieces.len()).max().unwrap_or(0);
                for piece in 0..longest {
                    for (index, call) in calls.iter().enumerate() {
                        if let Some(args) = call.argument_pieces.get(piece) {
                            let delta = json!({ "tool_calls": [{ "index": index, "function": { "arguments": args } }] });
                            events.push(chunk(model, delta, Value::Null));
                        }
                    }
                }
            }
        }
    }
    let reason = if reply.has_tool_calls() { "tool_calls" } else { "stop" };
    let usage = json!({
        "id": ID, "object": "chat.completion.chunk", "created": CREATED, "model": model, "choices": [],
        "usage": { "prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19 },
    });
    Encoded {
        events,
        complete: vec![chunk(model, json!({}), json!(reason)), format!("data: {usage}\n\n"), "data: [DONE]\n\n".to_owned()],
        provider_error: vec![format!(
            "data: {}\n\n",
            json!({ "error": { "message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null } })
        )],
    }
}

/// OpenAI's error body for a status (also used by the Responses API).
pub(crate) fn error_body(status: u16) -> String {
    let (message, kind, code) = match status {
        401 => (
            "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            json!("invalid_api_key"),
        ),
        429 => ("Rate limit reached for requests. Please try again in 1s.", "requests", json!("rate_limit_exceeded")),
        s if s >= 500 => ("The server had an error while processing your request. Sorry about that!", "server_error", Value::Null),
        _ => ("The model `scripted` does not exist or you do not have access to it.", "invalid_request_error", json!("model_not_found")),
    };
    json!({ "error": { "message": message, "type": kind, "param": null, "code": code } }).to_string()
}
