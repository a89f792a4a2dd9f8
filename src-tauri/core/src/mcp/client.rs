//! One connection to one MCP server, on `rmcp`.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams, ProtocolVersion};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{RoleClient, ServiceExt};
use secrecy::ExposeSecret;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::result::McpOutput;
use super::spec::{McpServerSpec, McpTransportSpec, check_url};
use super::stderr::StderrLog;
use super::types::{McpLimits, McpServerInfo, McpTool};

/// Most tool-list pages read from one server (a server that keeps sending cursors stops here).
const MAX_TOOL_PAGES: usize = 10;
/// Most tools taken from one server.
const MAX_TOOLS: usize = 200;

/// A connected server.
pub struct McpClient {
    service: RunningService<RoleClient, ClientConfig>,
    info: McpServerInfo,
    limits: McpLimits,
    stderr: StderrLog,
    /// A stdio server's process group (its pid), until it is ended.
    group: std::sync::Mutex<Option<u32>>,
}

impl Drop for McpClient {
    /// Ends what a stdio server started besides itself: rmcp ends the server's own process, but
    /// a server that exits when its input closes leaves its children running otherwise.
    fn drop(&mut self) {
        // Only while the connection is open: once it closed, its process was reaped, and the
        // number may in time name another group (rmcp's own kill covers what is left then).
        if !self.service.is_transport_closed() {
            self.end_group_now();
        }
    }
}

/// Kills a stdio server's process group. Right after its leader ended the group id is still the
/// leader's pid, which the system does not hand out again while a process of the group lives;
/// once none does, the signal finds no group (or, after a pid reuse the kernel makes unlikely
/// within these moments, a group of a process that made itself leader with that id).
fn end_group(group: Option<u32>) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(pid) = group.and_then(|pid| i32::try_from(pid).ok()).and_then(rustix::process::Pid::from_raw) {
        // Gone already is fine: nothing of the group is left.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = group;
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").field("info", &self.info).finish_non_exhaustive()
    }
}

impl McpClient {
    /// Starts or reaches the server and completes the handshake, within the limits.
    pub async fn connect(spec: &McpServerSpec, limits: McpLimits) -> Result<Self, McpError> {
        spec.validate()?;
        let me = ClientConfig::new(ClientCapabilities::default(), Implementation::new("hearth", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        let stderr = StderrLog::default();
        let mut group = None;
        let serving = match &spec.transport {
            McpTransportSpec::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).env_clear().kill_on_drop(true).current_dir(std::env::temp_dir());
                // What a program needs to run at all; nothing of Hearth's own environment.
                for name in ["PATH", "HOME", "LANG", "TMPDIR"] {
                    if let Some(value) = std::env::var_os(name) {
                        cmd.env(name, value);
                    }
                }
                cmd.envs(env);
                // Its own process group: what the server starts in turn ends with it (`Drop`).
                let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
                #[cfg(unix)]
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                let (transport, err) = TokioChildProcess::builder(wrapped)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Spawn { command: command.clone(), source })?;
                group = transport.id();
                if let Some(err) = err {
                    stderr.follow(err);
                }
                tokio::time::timeout(limits.connect_timeout, me.serve(transport)).await
            }
            McpTransportSpec::Http { url, bearer } => {
                let url = check_url(url)?;
                let http = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    // Never through a proxy from the environment: loopback http would cross it in clear.
                    .no_proxy()
                    .connect_timeout(limits.connect_timeout)
                    .pool_max_idle_per_host(0)
                    .build()
                    .map_err(|e| McpError::Handshake(e.to_string()))?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str().to_owned());
                config.max_sse_event_size = limits.max_http_reply_bytes;
                config.max_json_response_size = limits.max_http_reply_bytes;
                if let Some(token) = bearer {
                    config = config.auth_header(token.expose_secret().to_owned());
                }
                tokio::time::timeout(limits.connect_timeout, me.serve(StreamableHttpClientTransport::with_client(http, config))).await
            }
        };
        let service = match serving {
            Ok(Ok(service)) => service,
            Ok(Err(err)) => {
                end_group(group);
                return Err(McpError::Handshake(err.to_string()));
            }
            Err(_) => {
                end_group(group);
                return Err(McpError::Handshake(format!("no answer within {:?}", limits.connect_timeout)));
            }
        };
        let peer = service.peer_info();
        let info = McpServerInfo {
            protocol_version: peer.as_ref().map(|p| p.protocol_version.as_str().to_owned()).unwrap_or_default(),
            name: peer.as_ref().and_then(|p| p.server_info.as_ref()).map(|i| i.name.clone()),
            version: peer.as_ref().and_then(|p| p.server_info.as_ref()).map(|i| i.version.clone()),
        };
        Ok(Self { service, info, limits, stderr, group: std::sync::Mutex::new(group) })
    }

    /// Who the server is, and the revision agreed.
    pub fn info(&self) -> &McpServerInfo {
        &self.info
    }

    /// What the server wrote to its standard error (stdio servers), for the owner.
    pub fn stderr(&self) -> &StderrLog {
        &self.stderr
    }

    /// The server's tools (at most [`MAX_TOOLS`], from at most [`MAX_TOOL_PAGES`] pages).
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = self.bounded(None, self.service.list_tools(Some(params))).await?;
            tools.extend(page.tools.into_iter().map(|tool| {
                let hints = tool.annotations.as_ref();
                McpTool {
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    input_schema: (*tool.input_schema).clone(),
                    read_only_hint: hints.and_then(|a| a.read_only_hint).unwrap_or(false),
                    // Meaningful only for a tool that is not read-only (the specification's rule).
                    destructive_hint: !hints.and_then(|a| a.read_only_hint).unwrap_or(false)
                        && hints.and_then(|a| a.destructive_hint).unwrap_or(true),
                }
            }));
            match page.next_cursor {
                Some(next) if tools.len() < MAX_TOOLS => cursor = Some(next),
                _ => break,
            }
        }
        tools.truncate(MAX_TOOLS);
        Ok(tools)
    }

    /// Calls `tool` with `arguments` (a JSON object). When `cancel` fires first the call ends at
    /// once and the server is told (`notifications/cancelled`); so it is when the time runs out.
    pub async fn call(&self, tool: &str, arguments: Map<String, Value>, cancel: &CancellationToken) -> Result<McpOutput, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = self.bounded(Some(cancel), self.service.call_tool(params)).await?;
        Ok(McpOutput::from_result(&result))
    }

    /// Whether the connection has ended (the process exited, the stream closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// Ends the connection while calls may still hold it: they fail as ended, and the process
    /// is killed when the last holder lets go.
    pub fn cancel(&self) {
        self.service.cancellation_token().cancel();
    }

    /// Ends the connection (a stdio server's process is closed, then killed).
    pub async fn close(mut self) {
        let group = self.group.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let _ = self.service.close_with_timeout(Duration::from_secs(3)).await;
        // Right after its leader ended: what it started goes too.
        end_group(group);
    }

    /// Ends the server's process group now (once): when its connection is found dead, or it is
    /// being replaced, what it started goes with it.
    pub fn end_group_now(&self) {
        end_group(self.group.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
    }

    /// Runs one request under the time bound and `cancel`; dropping rmcp's request future on
    /// either sends the server `notifications/cancelled`.
    async fn bounded<T>(
        &self,
        cancel: Option<&CancellationToken>,
        request: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        let after = self.limits.call_timeout;
        let answered = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(McpError::Cancelled),
            answered = tokio::time::timeout(after, request) => answered,
        };
        match answered {
            Err(_) => Err(McpError::TimedOut { after }),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(service_error(err)),
        }
    }
}

fn service_error(err: ServiceError) -> McpError {
    match err {
        ServiceError::McpError(data) => McpError::Refused { code: data.code.0, message: data.message.to_string() },
        ServiceError::TransportClosed => McpError::Ended { detail: String::new() },
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        ServiceError::Timeout { timeout } => McpError::TimedOut { after: timeout },
        other => McpError::Protocol(other.to_string()),
    }
}
