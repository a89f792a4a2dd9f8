//! The chat transcript as a reducer over AG-UI events.
//!
//! Live streams and stored history go through the same `apply`, so a reloaded thread looks
//! exactly like the one the owner watched.

use hearth_protocol::agui::{Event, Message};

/// A tool call's progress, as its card shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Called; no result yet.
    Running,
    /// A result arrived.
    Complete,
    /// Failed, or stopped before a result.
    Error,
}

/// One tool call in the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallView {
    /// Tool call id.
    pub id: String,
    /// Wire name (may be one Hearth does not know).
    pub name: String,
    /// Arguments as streamed (JSON text once complete).
    pub args: String,
    /// Progress.
    pub status: ToolStatus,
    /// Result content, when it arrived.
    pub result: Option<String>,
    /// A running command's output as it arrives (run_computer_command's terminal card).
    pub live: String,
}

/// Why a notice is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// The owner pressed Stop.
    Cancelled,
    /// The run failed.
    Error,
}

/// One row of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatItem {
    /// What the owner typed.
    User {
        /// Message id.
        id: String,
        /// Text.
        text: String,
    },
    /// The agent's reply text.
    Assistant {
        /// Message id.
        id: String,
        /// Text so far.
        text: String,
        /// Still streaming.
        streaming: bool,
    },
    /// What the model or agent reasoned before answering, one row per reasoning message.
    /// Kept (not dropped) so the owner can see why an answer came out as it did; shown
    /// collapsed, because it is working, not the answer.
    Reasoning {
        /// Reasoning message id (legacy `THINKING_*` events have none; see [`ChatState::apply`]).
        id: String,
        /// Text so far.
        text: String,
        /// Still streaming.
        streaming: bool,
    },
    /// A tool call and its card.
    Tool(ToolCallView),
    /// A run ended by Stop or an error.
    Notice {
        /// Run id (unique per run).
        id: String,
        /// Why.
        kind: NoticeKind,
        /// What to show.
        text: String,
    },
}

impl ChatItem {
    /// A key for keyed rendering.
    pub fn key(&self) -> String {
        match self {
            ChatItem::User { id, .. } => format!("u-{id}"),
            ChatItem::Assistant { id, .. } => format!("a-{id}"),
            ChatItem::Reasoning { id, .. } => format!("r-{id}"),
            ChatItem::Tool(call) => format!("t-{}", call.id),
            ChatItem::Notice { id, .. } => format!("n-{id}"),
        }
    }

    /// Whether this row's [`ChatItem::key`] is `key`, without building the key: a row looks
    /// itself up on every event of a stream, and allocating there made long threads slow.
    pub fn has_key(&self, key: &str) -> bool {
        let (prefix, id) = match self {
            ChatItem::User { id, .. } => ("u-", id),
            ChatItem::Assistant { id, .. } => ("a-", id),
            ChatItem::Reasoning { id, .. } => ("r-", id),
            ChatItem::Tool(call) => ("t-", &call.id),
            ChatItem::Notice { id, .. } => ("n-", id),
        };
        key.strip_prefix(prefix) == Some(id.as_str())
    }
}

/// How many rows the chat shows of a thread it opens, and how many more each "Show earlier"
/// adds. A 100,000-event thread has some 16,000 rows; rendering them all took the webview
/// seconds, and every streamed token then touched each of them.
pub const PAGE: usize = 200;

/// The transcript of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatState {
    /// Rows in order.
    pub items: Vec<ChatItem>,
    /// The run streaming now, if any.
    pub active_run: Option<String>,
    /// Rows before this index belong to runs that ended and were settled then; nothing makes
    /// a settled row stream or run again, so a run's end settles only the rows after it (a
    /// replay that swept every row at every run's end was quadratic in the thread's length).
    settled: usize,
}

impl ChatState {
    /// Applies one event.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted(e) => {
                self.active_run = Some(e.run_id.clone());
                let last_user = e.input.as_ref().and_then(|input| {
                    input.messages.iter().rev().find_map(|m| match m {
                        Message::User(user) => Some(user),
                        _ => None,
                    })
                });
                if let Some(user) = last_user {
                    self.items.push(ChatItem::User { id: user.id.clone(), text: user.content.to_text() });
                }
            }
            Event::TextMessageStart(e) => {
                self.items.push(ChatItem::Assistant { id: e.message_id.clone(), text: String::new(), streaming: true });
            }
            Event::TextMessageContent(e) => self.append_text(&e.message_id, &e.delta),
            Event::TextMessageChunk(e) => {
                let id = e.message_id.clone().unwrap_or_default();
                self.append_text(&id, e.delta.as_deref().unwrap_or_default());
            }
            Event::TextMessageEnd(e) => {
                if let Some(ChatItem::Assistant { streaming, .. }) = self.find_assistant(&e.message_id) {
                    *streaming = false;
                }
            }
            Event::ReasoningMessageStart(e) => self.open_reasoning(&e.message_id),
            Event::ReasoningMessageContent(e) => self.append_reasoning(Some(&e.message_id), &e.delta),
            Event::ReasoningMessageChunk(e) => {
                self.append_reasoning(e.message_id.as_deref(), e.delta.as_deref().unwrap_or_default());
            }
            Event::ReasoningMessageEnd(e) => self.close_reasoning(Some(&e.message_id)),
            // Legacy 0.x producers stream one thinking message at a time and name none, so
            // the row gets an id from its position, which a replay of the same log repeats.
            Event::ThinkingTextMessageStart(_) => {
                let id = format!("thinking-{}", self.items.len());
                self.open_reasoning(&id);
            }
            Event::ThinkingTextMessageContent(e) => self.append_reasoning(None, &e.delta),
            Event::ThinkingTextMessageEnd(_) => self.close_reasoning(None),
            // Spans only group reasoning messages, which carry the text; an encrypted value is
            // opaque by design and means nothing to the owner.
            Event::ReasoningStart(_)
            | Event::ReasoningEnd(_)
            | Event::ReasoningEncryptedValue(_)
            | Event::ThinkingStart(_)
            | Event::ThinkingEnd(_) => {}
            Event::ToolCallStart(e) => self.items.push(ChatItem::Tool(ToolCallView {
                id: e.tool_call_id.clone(),
                name: e.tool_call_name.clone(),
                args: String::new(),
                status: ToolStatus::Running,
                result: None,
                live: String::new(),
            })),
            Event::ToolCallArgs(e) => {
                if let Some(call) = self.find_tool(&e.tool_call_id) {
                    call.args.push_str(&e.delta);
                }
            }
            Event::ToolCallResult(e) => {
                if let Some(call) = self.find_tool(&e.tool_call_id) {
                    let content = e.content.to_text();
                    call.status = if is_error_result(&content) { ToolStatus::Error } else { ToolStatus::Complete };
                    call.result = Some(content);
                }
            }
            Event::Custom(e) if e.name == hearth_protocol::computer::COMMAND_OUTPUT_EVENT => {
                let Ok(output) = serde_json::from_value::<hearth_protocol::computer::CommandOutputEvent>(e.value.clone()) else {
                    return;
                };
                if let Some(call) = self.find_tool(&output.tool_call_id)
                    && call.status == ToolStatus::Running
                {
                    call.live.push_str(&output.text);
                }
            }
            Event::RunFinished(e) => {
                self.settle();
                if e.is_cancelled() {
                    self.items.push(ChatItem::Notice {
                        id: e.run_id.clone(),
                        kind: NoticeKind::Cancelled,
                        text: "Stopped. Nothing more was done after you pressed Stop.".into(),
                    });
                }
            }
            Event::RunError(e) => {
                let id = self.active_run.clone().unwrap_or_else(|| format!("error-{}", self.items.len()));
                self.settle();
                self.items.push(ChatItem::Notice { id, kind: NoticeKind::Error, text: e.message.clone() });
            }
            _ => {}
        }
    }

    /// Applies a stored history from scratch.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut state = Self::default();
        for event in events {
            state.apply(event);
        }
        state
    }

    /// Applies the pages of a thread's history loaded so far, oldest first. A page begins
    /// where a run began, unless that run was too long to reach back to (`starts_inside_run`):
    /// then the events before the first run's start are left out, as the end of a run whose
    /// beginning is on the page not loaded yet; it shows whole once that page is.
    pub fn replay_pages(events: &[Event], starts_inside_run: bool) -> Self {
        // A page inside one long run (no start on it) shows what it has: better part of the
        // newest run than an empty chat.
        let from = if starts_inside_run { events.iter().position(|e| matches!(e, Event::RunStarted(_))).unwrap_or(0) } else { 0 };
        Self::replay(&events[from..])
    }

    /// The row with `key` and where it is, looked for first at `hint` (where the row was
    /// last time), then after it, then before it. Rows are only appended, or a page of
    /// earlier rows is put in front (which moves every row later), so each row finds itself
    /// in one step on every event of a stream, and in a page's length after "Show earlier":
    /// a search from either end made every event cost the length of the transcript per row.
    pub fn row_near(&self, key: &str, hint: usize) -> Option<(usize, &ChatItem)> {
        let mut rows = self.items.iter().enumerate();
        let found = |(_, item): &(usize, &ChatItem)| item.has_key(key);
        rows.clone().skip(hint).find(found).or_else(|| rows.by_ref().take(hint).find(found))
    }

    /// Where the chat starts showing rows when it opens this transcript: the newest [`PAGE`].
    pub fn first_page_start(&self) -> usize {
        self.items.len().saturating_sub(PAGE)
    }

    /// Whether a run is streaming.
    pub fn is_running(&self) -> bool {
        self.active_run.is_some()
    }

    fn append_text(&mut self, message_id: &str, delta: &str) {
        match self.find_assistant(message_id) {
            Some(ChatItem::Assistant { text, .. }) => text.push_str(delta),
            _ => self.items.push(ChatItem::Assistant { id: message_id.to_owned(), text: delta.to_owned(), streaming: true }),
        }
    }

    /// A reasoning message opened; opening one that exists (a repeated start) changes nothing.
    fn open_reasoning(&mut self, message_id: &str) {
        if self.find_reasoning(Some(message_id)).is_none() {
            self.items.push(ChatItem::Reasoning { id: message_id.to_owned(), text: String::new(), streaming: true });
        }
    }

    /// Appends to the reasoning message `message_id`, or without an id (legacy events, a
    /// continuation chunk) to the one still streaming; opens a row when there is none.
    fn append_reasoning(&mut self, message_id: Option<&str>, delta: &str) {
        match self.find_reasoning(message_id) {
            Some(ChatItem::Reasoning { text, .. }) => text.push_str(delta),
            _ => {
                let id = message_id.map_or_else(|| format!("thinking-{}", self.items.len()), str::to_owned);
                self.items.push(ChatItem::Reasoning { id, text: delta.to_owned(), streaming: true });
            }
        }
    }

    fn close_reasoning(&mut self, message_id: Option<&str>) {
        if let Some(ChatItem::Reasoning { streaming, .. }) = self.find_reasoning(message_id) {
            *streaming = false;
        }
    }

    /// The run ended: nothing streams and calls without a result did not complete.
    fn settle(&mut self) {
        self.active_run = None;
        let from = self.settled.min(self.items.len());
        self.settled = self.items.len();
        for item in &mut self.items[from..] {
            match item {
                ChatItem::Assistant { streaming, .. } | ChatItem::Reasoning { streaming, .. } => *streaming = false,
                ChatItem::Tool(call) if call.status == ToolStatus::Running => call.status = ToolStatus::Error,
                _ => {}
            }
        }
    }

    fn find_assistant(&mut self, message_id: &str) -> Option<&mut ChatItem> {
        self.items.iter_mut().rev().find(|item| matches!(item, ChatItem::Assistant { id, .. } if id == message_id))
    }

    /// The reasoning row `message_id`, or with no id the newest one still streaming.
    fn find_reasoning(&mut self, message_id: Option<&str>) -> Option<&mut ChatItem> {
        self.items.iter_mut().rev().find(|item| match (item, message_id) {
            (ChatItem::Reasoning { id, .. }, Some(wanted)) => id == wanted,
            (ChatItem::Reasoning { streaming, .. }, None) => *streaming,
            _ => false,
        })
    }

    fn find_tool(&mut self, tool_call_id: &str) -> Option<&mut ToolCallView> {
        self.items.iter_mut().rev().find_map(|item| match item {
            ChatItem::Tool(call) if call.id == tool_call_id => Some(call),
            _ => None,
        })
    }
}

/// A tool result that is a JSON object with an `error` field.
fn is_error_result(content: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(content).is_ok_and(|v| v.get("error").is_some())
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
