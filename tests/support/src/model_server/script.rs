//! What the scripted model server answers: turns of text, reasoning and tool calls, HTTP
//! errors, slow streams and broken streams.

use std::time::Duration;

/// The turns the server plays, one per request, in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub(crate) turns: Vec<Turn>,
}

impl Script {
    /// An empty script (every request then gets a 500 that says the script ran out).
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a turn.
    pub fn turn(mut self, turn: impl Into<Turn>) -> Self {
        self.turns.push(turn.into());
        self
    }
}

/// One answer to one request.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A `200` streamed reply.
    Reply(Reply),
    /// An HTTP error with the provider's real error body.
    Error(HttpError),
    /// A model that obeys what it reads: the newest instruction ([`obey_marker`]) in the
    /// request that this server has not obeyed yet becomes one tool call; with none, a short
    /// text answer. A prompt-injected model, without a model.
    Obey,
}

/// The instruction a hostile text carries for [`Turn::Obey`]: `@@do <tool> <hex of the JSON
/// arguments>@@`. Hex, so that the JSON escaping a tool result goes through leaves it whole.
pub fn obey_marker(tool: &str, arguments: &serde_json::Value) -> String {
    format!("@@do {tool} {}@@", hex::encode(arguments.to_string()))
}

/// The instructions in `text`, in order: (the marker as written, tool, arguments).
pub(crate) fn obey_markers(text: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("@@do ") {
        let after = &rest[start + 5..];
        let Some(end) = after.find("@@") else { break };
        let body = &after[..end];
        if let Some((tool, encoded)) = body.split_once(' ')
            && let Ok(bytes) = hex::decode(encoded)
            && let Ok(arguments) = String::from_utf8(bytes)
        {
            found.push((format!("@@do {body}@@"), tool.to_owned(), arguments));
        }
        rest = &after[end + 2..];
    }
    found
}

impl From<Reply> for Turn {
    fn from(reply: Reply) -> Self {
        Turn::Reply(reply)
    }
}

impl From<HttpError> for Turn {
    fn from(error: HttpError) -> Self {
        Turn::Error(error)
    }
}

/// A streamed reply: steps in order, then an ending.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub steps: Vec<Step>,
    pub end: End,
    /// Pause before each event (a slow model).
    pub chunk_delay: Duration,
    /// Send event `n` at `n + 1` chunk delays after the stream starts, rather than one delay
    /// after the previous one, and record when each went out ([`super::ModelServer::sent`]): a
    /// steady rate for the webview bench's delivery figure.
    pub paced: bool,
}

/// One part of a streamed reply.
#[derive(Clone, Debug)]
pub enum Step {
    /// Assistant text, one event per chunk.
    Text(Vec<String>),
    /// Reasoning / thinking text, one event per chunk.
    Reasoning(Vec<String>),
    /// One or more tool calls (several = parallel calls). Where the format allows it
    /// (OpenAI Chat), their argument pieces are interleaved.
    ToolCalls(Vec<ScriptedCall>),
}

/// A tool call whose JSON arguments arrive in pieces (need not be valid JSON).
#[derive(Clone, Debug)]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    pub argument_pieces: Vec<String>,
}

impl ScriptedCall {
    /// A call with its arguments split into `pieces`.
    pub fn new(id: &str, name: &str, pieces: &[&str]) -> Self {
        Self { id: id.to_owned(), name: name.to_owned(), argument_pieces: pieces.iter().map(|p| (*p).to_owned()).collect() }
    }
}

/// How a streamed reply ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum End {
    /// The format's normal ending (finish reason, `[DONE]`, `message_stop`, `response.completed`).
    #[default]
    Complete,
    /// The connection breaks after the steps, without the ending.
    Disconnect,
    /// The provider's in-stream error event (an overloaded / server error), then the end.
    ProviderError,
    /// Keep the stream open (SSE comments every few ms) until the client goes away.
    HoldUntilDisconnect,
}

impl Reply {
    /// An empty reply that completes normally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds text chunks.
    pub fn text(mut self, chunks: &[&str]) -> Self {
        self.steps.push(Step::Text(owned(chunks)));
        self
    }

    /// Adds reasoning chunks.
    pub fn reasoning(mut self, chunks: &[&str]) -> Self {
        self.steps.push(Step::Reasoning(owned(chunks)));
        self
    }

    /// Adds one tool call with its arguments in pieces.
    pub fn tool_call(mut self, id: &str, name: &str, pieces: &[&str]) -> Self {
        self.steps.push(Step::ToolCalls(vec![ScriptedCall::new(id, name, pieces)]));
        self
    }

    /// Adds parallel tool calls.
    pub fn parallel_tool_calls(mut self, calls: Vec<ScriptedCall>) -> Self {
        self.steps.push(Step::ToolCalls(calls));
        self
    }

    /// Sets the ending.
    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    /// Pauses before each event.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Sends one event every `interval` from the stream's start (1 ms: 1,000 events/s), and
    /// records when each went out.
    pub fn paced(mut self, interval: Duration) -> Self {
        self.chunk_delay = interval;
        self.paced = true;
        self
    }

    pub(crate) fn has_tool_calls(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::ToolCalls(calls) if !calls.is_empty()))
    }
}

fn owned(chunks: &[&str]) -> Vec<String> {
    chunks.iter().map(|c| (*c).to_owned()).collect()
}

/// An HTTP error answer.
#[derive(Clone, Debug)]
pub struct HttpError {
    pub status: u16,
    /// `Retry-After` in seconds.
    pub retry_after: Option<u64>,
    /// `Location` (a redirect's target).
    pub location: Option<String>,
}

impl HttpError {
    /// Any status.
    pub fn status(status: u16) -> Self {
        Self { status, retry_after: None, location: None }
    }

    /// `429` with `Retry-After`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self { status: 429, retry_after: Some(retry_after_secs), location: None }
    }

    /// A redirect (`301`, `302`, `307`, `308`) to `location`.
    pub fn redirect(status: u16, location: impl Into<String>) -> Self {
        Self { status, retry_after: None, location: Some(location.into()) }
    }

    /// `500`.
    pub fn server_error() -> Self {
        Self::status(500)
    }

    /// `401`.
    pub fn unauthorized() -> Self {
        Self::status(401)
    }
}
