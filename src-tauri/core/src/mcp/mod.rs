//! MCP servers as a source of tools: the owner's plug-ins, on Hearth's terms.
//!
//! This module is the client, on the official SDK (`rmcp`): it starts a stdio server (a command
//! the owner names, with only the environment the owner sets) or reaches a Streamable HTTP one
//! (loopback or https only, no redirects, bounded replies), negotiates the protocol revision,
//! lists the server's tools and calls one. Every call is bounded in time and in size, and a
//! cancelled one tells the server (`notifications/cancelled`: dropping rmcp's request future
//! sends it). What a call returns is the server's text, always untrusted: the tool path treats it
//! as outside content.
//!
//! The owner's choices (which servers, which tools are allowed) and the gate live with the tool
//! path; nothing here decides whether a call may run.

#[cfg(feature = "mcp")]
mod client;
#[cfg(not(feature = "mcp"))]
#[path = "client_off.rs"]
mod client;
mod error;
mod hub;
mod result;
mod schema;
mod spec;
mod stderr;
mod types;

pub use client::McpClient;
pub use error::McpError;
pub use hub::{BoundTool, ListedTool, McpHub, OfferedTool};
pub use result::{MAX_RESULT_CHARS, McpOutput};
pub use spec::{McpServerSpec, McpTransportSpec};
pub use stderr::StderrLog;
pub use types::{McpLimits, McpServerInfo, McpTool, PROTOCOL_VERSION};
