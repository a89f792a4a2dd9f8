//! What the owner sets for a server: how to reach it.

use std::collections::BTreeMap;

use secrecy::SecretString;

use super::McpError;

/// One MCP server, as the owner set it. Its Debug names what it reaches, never its arguments,
/// environment or token (where keys live).
#[derive(Clone)]
pub struct McpServerSpec {
    /// The name shown on cards and in Settings (and part of its tools' names).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportSpec,
}

impl std::fmt::Debug for McpServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reach = match &self.transport {
            McpTransportSpec::Stdio { command, args, env } => {
                format!("stdio {command:?} ({} arguments, {} variables)", args.len(), env.len())
            }
            McpTransportSpec::Http { url, bearer } => {
                let origin = reqwest::Url::parse(url).map_or_else(|_| "(not a URL)".to_owned(), |u| u.origin().ascii_serialization());
                format!("http {origin} (token: {})", if bearer.is_some() { "set" } else { "none" })
            }
        };
        f.debug_struct("McpServerSpec").field("name", &self.name).field("reach", &reach).finish()
    }
}

/// How a server is reached.
#[derive(Clone)]
pub enum McpTransportSpec {
    /// A program Hearth starts, speaking MCP on its standard input and output.
    Stdio {
        /// The program (a path, or a name found on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The only environment it gets besides `PATH`, `HOME`, `LANG` and `TMPDIR` (Hearth's own —
        /// which may hold keys — is not passed on).
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// `https://…`, or `http://` on loopback only.
        url: String,
        /// Sent as `Authorization: Bearer …` (kept sealed in the vault).
        bearer: Option<SecretString>,
    },
}

impl McpServerSpec {
    /// A name of 1 to 40 letters, digits, `-` or `_` (it becomes part of tool names, which
    /// providers restrict), a command, or a URL that is https or loopback http.
    pub fn validate(&self) -> Result<(), McpError> {
        let name_ok =
            !self.name.is_empty() && self.name.len() <= 40 && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(McpError::InvalidSpec(
                "Name the server in 1 to 40 letters, digits, '-' or '_' (it becomes part of its tools' names).".into(),
            ));
        }
        match &self.transport {
            McpTransportSpec::Stdio { command, env, .. } => {
                if command.trim().is_empty() {
                    return Err(McpError::InvalidSpec("Give the command that starts the server.".into()));
                }
                if let Some(bad) = env.keys().find(|k| k.is_empty() || k.contains('=') || k.contains('\0')) {
                    return Err(McpError::InvalidSpec(format!("{bad:?} is not an environment variable's name.")));
                }
                Ok(())
            }
            McpTransportSpec::Http { url, .. } => check_url(url).map(|_| ()),
        }
    }
}

/// `https://…` anywhere, or `http://` to a loopback address only: a token or a tool's arguments
/// never cross a network in clear.
pub(super) fn check_url(url: &str) -> Result<reqwest::Url, McpError> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| McpError::InvalidSpec(format!("That is not a URL ({e}); an MCP server's looks like https://host/mcp.")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(McpError::InvalidSpec("Put the server's token in its own field, not in the URL.".into()));
    }
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        "http" => Err(McpError::InvalidSpec(
            "An MCP server on another machine must use https://; plain http:// is for this computer (127.0.0.1) only.".into(),
        )),
        other => Err(McpError::InvalidSpec(format!("{other}:// is not how MCP servers are reached; use https://."))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_reached() {
        for ok in ["https://tools.example/mcp", "http://127.0.0.1:9000/mcp", "http://[::1]:9/mcp", "http://localhost:7/mcp"] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://tools.example/mcp",
            "http://192.168.1.2/mcp",
            "ftp://127.0.0.1/x",
            "not a url",
            "file:///etc/passwd",
            "https://user:secret@tools.example/mcp",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_become_tool_names_so_they_are_plain() {
        let spec = |name: &str| McpServerSpec {
            name: name.into(),
            transport: McpTransportSpec::Stdio { command: "x".into(), args: vec![], env: BTreeMap::new() },
        };
        assert!(spec("notes_app-2").validate().is_ok());
        for bad in ["", "has space", "dot.ted", &"n".repeat(41), "ünïcode"] {
            assert!(spec(bad).validate().is_err(), "{bad:?}");
        }
    }
}
