//! The Chat Completions decoder on what real servers send beyond OpenAI's own shape.
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::ChatDecoder;
use crate::providers::http::SseEvent;
use crate::providers::http::{Flow, WireDecoder};
use crate::providers::{FinishReason, ModelEvent};

fn decode(chunks: &[serde_json::Value]) -> Vec<ModelEvent> {
    let mut decoder = ChatDecoder { provider: "test".to_owned(), ..ChatDecoder::default() };
    let mut out = VecDeque::new();
    for chunk in chunks {
        let flow = decoder.feed(SseEvent { event: None, data: chunk.to_string() }, &mut out).unwrap();
        assert_eq!(flow, Flow::Continue);
    }
    let done = decoder.feed(SseEvent { event: None, data: "[DONE]".to_owned() }, &mut out).unwrap();
    assert_eq!(done, Flow::Done);
    out.into()
}

fn start(id: &str, name: &str) -> ModelEvent {
    ModelEvent::ToolCallStart { id: id.to_owned(), name: name.to_owned() }
}

fn args(id: &str, delta: &str) -> ModelEvent {
    ModelEvent::ToolCallArgs { id: id.to_owned(), delta: delta.to_owned() }
}

fn end(id: &str) -> ModelEvent {
    ModelEvent::ToolCallEnd { id: id.to_owned() }
}

#[test]
fn ollama_whole_call_in_one_chunk_and_stop_after_tools() {
    let events = decode(&[
        json!({ "choices": [{ "index": 0, "delta": { "role": "assistant", "content": "", "tool_calls": [
            { "id": "call_q", "index": 0, "type": "function", "function": { "name": "search_mail", "arguments": "{\"query\":\"plumber\"}" } }
        ]}, "finish_reason": null }]}),
        json!({ "choices": [{ "index": 0, "delta": { "role": "assistant", "content": "" }, "finish_reason": "stop" }]}),
    ]);
    assert_eq!(
        events,
        vec![
            start("call_q", "search_mail"),
            args("call_q", "{\"query\":\"plumber\"}"),
            end("call_q"),
            ModelEvent::Finished { reason: FinishReason::ToolCalls },
        ]
    );
}

#[test]
fn parallel_calls_at_one_index_with_their_own_ids_are_two_calls() {
    let events = decode(&[
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
            { "index": 0, "id": "a", "type": "function", "function": { "name": "one", "arguments": "{}" } }
        ]}}]}),
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
            { "index": 0, "id": "b", "type": "function", "function": { "name": "two", "arguments": "{\"x\":1}" } }
        ]}}]}),
        json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }]}),
    ]);
    assert_eq!(
        events,
        vec![
            start("a", "one"),
            args("a", "{}"),
            end("a"),
            start("b", "two"),
            args("b", "{\"x\":1}"),
            end("b"),
            ModelEvent::Finished { reason: FinishReason::ToolCalls },
        ]
    );
}

#[test]
fn llama_cpp_repeats_the_id_on_every_piece() {
    let events = decode(&[
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
            { "index": 0, "id": "c", "type": "function", "function": { "name": "f", "arguments": "{\"a\"" } }
        ]}}]}),
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
            { "index": 0, "id": "c", "type": "function", "function": { "arguments": ":1}" } }
        ]}}]}),
    ]);
    assert_eq!(
        events,
        vec![start("c", "f"), args("c", "{\"a\""), args("c", ":1}"), end("c"), ModelEvent::Finished { reason: FinishReason::ToolCalls }]
    );
}

#[test]
fn reasoning_fields_of_deepseek_and_ollama_are_both_read() {
    let events = decode(&[
        json!({ "choices": [{ "index": 0, "delta": { "reasoning_content": "hm" } }]}),
        json!({ "choices": [{ "index": 0, "delta": { "reasoning": "…" } }]}),
        json!({ "choices": [{ "index": 0, "delta": { "content": "Yes." }, "finish_reason": "stop" }]}),
    ]);
    assert_eq!(
        events,
        vec![
            ModelEvent::ReasoningDelta("hm".to_owned()),
            ModelEvent::ReasoningDelta("…".to_owned()),
            ModelEvent::TextDelta("Yes.".to_owned()),
            ModelEvent::Finished { reason: FinishReason::Stop },
        ]
    );
}
