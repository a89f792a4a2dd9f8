//! Integration tests for `hearth_protocol::agui`: pinned wire JSON, property-based
//! round trips through JSON and SSE, decoder chunking, and verifier rule tables.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use hearth_protocol::agui::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};

// =====================================================================================
// Pinned JSON
// =====================================================================================

fn pin(event: Event, want: &str) {
    assert_eq!(serde_json::to_string(&event).unwrap(), want, "serialising {:?}", event.event_type());
    assert_eq!(Event::from_json_str(want).unwrap(), event, "decoding {want}");
    assert_eq!(encode(&event), format!("data: {want}\n\n"));
}

#[test]
fn pinned_lifecycle_json() {
    pin(
        Event::RunStarted(RunStartedEvent { thread_id: "t1".into(), run_id: "r1".into(), ..Default::default() }),
        r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}"#,
    );
    pin(
        Event::RunFinished(RunFinishedEvent::success("t1", "r1", Some(json!({"answer": 42})))),
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","result":{"answer":42},"outcome":{"type":"success"}}"#,
    );
    pin(
        Event::RunFinished(RunFinishedEvent::cancelled("t1", "r1")),
        r#"{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"cancelled"}}"#,
    );
    pin(
        Event::RunError(RunErrorEvent {
            message: "model unavailable".into(),
            code: Some("MODEL_DOWN".into()),
            timestamp: Some(1_700_000_000_000),
            ..Default::default()
        }),
        r#"{"type":"RUN_ERROR","message":"model unavailable","code":"MODEL_DOWN","timestamp":1700000000000}"#,
    );
    pin(
        Event::StepStarted(StepStartedEvent { step_name: "plan".into(), ..Default::default() }),
        r#"{"type":"STEP_STARTED","stepName":"plan"}"#,
    );
}

#[test]
fn pinned_message_and_tool_json() {
    pin(
        Event::TextMessageStart(TextMessageStartEvent { message_id: "m1".into(), ..Default::default() }),
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
    );
    pin(
        Event::TextMessageContent(TextMessageContentEvent {
            message_id: "m1".into(),
            delta: "Hello, \"world\"\n".into(),
            ..Default::default()
        }),
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello, \"world\"\n"}"#,
    );
    pin(
        Event::ToolCallStart(ToolCallStartEvent {
            tool_call_id: "c1".into(),
            tool_call_name: "read_file".into(),
            parent_message_id: Some("m1".into()),
            ..Default::default()
        }),
        r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"read_file","parentMessageId":"m1"}"#,
    );
    pin(
        Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: "c1".into(), delta: r#"{"path":"#.into(), ..Default::default() }),
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"path\":"}"#,
    );
    pin(
        Event::ToolCallResult(ToolCallResultEvent {
            message_id: "tm1".into(),
            tool_call_id: "c1".into(),
            content: "ok".into(),
            role: Some(ToolRole::Tool),
            ..Default::default()
        }),
        r#"{"type":"TOOL_CALL_RESULT","messageId":"tm1","toolCallId":"c1","content":"ok","role":"tool"}"#,
    );
    pin(
        Event::ReasoningEncryptedValue(ReasoningEncryptedValueEvent {
            subtype: ReasoningEncryptedValueSubtype::ToolCall,
            entity_id: "c1".into(),
            encrypted_value: "b64".into(),
            ..Default::default()
        }),
        r#"{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"c1","encryptedValue":"b64"}"#,
    );
    pin(
        Event::ReasoningMessageStart(ReasoningMessageStartEvent { message_id: "r".into(), ..Default::default() }),
        r#"{"type":"REASONING_MESSAGE_START","messageId":"r","role":"reasoning"}"#,
    );
}

#[test]
fn pinned_state_snapshot_activity_subagent_json() {
    pin(
        Event::StateDelta(StateDeltaEvent {
            delta: vec![JsonPatchOp::Replace { path: "/count".into(), value: json!(2) }],
            ..Default::default()
        }),
        r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}"#,
    );
    pin(
        Event::MessagesSnapshot(MessagesSnapshotEvent {
            messages: vec![
                Message::User(UserMessage { id: "u1".into(), content: "hi".into(), ..Default::default() }),
                Message::Assistant(AssistantMessage { id: "a1".into(), content: Some("hello".into()), ..Default::default() }),
            ],
            ..Default::default()
        }),
        r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"role":"user","id":"u1","content":"hi"},{"role":"assistant","id":"a1","content":"hello"}]}"#,
    );
    let mut content = serde_json::Map::new();
    content.insert("steps".into(), json!(["a"]));
    pin(
        Event::ActivitySnapshot(ActivitySnapshotEvent {
            message_id: "act".into(),
            activity_type: "PLAN".into(),
            content,
            replace: Some(false),
            ..Default::default()
        }),
        r#"{"type":"ACTIVITY_SNAPSHOT","messageId":"act","activityType":"PLAN","content":{"steps":["a"]},"replace":false}"#,
    );
    pin(
        Event::SubagentStarted(SubagentStartedEvent {
            subagent_run_id: "s1".into(),
            name: "researcher".into(),
            parent_tool_call_id: Some("c1".into()),
            ..Default::default()
        }),
        r#"{"type":"SUBAGENT_STARTED","subagentRunId":"s1","name":"researcher","parentToolCallId":"c1"}"#,
    );
    let mut meta = serde_json::Map::new();
    meta.insert("ag-ui".into(), json!({"k": null}));
    pin(
        Event::Custom(CustomEvent {
            name: "hearth.notice".into(),
            value: Value::Null,
            raw_event: Some(json!("x")),
            metadata: Some(meta),
            ..Default::default()
        }),
        r#"{"type":"CUSTOM","name":"hearth.notice","value":null,"rawEvent":"x","metadata":{"ag-ui":{"k":null}}}"#,
    );
}

#[test]
fn foreign_producer_json_is_accepted() {
    // Field order differs, nulls for optional fields (older Python/.NET producers),
    // unknown extra keys, whitespace, and a legacy THINKING_* event.
    let cases = [
        r#"{ "toolCallName": "f", "parentMessageId": null, "type": "TOOL_CALL_START", "toolCallId": "c" }"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":null,"result":null,"extra":{"a":[1]}}"#,
        r#"{"type":"THINKING_START","title":"pondering"}"#,
        r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":[{"type":"text","text":"a"},{"type":"document","source":{"type":"file","value":"file-1","provider":"openai"}}]}"#,
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","messages":[{"role":"reasoning","id":"x","content":"c"},{"role":"activity","id":"y","activityType":"PLAN","content":{}}]}}"#,
    ];
    for c in cases {
        let e = Event::from_json_str(c).unwrap_or_else(|err| panic!("{c}: {err}"));
        let generic: Event = serde_json::from_str(c).unwrap();
        assert_eq!(e, generic);
    }
}

// =====================================================================================
// Strategies
// =====================================================================================

fn s() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z0-9-]{0,8}",
        1 => any::<String>(),
        1 => Just("line\nbreak\r\n\"quoted\" \u{2028} é 🌍".to_owned()),
    ]
}

fn os() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(s())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![Just(1.5f64), Just(-0.25), Just(1e100)].prop_map(Value::from),
        s().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(s(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn non_null() -> impl Strategy<Value = Value> {
    json_value().prop_map(|v| if v.is_null() { json!(0) } else { v })
}

fn object() -> impl Strategy<Value = Metadata> {
    proptest::collection::btree_map(s(), json_value(), 0..3).prop_map(|m| m.into_iter().collect())
}

#[derive(Debug, Clone)]
struct Base {
    timestamp: Option<i64>,
    raw_event: Option<Value>,
    metadata: Option<Metadata>,
    subagent: Option<String>,
}

fn base() -> impl Strategy<Value = Base> {
    (proptest::option::of(any::<i64>()), proptest::option::of(non_null()), proptest::option::of(object()), os())
        .prop_map(|(timestamp, raw_event, metadata, subagent)| Base { timestamp, raw_event, metadata, subagent })
}

fn part_source() -> impl Strategy<Value = PartSource> {
    prop_oneof![
        (s(), s()).prop_map(|(value, mime_type)| PartSource::Data { value, mime_type }),
        (s(), os()).prop_map(|(value, mime_type)| PartSource::Url { value, mime_type }),
        (s(), os(), os()).prop_map(|(value, provider, mime_type)| PartSource::File { value, provider, mime_type }),
    ]
}

fn content() -> impl Strategy<Value = MessageContent> {
    let part = prop_oneof![
        (os(), s(), proptest::option::of(non_null())).prop_map(|(id, text, metadata)| ContentPart::Text(TextPart { id, text, metadata })),
        (0..4u8, os(), part_source(), proptest::option::of(non_null())).prop_map(|(k, id, source, metadata)| {
            let p = MediaPart { id, source, metadata };
            match k {
                0 => ContentPart::Image(p),
                1 => ContentPart::Audio(p),
                2 => ContentPart::Video(p),
                _ => ContentPart::Document(p),
            }
        }),
    ];
    prop_oneof![s().prop_map(MessageContent::Text), proptest::collection::vec(part, 0..3).prop_map(MessageContent::Parts),]
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (s(), s(), s(), os(), proptest::option::of(object())).prop_map(|(id, name, args, ev, metadata)| ToolCall {
        encrypted_value: ev,
        metadata,
        ..ToolCall::function(id, name, args)
    })
}

fn message() -> impl Strategy<Value = Message> {
    (
        0..7u8,
        s(),
        s(),
        os(),
        os(),
        os(),
        proptest::option::of(object()),
        content(),
        object(),
        proptest::option::of(proptest::collection::vec(tool_call(), 0..2)),
    )
        .prop_map(|(k, id, text, name, enc, sub, metadata, body, obj, calls)| match k {
            0 => Message::Developer(DeveloperMessage { id, content: text, name, encrypted_value: enc, subagent_run_id: sub, metadata }),
            1 => Message::System(SystemMessage { id, content: text, name, encrypted_value: enc, subagent_run_id: sub, metadata }),
            2 => Message::Assistant(AssistantMessage {
                id,
                content: Some(text).filter(|t| !t.is_empty()),
                tool_calls: calls,
                name,
                encrypted_value: enc,
                subagent_run_id: sub,
                metadata,
            }),
            3 => Message::User(UserMessage { id, content: body, name, encrypted_value: enc, subagent_run_id: sub, metadata }),
            4 => Message::Tool(ToolMessage {
                id,
                content: body,
                tool_call_id: text,
                error: name,
                encrypted_value: enc,
                subagent_run_id: sub,
                metadata,
            }),
            5 => Message::Activity(ActivityMessage { id, activity_type: text, content: obj, subagent_run_id: sub, metadata }),
            _ => Message::Reasoning(ReasoningMessage { id, content: text, encrypted_value: enc, subagent_run_id: sub, metadata }),
        })
}

fn patch() -> impl Strategy<Value = Vec<JsonPatchOp>> {
    let op = (0..6u8, s(), s(), json_value()).prop_map(|(k, path, from, value)| match k {
        0 => JsonPatchOp::Add { path, value },
        1 => JsonPatchOp::Remove { path },
        2 => JsonPatchOp::Replace { path, value },
        3 => JsonPatchOp::Move { from, path },
        4 => JsonPatchOp::Copy { from, path },
        _ => JsonPatchOp::Test { path, value },
    });
    proptest::collection::vec(op, 0..3)
}

fn usage() -> impl Strategy<Value = Option<Vec<TokenUsage>>> {
    let u = (os(), os(), proptest::option::of(any::<u64>()), proptest::option::of(0..1000u64)).prop_map(
        |(provider, model, input_tokens, output_tokens)| TokenUsage {
            provider,
            model,
            input_tokens,
            output_tokens,
            total_tokens: input_tokens.zip(output_tokens).map(|(a, b)| a.wrapping_add(b)),
            ..Default::default()
        },
    );
    proptest::option::of(proptest::collection::vec(u, 0..2))
}

fn outcome() -> impl Strategy<Value = Option<RunFinishedOutcome>> {
    let interrupt = (s(), s(), os(), os(), proptest::option::of(object()), os(), os(), proptest::option::of(object())).prop_map(
        |(id, reason, message, tool_call_id, response_schema, expires_at, subagent_run_id, metadata)| Interrupt {
            id,
            reason,
            message,
            tool_call_id,
            response_schema,
            expires_at,
            subagent_run_id,
            metadata,
        },
    );
    proptest::option::of(prop_oneof![
        proptest::option::of(proptest::collection::vec(s(), 0..2))
            .prop_map(|pending_tool_call_ids| RunFinishedOutcome::Success { pending_tool_call_ids }),
        proptest::collection::vec(interrupt, 1..3).prop_map(|interrupts| RunFinishedOutcome::Interrupt { interrupts }),
        Just(RunFinishedOutcome::Cancelled),
    ])
}

fn run_input() -> impl Strategy<Value = Option<Box<RunAgentInput>>> {
    let tool = (s(), s(), json_value(), proptest::option::of(object())).prop_map(|(name, description, parameters, metadata)| Tool {
        name,
        description,
        parameters,
        metadata,
    });
    let ctx = (s(), s()).prop_map(|(description, value)| Context { description, value });
    let resume = (s(), any::<bool>(), proptest::option::of(non_null()), proptest::option::of(object())).prop_map(
        |(interrupt_id, c, payload, metadata)| ResumeEntry {
            interrupt_id,
            status: if c { ResumeStatus::Cancelled } else { ResumeStatus::Resolved },
            payload,
            metadata,
        },
    );
    proptest::option::of(
        (
            (s(), s(), os(), json_value(), proptest::collection::vec(message(), 0..3)),
            (
                proptest::collection::vec(tool, 0..2),
                proptest::collection::vec(ctx, 0..2),
                json_value(),
                os(),
                proptest::option::of(proptest::collection::vec(resume, 0..2)),
            ),
        )
            .prop_map(
                |((thread_id, run_id, parent_run_id, state, messages), (tools, context, forwarded_props, protocol_version, resume))| {
                    Box::new(RunAgentInput {
                        thread_id,
                        run_id,
                        parent_run_id,
                        state,
                        messages,
                        tools,
                        context,
                        forwarded_props,
                        protocol_version,
                        resume,
                    })
                },
            ),
    )
}

/// A pool of field values; `build` picks what each event type needs.
#[derive(Debug, Clone)]
struct Pool {
    a: String,
    b: String,
    oa: Option<String>,
    ob: Option<String>,
    oc: Option<String>,
    od: Option<String>,
    flag: Option<bool>,
    value: Value,
    opt_value: Option<Value>,
    obj: Metadata,
    role: TextMessageRole,
    orole: Option<TextMessageRole>,
    content: MessageContent,
    messages: Vec<Message>,
    patch: Vec<JsonPatchOp>,
    outcome: Option<RunFinishedOutcome>,
    usage: Option<Vec<TokenUsage>>,
    input: Option<Box<RunAgentInput>>,
}

fn pool() -> impl Strategy<Value = Pool> {
    (
        (s(), s(), s(), os(), os(), os(), os(), proptest::option::of(any::<bool>())),
        (
            json_value(),
            proptest::option::of(non_null()),
            object(),
            prop_oneof![
                Just(TextMessageRole::Developer),
                Just(TextMessageRole::System),
                Just(TextMessageRole::Assistant),
                Just(TextMessageRole::User)
            ],
        ),
        (any::<bool>(), content(), proptest::collection::vec(message(), 0..3), patch(), outcome(), usage(), run_input()),
    )
        .prop_map(
            |(
                (a, b, _c, oa, ob, oc, od, flag),
                (value, opt_value, obj, role),
                (orole_some, content, messages, patch, outcome, usage, input),
            )| Pool {
                a,
                b,
                oa,
                ob,
                oc,
                od,
                flag,
                value,
                opt_value,
                obj,
                role,
                orole: orole_some.then_some(role),
                content,
                messages,
                patch,
                outcome,
                usage,
                input,
            },
        )
}

macro_rules! with_base {
    ($ty:ident { $($f:ident : $v:expr),* $(,)? }, $base:expr, attributable) => {
        $ty { $($f: $v,)* subagent_run_id: $base.subagent.clone(), timestamp: $base.timestamp, raw_event: $base.raw_event.clone(), metadata: $base.metadata.clone() }
    };
    ($ty:ident { $($f:ident : $v:expr),* $(,)? }, $base:expr) => {
        $ty { $($f: $v,)* timestamp: $base.timestamp, raw_event: $base.raw_event.clone(), metadata: $base.metadata.clone() }
    };
}

fn build(ty: EventType, p: Pool, b: Base) -> Event {
    use EventType as T;
    match ty {
        T::TextMessageStart => {
            Event::TextMessageStart(with_base!(TextMessageStartEvent { message_id: p.a, role: p.role, name: p.oa }, b, attributable))
        }
        T::TextMessageContent => {
            Event::TextMessageContent(with_base!(TextMessageContentEvent { message_id: p.a, delta: p.b }, b, attributable))
        }
        T::TextMessageEnd => Event::TextMessageEnd(with_base!(TextMessageEndEvent { message_id: p.a }, b, attributable)),
        T::TextMessageChunk => Event::TextMessageChunk(with_base!(
            TextMessageChunkEvent { message_id: p.oa, role: p.orole, delta: p.ob, name: p.oc },
            b,
            attributable
        )),
        T::ToolCallStart => Event::ToolCallStart(with_base!(
            ToolCallStartEvent { tool_call_id: p.a, tool_call_name: p.b, parent_message_id: p.oa },
            b,
            attributable
        )),
        T::ToolCallArgs => Event::ToolCallArgs(with_base!(ToolCallArgsEvent { tool_call_id: p.a, delta: p.b }, b, attributable)),
        T::ToolCallEnd => Event::ToolCallEnd(with_base!(ToolCallEndEvent { tool_call_id: p.a }, b, attributable)),
        T::ToolCallChunk => Event::ToolCallChunk(with_base!(
            ToolCallChunkEvent { tool_call_id: p.oa, tool_call_name: p.ob, parent_message_id: p.oc, delta: p.od },
            b,
            attributable
        )),
        T::ToolCallResult => Event::ToolCallResult(with_base!(
            ToolCallResultEvent { message_id: p.a, tool_call_id: p.b, content: p.content, role: p.flag.map(|_| ToolRole::Tool) },
            b,
            attributable
        )),
        T::StateSnapshot => Event::StateSnapshot(with_base!(StateSnapshotEvent { snapshot: p.value }, b, attributable)),
        T::StateDelta => Event::StateDelta(with_base!(StateDeltaEvent { delta: p.patch }, b, attributable)),
        T::MessagesSnapshot => Event::MessagesSnapshot(with_base!(MessagesSnapshotEvent { messages: p.messages }, b)),
        T::ActivitySnapshot => Event::ActivitySnapshot(with_base!(
            ActivitySnapshotEvent { message_id: p.a, activity_type: p.b, content: p.obj, replace: p.flag },
            b,
            attributable
        )),
        T::ActivityDelta => {
            Event::ActivityDelta(with_base!(ActivityDeltaEvent { message_id: p.a, activity_type: p.b, patch: p.patch }, b, attributable))
        }
        T::Raw => Event::Raw(with_base!(RawEvent { event: p.value, source: p.oa }, b, attributable)),
        T::Custom => Event::Custom(with_base!(CustomEvent { name: p.a, value: p.value }, b, attributable)),
        T::RunStarted => Event::RunStarted(with_base!(
            RunStartedEvent { thread_id: p.a, run_id: p.b, protocol_version: p.oa, parent_run_id: p.ob, input: p.input },
            b
        )),
        T::RunFinished => Event::RunFinished(with_base!(
            RunFinishedEvent { thread_id: p.a, run_id: p.b, result: p.opt_value, outcome: p.outcome, usage: p.usage },
            b
        )),
        T::RunError => Event::RunError(with_base!(RunErrorEvent { message: p.a, code: p.oa, usage: p.usage }, b)),
        T::StepStarted => Event::StepStarted(with_base!(StepStartedEvent { step_name: p.a }, b, attributable)),
        T::StepFinished => Event::StepFinished(with_base!(StepFinishedEvent { step_name: p.a }, b, attributable)),
        T::ReasoningStart => Event::ReasoningStart(with_base!(ReasoningStartEvent { message_id: p.a }, b, attributable)),
        T::ReasoningMessageStart => Event::ReasoningMessageStart(with_base!(
            ReasoningMessageStartEvent { message_id: p.a, role: ReasoningRole::Reasoning },
            b,
            attributable
        )),
        T::ReasoningMessageContent => {
            Event::ReasoningMessageContent(with_base!(ReasoningMessageContentEvent { message_id: p.a, delta: p.b }, b, attributable))
        }
        T::ReasoningMessageEnd => Event::ReasoningMessageEnd(with_base!(ReasoningMessageEndEvent { message_id: p.a }, b, attributable)),
        T::ReasoningMessageChunk => {
            Event::ReasoningMessageChunk(with_base!(ReasoningMessageChunkEvent { message_id: p.oa, delta: p.ob }, b, attributable))
        }
        T::ReasoningEnd => Event::ReasoningEnd(with_base!(ReasoningEndEvent { message_id: p.a }, b, attributable)),
        T::ReasoningEncryptedValue => Event::ReasoningEncryptedValue(with_base!(
            ReasoningEncryptedValueEvent {
                subtype: if p.flag.unwrap_or(false) {
                    ReasoningEncryptedValueSubtype::ToolCall
                } else {
                    ReasoningEncryptedValueSubtype::Message
                },
                entity_id: p.a,
                encrypted_value: p.b
            },
            b,
            attributable
        )),
        T::SubagentStarted => Event::SubagentStarted(with_base!(
            SubagentStartedEvent {
                subagent_run_id: p.a,
                name: p.b,
                description: p.oa,
                parent_subagent_run_id: p.ob,
                parent_tool_call_id: p.oc,
                parent_message_id: p.od
            },
            b
        )),
        T::SubagentFinished => Event::SubagentFinished(with_base!(
            SubagentFinishedEvent {
                subagent_run_id: p.a,
                result: p.opt_value,
                outcome: p.flag.map(|f| if f {
                    SubagentFinishedOutcome::Success
                } else {
                    SubagentFinishedOutcome::Suspended { interrupt_ids: p.oa.map(|x| vec![x]) }
                })
            },
            b
        )),
        T::SubagentError => Event::SubagentError(with_base!(SubagentErrorEvent { subagent_run_id: p.a, message: p.b, code: p.oa }, b)),
        T::ThinkingStart => Event::ThinkingStart(with_base!(ThinkingStartEvent { title: p.oa }, b)),
        T::ThinkingEnd => Event::ThinkingEnd(with_base!(ThinkingEndEvent {}, b)),
        T::ThinkingTextMessageStart => Event::ThinkingTextMessageStart(with_base!(ThinkingTextMessageStartEvent {}, b)),
        T::ThinkingTextMessageContent => Event::ThinkingTextMessageContent(with_base!(ThinkingTextMessageContentEvent { delta: p.a }, b)),
        T::ThinkingTextMessageEnd => Event::ThinkingTextMessageEnd(with_base!(ThinkingTextMessageEndEvent {}, b)),
    }
}

fn event_of(ty: EventType) -> impl Strategy<Value = Event> {
    (pool(), base()).prop_map(move |(p, b)| build(ty, p, b))
}

fn any_event() -> impl Strategy<Value = Event> {
    (proptest::sample::select(EventType::ALL.to_vec()), pool(), base()).prop_map(|(ty, p, b)| build(ty, p, b))
}

/// Keys whose value may legitimately be `null` (required "any JSON value" fields).
const NULLABLE: [&str; 3] = ["snapshot", "event", "value"];

fn check_json_round_trip(ev: &Event) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(ev).unwrap();
    prop_assert!(text.starts_with(&format!("{{\"type\":\"{}\"", ev.event_type())), "{text}");
    prop_assert_eq!(&Event::from_json_str(&text).unwrap(), ev);
    prop_assert_eq!(&serde_json::from_str::<Event>(&text).unwrap(), ev);
    let v: Value = serde_json::from_str(&text).unwrap();
    for (k, val) in v.as_object().unwrap() {
        prop_assert!(!val.is_null() || NULLABLE.contains(&k.as_str()), "optional `{}` written as null: {}", k, text);
    }
    Ok(())
}

fn check_sse_round_trip(ev: &Event) -> Result<(), TestCaseError> {
    let frame = encode(ev);
    prop_assert!(frame.starts_with("data: ") && frame.ends_with("\n\n"));
    prop_assert_eq!(frame.matches('\n').count(), 2, "frame must be one data line: {}", frame);
    prop_assert!(!frame.contains('\r'));
    let mut buf = Vec::new();
    encode_into(&mut buf, ev);
    prop_assert_eq!(buf.as_slice(), frame.as_bytes());
    prop_assert_eq!(SseDecoder::decode_all(frame.as_bytes()).unwrap(), vec![ev.clone()]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_event_round_trips_through_json_and_sse(ev in any_event()) {
        check_json_round_trip(&ev)?;
        check_sse_round_trip(&ev)?;
    }

    #[test]
    fn decoder_is_independent_of_chunk_boundaries(
        events in proptest::collection::vec(any_event(), 1..8),
        cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
        ending in 0..3usize,
        comments in any::<bool>(),
    ) {
        let eol = ["\n", "\r\n", "\r"][ending];
        let mut body = String::new();
        for e in &events {
            if comments {
                body.push_str(": keep-alive\nevent: agui\n");
            }
            body.push_str(&encode(e));
        }
        // JSON never holds raw line breaks, so every '\n' is framing.
        let body = body.replace('\n', eol).into_bytes();
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut dec = SseDecoder::new();
        let mut got = Vec::new();
        let mut prev = 0;
        for c in cuts.into_iter().chain(std::iter::once(body.len())) {
            for r in dec.feed(&body[prev..c]) {
                got.push(r.unwrap());
            }
            prev = c;
        }
        dec.finish().unwrap();
        prop_assert_eq!(got, events);
    }

    #[test]
    fn verifier_never_panics_and_closing_events_always_allow_finish(
        kinds in proptest::collection::vec((proptest::sample::select(EventType::ALL.to_vec()), 0..3usize, 0..3usize), 0..40),
    ) {
        // Small id/owner alphabets so opens, closes and ownership clashes collide often.
        let ids = ["a", "b", "c"];
        let owners = [None, Some("s1".to_owned()), Some("s2".to_owned())];
        let mut v = Verifier::new();
        let _ = v.check(&Event::RunStarted(RunStartedEvent { thread_id: "t".into(), run_id: "r".into(), ..Default::default() }));
        for (ty, i, o) in kinds {
            let p = Pool {
                a: ids[i].into(), b: ids[(i + 1) % 3].into(),
                oa: Some(ids[i].into()), ob: Some("f".into()), oc: None, od: None, flag: Some(false),
                value: Value::Null, opt_value: None, obj: Metadata::new(), role: TextMessageRole::Assistant,
                orole: None, content: "x".into(), messages: vec![], patch: vec![], outcome: None, usage: None, input: None,
            };
            let b = Base { timestamp: None, raw_event: None, metadata: None, subagent: owners[o].clone() };
            let ev = build(ty, p, b);
            if ev.event_type() == EventType::RunFinished || ev.event_type() == EventType::RunError {
                continue;
            }
            let _ = v.check(&ev);
        }
        if v.is_run_active() {
            for e in v.closing_events() {
                v.check(&e).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            for id in v.open_subagents().map(str::to_owned).collect::<Vec<_>>() {
                v.check(&Event::SubagentFinished(SubagentFinishedEvent { subagent_run_id: id, ..Default::default() }))
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            v.check(&Event::RunFinished(RunFinishedEvent::cancelled("t", "r")))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
    }
}

/// Writes `s` as a JSON string literal escaping *everything* non-alphanumeric as
/// `\uXXXX` (UTF-16, surrogate pairs included), to exercise the hand-written unescaper.
fn json_escape_all(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04X}"));
            }
        }
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn token_fast_path_agrees_with_serde(id in s(), delta in any::<String>(), kind in 0..3usize, escape_all in any::<bool>()) {
        let (ty, key) = [("TEXT_MESSAGE_CONTENT", "messageId"), ("TOOL_CALL_ARGS", "toolCallId"), ("REASONING_MESSAGE_CONTENT", "messageId")][kind];
        let id_lit = serde_json::to_string(&id).unwrap();
        let delta_lit = if escape_all { json_escape_all(&delta) } else { serde_json::to_string(&delta).unwrap() };
        let json = format!(r#"{{"type":"{ty}","{key}":{id_lit},"delta":{delta_lit}}}"#);
        let fast = Event::from_json_str(&json).unwrap();
        let generic: Event = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&fast, &generic);
        let got_delta = match fast {
            Event::TextMessageContent(e) => e.delta,
            Event::ToolCallArgs(e) => e.delta,
            Event::ReasoningMessageContent(e) => e.delta,
            other => panic!("unexpected {:?}", other.event_type()),
        };
        prop_assert_eq!(got_delta, delta);
    }
}

/// Every type individually, so a regression names the type that broke.
#[test]
fn each_event_type_round_trips() {
    use proptest::test_runner::{Config, TestRunner};
    for ty in EventType::ALL {
        let mut runner = TestRunner::new(Config { cases: 32, ..Config::default() });
        runner
            .run(&event_of(ty), |ev| {
                check_json_round_trip(&ev)?;
                check_sse_round_trip(&ev)
            })
            .unwrap_or_else(|e| panic!("{ty}: {e}"));
    }
}

// =====================================================================================
// Verifier tables
// =====================================================================================

fn run_started(run: &str) -> Event {
    Event::RunStarted(RunStartedEvent { thread_id: "t".into(), run_id: run.into(), ..Default::default() })
}
fn run_finished() -> Event {
    Event::RunFinished(RunFinishedEvent::success("t", "r", None))
}
fn run_error() -> Event {
    Event::RunError(RunErrorEvent { message: "boom".into(), ..Default::default() })
}
fn tm_start(id: &str) -> Event {
    Event::TextMessageStart(TextMessageStartEvent { message_id: id.into(), ..Default::default() })
}
fn tm_content(id: &str) -> Event {
    Event::TextMessageContent(TextMessageContentEvent { message_id: id.into(), delta: "x".into(), ..Default::default() })
}
fn tm_end(id: &str) -> Event {
    Event::TextMessageEnd(TextMessageEndEvent { message_id: id.into(), ..Default::default() })
}
fn tagged(mut e: Event, sub: &str) -> Event {
    let s = Some(sub.to_owned());
    match &mut e {
        Event::TextMessageStart(x) => x.subagent_run_id = s,
        Event::TextMessageContent(x) => x.subagent_run_id = s,
        Event::TextMessageEnd(x) => x.subagent_run_id = s,
        Event::ToolCallStart(x) => x.subagent_run_id = s,
        Event::StepStarted(x) => x.subagent_run_id = s,
        Event::StepFinished(x) => x.subagent_run_id = s,
        Event::ReasoningEncryptedValue(x) => x.subagent_run_id = s,
        Event::ActivityDelta(x) => x.subagent_run_id = s,
        Event::ActivitySnapshot(x) => x.subagent_run_id = s,
        other => panic!("tagged() does not handle {:?}", other.event_type()),
    }
    e
}
fn tc_start(id: &str) -> Event {
    Event::ToolCallStart(ToolCallStartEvent { tool_call_id: id.into(), tool_call_name: "f".into(), ..Default::default() })
}
fn tc_start_in(id: &str, parent: &str) -> Event {
    Event::ToolCallStart(ToolCallStartEvent {
        tool_call_id: id.into(),
        tool_call_name: "f".into(),
        parent_message_id: Some(parent.into()),
        ..Default::default()
    })
}
fn tc_args(id: &str) -> Event {
    Event::ToolCallArgs(ToolCallArgsEvent { tool_call_id: id.into(), delta: "{}".into(), ..Default::default() })
}
fn tc_end(id: &str) -> Event {
    Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: id.into(), ..Default::default() })
}
fn tc_result(call: &str, msg: &str) -> Event {
    Event::ToolCallResult(ToolCallResultEvent {
        message_id: msg.into(),
        tool_call_id: call.into(),
        content: "ok".into(),
        ..Default::default()
    })
}
fn step_start(n: &str) -> Event {
    Event::StepStarted(StepStartedEvent { step_name: n.into(), ..Default::default() })
}
fn step_end(n: &str) -> Event {
    Event::StepFinished(StepFinishedEvent { step_name: n.into(), ..Default::default() })
}
fn rs_start(id: &str) -> Event {
    Event::ReasoningStart(ReasoningStartEvent { message_id: id.into(), ..Default::default() })
}
fn rs_end(id: &str) -> Event {
    Event::ReasoningEnd(ReasoningEndEvent { message_id: id.into(), ..Default::default() })
}
fn rm_start(id: &str) -> Event {
    Event::ReasoningMessageStart(ReasoningMessageStartEvent { message_id: id.into(), ..Default::default() })
}
fn rm_content(id: &str) -> Event {
    Event::ReasoningMessageContent(ReasoningMessageContentEvent { message_id: id.into(), delta: "hm".into(), ..Default::default() })
}
fn rm_end(id: &str) -> Event {
    Event::ReasoningMessageEnd(ReasoningMessageEndEvent { message_id: id.into(), ..Default::default() })
}
fn sa_start(id: &str, parent: Option<&str>) -> Event {
    Event::SubagentStarted(SubagentStartedEvent {
        subagent_run_id: id.into(),
        name: "helper".into(),
        parent_subagent_run_id: parent.map(str::to_owned),
        ..Default::default()
    })
}
fn sa_end(id: &str) -> Event {
    Event::SubagentFinished(SubagentFinishedEvent { subagent_run_id: id.into(), ..Default::default() })
}
fn sa_error(id: &str) -> Event {
    Event::SubagentError(SubagentErrorEvent { subagent_run_id: id.into(), message: "x".into(), ..Default::default() })
}
fn custom() -> Event {
    Event::Custom(CustomEvent { name: "n".into(), value: json!(1), ..Default::default() })
}
fn text_chunk(id: Option<&str>) -> Event {
    Event::TextMessageChunk(TextMessageChunkEvent { message_id: id.map(str::to_owned), delta: Some("x".into()), ..Default::default() })
}
fn tool_chunk(id: Option<&str>, name: Option<&str>) -> Event {
    Event::ToolCallChunk(ToolCallChunkEvent {
        tool_call_id: id.map(str::to_owned),
        tool_call_name: name.map(str::to_owned),
        delta: Some("{}".into()),
        ..Default::default()
    })
}
fn thinking(ty: EventType) -> Event {
    match ty {
        EventType::ThinkingStart => Event::ThinkingStart(ThinkingStartEvent::default()),
        EventType::ThinkingEnd => Event::ThinkingEnd(ThinkingEndEvent::default()),
        EventType::ThinkingTextMessageStart => Event::ThinkingTextMessageStart(ThinkingTextMessageStartEvent::default()),
        EventType::ThinkingTextMessageContent => {
            Event::ThinkingTextMessageContent(ThinkingTextMessageContentEvent { delta: "x".into(), ..Default::default() })
        }
        _ => Event::ThinkingTextMessageEnd(ThinkingTextMessageEndEvent::default()),
    }
}

#[test]
fn verifier_accepts() {
    let snapshot_owned_by_s1 = Event::MessagesSnapshot(MessagesSnapshotEvent {
        messages: vec![Message::Assistant(AssistantMessage {
            id: "m".into(),
            subagent_run_id: Some("s1".into()),
            tool_calls: Some(vec![ToolCall::function("c", "f", "{}")]),
            ..Default::default()
        })],
        ..Default::default()
    });
    let cases: Vec<(&str, Vec<Event>)> = vec![
        ("minimal run", vec![run_started("r"), run_finished()]),
        ("error as first event", vec![run_error()]),
        ("error ends a run", vec![run_started("r"), tm_start("m"), run_error()]),
        ("error after finish (official verifier allows it)", vec![run_started("r"), run_finished(), run_error()]),
        ("two runs", vec![run_started("r1"), run_finished(), run_started("r2"), run_finished()]),
        ("new run after error", vec![run_started("r1"), run_error(), run_started("r2"), run_finished()]),
        ("text message", vec![run_started("r"), tm_start("m"), tm_content("m"), tm_content("m"), tm_end("m"), run_finished()]),
        (
            "interleaved messages",
            vec![run_started("r"), tm_start("a"), tm_start("b"), tm_content("a"), tm_end("b"), tm_end("a"), run_finished()],
        ),
        ("message id reused after end", vec![run_started("r"), tm_start("m"), tm_end("m"), tm_start("m"), tm_end("m"), run_finished()]),
        (
            "ids reset per run",
            vec![run_started("r1"), tm_start("m"), run_error(), run_started("r2"), tm_start("m"), tm_end("m"), run_finished()],
        ),
        ("tool call with result", vec![run_started("r"), tc_start("c"), tc_args("c"), tc_end("c"), tc_result("c", "tm"), run_finished()]),
        ("steps by name", vec![run_started("r"), step_start("a"), step_start("b"), step_end("a"), step_end("b"), run_finished()]),
        (
            "same step name in parent and subagent",
            vec![
                run_started("r"),
                sa_start("s1", None),
                step_start("tools"),
                tagged(step_start("tools"), "s1"),
                tagged(step_end("tools"), "s1"),
                step_end("tools"),
                sa_end("s1"),
                run_finished(),
            ],
        ),
        (
            "reasoning span and message share an id",
            vec![run_started("r"), rs_start("x"), rm_start("x"), rm_content("x"), rm_end("x"), rs_end("x"), run_finished()],
        ),
        (
            "subagents nest",
            vec![run_started("r"), sa_start("p", None), sa_start("c", Some("p")), sa_error("c"), sa_end("p"), run_finished()],
        ),
        (
            "attributed message",
            vec![
                run_started("r"),
                tagged(tm_start("m"), "s1"),
                tagged(tm_content("m"), "s1"),
                tm_content("m"),
                tagged(tm_end("m"), "s1"),
                run_finished(),
            ],
        ),
        (
            "chunks",
            vec![
                run_started("r"),
                text_chunk(Some("m")),
                text_chunk(None),
                tool_chunk(Some("c"), Some("f")),
                tool_chunk(None, None),
                run_finished(),
            ],
        ),
        (
            "legacy thinking",
            vec![
                run_started("r"),
                thinking(EventType::ThinkingStart),
                thinking(EventType::ThinkingTextMessageStart),
                thinking(EventType::ThinkingTextMessageContent),
                thinking(EventType::ThinkingTextMessageEnd),
                thinking(EventType::ThinkingEnd),
                run_finished(),
            ],
        ),
        (
            "snapshot seeds owner, matching tag ok",
            vec![
                run_started("r"),
                snapshot_owned_by_s1,
                tagged(
                    Event::ReasoningEncryptedValue(ReasoningEncryptedValueEvent {
                        subtype: ReasoningEncryptedValueSubtype::ToolCall,
                        entity_id: "c".into(),
                        encrypted_value: "e".into(),
                        ..Default::default()
                    }),
                    "s1",
                ),
                run_finished(),
            ],
        ),
        ("cancelled run", vec![run_started("r"), custom(), Event::RunFinished(RunFinishedEvent::cancelled("t", "r"))]),
    ];
    for (name, events) in cases {
        if let Err(e) = verify_all(&events) {
            panic!("{name}: rejected: {e}");
        }
    }
}

#[test]
fn verifier_rejects() {
    type Check = fn(&VerifyError) -> bool;
    let interrupted_empty = Event::RunFinished(RunFinishedEvent {
        thread_id: "t".into(),
        run_id: "r".into(),
        outcome: Some(RunFinishedOutcome::Interrupt { interrupts: vec![] }),
        ..Default::default()
    });
    let cases: Vec<(&str, Vec<Event>, usize, Check)> = vec![
        ("content first", vec![tm_content("m")], 0, |e| {
            matches!(e, VerifyError::FirstEventNotRunStarted { event: EventType::TextMessageContent })
        }),
        ("anything after error", vec![run_started("r"), run_error(), custom()], 2, |e| {
            matches!(e, VerifyError::AfterRunError { event: EventType::Custom })
        }),
        ("finish after error", vec![run_started("r"), run_error(), run_finished()], 2, |e| matches!(e, VerifyError::AfterRunError { .. })),
        ("anything after finish", vec![run_started("r"), run_finished(), tm_start("m")], 2, |e| {
            matches!(e, VerifyError::AfterRunFinished { event: EventType::TextMessageStart })
        }),
        ("double finish", vec![run_started("r"), run_finished(), run_finished()], 2, |e| matches!(e, VerifyError::AfterRunFinished { .. })),
        (
            "nested run start",
            vec![run_started("r1"), run_started("r2")],
            1,
            |e| matches!(e, VerifyError::RunAlreadyActive { active_run_id } if active_run_id == "r1"),
        ),
        (
            "duplicate message start",
            vec![run_started("r"), tm_start("m"), tm_start("m")],
            2,
            |e| matches!(e, VerifyError::AlreadyOpen { entity: Entity::TextMessage, id, .. } if id == "m"),
        ),
        (
            "content without start",
            vec![run_started("r"), tm_content("m")],
            1,
            |e| matches!(e, VerifyError::NotOpen { event: EventType::TextMessageContent, id, .. } if id == "m"),
        ),
        ("content after end", vec![run_started("r"), tm_start("m"), tm_end("m"), tm_content("m")], 3, |e| {
            matches!(e, VerifyError::NotOpen { .. })
        }),
        ("end without start", vec![run_started("r"), tm_end("m")], 1, |e| {
            matches!(e, VerifyError::NotOpen { event: EventType::TextMessageEnd, .. })
        }),
        (
            "finish with open message",
            vec![run_started("r"), tm_start("m"), run_finished()],
            2,
            |e| matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::TextMessage, ids } if ids == &["m"]),
        ),
        ("args without start", vec![run_started("r"), tc_args("c")], 1, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::ToolCall, .. })
        }),
        ("duplicate tool start", vec![run_started("r"), tc_start("c"), tc_start("c")], 2, |e| {
            matches!(e, VerifyError::AlreadyOpen { entity: Entity::ToolCall, .. })
        }),
        ("finish with open tool call", vec![run_started("r"), tc_start("c"), run_finished()], 2, |e| {
            matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::ToolCall, .. })
        }),
        ("tool end after end", vec![run_started("r"), tc_start("c"), tc_end("c"), tc_end("c")], 3, |e| {
            matches!(e, VerifyError::NotOpen { .. })
        }),
        ("duplicate step", vec![run_started("r"), step_start("s"), step_start("s")], 2, |e| {
            matches!(e, VerifyError::AlreadyOpen { entity: Entity::Step, .. })
        }),
        ("step finished never started", vec![run_started("r"), step_end("s")], 1, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::Step, .. })
        }),
        ("finish with open step", vec![run_started("r"), step_start("s"), run_finished()], 2, |e| {
            matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::Step, .. })
        }),
        ("step closed by the wrong owner", vec![run_started("r"), step_start("s"), tagged(step_end("s"), "s1")], 2, |e| {
            matches!(e, VerifyError::StepOwnerMismatch { .. })
        }),
        ("reasoning content without start", vec![run_started("r"), rm_content("x")], 1, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::ReasoningMessage, .. })
        }),
        ("reasoning end without span", vec![run_started("r"), rm_start("x"), rs_end("x")], 2, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::ReasoningSpan, .. })
        }),
        ("finish with open reasoning message", vec![run_started("r"), rm_start("x"), run_finished()], 2, |e| {
            matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::ReasoningMessage, .. })
        }),
        ("finish with open reasoning span", vec![run_started("r"), rs_start("x"), run_finished()], 2, |e| {
            matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::ReasoningSpan, .. })
        }),
        ("finish with open subagent", vec![run_started("r"), sa_start("s", None), run_finished()], 2, |e| {
            matches!(e, VerifyError::OpenAtRunFinished { entity: Entity::Subagent, .. })
        }),
        ("subagent reused", vec![run_started("r"), sa_start("s", None), sa_end("s"), sa_start("s", None)], 3, |e| {
            matches!(e, VerifyError::SubagentReused { .. })
        }),
        ("subagent unknown parent", vec![run_started("r"), sa_start("s", Some("p"))], 1, |e| {
            matches!(e, VerifyError::UnknownParentSubagent { .. })
        }),
        ("subagent finished twice", vec![run_started("r"), sa_start("s", None), sa_end("s"), sa_end("s")], 3, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::Subagent, .. })
        }),
        (
            "continuation tagged by another subagent",
            vec![run_started("r"), tagged(tm_start("m"), "s1"), tagged(tm_content("m"), "s2")],
            2,
            |e| matches!(e, VerifyError::SubagentMismatch { tagged, .. } if tagged == "s2"),
        ),
        ("subagent continues a parent message", vec![run_started("r"), tm_start("m"), tagged(tm_content("m"), "s1")], 2, |e| {
            matches!(e, VerifyError::SubagentMismatch { owner: None, .. })
        }),
        (
            "tool call tag disagrees with its parent message",
            vec![run_started("r"), tm_start("m"), tagged(tc_start_in("c", "m"), "s1")],
            2,
            |e| matches!(e, VerifyError::SubagentMismatch { entity: Entity::TextMessage, .. }),
        ),
        (
            "re-open under another owner",
            vec![run_started("r"), tagged(tm_start("m"), "s1"), tm_end("m"), tagged(tm_start("m"), "s2")],
            3,
            |e| matches!(e, VerifyError::SubagentMismatch { .. }),
        ),
        (
            "activity delta by another owner",
            vec![
                run_started("r"),
                Event::ActivitySnapshot(ActivitySnapshotEvent {
                    message_id: "a".into(),
                    activity_type: "PLAN".into(),
                    ..Default::default()
                }),
                tagged(
                    Event::ActivityDelta(ActivityDeltaEvent { message_id: "a".into(), activity_type: "PLAN".into(), ..Default::default() }),
                    "s1",
                ),
            ],
            2,
            |e| matches!(e, VerifyError::SubagentMismatch { entity: Entity::Activity, .. }),
        ),
        ("first text chunk without id", vec![run_started("r"), text_chunk(None)], 1, |e| {
            matches!(e, VerifyError::ChunkMissingField { field: "messageId", .. })
        }),
        ("first tool chunk without name", vec![run_started("r"), tool_chunk(Some("c"), None)], 1, |e| {
            matches!(e, VerifyError::ChunkMissingField { field: "toolCallName", .. })
        }),
        ("thinking message outside step", vec![run_started("r"), thinking(EventType::ThinkingTextMessageStart)], 1, |e| {
            matches!(e, VerifyError::NotOpen { entity: Entity::ThinkingStep, .. })
        }),
        ("nested thinking step", vec![run_started("r"), thinking(EventType::ThinkingStart), thinking(EventType::ThinkingStart)], 2, |e| {
            matches!(e, VerifyError::AlreadyOpen { entity: Entity::ThinkingStep, .. })
        }),
        ("interrupt outcome without interrupts", vec![run_started("r"), interrupted_empty], 1, |e| {
            matches!(e, VerifyError::EmptyInterrupts { .. })
        }),
    ];
    for (name, events, at, check) in cases {
        let mut v = Verifier::new();
        let mut failed = None;
        for (i, e) in events.iter().enumerate() {
            if let Err(err) = v.check(e) {
                failed = Some((i, err));
                break;
            }
        }
        let Some((i, err)) = failed else { panic!("{name}: accepted") };
        assert_eq!(i, at, "{name}: failed at the wrong event: {err}");
        assert!(check(&err), "{name}: wrong error: {err:?}");
        let msg = err.to_string();
        if let Some(ty) = err.event_type() {
            assert!(msg.contains(ty.as_str()), "{name}: message does not name the event: {msg}");
        }
        if let Some(id) = err.id() {
            assert!(msg.contains(id), "{name}: message does not name the id: {msg}");
        }
    }
}

#[test]
fn verifier_finish_rules() {
    assert_eq!(verify_all(&[]), Err(VerifyError::NoEvents));
    assert_eq!(verify_all(&[run_started("r"), tm_start("m")]), Err(VerifyError::RunNotEnded { run_id: "r".into() }));
}

#[test]
fn stop_flow_closes_everything_and_finishes_cancelled() {
    let mut v = Verifier::new();
    for e in [run_started("r"), step_start("answer"), tm_start("m"), tm_content("m"), tc_start("c"), rs_start("x"), rm_start("y")] {
        v.check(&e).unwrap();
    }
    assert_eq!(v.open_text_messages().collect::<Vec<_>>(), vec!["m"]);
    assert_eq!(v.open_tool_calls().collect::<Vec<_>>(), vec!["c"]);
    assert_eq!(v.open_reasoning_messages().collect::<Vec<_>>(), vec!["y"]);
    assert_eq!(v.open_steps().collect::<Vec<_>>(), vec!["answer"]);
    for e in v.closing_events() {
        v.check(&e).unwrap();
    }
    let fin = RunFinishedEvent::cancelled("t", "r");
    assert!(fin.is_cancelled());
    v.check(&Event::RunFinished(fin)).unwrap();
    v.finish().unwrap();
}
