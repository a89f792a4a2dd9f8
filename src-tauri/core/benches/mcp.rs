//! What Hearth adds to a plug-in tool's call: a read-only MCP call (`lookup` on the rmcp test
//! server, over stdio) through Hearth's whole tool path — the wire name parsed, the owner's
//! policy read from the store, the arguments checked against the server's schema, the trust
//! check, the call, the result wrapped and recorded as outside content — beside the same call
//! made directly with the SDK client (`hearth_core::mcp::McpClient`, rmcp) in the same run, the
//! two alternating so load falls on both alike. p50/p95 over 500 calls each; figures only.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hearth_core::mcp::{McpClient, McpLimits, McpServerSpec, McpTransportSpec};
use hearth_core::tools::{StepId, dispatch};
use hearth_core::{Config, Hearth};
use hearth_protocol::approvals::ProposalOrigin;
use hearth_protocol::mcp::{McpServerSaveParams, McpToolPolicy, McpToolPolicyParams, McpTransportInput};
use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;

#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;

const RUNS: usize = 500;
const WARMUP: usize = 20;

fn quantiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.50), at(0.95))
}

/// The test server, built beside the benches by the workspace build.
fn server_binary() -> String {
    let here = std::env::current_exe().unwrap();
    let built = here.parent().and_then(|deps| deps.parent()).unwrap().join("hearth-mcp-test-server");
    assert!(built.exists(), "{} is missing: build the workspace first (cargo build --workspace --all-targets)", built.display());
    built.display().to_string()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.start_workers = false;
    let hearth = Hearth::open(config).await.unwrap();
    let transport = McpTransportInput::Stdio { command: server_binary(), args: vec!["stdio".into()], env: BTreeMap::new() };
    hearth.mcp_server_save(&McpServerSaveParams { name: "notes".into(), transport }).await.unwrap();
    let policy = McpToolPolicyParams { server: "notes".into(), tool: "lookup".into(), policy: McpToolPolicy::Allowed, fingerprint: None };
    hearth.mcp_tool_policy(&policy).await.unwrap();

    let spec = McpServerSpec {
        name: "direct".into(),
        transport: McpTransportSpec::Stdio { command: server_binary(), args: vec!["stdio".into()], env: BTreeMap::new() },
    };
    let direct = McpClient::connect(&spec, McpLimits::default()).await.unwrap();
    let none = CancellationToken::new();
    let args: Map<String, serde_json::Value> = json!({ "key": "rain" }).as_object().cloned().unwrap();

    let (mut through, mut sdk) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for n in 0..WARMUP + RUNS {
        // A chat run of the owner's per call (its own provenance, nothing read yet): the path a
        // model's first plug-in call in a turn takes.
        let ctx = hearth.toolbox().for_chat("bench", &format!("run-{n}"), ProposalOrigin::OwnerChat, CancellationToken::new());
        let at = Instant::now();
        let out = dispatch(&ctx, "mcp__notes__lookup", r#"{"key":"rain"}"#, StepId::Call(format!("c{n}"))).await;
        let hearth_took = at.elapsed();
        assert!(!out.is_error && out.content.contains("the value of rain"), "{}", out.content);
        let at = Instant::now();
        let answer = direct.call("lookup", args.clone(), &none).await.unwrap();
        let sdk_took = at.elapsed();
        assert_eq!(answer.text, "the value of rain");
        if n >= WARMUP {
            through.push(hearth_took);
            sdk.push(sdk_took);
        }
    }
    let ((h50, h95), (s50, s95)) = (quantiles(through), quantiles(sdk));
    println!("through Hearth: p50 {h50:.3} ms, p95 {h95:.3} ms");
    println!("the SDK client alone: p50 {s50:.3} ms, p95 {s95:.3} ms");
    println!("Hearth adds at the median: {:.3} ms", h50 - s50);
    figure::figure(
        "a read-only MCP call (stdio, rmcp test server), p50",
        &format!("{h50:.3} ms (p95 {h95:.3})"),
        &format!("the SDK client alone: {s50:.3} ms (p95 {s95:.3})"),
        "Hearth adds under 2 ms at the median",
    );
    direct.close().await;
    hearth.shutdown().await;
    println!("load average after: {}", scripted::load_average());
}
