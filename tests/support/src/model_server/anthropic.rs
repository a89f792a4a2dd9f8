//! Anthropic Messages streaming: `event:` + `data:` SSE with `message_start`,
//! `content_block_start/delta/stop`, `message_delta`, `message_stop`.

use serde_json::{Value, json};

use super::script::{Reply, Step};
use super::server::Encoded;

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub(crate) fn encode(reply: &Reply, model: &str) -> Encoded {
    let mut events = vec![event(
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "content": [], "model": model,
            "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": 12, "output_tokens": 1 },
        }}),
    )];
    let mut index = 0usize;
    let mut block = |events: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        events.push(event("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": start })));
        if index == 0 {
            events.push(event("ping", json!({ "type": "ping" })));
        }
        for delta in deltas {
            events.push(event("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": delta })));
        }
        events.push(event("content_block_stop", json!({ "type": "content_block_stop", "index": index })));
        index += 1;
    };
    for step in &reply.steps {
        match step {
            Step::Text(chunks) => {
                let deltas = chunks.iter().map(|c| json!({ "type": "text_delta", "text": c })).collect();
                block(&mut events, json!({ "type": "text", "text": "" }), deltas);
            }
            Step::Reasoning(chunks) => {
                let mut deltas: Vec<Value> = chunks.iter().map(|c| json!({ "type": "thinking_delta", "thinking": c })).collect();
                deltas.push(json!({ "type": "signature_delta", "signature": "EqQBCgIYAhIM-scripted" }));
                block(&mut events, json!({ "type": "thinking", "thinking": "", "signature": "" }), deltas);
            }
            Step::ToolCalls(calls) => {
                for call in calls {
                    let deltas = call.argument_pieces.iter().map(|p| json!({ "type": "input_json_delta", "partial_json": p })).collect();
                    block(&mut events, json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": {} }), deltas);
                }
            }
        }
    }
    let reason = if reply.has_tool_calls() { "tool_use" } else { "end_turn" };
    Encoded {
        events,
        complete: vec![
            event(
                "message_delta",
                json!({ "type": "message_delta", "delta": { "stop_reason": reason, "stop_sequence": null }, "usage": { "output_tokens": 7 } }),
            ),
            event("message_stop", json!({ "type": "message_stop" })),
        ],
        provider_error: vec![event("error", json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }))],
    }
}

/// Anthropic's error body for a status.
pub(crate) fn error_body(status: u16) -> String {
    let (kind, message) = match status {
        401 => ("authentication_error", "invalid x-api-key"),
        403 => ("permission_error", "Your API key does not have permission to use the specified resource."),
        429 => ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
        529 => ("overloaded_error", "Overloaded"),
        s if s >= 500 => ("api_error", "Internal server error"),
        _ => ("invalid_request_error", "model: scripted is not a valid model"),
    };
    json!({ "type": "error", "error": { "type": kind, "message": message } }).to_string()
}
