//! Ordering rules for an AG-UI event stream, as the official client's verifier
//! (`@ag-ui/client` 1.0.0, `verify/verify.ts`) enforces them:
//!
//! * the first event is `RUN_STARTED` (or `RUN_ERROR`); a new `RUN_STARTED` is only
//!   allowed once the previous run ended, and resets all per-run state;
//! * after `RUN_ERROR` only a new `RUN_STARTED`; after `RUN_FINISHED` only a new
//!   `RUN_STARTED` — or a `RUN_ERROR`, which the official verifier also admits there;
//! * text messages, tool calls, reasoning spans and reasoning messages pair
//!   START / CONTENT|ARGS / END by id (a span and a message may share an id); steps
//!   pair by name per owner; subagents pair STARTED / FINISHED|ERROR by id, ids are
//!   never reused within a run, and a `parentSubagentRunId` must have been started;
//! * `RUN_FINISHED` is rejected while any step, text message, reasoning message or
//!   span, tool call or subagent is open, or with an `interrupt` outcome that lists
//!   no interrupts (a schema rule serde cannot express);
//! * subagent attribution: a continuation (`…_CONTENT`, `…_END`, `TOOL_CALL_ARGS`,
//!   `ACTIVITY_DELTA`, `REASONING_ENCRYPTED_VALUE`, a re-open) whose `subagentRunId`
//!   disagrees with the owner recorded by the entity's opener, by `TOOL_CALL_RESULT`,
//!   by `MESSAGES_SNAPSHOT` or by `RUN_STARTED.input` is rejected; an absent tag never
//!   disagrees;
//! * legacy `THINKING_*`: one thinking step at a time with one message inside it.
//!
//! `*_CHUNK` events are not paired (the official client expands them into
//! START/CONTENT/END before verifying); only their opener rule is checked: the first
//! chunk of a stream must carry its id (and, for tool calls, its name).
//!
//! A rejected event leaves the verifier's state unchanged.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::events::*;
use super::input::{Message, RunAgentInput};
use super::outcome::RunFinishedOutcome;

/// What kind of thing an id names, for error messages and open-id queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A text message (`TEXT_MESSAGE_*`).
    TextMessage,
    /// A tool call (`TOOL_CALL_*`).
    ToolCall,
    /// A reasoning span (`REASONING_START` / `REASONING_END`).
    ReasoningSpan,
    /// A reasoning message (`REASONING_MESSAGE_*`).
    ReasoningMessage,
    /// A step (`STEP_*`), identified by name.
    Step,
    /// A subagent invocation (`SUBAGENT_*`).
    Subagent,
    /// An activity message (`ACTIVITY_*`).
    Activity,
    /// A legacy thinking step (`THINKING_START` / `THINKING_END`).
    ThinkingStep,
    /// A legacy thinking message (`THINKING_TEXT_MESSAGE_*`).
    ThinkingMessage,
}

impl Entity {
    /// The event that opens this kind of entity.
    pub const fn opener(self) -> EventType {
        match self {
            Entity::TextMessage => EventType::TextMessageStart,
            Entity::ToolCall => EventType::ToolCallStart,
            Entity::ReasoningSpan => EventType::ReasoningStart,
            Entity::ReasoningMessage => EventType::ReasoningMessageStart,
            Entity::Step => EventType::StepStarted,
            Entity::Subagent => EventType::SubagentStarted,
            Entity::Activity => EventType::ActivitySnapshot,
            Entity::ThinkingStep => EventType::ThinkingStart,
            Entity::ThinkingMessage => EventType::ThinkingTextMessageStart,
        }
    }

    /// The event that closes this kind of entity.
    pub const fn closer(self) -> EventType {
        match self {
            Entity::TextMessage => EventType::TextMessageEnd,
            Entity::ToolCall => EventType::ToolCallEnd,
            Entity::ReasoningSpan => EventType::ReasoningEnd,
            Entity::ReasoningMessage => EventType::ReasoningMessageEnd,
            Entity::Step => EventType::StepFinished,
            Entity::Subagent => EventType::SubagentFinished,
            Entity::Activity => EventType::ActivitySnapshot,
            Entity::ThinkingStep => EventType::ThinkingEnd,
            Entity::ThinkingMessage => EventType::ThinkingTextMessageEnd,
        }
    }
}

impl std::fmt::Display for Entity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Entity::TextMessage => "text message",
            Entity::ToolCall => "tool call",
            Entity::ReasoningSpan => "reasoning span",
            Entity::ReasoningMessage => "reasoning message",
            Entity::Step => "step",
            Entity::Subagent => "subagent",
            Entity::Activity => "activity",
            Entity::ThinkingStep => "thinking step",
            Entity::ThinkingMessage => "thinking message",
        })
    }
}

fn who(owner: &Option<String>) -> String {
    match owner {
        Some(s) => format!("subagent `{s}`"),
        None => "the parent agent".to_owned(),
    }
}

/// A broken ordering rule: which event, which id, which rule, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The stream did not open with `RUN_STARTED`.
    #[error("{event} cannot be the first event of a stream: send RUN_STARTED first")]
    FirstEventNotRunStarted {
        /// The offending event.
        event: EventType,
    },
    /// An event other than `RUN_STARTED` followed `RUN_ERROR`.
    #[error("{event} after RUN_ERROR: the run already failed; only a new RUN_STARTED may follow")]
    AfterRunError {
        /// The offending event.
        event: EventType,
    },
    /// An event other than `RUN_STARTED`/`RUN_ERROR` followed `RUN_FINISHED`.
    #[error("{event} after RUN_FINISHED: the run is over; start a new run with RUN_STARTED")]
    AfterRunFinished {
        /// The offending event.
        event: EventType,
    },
    /// `RUN_STARTED` while a run is still active.
    #[error("RUN_STARTED while run `{active_run_id}` is still active: end it with RUN_FINISHED or RUN_ERROR first")]
    RunAlreadyActive {
        /// The run that is still active.
        active_run_id: String,
    },
    /// An opener for an id that is already open.
    #[error("{event} for {entity} `{id}`: it is already open; close it with {} first", .entity.closer())]
    AlreadyOpen {
        /// The offending event.
        event: EventType,
        /// What the id names.
        entity: Entity,
        /// The id (a step's name for steps).
        id: String,
    },
    /// A continuation or closer for an id that is not open.
    #[error("{event} for {entity} `{id}`: no such {entity} is open; open it with {} first", .entity.opener())]
    NotOpen {
        /// The offending event.
        event: EventType,
        /// What the id names.
        entity: Entity,
        /// The id (a step's name for steps).
        id: String,
    },
    /// `RUN_FINISHED` while something is still open.
    #[error(
        "RUN_FINISHED while {entity}s are still open ({}): close each with {} first, or end the run with RUN_ERROR",
        .ids.join(", "), .entity.closer()
    )]
    OpenAtRunFinished {
        /// What is still open.
        entity: Entity,
        /// Which ids (step names for steps).
        ids: Vec<String>,
    },
    /// An event's `subagentRunId` disagrees with the entity's recorded owner.
    #[error(
        "{event} for {entity} `{id}` is tagged subagentRunId `{tagged}` but the {entity} belongs to {}; tag it like its opener or omit the tag",
        who(.owner)
    )]
    SubagentMismatch {
        /// The offending event.
        event: EventType,
        /// What the id names (`TextMessage` also for a tool call's parent message).
        entity: Entity,
        /// The id.
        id: String,
        /// The event's tag.
        tagged: String,
        /// The recorded owner (`None` = the parent agent).
        owner: Option<String>,
    },
    /// `STEP_FINISHED` for a step that is open under a different owner.
    #[error(
        "STEP_FINISHED for step `{id}` attributed to {} but the step is open under {}: a step must be finished by whoever started it",
        who(.tagged), who(.owner)
    )]
    StepOwnerMismatch {
        /// The step name.
        id: String,
        /// The event's tag.
        tagged: Option<String>,
        /// The owner that has the step open.
        owner: Option<String>,
    },
    /// `SUBAGENT_STARTED` reused an id that already finished in this run.
    #[error(
        "SUBAGENT_STARTED for subagent `{id}`: that invocation already finished in this run; subagent ids are per invocation, mint a new one"
    )]
    SubagentReused {
        /// The reused id.
        id: String,
    },
    /// `SUBAGENT_STARTED` named a parent that was never started in this run.
    #[error("SUBAGENT_STARTED for subagent `{id}`: parentSubagentRunId `{parent}` was not started in this run; start the parent first")]
    UnknownParentSubagent {
        /// The subagent being started.
        id: String,
        /// The unknown parent.
        parent: String,
    },
    /// The first chunk of a chunked stream lacked a required field.
    #[error("{event} opens a new chunked stream without `{field}`: the first chunk must carry it")]
    ChunkMissingField {
        /// The offending event.
        event: EventType,
        /// The missing field's wire name.
        field: &'static str,
    },
    /// `RUN_FINISHED` with an `interrupt` outcome but no interrupts.
    #[error("RUN_FINISHED for run `{run_id}` has outcome `interrupt` with no interrupts: list at least one, or use outcome `success`")]
    EmptyInterrupts {
        /// The run.
        run_id: String,
    },
    /// The stream ended while a run was active ([`Verifier::finish`]).
    #[error("stream ended while run `{run_id}` is still active: end every run with RUN_FINISHED or RUN_ERROR")]
    RunNotEnded {
        /// The run left open.
        run_id: String,
    },
    /// The stream carried no events at all ([`Verifier::finish`]).
    #[error("stream ended without any event: a run must at least send RUN_STARTED and RUN_FINISHED")]
    NoEvents,
}

impl VerifyError {
    /// The event type that broke the rule, when there is one.
    pub fn event_type(&self) -> Option<EventType> {
        match self {
            VerifyError::FirstEventNotRunStarted { event }
            | VerifyError::AfterRunError { event }
            | VerifyError::AfterRunFinished { event }
            | VerifyError::AlreadyOpen { event, .. }
            | VerifyError::NotOpen { event, .. }
            | VerifyError::SubagentMismatch { event, .. }
            | VerifyError::ChunkMissingField { event, .. } => Some(*event),
            VerifyError::RunAlreadyActive { .. } => Some(EventType::RunStarted),
            VerifyError::OpenAtRunFinished { .. } | VerifyError::EmptyInterrupts { .. } => Some(EventType::RunFinished),
            VerifyError::StepOwnerMismatch { .. } => Some(EventType::StepFinished),
            VerifyError::SubagentReused { .. } | VerifyError::UnknownParentSubagent { .. } => Some(EventType::SubagentStarted),
            VerifyError::RunNotEnded { .. } | VerifyError::NoEvents => None,
        }
    }

    /// The id (message, tool call, step name, subagent or run) the rule is about.
    pub fn id(&self) -> Option<&str> {
        match self {
            VerifyError::AlreadyOpen { id, .. }
            | VerifyError::NotOpen { id, .. }
            | VerifyError::SubagentMismatch { id, .. }
            | VerifyError::StepOwnerMismatch { id, .. }
            | VerifyError::SubagentReused { id }
            | VerifyError::UnknownParentSubagent { id, .. } => Some(id),
            VerifyError::RunAlreadyActive { active_run_id: id }
            | VerifyError::EmptyInterrupts { run_id: id }
            | VerifyError::RunNotEnded { run_id: id } => Some(id),
            VerifyError::OpenAtRunFinished { ids, .. } => ids.first().map(String::as_str),
            VerifyError::FirstEventNotRunStarted { .. }
            | VerifyError::AfterRunError { .. }
            | VerifyError::AfterRunFinished { .. }
            | VerifyError::ChunkMissingField { .. }
            | VerifyError::NoEvents => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Phase {
    #[default]
    Fresh,
    Running,
    Finished,
    Errored,
}

/// `None` = the parent agent.
type Owner = Option<String>;

/// FxHash-style hasher for the id maps. Ids are short and one is looked up for every
/// streamed token, where SipHash was the verifier's largest cost; the verifier only
/// checks streams this app produces or chose to consume, so HashDoS resistance buys
/// little here.
#[derive(Debug, Default, Clone, Copy)]
struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut b = [0u8; 8];
            b[..tail.len()].copy_from_slice(tail);
            self.add(u64::from_le_bytes(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply mixes upward; rotate the well-mixed high bits into the low bits
        // the table indexes by.
        self.0.rotate_left(26)
    }
}

type IdBuild = BuildHasherDefault<IdHasher>;
type IdMap<V> = HashMap<String, V, IdBuild>;

/// One id's record for the run: open state (by opening sequence number, so open ids
/// can be listed in order) and owner. Owners outlive the close, as in the official
/// verifier, so a late continuation or a re-open is still checked.
#[derive(Debug, Clone, Default)]
struct Slot {
    /// Open as a message / tool call (`REASONING_MESSAGE_*` for the reasoning map).
    open: Option<u64>,
    /// Open as a reasoning span (reasoning map only).
    span_open: Option<u64>,
    owner: Owner,
}

/// Stateful checker for one event stream (which may hold several consecutive runs).
#[derive(Debug, Default)]
pub struct Verifier {
    phase: Phase,
    run_id: String,
    seq: u64,
    messages: IdMap<Slot>,
    tool_calls: IdMap<Slot>,
    reasoning: IdMap<Slot>,
    activities: IdMap<Slot>,
    open_text: usize,
    open_tools: usize,
    open_reasoning_msgs: usize,
    open_reasoning_spans: usize,
    steps: HashMap<Owner, IdMap<u64>, IdBuild>,
    open_steps: usize,
    subagents: IdMap<u64>,
    closed_subagents: HashSet<String, IdBuild>,
    thinking_step: bool,
    thinking_msg: bool,
    chunk_text: Option<String>,
    chunk_tool: Option<String>,
    chunk_reasoning: Option<String>,
}

/// Rejects a tag that disagrees with a recorded owner (absent tag or owner: fine).
fn tag_check(event: EventType, entity: Entity, id: &str, tag: &Option<String>, owner: Option<&Owner>) -> Result<(), VerifyError> {
    if let (Some(tagged), Some(owner)) = (tag, owner)
        && owner.as_ref() != Some(tagged)
    {
        return Err(VerifyError::SubagentMismatch { event, entity, id: id.to_owned(), tagged: tagged.clone(), owner: owner.clone() });
    }
    Ok(())
}

fn in_order<'a>(mut v: Vec<(u64, &'a str)>) -> impl Iterator<Item = &'a str> + 'a {
    v.sort_unstable_by_key(|(seq, _)| *seq);
    v.into_iter().map(|(_, id)| id)
}

impl Verifier {
    /// A verifier expecting the first event of a stream.
    pub fn new() -> Self {
        Verifier::default()
    }

    /// Checks one event against the rules and, if it passes, records it.
    pub fn check(&mut self, event: &Event) -> Result<(), VerifyError> {
        let ty = event.event_type();
        match self.phase {
            Phase::Errored if ty != EventType::RunStarted => {
                return Err(VerifyError::AfterRunError { event: ty });
            }
            Phase::Finished if !matches!(ty, EventType::RunStarted | EventType::RunError) => {
                return Err(VerifyError::AfterRunFinished { event: ty });
            }
            Phase::Fresh if !matches!(ty, EventType::RunStarted | EventType::RunError) => {
                return Err(VerifyError::FirstEventNotRunStarted { event: ty });
            }
            Phase::Running if ty == EventType::RunStarted => {
                return Err(VerifyError::RunAlreadyActive { active_run_id: self.run_id.clone() });
            }
            _ => {}
        }
        self.apply(event, ty)
    }

    /// Checks the end of the stream: the last run must have ended.
    pub fn finish(&self) -> Result<(), VerifyError> {
        match self.phase {
            Phase::Fresh => Err(VerifyError::NoEvents),
            Phase::Running => Err(VerifyError::RunNotEnded { run_id: self.run_id.clone() }),
            Phase::Finished | Phase::Errored => Ok(()),
        }
    }

    /// Whether a run has started and not yet finished or errored.
    pub fn is_run_active(&self) -> bool {
        self.phase == Phase::Running
    }

    /// The id of the current (or last) run; empty before the first `RUN_STARTED`.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Text messages opened and not yet ended, in opening order.
    pub fn open_text_messages(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.messages.iter().filter_map(|(id, s)| s.open.map(|q| (q, id.as_str()))).collect())
    }

    /// Tool calls started and not yet ended, in opening order.
    pub fn open_tool_calls(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.tool_calls.iter().filter_map(|(id, s)| s.open.map(|q| (q, id.as_str()))).collect())
    }

    /// Reasoning messages started and not yet ended, in opening order.
    pub fn open_reasoning_messages(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.reasoning.iter().filter_map(|(id, s)| s.open.map(|q| (q, id.as_str()))).collect())
    }

    /// Reasoning spans started and not yet ended, in opening order.
    pub fn open_reasoning_spans(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.reasoning.iter().filter_map(|(id, s)| s.span_open.map(|q| (q, id.as_str()))).collect())
    }

    /// Names of steps started and not yet finished (any owner), in opening order.
    pub fn open_steps(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.steps.values().flat_map(|names| names.iter().map(|(n, q)| (*q, n.as_str()))).collect())
    }

    /// Subagent invocations started and not yet finished, in opening order.
    pub fn open_subagents(&self) -> impl Iterator<Item = &str> + '_ {
        in_order(self.subagents.iter().map(|(id, q)| (*q, id.as_str())).collect())
    }

    /// The events that close everything open that would block `RUN_FINISHED`, innermost
    /// first: reasoning messages, reasoning spans, text messages, tool calls, legacy
    /// thinking, then steps (latest first). Each carries its owner's `subagentRunId`.
    /// Subagents are *not* closed: decide between `SUBAGENT_FINISHED` and
    /// `SUBAGENT_ERROR` yourself (see [`Verifier::open_subagents`]).
    ///
    /// Used when the owner presses Stop: emit these, then
    /// [`RunFinishedEvent::cancelled`].
    pub fn closing_events(&self) -> Vec<Event> {
        let owner = |map: &IdMap<Slot>, id: &str| map.get(id).and_then(|s| s.owner.clone());
        let mut out = Vec::new();
        for id in self.open_reasoning_messages().collect::<Vec<_>>().into_iter().rev() {
            out.push(Event::ReasoningMessageEnd(ReasoningMessageEndEvent {
                message_id: id.to_owned(),
                subagent_run_id: owner(&self.reasoning, id),
                ..Default::default()
            }));
        }
        for id in self.open_reasoning_spans().collect::<Vec<_>>().into_iter().rev() {
            out.push(Event::ReasoningEnd(ReasoningEndEvent {
                message_id: id.to_owned(),
                subagent_run_id: owner(&self.reasoning, id),
                ..Default::default()
            }));
        }
        for id in self.open_text_messages().collect::<Vec<_>>().into_iter().rev() {
            out.push(Event::TextMessageEnd(TextMessageEndEvent {
                message_id: id.to_owned(),
                subagent_run_id: owner(&self.messages, id),
                ..Default::default()
            }));
        }
        for id in self.open_tool_calls().collect::<Vec<_>>().into_iter().rev() {
            out.push(Event::ToolCallEnd(ToolCallEndEvent {
                tool_call_id: id.to_owned(),
                subagent_run_id: owner(&self.tool_calls, id),
                ..Default::default()
            }));
        }
        if self.thinking_msg {
            out.push(Event::ThinkingTextMessageEnd(ThinkingTextMessageEndEvent::default()));
        }
        if self.thinking_step {
            out.push(Event::ThinkingEnd(ThinkingEndEvent::default()));
        }
        let mut steps: Vec<(u64, &Owner, &str)> =
            self.steps.iter().flat_map(|(o, names)| names.iter().map(move |(n, q)| (*q, o, n.as_str()))).collect();
        steps.sort_unstable_by_key(|(q, _, _)| std::cmp::Reverse(*q));
        for (_, o, name) in steps {
            out.push(Event::StepFinished(StepFinishedEvent {
                step_name: name.to_owned(),
                subagent_run_id: o.clone(),
                ..Default::default()
            }));
        }
        out
    }

    fn reset_run(&mut self) {
        let keep_phase = self.phase;
        *self = Verifier::default();
        self.phase = keep_phase;
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn apply(&mut self, event: &Event, ty: EventType) -> Result<(), VerifyError> {
        match event {
            Event::RunStarted(e) => self.run_started(e),
            Event::RunFinished(e) => self.run_finished(e),
            Event::RunError(_) => {
                self.phase = Phase::Errored;
                Ok(())
            }

            Event::TextMessageStart(e) => {
                let existing = self.messages.get(&e.message_id);
                if existing.is_some_and(|s| s.open.is_some()) {
                    return Err(already(ty, Entity::TextMessage, &e.message_id));
                }
                tag_check(ty, Entity::TextMessage, &e.message_id, &e.subagent_run_id, existing.map(|s| &s.owner))?;
                let q = self.next_seq();
                open_slot(&mut self.messages, &e.message_id, &e.subagent_run_id, q, false);
                self.open_text += 1;
                Ok(())
            }
            Event::TextMessageContent(e) => {
                continue_open(&self.messages, ty, Entity::TextMessage, &e.message_id, &e.subagent_run_id, false)
            }
            Event::TextMessageEnd(e) => {
                continue_open(&self.messages, ty, Entity::TextMessage, &e.message_id, &e.subagent_run_id, false)?;
                close_slot(&mut self.messages, &e.message_id, false);
                self.open_text -= 1;
                Ok(())
            }

            Event::ToolCallStart(e) => self.tool_call_start(e, ty),
            Event::ToolCallArgs(e) => continue_open(&self.tool_calls, ty, Entity::ToolCall, &e.tool_call_id, &e.subagent_run_id, false),
            Event::ToolCallEnd(e) => {
                continue_open(&self.tool_calls, ty, Entity::ToolCall, &e.tool_call_id, &e.subagent_run_id, false)?;
                close_slot(&mut self.tool_calls, &e.tool_call_id, false);
                self.open_tools -= 1;
                Ok(())
            }
            Event::ToolCallResult(e) => {
                // Mints a tool message: newest mint owns it (the executor may differ
                // from the caller).
                self.messages.entry(e.message_id.clone()).or_default().owner = e.subagent_run_id.clone();
                Ok(())
            }

            Event::ReasoningStart(e) => self.reasoning_open(ty, &e.message_id, &e.subagent_run_id, true),
            Event::ReasoningMessageStart(e) => self.reasoning_open(ty, &e.message_id, &e.subagent_run_id, false),
            Event::ReasoningMessageContent(e) => {
                continue_open(&self.reasoning, ty, Entity::ReasoningMessage, &e.message_id, &e.subagent_run_id, false)
            }
            Event::ReasoningMessageEnd(e) => {
                continue_open(&self.reasoning, ty, Entity::ReasoningMessage, &e.message_id, &e.subagent_run_id, false)?;
                close_slot(&mut self.reasoning, &e.message_id, false);
                self.open_reasoning_msgs -= 1;
                Ok(())
            }
            Event::ReasoningEnd(e) => {
                continue_open(&self.reasoning, ty, Entity::ReasoningSpan, &e.message_id, &e.subagent_run_id, true)?;
                close_slot(&mut self.reasoning, &e.message_id, true);
                self.open_reasoning_spans -= 1;
                Ok(())
            }
            Event::ReasoningEncryptedValue(e) => {
                let (entity, owner) = match e.subtype {
                    ReasoningEncryptedValueSubtype::ToolCall => (Entity::ToolCall, self.tool_calls.get(&e.entity_id)),
                    ReasoningEncryptedValueSubtype::Message => match self.messages.get(&e.entity_id) {
                        Some(s) => (Entity::TextMessage, Some(s)),
                        None => (Entity::ReasoningMessage, self.reasoning.get(&e.entity_id)),
                    },
                };
                tag_check(ty, entity, &e.entity_id, &e.subagent_run_id, owner.map(|s| &s.owner))
            }

            Event::StepStarted(e) => {
                if self.steps.get(&e.subagent_run_id).is_some_and(|m| m.contains_key(&e.step_name)) {
                    return Err(already(ty, Entity::Step, &e.step_name));
                }
                let q = self.next_seq();
                self.steps.entry(e.subagent_run_id.clone()).or_default().insert(e.step_name.clone(), q);
                self.open_steps += 1;
                Ok(())
            }
            Event::StepFinished(e) => {
                let removed = self.steps.get_mut(&e.subagent_run_id).and_then(|m| m.remove(&e.step_name)).is_some();
                if removed {
                    self.open_steps -= 1;
                    return Ok(());
                }
                if let Some((owner, _)) = self.steps.iter().find(|(o, names)| **o != e.subagent_run_id && names.contains_key(&e.step_name))
                {
                    return Err(VerifyError::StepOwnerMismatch {
                        id: e.step_name.clone(),
                        tagged: e.subagent_run_id.clone(),
                        owner: owner.clone(),
                    });
                }
                Err(not_open(ty, Entity::Step, &e.step_name))
            }

            Event::ActivitySnapshot(e) => {
                let known = self.activities.contains_key(&e.message_id);
                if !known || e.replaces() {
                    self.activities.entry(e.message_id.clone()).or_default().owner = e.subagent_run_id.clone();
                }
                Ok(())
            }
            Event::ActivityDelta(e) => {
                tag_check(ty, Entity::Activity, &e.message_id, &e.subagent_run_id, self.activities.get(&e.message_id).map(|s| &s.owner))
            }

            Event::SubagentStarted(e) => {
                let id = &e.subagent_run_id;
                if self.subagents.contains_key(id) {
                    return Err(already(ty, Entity::Subagent, id));
                }
                if self.closed_subagents.contains(id) {
                    return Err(VerifyError::SubagentReused { id: id.clone() });
                }
                if let Some(parent) = &e.parent_subagent_run_id
                    && !self.subagents.contains_key(parent)
                    && !self.closed_subagents.contains(parent)
                {
                    return Err(VerifyError::UnknownParentSubagent { id: id.clone(), parent: parent.clone() });
                }
                let q = self.next_seq();
                self.subagents.insert(id.clone(), q);
                Ok(())
            }
            Event::SubagentFinished(SubagentFinishedEvent { subagent_run_id: id, .. })
            | Event::SubagentError(SubagentErrorEvent { subagent_run_id: id, .. }) => {
                if self.subagents.remove(id).is_none() {
                    return Err(not_open(ty, Entity::Subagent, id));
                }
                self.closed_subagents.insert(id.clone());
                Ok(())
            }

            Event::MessagesSnapshot(e) => {
                self.seed_owners(&e.messages, true);
                Ok(())
            }

            Event::TextMessageChunk(e) => chunk_lane(&mut self.chunk_text, ty, e.message_id.as_ref(), "messageId", None),
            Event::ToolCallChunk(e) => chunk_lane(
                &mut self.chunk_tool,
                ty,
                e.tool_call_id.as_ref(),
                "toolCallId",
                Some(("toolCallName", e.tool_call_name.is_some())),
            ),
            Event::ReasoningMessageChunk(e) => chunk_lane(&mut self.chunk_reasoning, ty, e.message_id.as_ref(), "messageId", None),

            Event::ThinkingStart(_) => {
                if self.thinking_step {
                    return Err(already(ty, Entity::ThinkingStep, ""));
                }
                self.thinking_step = true;
                Ok(())
            }
            Event::ThinkingEnd(_) => {
                if !self.thinking_step {
                    return Err(not_open(ty, Entity::ThinkingStep, ""));
                }
                self.thinking_step = false;
                Ok(())
            }
            Event::ThinkingTextMessageStart(_) => {
                if !self.thinking_step {
                    return Err(not_open(ty, Entity::ThinkingStep, ""));
                }
                if self.thinking_msg {
                    return Err(already(ty, Entity::ThinkingMessage, ""));
                }
                self.thinking_msg = true;
                Ok(())
            }
            Event::ThinkingTextMessageContent(_) => {
                if !self.thinking_msg {
                    return Err(not_open(ty, Entity::ThinkingMessage, ""));
                }
                Ok(())
            }
            Event::ThinkingTextMessageEnd(_) => {
                if !self.thinking_msg {
                    return Err(not_open(ty, Entity::ThinkingMessage, ""));
                }
                self.thinking_msg = false;
                Ok(())
            }

            Event::StateSnapshot(_) | Event::StateDelta(_) | Event::Raw(_) | Event::Custom(_) => Ok(()),
        }
    }

    fn run_started(&mut self, e: &RunStartedEvent) -> Result<(), VerifyError> {
        if self.phase != Phase::Fresh {
            self.reset_run();
        }
        self.phase = Phase::Running;
        self.run_id.clone_from(&e.run_id);
        if let Some(input) = e.input.as_deref() {
            let RunAgentInput { messages, .. } = input;
            self.seed_owners(messages, false);
        }
        Ok(())
    }

    fn run_finished(&mut self, e: &RunFinishedEvent) -> Result<(), VerifyError> {
        if self.open_steps > 0 {
            return Err(VerifyError::OpenAtRunFinished { entity: Entity::Step, ids: self.open_steps().map(str::to_owned).collect() });
        }
        if self.open_text > 0 {
            return Err(VerifyError::OpenAtRunFinished {
                entity: Entity::TextMessage,
                ids: self.open_text_messages().map(str::to_owned).collect(),
            });
        }
        if self.open_reasoning_msgs > 0 {
            return Err(VerifyError::OpenAtRunFinished {
                entity: Entity::ReasoningMessage,
                ids: self.open_reasoning_messages().map(str::to_owned).collect(),
            });
        }
        if self.open_reasoning_spans > 0 {
            return Err(VerifyError::OpenAtRunFinished {
                entity: Entity::ReasoningSpan,
                ids: self.open_reasoning_spans().map(str::to_owned).collect(),
            });
        }
        if self.open_tools > 0 {
            return Err(VerifyError::OpenAtRunFinished {
                entity: Entity::ToolCall,
                ids: self.open_tool_calls().map(str::to_owned).collect(),
            });
        }
        if !self.subagents.is_empty() {
            return Err(VerifyError::OpenAtRunFinished {
                entity: Entity::Subagent,
                ids: self.open_subagents().map(str::to_owned).collect(),
            });
        }
        // Legacy thinking maps to reasoning in the official client, so it must be
        // closed too.
        if self.thinking_msg {
            return Err(VerifyError::OpenAtRunFinished { entity: Entity::ThinkingMessage, ids: vec![] });
        }
        if self.thinking_step {
            return Err(VerifyError::OpenAtRunFinished { entity: Entity::ThinkingStep, ids: vec![] });
        }
        if let Some(RunFinishedOutcome::Interrupt { interrupts }) = &e.outcome
            && interrupts.is_empty()
        {
            return Err(VerifyError::EmptyInterrupts { run_id: e.run_id.clone() });
        }
        self.phase = Phase::Finished;
        Ok(())
    }

    fn tool_call_start(&mut self, e: &ToolCallStartEvent, ty: EventType) -> Result<(), VerifyError> {
        let id = &e.tool_call_id;
        let existing = self.tool_calls.get(id);
        if existing.is_some_and(|s| s.open.is_some()) {
            return Err(already(ty, Entity::ToolCall, id));
        }
        // A tool call lives inside its parent message and inherits its owner.
        let mut inherited: Option<&Owner> = None;
        if let Some(pid) = &e.parent_message_id
            && let Some(parent) = self.messages.get(pid)
        {
            tag_check(ty, Entity::TextMessage, pid, &e.subagent_run_id, Some(&parent.owner))?;
            inherited = Some(&parent.owner);
        }
        if let Some(existing) = existing {
            tag_check(ty, Entity::ToolCall, id, &e.subagent_run_id, Some(&existing.owner))?;
            // An untagged re-open's effective owner is its parent message's.
            if let (None, Some(inh)) = (&e.subagent_run_id, inherited)
                && *inh != existing.owner
            {
                return Err(VerifyError::SubagentMismatch {
                    event: ty,
                    entity: Entity::ToolCall,
                    id: id.clone(),
                    tagged: inh.clone().unwrap_or_else(|| "(inherited from the parent agent)".to_owned()),
                    owner: existing.owner.clone(),
                });
            }
        }
        let owner: Owner = match (&e.subagent_run_id, inherited) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(inh)) => inh.clone(),
            (None, None) => None,
        };
        let q = self.next_seq();
        open_slot(&mut self.tool_calls, id, &owner, q, false);
        self.open_tools += 1;
        Ok(())
    }

    fn reasoning_open(&mut self, ty: EventType, id: &str, tag: &Option<String>, span: bool) -> Result<(), VerifyError> {
        let entity = if span { Entity::ReasoningSpan } else { Entity::ReasoningMessage };
        let existing = self.reasoning.get(id);
        let is_open = existing.is_some_and(|s| if span { s.span_open.is_some() } else { s.open.is_some() });
        if is_open {
            return Err(already(ty, entity, id));
        }
        tag_check(ty, entity, id, tag, existing.map(|s| &s.owner))?;
        let q = self.next_seq();
        open_slot(&mut self.reasoning, id, tag, q, span);
        if span {
            self.open_reasoning_spans += 1;
        } else {
            self.open_reasoning_msgs += 1;
        }
        Ok(())
    }

    /// Records the owners of replayed messages. `authoritative` (a snapshot) replaces
    /// recorded owners; otherwise (the `RUN_STARTED` echo) only unclaimed ids are seeded.
    fn seed_owners(&mut self, messages: &[Message], authoritative: bool) {
        for m in messages {
            let owner: Owner = m.subagent_run_id().map(str::to_owned);
            let bucket = match m {
                Message::Reasoning(_) => &mut self.reasoning,
                Message::Activity(_) => &mut self.activities,
                _ => &mut self.messages,
            };
            seed(bucket, m.id(), &owner, authoritative);
            if let Message::Assistant(a) = m {
                for tc in a.tool_calls.iter().flatten() {
                    seed(&mut self.tool_calls, &tc.id, &owner, authoritative);
                }
            }
        }
    }
}

fn seed(map: &mut IdMap<Slot>, id: &str, owner: &Owner, authoritative: bool) {
    match map.get_mut(id) {
        Some(slot) => {
            if authoritative {
                slot.owner.clone_from(owner);
            }
        }
        None => {
            map.insert(id.to_owned(), Slot { owner: owner.clone(), ..Slot::default() });
        }
    }
}

fn already(event: EventType, entity: Entity, id: &str) -> VerifyError {
    VerifyError::AlreadyOpen { event, entity, id: id.to_owned() }
}

fn not_open(event: EventType, entity: Entity, id: &str) -> VerifyError {
    VerifyError::NotOpen { event, entity, id: id.to_owned() }
}

/// Marks `id` open (first writer records the owner; a re-open keeps it).
fn open_slot(map: &mut IdMap<Slot>, id: &str, owner: &Owner, seq: u64, span: bool) {
    if !map.contains_key(id) {
        map.insert(id.to_owned(), Slot { owner: owner.clone(), ..Slot::default() });
    }
    let Some(slot) = map.get_mut(id) else { return };
    if span {
        slot.span_open = Some(seq);
    } else {
        slot.open = Some(seq);
    }
}

fn close_slot(map: &mut IdMap<Slot>, id: &str, span: bool) {
    if let Some(slot) = map.get_mut(id) {
        if span {
            slot.span_open = None;
        } else {
            slot.open = None;
        }
    }
}

/// A continuation or closer: `id` must be open and the tag must agree with its owner.
fn continue_open(
    map: &IdMap<Slot>,
    event: EventType,
    entity: Entity,
    id: &str,
    tag: &Option<String>,
    span: bool,
) -> Result<(), VerifyError> {
    match map.get(id) {
        Some(slot) if (if span { slot.span_open.is_some() } else { slot.open.is_some() }) => {
            tag_check(event, entity, id, tag, Some(&slot.owner))
        }
        _ => Err(not_open(event, entity, id)),
    }
}

/// The opener rule of a chunk lane: a chunk without an id continues the lane's current
/// stream, so there must be one; a chunk with a new id opens a stream and must carry
/// every opener field.
fn chunk_lane(
    lane: &mut Option<String>,
    event: EventType,
    id: Option<&String>,
    id_field: &'static str,
    opener_field: Option<(&'static str, bool)>,
) -> Result<(), VerifyError> {
    match id {
        None if lane.is_none() => Err(VerifyError::ChunkMissingField { event, field: id_field }),
        None => Ok(()),
        Some(id) if lane.as_ref() == Some(id) => Ok(()),
        Some(id) => {
            if let Some((field, false)) = opener_field {
                return Err(VerifyError::ChunkMissingField { event, field });
            }
            *lane = Some(id.clone());
            Ok(())
        }
    }
}

/// Checks a whole stream: every event in order, then [`Verifier::finish`].
pub fn verify_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<(), VerifyError> {
    let mut v = Verifier::new();
    for e in events {
        v.check(e)?;
    }
    v.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn start(run: &str) -> Event {
        Event::RunStarted(RunStartedEvent { thread_id: "t".into(), run_id: run.into(), ..Default::default() })
    }
    fn tm_start(id: &str) -> Event {
        Event::TextMessageStart(TextMessageStartEvent { message_id: id.into(), ..Default::default() })
    }
    fn tm_end(id: &str) -> Event {
        Event::TextMessageEnd(TextMessageEndEvent { message_id: id.into(), ..Default::default() })
    }
    fn tc_start(id: &str) -> Event {
        Event::ToolCallStart(ToolCallStartEvent { tool_call_id: id.into(), tool_call_name: "f".into(), ..Default::default() })
    }
    fn step(name: &str) -> Event {
        Event::StepStarted(StepStartedEvent { step_name: name.into(), ..Default::default() })
    }

    #[test]
    fn open_ids_are_listed_in_order_and_closing_events_close_them() {
        let mut v = Verifier::new();
        for e in [
            start("r"),
            step("plan"),
            tm_start("m2"),
            tm_start("m1"),
            tc_start("c1"),
            Event::ReasoningStart(ReasoningStartEvent { message_id: "x".into(), ..Default::default() }),
            Event::ReasoningMessageStart(ReasoningMessageStartEvent { message_id: "x".into(), ..Default::default() }),
        ] {
            v.check(&e).unwrap();
        }
        assert_eq!(v.open_text_messages().collect::<Vec<_>>(), vec!["m2", "m1"]);
        assert_eq!(v.open_tool_calls().collect::<Vec<_>>(), vec!["c1"]);
        assert_eq!(v.open_reasoning_messages().collect::<Vec<_>>(), vec!["x"]);
        assert_eq!(v.open_reasoning_spans().collect::<Vec<_>>(), vec!["x"]);
        assert_eq!(v.open_steps().collect::<Vec<_>>(), vec!["plan"]);
        let err = v.check(&Event::RunFinished(RunFinishedEvent::cancelled("t", "r"))).unwrap_err();
        assert_eq!(err.event_type(), Some(EventType::RunFinished));
        let closing = v.closing_events();
        let types: Vec<_> = closing.iter().map(Event::event_type).collect();
        assert_eq!(
            types,
            vec![
                EventType::ReasoningMessageEnd,
                EventType::ReasoningEnd,
                EventType::TextMessageEnd,
                EventType::TextMessageEnd,
                EventType::ToolCallEnd,
                EventType::StepFinished
            ]
        );
        for e in &closing {
            v.check(e).unwrap();
        }
        v.check(&Event::RunFinished(RunFinishedEvent::cancelled("t", "r"))).unwrap();
        v.finish().unwrap();
        assert!(!v.is_run_active());
    }

    #[test]
    fn rejected_event_leaves_state_unchanged() {
        let mut v = Verifier::new();
        v.check(&start("r")).unwrap();
        v.check(&tm_start("m")).unwrap();
        assert!(v.check(&tm_start("m")).is_err());
        assert_eq!(v.open_text_messages().count(), 1);
        v.check(&tm_end("m")).unwrap();
    }

    #[test]
    fn errors_name_event_id_and_rule() {
        let mut v = Verifier::new();
        v.check(&start("r")).unwrap();
        let e = v.check(&tm_end("zz")).unwrap_err();
        assert_eq!(e.event_type(), Some(EventType::TextMessageEnd));
        assert_eq!(e.id(), Some("zz"));
        assert_eq!(
            e.to_string(),
            "TEXT_MESSAGE_END for text message `zz`: no such text message is open; open it with TEXT_MESSAGE_START first"
        );
    }
}
