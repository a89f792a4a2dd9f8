//! A scripted model server on loopback that speaks the real streaming wire formats of
//! OpenAI Chat Completions, Anthropic Messages and OpenAI Responses.
//!
//! Tests hand it a [`Script`] of turns; each request it receives takes the next turn and is
//! answered in the format its path names (`…/chat/completions`, `…/messages`,
//! `…/responses`). It records every request (so a test can assert what reached the model)
//! and every client that went away mid-stream (so a test can assert that cancelling dropped
//! the connection).

mod anthropic;
mod openai_chat;
mod responses;
mod script;
mod server;

pub use script::{End, HttpError, Reply, Script, ScriptedCall, Step, Turn, obey_marker};
pub use server::{ModelServer, RecordedRequest, WireFormat};
