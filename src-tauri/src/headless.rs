//! `hearth serve`: the core with no window, as a small home server for the owner's other
//! devices (issue 34). It opens the same data folder the app would, serves paired devices on
//! the LAN, and runs the agent, tasks and schedules as the app does; the computer and the
//! browser run here, at home.
//!
//! It is driven by its standard input, one line at a time, so the owner at the machine (or a
//! service manager's script) decides what happens — never a device:
//! - `offer <name> [scope,scope,…]` makes a one-time pairing offer; the answer is a JSON line
//!   `{"offer": …}` with the text a QR code would carry, the short code and the fingerprint
//!   (scopes: read, chat, decide_approvals, control_tasks, destructive; default: all but
//!   destructive);
//! - `devices` lists the paired devices; `revoke <id>` revokes one;
//! - end of input (or `quit`) shuts down cleanly.
//!
//! On start it prints `{"listening": "<addr>"}`. Answers go to standard output, one JSON line
//! each, errors as `{"error": "…"}`; the log goes to standard error.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use hearth_core::{Config, Hearth};
use hearth_protocol::devices::{DevicePairOfferParams, DeviceScope, DeviceScopes};
use hearth_protocol::ids::DeviceId;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The command-line word that starts this mode.
pub const SERVE: &str = "serve";

const USAGE: &str = "usage: hearth serve [--listen ADDRESS:PORT]   (HEARTH_DATA_DIR chooses the data folder)";

/// Runs the home server until its input ends; the process's exit code (0, 1 when it could not
/// start or open its data, 2 for a wrong command line).
pub fn run(args: &[String]) -> i32 {
    let listen = match parse_listen(args) {
        Ok(listen) => listen,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "{message}\n{USAGE}");
            return 2;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "hearth serve could not start its runtime: {err}");
            return 1;
        }
    };
    runtime.block_on(serve(listen))
}

/// `--listen ADDRESS:PORT`, else the configured default.
fn parse_listen(args: &[String]) -> Result<Option<SocketAddr>, String> {
    match args {
        [] => Ok(None),
        [flag, value] if flag == "--listen" => {
            value.parse().map(Some).map_err(|_| format!("{value:?} is not an address with a port (for example 0.0.0.0:47800)"))
        }
        _ => Err(format!("unexpected arguments: {}", args.join(" "))),
    }
}

/// The app's data folder when HEARTH_DATA_DIR does not name one: where the window keeps it
/// on Linux (`$XDG_DATA_HOME` or `~/.local/share`, then the app's identifier).
fn default_data_dir() -> PathBuf {
    let base = match std::env::var_os("XDG_DATA_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::home_dir().unwrap_or_else(|| PathBuf::from(".")).join(".local/share"),
    };
    base.join("dev.hearth.desktop")
}

async fn serve(listen: Option<SocketAddr>) -> i32 {
    let mut config = Config::from_env_or(default_data_dir());
    #[cfg(feature = "local-model")]
    {
        config.local_model_worker = hearth_core::local_model::WorkerCommand::this_binary().ok();
    }
    if let Some(listen) = listen {
        config.pairing_listen = listen;
    }
    let listen = config.pairing_listen;
    let hearth = match Hearth::open(config).await {
        Ok(hearth) => hearth,
        Err(err) => {
            say(&json!({"error": format!("Hearth could not open its data: {err}")}));
            return 1;
        }
    };
    let code = match hearth.pairing_serve(listen).await {
        Ok(addr) => {
            say(&json!({"listening": addr.to_string()}));
            answer_lines(&hearth).await;
            0
        }
        Err(err) => {
            say(&json!({"error": err.to_string()}));
            1
        }
    };
    hearth.shutdown().await;
    code
}

/// Answers the owner's lines until the input ends.
async fn answer_lines(hearth: &Hearth) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        let answer = match (words.next(), words.next(), words.next(), words.next()) {
            (None, ..) => continue,
            (Some("quit"), None, ..) => break,
            (Some("offer"), Some(name), scopes, None) => offer(hearth, name, scopes).await,
            (Some("devices"), None, ..) => hearth.device_list().await.map(|devices| json!({"devices": devices})).map_err(|e| e.to_string()),
            (Some("revoke"), Some(id), None, ..) => match DeviceId::parse(id) {
                Ok(id) => hearth.device_revoke(&id).await.map(|device| json!({"revoked": device})).map_err(|e| e.to_string()),
                Err(err) => Err(err.to_string()),
            },
            _ => Err("commands: offer <name> [scope,…] | devices | revoke <id> | quit".to_owned()),
        };
        say(&answer.unwrap_or_else(|error| json!({"error": error})));
    }
}

async fn offer(hearth: &Hearth, name: &str, scopes: Option<&str>) -> Result<Value, String> {
    let scopes = match scopes {
        None => DeviceScopes::DEFAULT,
        Some(list) => parse_scopes(list)?,
    };
    let view = hearth.device_pair_offer(&DevicePairOfferParams { name: name.to_owned(), scopes }).await.map_err(|e| e.to_string())?;
    // The QR code's picture is for a screen; a terminal gets its text.
    Ok(
        json!({"offer": {"uri": view.uri, "shortCode": view.short_code, "fingerprint": view.fingerprint, "address": view.address, "expiresAt": view.expires_at}}),
    )
}

/// `read,chat,…`: exactly the scopes named.
fn parse_scopes(list: &str) -> Result<DeviceScopes, String> {
    let mut scopes = DeviceScopes { read: false, chat: false, decide_approvals: false, control_tasks: false, destructive: false };
    for word in list.split(',').filter(|w| !w.is_empty()) {
        let scope: DeviceScope = serde_json::from_value(Value::String(word.to_owned()))
            .map_err(|_| format!("{word:?} is not a scope (read, chat, decide_approvals, control_tasks, destructive)"))?;
        match scope {
            DeviceScope::Read => scopes.read = true,
            DeviceScope::Chat => scopes.chat = true,
            DeviceScope::DecideApprovals => scopes.decide_approvals = true,
            DeviceScope::ControlTasks => scopes.control_tasks = true,
            DeviceScope::Destructive => scopes.destructive = true,
        }
    }
    Ok(scopes)
}

/// One JSON line on standard output (the offer carries its secret: it goes only there, never
/// to the log).
fn say(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_parsed_strictly() {
        let scopes = parse_scopes("read,decide_approvals").unwrap_or_else(|e| panic!("{e}"));
        assert!(scopes.read && scopes.decide_approvals && !scopes.chat && !scopes.destructive);
        assert!(parse_scopes("read,everything").is_err());
    }

    #[test]
    fn listen_is_an_address_with_a_port() {
        assert_eq!(parse_listen(&[]), Ok(None));
        assert!(parse_listen(&["--listen".into(), "127.0.0.1:9".into()]).is_ok_and(|a| a.is_some()));
        assert!(parse_listen(&["--listen".into(), "nowhere".into()]).is_err());
        assert!(parse_listen(&["--port".into()]).is_err());
    }
}
