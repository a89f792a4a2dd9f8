//! What went wrong with an MCP server, in words that say what to do.

use std::time::Duration;

/// An MCP server's failure.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The owner's setting cannot be used as it is.
    #[error("{0}")]
    InvalidSpec(String),
    /// The command could not be started.
    #[error("the MCP server's command {command:?} could not start ({source}); check the command and that it is installed")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not finish the MCP handshake.
    #[error("the MCP server did not complete its start-up handshake ({0}); what it wrote to its standard error may say why")]
    Handshake(String),
    /// The server did not answer in time; it was told to cancel. Whether it acted is unknown.
    #[error(
        "the MCP server did not answer within {after:?} (an answer too large to read, or none); it was told to cancel, and whether it acted is unknown"
    )]
    TimedOut {
        /// The bound.
        after: Duration,
    },
    /// The owner (or Hearth) stopped the call; the server was told. Whether it acted is unknown.
    #[error("the call was stopped and the MCP server told to cancel it; whether it acted is unknown")]
    Cancelled,
    /// The server's process ended or its connection closed.
    #[error("the MCP server stopped or closed the connection{detail}; whether an unanswered call was carried out is unknown")]
    Ended {
        /// The exit status, when known.
        detail: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the MCP server refused the call: {message} (code {code})")]
    Refused {
        /// Its JSON-RPC code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// The server broke the protocol (an answer of the wrong kind, a transport failure).
    #[error("the MCP server broke the protocol ({0}); update it or remove it")]
    Protocol(String),
    /// The call was never sent (Hearth stopping, or Stop before the server was reached).
    #[error("the call was not sent to the MCP server ({0}); nothing happened there")]
    NotSent(String),
    /// The arguments do not fit the tool's schema.
    #[error("the arguments do not fit the tool's schema: {0}")]
    InvalidArguments(String),
}
