//! MCP servers the owner plugs in: their names, how a tool of theirs is named beside Hearth's
//! own, the owner's per-tool policy, and Settings → Tools' views and parameters.
//!
//! An MCP tool is offered to the model as `mcp__<server>__<tool>`. No tool of Hearth's starts
//! with `mcp__` (a test in this file checks every [`ToolName`](crate::ToolName)), and a server's
//! name may not contain `__`, so a wire name splits one way only and never shadows a built-in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What every MCP tool's wire name starts with.
pub const MCP_PREFIX: &str = "mcp__";
/// The longest server name.
pub const MAX_SERVER_NAME_CHARS: usize = 40;
/// The longest wire name a model is offered (providers refuse longer ones).
pub const MAX_WIRE_NAME_CHARS: usize = 64;

/// A server's name as the owner gave it: 1 to 40 of `A-Z a-z 0-9 _ -`, without `__`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct McpServerName(String);

impl McpServerName {
    /// Checks `name`; the error says what to change.
    pub fn parse(name: &str) -> Result<Self, String> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_SERVER_NAME_CHARS {
            return Err(format!("A server's name is 1 to {MAX_SERVER_NAME_CHARS} characters."));
        }
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err("A server's name may use letters, digits, '-' and '_' only.".into());
        }
        if name.contains("__") || name.ends_with('_') {
            // A trailing '_' would make `<server>__<tool>` split another way (`a_` + `b` and
            // `a` + `_b` are both `mcp__a___b`).
            return Err("A server's name may not contain '__' or end with '_' (they separate the server from the tool).".into());
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for McpServerName {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<McpServerName> for String {
    fn from(value: McpServerName) -> Self {
        value.0
    }
}

impl std::fmt::Display for McpServerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One tool of one server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolRef {
    /// The server.
    pub server: McpServerName,
    /// The tool's name at the server.
    pub tool: String,
}

impl McpToolRef {
    /// Its name in the model's tool list, when it can have one: a tool whose own name uses
    /// characters providers refuse, or that makes the whole name too long, is not offered.
    pub fn wire_name(&self) -> Option<String> {
        let name = format!("{MCP_PREFIX}{}__{}", self.server, self.tool);
        let fits = !self.tool.is_empty()
            && self.tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && name.len() <= MAX_WIRE_NAME_CHARS;
        fits.then_some(name)
    }

    /// The tool a wire name names, when it is an MCP tool's.
    pub fn from_wire(name: &str) -> Option<Self> {
        let rest = name.strip_prefix(MCP_PREFIX)?;
        let (server, tool) = rest.split_once("__")?;
        let server = McpServerName::parse(server).ok()?;
        let tool = Self { server, tool: tool.to_owned() };
        (tool.wire_name().as_deref() == Some(name)).then_some(tool)
    }
}

impl std::fmt::Display for McpToolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} · {}", self.server, self.tool)
    }
}

/// What the owner lets one MCP tool do. A tool nobody set is [`McpToolPolicy::Off`]:
/// plug-in tools are denied by default (invariant 19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpToolPolicy {
    /// Offered to the model. If the server marks it read-only it runs as a read; otherwise
    /// each call waits on a card (or a standing order the owner granted a task).
    Allowed,
    /// Offered, and every call waits on a card, read-only or not.
    Ask,
    /// Never offered, never called.
    #[default]
    Off,
}

impl McpToolPolicy {
    /// Stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Ask => "ask",
            Self::Off => "off",
        }
    }

    /// From the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allowed" => Some(Self::Allowed),
            "ask" => Some(Self::Ask),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// How Hearth reaches a server, as the owner sets it. Secrets (the environment's values, the
/// bearer token) are sealed in the vault; the Debug form never shows them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpTransportInput {
    /// A program Hearth starts, speaking MCP on its standard input and output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Its environment (nothing of Hearth's own is passed but PATH, HOME, LANG, TMPDIR).
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint: https, or http on this machine only.
    Http {
        /// The endpoint.
        url: String,
        /// A bearer token, when the server wants one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bearer: Option<String>,
    },
}

impl std::fmt::Debug for McpTransportInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", &args.len())
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish(),
            Self::Http { url, bearer } => {
                // The address without its path or query, where a token may have been put.
                let origin = url.split(['/', '?', '#']).take(3).collect::<Vec<_>>().join("/");
                f.debug_struct("Http").field("url", &origin).field("bearer", &bearer.as_ref().map(|_| "[REDACTED]")).finish()
            }
        }
    }
}

/// `mcp_server_save`: add a server, or change one (its tools' policies are kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSaveParams {
    /// Its name (the prefix of its tools' names).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportInput,
}

/// Commands about one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerParams {
    /// The server.
    pub name: String,
}

/// `mcp_server_enable`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerEnableParams {
    /// The server.
    pub name: String,
    /// On (started and offered) or off (stopped, none of its tools offered).
    pub enabled: bool,
}

/// `mcp_tool_policy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolPolicyParams {
    /// The server.
    pub server: String,
    /// The tool's name at the server.
    pub tool: String,
    /// What it may do now.
    pub policy: McpToolPolicy,
    /// The tool's fingerprint as the owner was shown it (`McpToolView::fingerprint`); without
    /// one, the tool as listed at the moment the choice arrives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// How a server is reached, as Settings shows it (no secret values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpTransportView {
    /// A program.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The names of the variables the owner set (their values stay in the vault).
        env_names: Vec<String>,
    },
    /// An endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Whether a bearer token is kept for it.
        has_bearer: bool,
    },
}

/// Where a server's connection is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpConnection {
    /// Turned off by the owner.
    Off,
    /// Not connected yet (it is started when first needed, or by Test).
    Idle,
    /// Connected.
    Connected {
        /// The protocol revision agreed.
        protocol_version: String,
        /// The server's own name and version, as it gave them.
        server: String,
    },
    /// The last attempt failed; the next is not before `retry_in_s`.
    Failed {
        /// What went wrong, in plain words.
        error: String,
        /// Seconds until it is tried again (0: at the next need).
        retry_in_s: u64,
    },
}

/// One tool of a server, as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolView {
    /// Its name at the server.
    pub name: String,
    /// What the server says it does (the server's words, not Hearth's).
    pub description: String,
    /// The server marks it read-only.
    pub read_only_hint: bool,
    /// The server marks it destructive (or says nothing, which counts as destructive).
    pub destructive_hint: bool,
    /// What the owner lets it do.
    pub policy: McpToolPolicy,
    /// Its name in the model's tool list; `None` when its name cannot be offered.
    pub offered_as: Option<String>,
    /// The server changed what it says about the tool (its description, schema or hints) since
    /// the owner chose the policy: it is treated as off until the owner chooses again.
    #[serde(default)]
    pub changed: bool,
    /// What the server says about the tool now, hashed: a choice sent back with it holds for
    /// exactly what the owner was shown.
    #[serde(default)]
    pub fingerprint: String,
}

/// A server, as Settings → Tools lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    /// Its name.
    pub name: McpServerName,
    /// How it is reached.
    pub transport: McpTransportView,
    /// On or off.
    pub enabled: bool,
    /// Its connection now.
    pub connection: McpConnection,
    /// Its tools as last listed (with the owner's policy for each).
    pub tools: Vec<McpToolView>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn no_hearth_tool_can_be_shadowed() {
        for tool in crate::ToolName::ALL {
            assert!(!tool.as_str().starts_with(MCP_PREFIX), "{tool}");
            assert!(McpToolRef::from_wire(tool.as_str()).is_none(), "{tool}");
        }
    }

    #[test]
    fn a_wire_name_splits_one_way_only() {
        let tool = McpToolRef { server: McpServerName::parse("notes-1").unwrap(), tool: "find__all".into() };
        let wire = tool.wire_name().unwrap();
        assert_eq!(wire, "mcp__notes-1__find__all");
        assert_eq!(McpToolRef::from_wire(&wire), Some(tool));
        for bad in ["a__b", "", "x y", "é", &"n".repeat(41), "notes_"] {
            assert!(McpServerName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(McpToolRef::from_wire("mcp__a").is_none());
        // One wire name, one tool: a server `notes_` (refused) cannot share `notes`' `_tool`.
        let underscored = McpToolRef { server: McpServerName::parse("notes").unwrap(), tool: "_tool".into() };
        assert_eq!(McpToolRef::from_wire("mcp__notes___tool"), Some(underscored));
        assert!(McpToolRef::from_wire("mcp__a__").is_none());
        let odd = McpToolRef { server: McpServerName::parse("a").unwrap(), tool: "has.dot".into() };
        assert_eq!(odd.wire_name(), None);
        assert!(McpToolRef::from_wire("mcp__a__has.dot").is_none());
    }

    #[test]
    fn a_tool_nobody_set_is_off_and_secrets_never_print() {
        assert_eq!(McpToolPolicy::default(), McpToolPolicy::Off);
        let input = McpTransportInput::Http { url: "https://x.example/mcp?key=sekrit".into(), bearer: Some("sekrit".into()) };
        assert!(!format!("{input:?}").contains("sekrit"));
        let input = McpTransportInput::Stdio {
            command: "srv".into(),
            args: vec!["--token=sekrit".into()],
            env: [("KEY".into(), "sekrit".into())].into(),
        };
        assert!(!format!("{input:?}").contains("sekrit"));
    }
}
