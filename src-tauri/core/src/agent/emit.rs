//! Writing well-formed event sequences from inside an agent.
//!
//! Agents that compute their answer (like the sample agent) push events through an
//! [`Emitter`]; a send fails once the driver stopped listening, which ends the agent.

use std::time::Duration;

use hearth_protocol::agui::{
    Event, TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent, ToolCallArgsEvent, ToolCallEndEvent, ToolCallResultEvent,
    ToolCallStartEvent,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The driver stopped listening (Stop, or the window went away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Sends one agent's events.
#[derive(Debug, Clone)]
pub struct Emitter {
    tx: mpsc::Sender<Event>,
    cancel: CancellationToken,
}

impl Emitter {
    /// Wraps the channel the agent's stream is read from.
    pub fn new(tx: mpsc::Sender<Event>, cancel: CancellationToken) -> Self {
        Self { tx, cancel }
    }

    /// Sends one event.
    pub async fn send(&self, event: Event) -> Result<(), Stopped> {
        if self.cancel.is_cancelled() {
            return Err(Stopped);
        }
        self.tx.send(event).await.map_err(|_| Stopped)
    }

    /// Opens the run: `RUN_STARTED` with the input's thread and run ids.
    pub async fn run_started(&self, input: &hearth_protocol::agui::RunAgentInput) -> Result<(), Stopped> {
        self.send(Event::RunStarted(hearth_protocol::agui::RunStartedEvent {
            thread_id: input.thread_id.clone(),
            run_id: input.run_id.clone(),
            ..Default::default()
        }))
        .await
    }

    /// Waits `delay`, or returns early with [`Stopped`] when the run is cancelled.
    pub async fn pause(&self, delay: Duration) -> Result<(), Stopped> {
        if delay.is_zero() {
            return if self.cancel.is_cancelled() { Err(Stopped) } else { Ok(()) };
        }
        tokio::select! {
            () = self.cancel.cancelled() => Err(Stopped),
            () = tokio::time::sleep(delay) => Ok(()),
        }
    }

    /// Streams one assistant message, a word at a time with `delay` between chunks.
    pub async fn text(&self, text: &str, delay: Duration) -> Result<String, Stopped> {
        let message_id = new_id();
        self.send(Event::TextMessageStart(TextMessageStartEvent { message_id: message_id.clone(), ..Default::default() })).await?;
        for chunk in word_chunks(text) {
            self.pause(delay).await?;
            self.send(Event::TextMessageContent(TextMessageContentEvent {
                message_id: message_id.clone(),
                delta: chunk.to_owned(),
                ..Default::default()
            }))
            .await?;
        }
        self.send(Event::TextMessageEnd(TextMessageEndEvent { message_id: message_id.clone(), ..Default::default() })).await?;
        Ok(message_id)
    }

    /// Announces a tool call with its arguments (START, ARGS, END) and returns its id.
    pub async fn tool_call(&self, name: &str, args: &serde_json::Value) -> Result<String, Stopped> {
        let tool_call_id = new_id();
        self.send(Event::ToolCallStart(ToolCallStartEvent {
            tool_call_id: tool_call_id.clone(),
            tool_call_name: name.to_owned(),
            ..Default::default()
        }))
        .await?;
        self.send(Event::ToolCallArgs(ToolCallArgsEvent {
            tool_call_id: tool_call_id.clone(),
            delta: args.to_string(),
            ..Default::default()
        }))
        .await?;
        self.send(Event::ToolCallEnd(ToolCallEndEvent { tool_call_id: tool_call_id.clone(), ..Default::default() })).await?;
        Ok(tool_call_id)
    }

    /// Reports a tool call's result.
    pub async fn tool_result(&self, tool_call_id: &str, content: String) -> Result<(), Stopped> {
        self.send(Event::ToolCallResult(ToolCallResultEvent {
            message_id: new_id(),
            tool_call_id: tool_call_id.to_owned(),
            content: content.into(),
            ..Default::default()
        }))
        .await
    }
}

/// A fresh UUIDv4 string.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Splits text after each run of whitespace, so chunks re-join to the original exactly.
fn word_chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let space_end = rest[word_end..].find(|c: char| !c.is_whitespace()).map_or(rest.len(), |i| word_end + i);
        let (chunk, tail) = rest.split_at(space_end);
        rest = tail;
        Some(chunk)
    })
}

/// Runs `respond` on its own task, handing it an [`Emitter`], and returns the events it sends
/// as the agent's stream. `respond` ending with [`Stopped`] (Stop, or nobody listens) just ends
/// the stream; dropping the stream stops the emitter at its next send.
pub fn event_stream<F, Fut>(cancel: CancellationToken, respond: F) -> futures::stream::BoxStream<'static, Event>
where
    F: FnOnce(Emitter) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), Stopped>> + Send + 'static,
{
    use futures::StreamExt;
    let (tx, rx) = mpsc::channel(64);
    let out = Emitter::new(tx, cancel);
    tokio::spawn(async move {
        let _stopped: Result<(), Stopped> = respond(out).await;
    });
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|event| (event, rx)) }).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_rejoin_exactly() {
        for text in ["", "one", "one two", "  lead", "trail  ", "a\n\nb  c", "日本語 テキスト 🎉 ok"] {
            let chunks: Vec<_> = word_chunks(text).collect();
            assert_eq!(chunks.concat(), text);
            assert!(chunks.iter().all(|c| !c.is_empty()));
        }
        assert_eq!(word_chunks("one two").collect::<Vec<_>>(), ["one ", "two"]);
    }
}
