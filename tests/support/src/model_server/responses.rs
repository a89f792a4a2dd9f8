//! OpenAI Responses streaming: `event:` + `data:` SSE with `response.created`,
//! `response.output_item.added/done`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.reasoning_summary_text.delta`,
//! `response.completed`.

use serde_json::{Value, json};

use super::script::{Reply, Step};
use super::server::Encoded;

struct Events {
    out: Vec<String>,
    seq: u64,
}

impl Events {
    fn push(&mut self, name: &str, mut data: Value) {
        if let Some(map) = data.as_object_mut() {
            map.insert("type".to_owned(), json!(name));
            map.insert("sequence_number".to_owned(), json!(self.seq));
        }
        self.seq += 1;
        self.out.push(format!("event: {name}\ndata: {data}\n\n"));
    }
}

fn response(model: &str, status: &str, output: Vec<Value>) -> Value {
    json!({
        "id": "resp_scripted", "object": "response", "created_at": 1_764_000_000u64, "status": status,
        "model": model, "output": output, "parallel_tool_calls": true, "store": false,
        "usage": if status == "completed" { json!({ "input_tokens": 12, "output_tokens": 7, "total_tokens": 19 }) } else { Value::Null },
    })
}

pub(crate) fn encode(reply: &Reply, model: &str) -> Encoded {
    let mut ev = Events { out: Vec::new(), seq: 0 };
    ev.push("response.created", json!({ "response": response(model, "in_progress", vec![]) }));
    ev.push("response.in_progress", json!({ "response": response(model, "in_progress", vec![]) }));
    let mut output: Vec<Value> = Vec::new();
    for step in &reply.steps {
        match step {
            Step::Text(chunks) => {
                let index = output.len();
                let id = format!("msg_{index}");
                let text: String = chunks.concat();
                ev.push(
                    "response.output_item.added",
                    json!({ "output_index": index, "item": {
                    "id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": [] } }),
                );
                ev.push(
                    "response.content_part.added",
                    json!({ "item_id": id, "output_index": index, "content_index": 0,
                    "part": { "type": "output_text", "text": "", "annotations": [] } }),
                );
                for c in chunks {
                    ev.push(
                        "response.output_text.delta",
                        json!({ "item_id": id, "output_index": index, "content_index": 0, "delta": c, "logprobs": [] }),
                    );
                }
                ev.push(
                    "response.output_text.done",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "text": text, "logprobs": [] }),
                );
                let part = json!({ "type": "output_text", "text": text, "annotations": [] });
                ev.push("response.content_part.done", json!({ "item_id": id, "output_index": index, "content_index": 0, "part": part }));
                let item = json!({ "id": id, "type": "message", "status": "completed", "role": "assistant", "content": [part] });
                ev.push("response.output_item.done", json!({ "output_index": index, "item": item }));
                output.push(item);
            }
            Step::Reasoning(chunks) => {
                let index = output.len();
                let id = format!("rs_{index}");
                let text: String = chunks.concat();
                ev.push(
                    "response.output_item.added",
                    json!({ "output_index": index, "item": { "id": id, "type": "reasoning", "summary": [] } }),
                );
                ev.push(
                    "response.reasoning_summary_part.added",
                    json!({ "item_id": id, "output_index": index, "summary_index": 0,
                    "part": { "type": "summary_text", "text": "" } }),
                );
                for c in chunks {
                    ev.push(
                        "response.reasoning_summary_text.delta",
                        json!({ "item_id": id, "output_index": index, "summary_index": 0, "delta": c }),
                    );
                }
                ev.push(
                    "response.reasoning_summary_text.done",
                    json!({ "item_id": id, "output_index": index, "summary_index": 0, "text": text }),
                );
                let part = json!({ "type": "summary_text", "text": text });
                ev.push(
                    "response.reasoning_summary_part.done",
                    json!({ "item_id": id, "output_index": index, "summary_index": 0, "part": part }),
                );
                let item = json!({ "id": id, "type": "reasoning", "summary": [part] });
                ev.push("response.output_item.done", json!({ "output_index": index, "item": item }));
                output.push(item);
            }
            Step::ToolCalls(calls) => {
                for call in calls {
                    let index = output.len();
                    let id = format!("fc_{index}");
                    let args: String = call.argument_pieces.concat();
                    ev.push("response.output_item.added", json!({ "output_index": index, "item": {
                        "id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call.id, "name": call.name } }));
                    for p in &call.argument_pieces {
                        ev.push("response.function_call_arguments.delta", json!({ "item_id": id, "output_index": index, "delta": p }));
                    }
                    ev.push("response.function_call_arguments.done", json!({ "item_id": id, "output_index": index, "arguments": args }));
                    let item = json!({ "id": id, "type": "function_call", "status": "completed", "arguments": args, "call_id": call.id, "name": call.name });
                    ev.push("response.output_item.done", json!({ "output_index": index, "item": item }));
                    output.push(item);
                }
            }
        }
    }
    let events = std::mem::take(&mut ev.out);
    ev.push("response.completed", json!({ "response": response(model, "completed", output) }));
    let complete = std::mem::take(&mut ev.out);
    ev.push("error", json!({ "code": "server_error", "message": "The server had an error while processing your request. Sorry about that!", "param": null }));
    Encoded { events, complete, provider_error: ev.out }
}
