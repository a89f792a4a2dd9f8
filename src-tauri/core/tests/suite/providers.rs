//! The model providers through their real HTTP clients against the scripted model server
//! (hearth-testkit), once per wire format: streaming, reasoning, tool calls reassembled
//! exactly, retries only before anything streamed, plain errors without the key, and
//! cancellation that drops the connection.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use hearth_core::providers::{
    Anthropic, FinishReason, ImagePart, Message, ModelEvent, ModelProvider, ModelRequest, OpenAiChat, OpenAiResponses, ProviderConfig,
    ProviderError, RetryPolicy, ToolCall, ToolSpec,
};
use hearth_testkit::model_server::{End, HttpError, ModelServer, Reply, Script, ScriptedCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-3f9a1c7e-do-not-leak";

#[derive(Clone, Copy, Debug)]
enum Kind {
    Chat,
    Anthropic,
    Responses,
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy { max_retries: 2, base_delay: Duration::ZERO, max_delay: Duration::from_millis(10) }
}

fn provider(kind: Kind, server: &ModelServer) -> Box<dyn ModelProvider> {
    let config = ProviderConfig::new("Scripted", server.base_url(), Some(KEY.into())).with_retry(fast_retries());
    match kind {
        Kind::Chat => Box::new(OpenAiChat::new(&config).unwrap()),
        Kind::Anthropic => Box::new(Anthropic::new(&config).unwrap()),
        Kind::Responses => Box::new(OpenAiResponses::new(&config).unwrap()),
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "scripted-model".to_owned(),
        system: Some("You are Hearth.".to_owned()),
        messages: vec![Message::User { text: "Find me a plumber".to_owned() }],
        tools: vec![],
        max_tokens: None,
    }
}

/// Every event until the stream ends, and the error it ended with, if any.
async fn run(kind: Kind, script: Script) -> (Vec<ModelEvent>, Option<ProviderError>, ModelServer) {
    let server = ModelServer::start(script).await.unwrap();
    let provider = provider(kind, &server);
    let request = request();
    let cancel = CancellationToken::new();
    let (events, error) = collect(provider.stream(&request, &cancel)).await;
    drop(provider);
    (events, error, server)
}

async fn collect(
    mut stream: futures::stream::BoxStream<'_, Result<ModelEvent, ProviderError>>,
) -> (Vec<ModelEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(err) => {
                assert!(stream.next().await.is_none(), "the stream ends after an error");
                return (events, Some(err));
            }
        }
    }
    (events, None)
}

fn text(s: &str) -> ModelEvent {
    ModelEvent::TextDelta(s.to_owned())
}

fn finished(reason: FinishReason) -> ModelEvent {
    ModelEvent::Finished { reason }
}

/// Tool calls reassembled from the events: id → (name, arguments), and the ids in start order.
fn assemble(events: &[ModelEvent]) -> (BTreeMap<String, (String, String)>, Vec<String>) {
    let mut calls = BTreeMap::new();
    let mut order = Vec::new();
    let mut open = Vec::new();
    for event in events {
        match event {
            ModelEvent::ToolCallStart { id, name } => {
                calls.insert(id.clone(), (name.clone(), String::new()));
                order.push(id.clone());
                open.push(id.clone());
            }
            ModelEvent::ToolCallArgs { id, delta } => {
                assert!(open.contains(id), "args for a call that is not open: {id}");
                calls.get_mut(id).unwrap().1.push_str(delta);
            }
            ModelEvent::ToolCallEnd { id } => {
                assert!(open.contains(id), "end of a call that is not open: {id}");
                open.retain(|o| o != id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "calls left open: {open:?}");
    (calls, order)
}

async fn streams_text(kind: Kind) {
    let (events, error, server) = run(kind, Script::new().turn(Reply::new().text(&["Hel", "lo, ", "world"]))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(events, vec![text("Hel"), text("lo, "), text("world"), finished(FinishReason::Stop)]);
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.disconnects(), 0, "a finished answer is read to the end of the stream");
}

async fn streams_reasoning_then_text(kind: Kind) {
    let (events, error, _server) = run(kind, Script::new().turn(Reply::new().reasoning(&["Think", "ing…"]).text(&["Done."]))).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            ModelEvent::ReasoningDelta("Think".to_owned()),
            ModelEvent::ReasoningDelta("ing…".to_owned()),
            text("Done."),
            finished(FinishReason::Stop),
        ]
    );
}

async fn single_tool_call_reassembles_exactly(kind: Kind) {
    let pieces = ["{\"que", "ry\": \"plum", "ber\", \"limit\"", ": 5}"];
    let (events, error, _server) =
        run(kind, Script::new().turn(Reply::new().text(&["Let me look."]).tool_call("call_1", "search_mail", &pieces))).await;
    assert!(error.is_none(), "{error:?}");
    let (calls, order) = assemble(&events);
    assert_eq!(order, ["call_1"]);
    assert_eq!(calls["call_1"], ("search_mail".to_owned(), pieces.concat()));
    assert_eq!(events.first(), Some(&text("Let me look.")));
    assert_eq!(events.last(), Some(&finished(FinishReason::ToolCalls)));
}

async fn parallel_tool_calls_reassemble_exactly(kind: Kind) {
    let a = ["{\"query\"", ": \"plumber\"}"];
    let b = ["{\"from\": \"2026-12-01\",", " \"to\": ", "\"2026-12-02\"}"];
    let reply = Reply::new()
        .parallel_tool_calls(vec![ScriptedCall::new("call_a", "search_mail", &a), ScriptedCall::new("call_b", "read_calendar", &b)]);
    let (events, error, _server) = run(kind, Script::new().turn(reply)).await;
    assert!(error.is_none(), "{error:?}");
    let (calls, order) = assemble(&events);
    assert_eq!(order, ["call_a", "call_b"]);
    assert_eq!(calls["call_a"], ("search_mail".to_owned(), a.concat()));
    assert_eq!(calls["call_b"], ("read_calendar".to_owned(), b.concat()));
    assert_eq!(events.iter().filter(|e| matches!(e, ModelEvent::ToolCallEnd { .. })).count(), 2);
    assert_eq!(events.last(), Some(&finished(FinishReason::ToolCalls)));
}

async fn malformed_tool_arguments_pass_through_verbatim(kind: Kind) {
    let pieces = ["{\"query\": ", "\"plumb", "er\", tru"];
    let (events, error, _server) = run(kind, Script::new().turn(Reply::new().tool_call("call_x", "search_mail", &pieces))).await;
    assert!(error.is_none(), "{error:?}");
    let (calls, _) = assemble(&events);
    assert_eq!(calls["call_x"].1, "{\"query\": \"plumber\", tru");
}

async fn rate_limit_then_success_retries_once(kind: Kind) {
    let script = Script::new().turn(HttpError::rate_limited(1)).turn(Reply::new().text(&["ok"]));
    let (events, error, server) = run(kind, script).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(events, vec![text("ok"), finished(FinishReason::Stop)]);
    assert_eq!(server.requests().len(), 2, "one retry");
}

async fn persistent_rate_limit_says_so_with_the_wait(kind: Kind) {
    let script = Script::new()
        .turn(HttpError::rate_limited(7))
        .turn(HttpError::rate_limited(7))
        .turn(HttpError::rate_limited(7))
        .turn(Reply::new().text(&["never"]));
    let (events, error, server) = run(kind, script).await;
    assert_eq!(events, vec![]);
    let error = error.unwrap();
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
    let message = error.to_string();
    assert!(message.contains("Scripted is rate-limiting Hearth (429)"), "{message}");
    assert!(!message.contains(KEY));
    assert_eq!(server.requests().len(), 3, "the first try and two retries");
}

async fn server_errors_are_retried_at_most_twice(kind: Kind) {
    let script = Script::new()
        .turn(HttpError::server_error())
        .turn(HttpError::server_error())
        .turn(HttpError::server_error())
        .turn(Reply::new().text(&["never"]));
    let (events, error, server) = run(kind, script).await;
    assert_eq!(events, vec![]);
    let error = error.unwrap();
    assert!(matches!(error, ProviderError::ServerFailed { status: 500, .. }), "{error:?}");
    assert!(error.to_string().contains("failed (500)"), "{error}");
    assert_eq!(server.requests().len(), 3, "the first try and two retries");
    assert_eq!(server.turns_left(), 1);
}

async fn error_after_the_first_chunk_is_not_retried(kind: Kind) {
    for end in [End::ProviderError, End::Disconnect] {
        let script = Script::new().turn(Reply::new().text(&["Hi"]).end(end.clone())).turn(Reply::new().text(&["again"]));
        let (events, error, server) = run(kind, script).await;
        assert_eq!(events, vec![text("Hi")], "{end:?}");
        let error = error.unwrap();
        assert!(matches!(error, ProviderError::StreamFailed { .. }), "{end:?}: {error:?}");
        assert_eq!(server.requests().len(), 1, "{end:?}: no retry once the answer started");
        assert_eq!(server.turns_left(), 1);
    }
}

async fn refused_key_is_not_retried_and_never_shown(kind: Kind) {
    for status in [401, 403] {
        let script = Script::new().turn(HttpError::status(status)).turn(Reply::new().text(&["never"]));
        let (events, error, server) = run(kind, script).await;
        assert_eq!(events, vec![]);
        let error = error.unwrap();
        let message = error.to_string();
        assert!(matches!(error, ProviderError::Unauthorized { .. }), "{error:?}");
        assert!(message.contains(&format!("refused the API key ({status})")), "{message}");
        assert!(message.contains("Settings"), "{message}");
        assert!(!message.contains(KEY) && !format!("{error:?}").contains(KEY), "{message}");
        assert_eq!(server.requests().len(), 1, "no retry");
    }
}

async fn other_client_errors_are_not_retried(kind: Kind) {
    let script = Script::new().turn(HttpError::status(404)).turn(Reply::new().text(&["never"]));
    let (_, error, server) = run(kind, script).await;
    let error = error.unwrap();
    assert!(matches!(error, ProviderError::Rejected { status: 404, .. }), "{error:?}");
    assert!(!error.to_string().contains(KEY));
    assert_eq!(server.requests().len(), 1);
}

async fn cancel_mid_stream_drops_the_connection(kind: Kind) {
    let server = ModelServer::start(Script::new().turn(Reply::new().text(&["Hi"]).end(End::HoldUntilDisconnect))).await.unwrap();
    let provider = provider(kind, &server);
    let request = request();
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(&request, &cancel);
    assert_eq!(stream.next().await.unwrap().unwrap(), text("Hi"));
    cancel.cancel();
    let next = stream.next().await;
    assert!(matches!(next, Some(Err(ProviderError::Cancelled))), "{next:?}");
    assert!(stream.next().await.is_none());
    // A guard against hanging forever, not a synchronisation: the server reports the disconnect.
    tokio::time::timeout(Duration::from_secs(20), server.wait_for_disconnects(1)).await.expect("the server saw the disconnect");
    assert_eq!(server.disconnects(), 1);
}

async fn slow_stream_is_read_to_the_end(kind: Kind) {
    let chunks = ["One ", "word ", "at ", "a ", "time."];
    let reply = Reply::new().text(&chunks).chunk_delay(Duration::from_millis(15));
    let (events, error, _server) = run(kind, Script::new().turn(reply)).await;
    assert!(error.is_none(), "{error:?}");
    let mut expected: Vec<_> = chunks.iter().map(|c| text(c)).collect();
    expected.push(finished(FinishReason::Stop));
    assert_eq!(events, expected);
}

#[tokio::test]
async fn cancel_during_retry_backoff_sends_nothing_more() {
    let server = ModelServer::start(Script::new().turn(HttpError::rate_limited(3600)).turn(Reply::new().text(&["never"]))).await.unwrap();
    let slow = RetryPolicy { max_retries: 2, base_delay: Duration::from_secs(3600), max_delay: Duration::from_secs(3600) };
    let config = ProviderConfig::new("Scripted", server.base_url(), Some(KEY.into())).with_retry(slow);
    let provider = OpenAiChat::new(&config).unwrap();
    let request = request();
    let cancel = CancellationToken::new();
    let stream = provider.stream(&request, &cancel);
    let trigger = cancel.clone();
    let collecting = tokio::spawn(async move {
        server.wait_for_requests(1).await;
        trigger.cancel();
        server
    });
    let (events, error) = collect(stream).await;
    let server = collecting.await.unwrap();
    assert_eq!(events, vec![]);
    assert!(matches!(error, Some(ProviderError::Cancelled)), "{error:?}");
    assert_eq!(server.requests().len(), 1, "no retry after the cancel");
}

#[tokio::test]
async fn an_unreachable_server_is_retried_and_named() {
    // A bound socket that never listens: the port stays ours, and every connect is refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let base = format!("http://{}/v1", socket.local_addr().unwrap());
    let config = ProviderConfig::new("Ollama", base.clone(), None).with_retry(fast_retries());
    let provider = OpenAiChat::new(&config).unwrap();
    let request = request();
    let cancel = CancellationToken::new();
    let (events, error) = collect(provider.stream(&request, &cancel)).await;
    assert_eq!(events, vec![]);
    let error = error.unwrap();
    assert!(matches!(error, ProviderError::Unreachable { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("could not reach the model provider Ollama") && message.contains(&base), "{message}");
}

fn conversation() -> ModelRequest {
    ModelRequest {
        model: "scripted-model".to_owned(),
        system: Some("You are Hearth.".to_owned()),
        messages: vec![
            Message::User { text: "Find me a plumber".to_owned() },
            Message::Assistant {
                text: "Searching.".to_owned(),
                tool_calls: vec![ToolCall {
                    id: "call_7".to_owned(),
                    name: "search_mail".to_owned(),
                    arguments: "{\"query\":\"plumber\"}".to_owned(),
                }],
            },
            Message::ToolResult {
                call_id: "call_7".to_owned(),
                content: "2 hits: Joe's Plumbing".to_owned(),
                is_error: false,
                images: Vec::new(),
            },
        ],
        tools: vec![ToolSpec {
            name: "search_mail".to_owned(),
            description: "Search the owner's mail".to_owned(),
            parameters: json!({ "type": "object", "properties": { "query": { "type": "string" } }, "required": ["query"] }),
        }],
        max_tokens: Some(1024),
    }
}

async fn the_request_carries_tools_key_and_tool_results(kind: Kind) {
    let server = ModelServer::start(Script::new().turn(Reply::new().text(&["Joe it is."]))).await.unwrap();
    let provider = provider(kind, &server);
    let request = conversation();
    let cancel = CancellationToken::new();
    let (_, error) = collect(provider.stream(&request, &cancel)).await;
    assert!(error.is_none(), "{error:?}");
    let requests = server.requests();
    let [sent] = requests.as_slice() else { panic!("one request: {requests:?}") };
    let body = &sent.body;
    assert_eq!(body["model"], "scripted-model");
    assert_eq!(body["stream"], true);
    let schema = &request.tools[0].parameters;
    match kind {
        Kind::Chat => {
            assert_eq!(sent.path, "/v1/chat/completions");
            assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
            assert_eq!(
                body["tools"],
                json!([{ "type": "function", "function": { "name": "search_mail", "description": "Search the owner's mail", "parameters": schema } }])
            );
            assert_eq!(
                body["messages"],
                json!([
                    { "role": "system", "content": "You are Hearth." },
                    { "role": "user", "content": "Find me a plumber" },
                    { "role": "assistant", "content": "Searching.", "tool_calls": [
                        { "id": "call_7", "type": "function", "function": { "name": "search_mail", "arguments": "{\"query\":\"plumber\"}" } }
                    ]},
                    { "role": "tool", "tool_call_id": "call_7", "content": "2 hits: Joe's Plumbing" },
                ])
            );
        }
        Kind::Anthropic => {
            assert_eq!(sent.path, "/v1/messages");
            assert_eq!(sent.header("x-api-key"), Some(KEY));
            assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(sent.header("authorization"), None);
            assert_eq!(body["system"], "You are Hearth.");
            assert_eq!(body["max_tokens"], 1024);
            assert_eq!(body["tools"], json!([{ "name": "search_mail", "description": "Search the owner's mail", "input_schema": schema }]));
            assert_eq!(
                body["messages"],
                json!([
                    { "role": "user", "content": [{ "type": "text", "text": "Find me a plumber" }] },
                    { "role": "assistant", "content": [
                        { "type": "text", "text": "Searching." },
                        { "type": "tool_use", "id": "call_7", "name": "search_mail", "input": { "query": "plumber" } },
                    ]},
                    { "role": "user", "content": [
                        { "type": "tool_result", "tool_use_id": "call_7", "content": "2 hits: Joe's Plumbing", "is_error": false },
                    ]},
                ])
            );
        }
        Kind::Responses => {
            assert_eq!(sent.path, "/v1/responses");
            assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
            assert_eq!(body["instructions"], "You are Hearth.");
            assert_eq!(body["max_output_tokens"], 1024);
            assert_eq!(
                body["tools"],
                json!([{ "type": "function", "name": "search_mail", "description": "Search the owner's mail", "parameters": schema }])
            );
            assert_eq!(
                body["input"],
                json!([
                    { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Find me a plumber" }] },
                    { "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "Searching." }] },
                    { "type": "function_call", "call_id": "call_7", "name": "search_mail", "arguments": "{\"query\":\"plumber\"}" },
                    { "type": "function_call_output", "call_id": "call_7", "output": "2 hits: Joe's Plumbing" },
                ])
            );
        }
    }
    let _: &Value = body;
}

/// A conversation where two tools answered in one step, the second with a picture (as
/// look_page answers), and an older picture further back that must not be sent again.
fn conversation_with_pictures() -> (ModelRequest, Vec<u8>) {
    // Any bytes do: the wire carries them as base64, whatever they are.
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n-newest-".to_vec();
    let old = ImagePart::png(b"\x89PNG\r\n\x1a\n-older-");
    let call = |id: &str, name: &str| ToolCall { id: id.to_owned(), name: name.to_owned(), arguments: "{}".to_owned() };
    let mut request = ModelRequest {
        model: "scripted-model".to_owned(),
        system: None,
        messages: vec![
            Message::User { text: "How does it look?".to_owned() },
            Message::Assistant { text: String::new(), tool_calls: vec![call("call_1", "look_page")] },
            Message::ToolResult {
                call_id: "call_1".to_owned(),
                content: "{\"title\":\"Old\"}".to_owned(),
                is_error: false,
                images: vec![old],
            },
            Message::Assistant { text: String::new(), tool_calls: vec![call("call_2", "page_elements"), call("call_3", "look_page")] },
            Message::ToolResult {
                call_id: "call_2".to_owned(),
                content: "{\"elements\":[]}".to_owned(),
                is_error: false,
                images: Vec::new(),
            },
            Message::ToolResult {
                call_id: "call_3".to_owned(),
                content: "{\"title\":\"New\"}".to_owned(),
                is_error: false,
                images: vec![ImagePart::png(&png)],
            },
        ],
        tools: vec![],
        max_tokens: None,
    };
    request.keep_newest_images();
    (request, png)
}

async fn a_picture_reaches_the_model_in_its_wire_format(kind: Kind) {
    use base64::Engine;
    let server = ModelServer::start(Script::new().turn(Reply::new().text(&["It is blue."]))).await.unwrap();
    let provider = provider(kind, &server);
    let (request, png) = conversation_with_pictures();
    let (_, error) = collect(provider.stream(&request, &CancellationToken::new())).await;
    assert!(error.is_none(), "{error:?}");
    let requests = server.requests();
    let [sent] = requests.as_slice() else { panic!("one request: {requests:?}") };
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let data_url = format!("data:image/png;base64,{b64}");
    // The older picture is gone from what was sent, and its result says so.
    let older = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\n-older-");
    assert!(!sent.raw_body.contains(&older), "the older picture was sent again");
    assert!(sent.raw_body.contains("removed to save space"));
    assert_eq!(sent.raw_body.matches(&b64).count(), 1, "the newest picture, once");
    let body = &sent.body;
    match kind {
        Kind::Chat => {
            let messages = body["messages"].as_array().unwrap();
            let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
            // The two tool messages stay right after their assistant message; the picture
            // follows them as the owner's.
            assert_eq!(roles, ["user", "assistant", "tool", "assistant", "tool", "tool", "user"]);
            assert_eq!(messages[6]["content"][1], json!({ "type": "image_url", "image_url": { "url": data_url } }));
            assert!(messages[6]["content"][0]["text"].as_str().unwrap().contains("call_3"));
        }
        Kind::Anthropic => {
            let messages = body["messages"].as_array().unwrap();
            let last = &messages[messages.len() - 1];
            assert_eq!(last["role"], "user");
            assert_eq!(last["content"][0]["content"], json!("{\"elements\":[]}"));
            assert_eq!(
                last["content"][1]["content"],
                json!([
                    { "type": "text", "text": "{\"title\":\"New\"}" },
                    { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": b64 } },
                ])
            );
        }
        Kind::Responses => {
            let input = body["input"].as_array().unwrap();
            let last = &input[input.len() - 1];
            assert_eq!(last["type"], "function_call_output");
            assert_eq!(last["call_id"], "call_3");
            assert_eq!(
                last["output"],
                json!([{ "type": "input_text", "text": "{\"title\":\"New\"}" }, { "type": "input_image", "image_url": data_url }])
            );
        }
    }
}

macro_rules! format_tests {
    ($module:ident, $kind:expr) => {
        mod $module {
            use super::Kind;

            #[tokio::test]
            async fn streams_text() {
                super::streams_text($kind).await;
            }
            #[tokio::test]
            async fn streams_reasoning_then_text() {
                super::streams_reasoning_then_text($kind).await;
            }
            #[tokio::test]
            async fn single_tool_call_reassembles_exactly() {
                super::single_tool_call_reassembles_exactly($kind).await;
            }
            #[tokio::test]
            async fn parallel_tool_calls_reassemble_exactly() {
                super::parallel_tool_calls_reassemble_exactly($kind).await;
            }
            #[tokio::test]
            async fn malformed_tool_arguments_pass_through_verbatim() {
                super::malformed_tool_arguments_pass_through_verbatim($kind).await;
            }
            #[tokio::test]
            async fn rate_limit_then_success_retries_once() {
                super::rate_limit_then_success_retries_once($kind).await;
            }
            #[tokio::test]
            async fn persistent_rate_limit_says_so_with_the_wait() {
                super::persistent_rate_limit_says_so_with_the_wait($kind).await;
            }
            #[tokio::test]
            async fn server_errors_are_retried_at_most_twice() {
                super::server_errors_are_retried_at_most_twice($kind).await;
            }
            #[tokio::test]
            async fn error_after_the_first_chunk_is_not_retried() {
                super::error_after_the_first_chunk_is_not_retried($kind).await;
            }
            #[tokio::test]
            async fn refused_key_is_not_retried_and_never_shown() {
                super::refused_key_is_not_retried_and_never_shown($kind).await;
            }
            #[tokio::test]
            async fn other_client_errors_are_not_retried() {
                super::other_client_errors_are_not_retried($kind).await;
            }
            #[tokio::test]
            async fn slow_stream_is_read_to_the_end() {
                super::slow_stream_is_read_to_the_end($kind).await;
            }
            #[tokio::test]
            async fn cancel_mid_stream_drops_the_connection() {
                super::cancel_mid_stream_drops_the_connection($kind).await;
            }
            #[tokio::test]
            async fn the_request_carries_tools_key_and_tool_results() {
                super::the_request_carries_tools_key_and_tool_results($kind).await;
            }
            #[tokio::test]
            async fn a_picture_reaches_the_model_in_its_wire_format() {
                super::a_picture_reaches_the_model_in_its_wire_format($kind).await;
            }
        }
    };
}

format_tests!(openai_chat, Kind::Chat);
format_tests!(anthropic, Kind::Anthropic);
format_tests!(openai_responses, Kind::Responses);

// Issue 10: outbound HTTP never follows redirects, plain http:// only to this computer, and
// the stream decoding is bounded.

fn wire_path(kind: Kind) -> &'static str {
    match kind {
        Kind::Chat => "chat/completions",
        Kind::Anthropic => "messages",
        Kind::Responses => "responses",
    }
}

fn build(kind: Kind, config: &ProviderConfig) -> Result<Box<dyn ModelProvider>, ProviderError> {
    Ok(match kind {
        Kind::Chat => Box::new(OpenAiChat::new(config)?),
        Kind::Anthropic => Box::new(Anthropic::new(config)?),
        Kind::Responses => Box::new(OpenAiResponses::new(config)?),
    })
}

const KINDS: [Kind; 3] = [Kind::Chat, Kind::Anthropic, Kind::Responses];

#[tokio::test]
async fn issue10_a_redirect_is_not_followed_and_the_key_goes_nowhere() {
    for kind in KINDS {
        for status in [307, 308, 302] {
            // The server a redirect points at would answer, if anyone asked it.
            let elsewhere = ModelServer::start(Script::new().turn(Reply::new().text(&["stolen"]))).await.unwrap();
            let target = format!("{}/{}", elsewhere.base_url(), wire_path(kind));
            let (events, error, server) = run(kind, Script::new().turn(HttpError::redirect(status, target.clone()))).await;
            assert_eq!(events, vec![], "{kind:?} {status}");
            let error = error.unwrap();
            assert!(matches!(error, ProviderError::Redirected { .. }), "{kind:?} {status}: {error:?}");
            assert_eq!(server.requests().len(), 1, "{kind:?} {status}: a redirect is not retried");
            assert_eq!(elsewhere.requests().len(), 0, "{kind:?} {status}: the redirect target received nothing");
            let message = error.to_string();
            assert_eq!(
                message,
                format!(
                    "The model server at {} answered with a redirect to {target}; Hearth does not follow redirects, because \
                     they would resend your key. Set the base URL to {} if you trust it.",
                    server.base_url(),
                    elsewhere.base_url()
                )
            );
            assert!(!message.contains(KEY));
        }
    }
}

#[tokio::test]
async fn issue10_a_redirect_without_a_target_or_to_a_relative_path_is_named() {
    let (_, error, _server) = run(Kind::Anthropic, Script::new().turn(HttpError::status(301))).await;
    let message = error.unwrap().to_string();
    assert!(message.contains("redirect (HTTP 301) that names no address"), "{message}");

    let (_, error, server) = run(Kind::Chat, Script::new().turn(HttpError::redirect(307, "/v2/chat/completions"))).await;
    let message = error.unwrap().to_string();
    let origin = server.base_url().trim_end_matches("/v1").to_owned();
    assert!(message.contains(&format!("a redirect to {origin}/v2/chat/completions;")), "{message}");
    assert!(message.contains(&format!("Set the base URL to {origin}/v2 if you trust it")), "{message}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn issue10_plain_http_to_another_computer_is_refused_when_the_provider_is_built() {
    for kind in KINDS {
        for base in ["http://192.168.1.20:11434/v1", "http://api.example.com/v1", "http://localhost.example.com/v1"] {
            let config = ProviderConfig::new("Ollama", base, Some(KEY.into()));
            let error = build(kind, &config).err().unwrap_or_else(|| panic!("{kind:?}: {base} was accepted"));
            assert!(matches!(error, ProviderError::Config { .. }), "{error:?}");
            let message = error.to_string();
            assert_eq!(
                message,
                format!(
                    "The model provider Ollama is not set up right: the base URL {base} uses plain http:// to another \
                     computer, which would send your key and conversation unencrypted; use https://, or http:// only \
                     for a server on this computer (localhost, 127.0.0.1 or ::1). Check it in Settings."
                )
            );
            assert!(!message.contains(KEY));
        }
        for base in ["https://api.example.com/v1", "http://127.0.0.1:11434/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1"] {
            assert!(build(kind, &ProviderConfig::new("Ollama", base, None)).is_ok(), "{kind:?}: {base}");
        }
        let error = build(kind, &ProviderConfig::new("Ollama", "localhost:11434", None)).err().unwrap();
        assert!(error.to_string().contains("is not an absolute http:// or https:// address"), "{error}");
    }
}

#[tokio::test]
async fn issue10_an_over_long_sse_line_ends_the_stream_and_drops_the_connection() {
    // One event of more than 4 MiB, and then the server would keep the stream open forever.
    let huge = "x".repeat(4 * 1024 * 1024);
    for kind in KINDS {
        let script = Script::new().turn(Reply::new().text(&["before", &huge]).end(End::HoldUntilDisconnect));
        let ended = tokio::time::timeout(Duration::from_secs(60), run(kind, script)).await;
        let (events, error, server) = ended.unwrap_or_else(|_| panic!("{kind:?}: the over-long line did not end the stream"));
        assert!(!events.iter().any(|e| matches!(e, ModelEvent::TextDelta(t) if t.len() > 1024)), "{kind:?}: the huge event was refused");
        let error = error.unwrap();
        assert!(matches!(error, ProviderError::Protocol { .. }), "{kind:?}: {error:?}");
        assert!(error.to_string().contains("one event of its stream was longer than 4 MiB"), "{error}");
        // Hearth stopped reading and hung up; the server counts the client going away.
        server.wait_for_disconnects(1).await;
        assert_eq!(server.disconnects(), 1, "{kind:?}");
        assert_eq!(server.requests().len(), 1, "{kind:?}: not retried");
    }
}

#[tokio::test]
async fn issue10_more_tool_calls_in_one_answer_than_the_limit_end_it() {
    use hearth_core::providers::MAX_TOOL_CALLS_PER_TURN;
    let calls = |n: usize| -> Vec<ScriptedCall> {
        (0..n).map(|i| ScriptedCall::new(&format!("call_{i}"), "search_mail", &["{\"query\":\"x\"}"])).collect()
    };
    for kind in KINDS {
        // At the limit: every call arrives.
        let (events, error, _server) =
            run(kind, Script::new().turn(Reply::new().parallel_tool_calls(calls(MAX_TOOL_CALLS_PER_TURN)))).await;
        assert!(error.is_none(), "{kind:?}: {error:?}");
        assert_eq!(assemble(&events).0.len(), MAX_TOOL_CALLS_PER_TURN, "{kind:?}");

        // One more: the answer ends with an error after the calls within the limit.
        let (events, error, _server) =
            run(kind, Script::new().turn(Reply::new().parallel_tool_calls(calls(MAX_TOOL_CALLS_PER_TURN + 1)))).await;
        let started = events.iter().filter(|e| matches!(e, ModelEvent::ToolCallStart { .. })).count();
        assert_eq!(started, MAX_TOOL_CALLS_PER_TURN, "{kind:?}");
        assert!(!events.iter().any(|e| matches!(e, ModelEvent::Finished { .. })), "{kind:?}: the answer did not finish");
        let error = error.unwrap();
        assert!(matches!(error, ProviderError::TooManyToolCalls { limit: 16, .. }), "{kind:?}: {error:?}");
        assert!(error.to_string().contains("asked for more than 16 tool calls in one answer"), "{error}");
    }
}
