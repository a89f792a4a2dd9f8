//! Settings → Tools as plain data: the Add form and the params it sends, how a server's
//! transport and connection read, the three choices for a tool, and how an MCP tool's result
//! reads on its chat card.
//!
//! What a server says (its name and version, its tools' descriptions, its results) is the
//! server's text, not Hearth's: it is shown as text and never decides anything here.

use std::collections::BTreeMap;

use hearth_protocol::mcp::{
    McpConnection, McpServerName, McpServerSaveParams, McpServerView, McpToolPolicy, McpToolView, McpTransportInput, McpTransportView,
};
use serde_json::Value;

/// How the Add form reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpKind {
    /// A program Hearth starts.
    #[default]
    Stdio,
    /// A Streamable HTTP endpoint.
    Http,
}

impl McpKind {
    /// The select's option value.
    pub const fn slug(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }

    /// From the select's option value.
    pub fn parse(text: &str) -> Self {
        if text == "http" { Self::Http } else { Self::Stdio }
    }
}

/// The Add form as typed. Both kinds' fields are kept while the owner switches between them;
/// only the chosen kind's are sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpForm {
    /// The server's name.
    pub name: String,
    /// Stdio or HTTP.
    pub kind: McpKind,
    /// Stdio: the program.
    pub command: String,
    /// Stdio: its arguments, one a line (a single line is split at spaces).
    pub args: String,
    /// Stdio: `NAME=value` lines.
    pub env: String,
    /// HTTP: the endpoint.
    pub url: String,
    /// HTTP: the bearer token (empty: none).
    pub bearer: String,
}

impl McpForm {
    /// An empty form of the same kind (after a save).
    pub fn cleared(&self) -> Self {
        Self { kind: self.kind, ..Self::default() }
    }

    /// The params to send, or what to change first (then nothing is sent and nothing typed is
    /// lost). The backend checks again.
    pub fn params(&self) -> Result<McpServerSaveParams, String> {
        let name = McpServerName::parse(&self.name)?;
        let transport = match self.kind {
            McpKind::Stdio => {
                let command = self.command.trim();
                if command.is_empty() {
                    return Err("Say which program to start.".into());
                }
                McpTransportInput::Stdio { command: command.to_owned(), args: split_args(&self.args), env: parse_env(&self.env)? }
            }
            McpKind::Http => {
                let url = self.url.trim();
                if url.is_empty() {
                    return Err("Give the server's URL.".into());
                }
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    return Err("The URL starts with https:// (or http:// for a server on this computer).".into());
                }
                let bearer = self.bearer.trim();
                McpTransportInput::Http { url: url.to_owned(), bearer: (!bearer.is_empty()).then(|| bearer.to_owned()) }
            }
        };
        Ok(McpServerSaveParams { name: name.as_str().to_owned(), transport })
    }
}

/// Arguments as typed: one a line when there are several lines, else split at spaces.
pub fn split_args(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    if lines.len() > 1 { lines.into_iter().map(str::to_owned).collect() } else { text.split_whitespace().map(str::to_owned).collect() }
}

/// `NAME=value` lines (blank lines and `#` comments skipped). An error names the line and the
/// variable, never a value (values are secrets).
pub fn parse_env(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut env = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let number = index + 1;
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("Environment, line {number}: write it as NAME=value."));
        };
        let key = key.trim();
        let named =
            !key.is_empty() && !key.starts_with(|c: char| c.is_ascii_digit()) && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !named {
            return Err(format!("Environment, line {number}: a variable's name is letters, digits and '_' (not starting with a digit)."));
        }
        if env.insert(key.to_owned(), value.trim_start().to_owned()).is_some() {
            return Err(format!("Environment, line {number}: {key} is set twice."));
        }
    }
    Ok(env)
}

/// How a server is reached, in one line: the program and its arguments, or the URL.
pub fn transport_line(transport: &McpTransportView) -> String {
    match transport {
        McpTransportView::Stdio { command, args, .. } => {
            std::iter::once(command).chain(args).map(|word| shell_word(word)).collect::<Vec<_>>().join(" ")
        }
        McpTransportView::Http { url, .. } => url.clone(),
    }
}

/// What is kept sealed for it, when anything is: the environment's names, or "token kept".
pub fn transport_note(transport: &McpTransportView) -> Option<String> {
    match transport {
        McpTransportView::Stdio { env_names, .. } if !env_names.is_empty() => Some(format!("environment: {}", env_names.join(", "))),
        McpTransportView::Http { has_bearer: true, .. } => Some("token kept".to_owned()),
        _ => None,
    }
}

/// A word as a shell would need it, so an argument with a space reads as one.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && !word.chars().any(|c| c.is_whitespace() || c == '"' || c == '\'') {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The connection's test hook (`data-state`).
pub const fn connection_slug(connection: &McpConnection) -> &'static str {
    match connection {
        McpConnection::Off => "off",
        McpConnection::Idle => "idle",
        McpConnection::Connected { .. } => "connected",
        McpConnection::Failed { .. } => "failed",
    }
}

/// The connection in words: `Connected · MCP 2025-11-25 · notes 1.0`, or what failed and when
/// it is tried again.
pub fn connection_label(connection: &McpConnection) -> String {
    match connection {
        McpConnection::Off => "Off".to_owned(),
        McpConnection::Idle => "Not started".to_owned(),
        McpConnection::Connected { protocol_version, server } => {
            let mut label = format!("Connected · MCP {protocol_version}");
            if !server.trim().is_empty() {
                label.push_str(" · ");
                label.push_str(server.trim());
            }
            label
        }
        McpConnection::Failed { error, retry_in_s } => {
            let retry = match *retry_in_s {
                0 => "tried again when next needed".to_owned(),
                s if s < 60 => format!("tried again in {s} s"),
                s if s < 3600 => format!("tried again in {} min", s.div_ceil(60)),
                s => format!("tried again in {} h", s.div_ceil(3600)),
            };
            format!("Failed: {} · {retry}", error.trim())
        }
    }
}

/// The choices for a tool, in the select's order.
pub const POLICIES: [McpToolPolicy; 3] = [McpToolPolicy::Allowed, McpToolPolicy::Ask, McpToolPolicy::Off];

/// A choice as the owner reads it.
pub const fn policy_label(policy: McpToolPolicy) -> &'static str {
    match policy {
        McpToolPolicy::Allowed => "Allowed",
        McpToolPolicy::Ask => "Ask every time",
        McpToolPolicy::Off => "Off",
    }
}

/// What the tool's choice means for its calls, given what the server says of it.
pub const fn policy_effect(tool: &McpToolView) -> &'static str {
    match tool.policy {
        McpToolPolicy::Off => "Not offered to the model.",
        McpToolPolicy::Allowed if tool.read_only_hint && !tool.destructive_hint => "Runs on its own (the server marks it read-only).",
        McpToolPolicy::Allowed | McpToolPolicy::Ask => "Each call waits for your approval.",
    }
}

/// The badges a tool shows: `(test hook, words)`, from what the server says of it.
pub fn tool_badges(tool: &McpToolView) -> Vec<(&'static str, &'static str)> {
    let mut badges = Vec::new();
    if tool.read_only_hint {
        badges.push(("read-only", "read-only"));
    }
    if tool.destructive_hint {
        badges.push(("may-change", "may change things"));
    }
    badges
}

/// `view` in `list`: in place of the server of its name, else added at the end.
pub fn merge_server(list: &mut Vec<McpServerView>, view: McpServerView) {
    match list.iter_mut().find(|shown| shown.name == view.name) {
        Some(shown) => *shown = view,
        None => list.push(view),
    }
}

/// The most rows a result's table shows.
pub const MAX_TABLE_ROWS: usize = 50;

/// An MCP tool's result as its chat card shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpResult {
    /// The tool's text.
    Text(String),
    /// A list of flat records.
    Table {
        /// The columns, in the order first seen.
        columns: Vec<String>,
        /// The first [`MAX_TABLE_ROWS`] rows, a cell per column.
        rows: Vec<Vec<String>>,
        /// Rows not shown.
        more: usize,
    },
    /// Anything else, as it came.
    Raw(String),
}

/// Reads a result: `{"result": "<text>"}` is the text (or a table, when that text is a JSON
/// list of flat records); a list of flat records is a table; anything else is raw.
pub fn read_result(text: &str) -> McpResult {
    let Ok(value) = serde_json::from_str::<Value>(text) else { return McpResult::Raw(text.to_owned()) };
    let inner = match &value {
        Value::Object(map) => map.get("result").unwrap_or(&value),
        _ => &value,
    };
    match inner {
        Value::String(text) => {
            serde_json::from_str::<Value>(text).ok().and_then(|parsed| table(&parsed)).unwrap_or_else(|| McpResult::Text(text.clone()))
        }
        other => table(other).unwrap_or_else(|| McpResult::Raw(text.to_owned())),
    }
}

/// What Hearth adds about a result (`isError`, `truncated`), in words.
pub fn result_marks(text: &str) -> Vec<&'static str> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else { return Vec::new() };
    let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
    let mut marks = Vec::new();
    if flag("isError") {
        marks.push("The server marked this result as an error.");
    }
    if flag("truncated") {
        marks.push("Cut short: the server's answer was longer than Hearth keeps.");
    }
    marks
}

/// A non-empty list of objects whose values are all scalars, as a table.
fn table(value: &Value) -> Option<McpResult> {
    let Value::Array(items) = value else { return None };
    if items.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = Vec::new();
    for item in items {
        let Value::Object(record) = item else { return None };
        for (key, value) in record {
            if matches!(value, Value::Array(_) | Value::Object(_)) {
                return None;
            }
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    if columns.is_empty() {
        return None;
    }
    let rows = items
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|item| {
            columns
                .iter()
                .map(|column| match item.get(column) {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                })
                .collect()
        })
        .collect();
    Some(McpResult::Table { columns, rows, more: items.len().saturating_sub(MAX_TABLE_ROWS) })
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
