//! What a paired device feels, on loopback (so the figures are Hearth's and the wire's own cost:
//! Noise, JSON, the host's scope check and the gate): an approval from the companion's click to
//! the host's Sent row, beside the same approval made in the host's own process (the window's
//! path) in the same run; a chat event's trip host → companion; a small request's round trip;
//! and a session's handshake. p50/p95 over 100 runs; figures only, no asserts.
//!
//! The proposals are real: a scripted model (OpenAI Chat streaming on loopback) answers each
//! chat turn with prepare_email, so each run ends with an email awaiting review.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hearth_core::Hearth;
use hearth_core::pairing::{Companion, CompanionConfig, PairingOffer, Push, StaticKeypair, StreamId};
use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalStatus, ProposalView};
use hearth_protocol::devices::{DevicePairOfferParams, DeviceScopes};
use hearth_protocol::ipc::RunStartParams;
use hearth_testkit::model_server::{Reply, Script};
use serde_json::json;

#[path = "support/figure.rs"]
mod figure;
#[path = "support/scripted.rs"]
mod scripted;

const RUNS: usize = 100;
const WARMUP: usize = 5;

fn quantiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.50), at(0.95))
}

/// One chat turn whose model prepares an email; the proposal it leaves.
async fn proposal(hearth: &Hearth) -> ProposalView {
    let (_, mut events) = hearth.start_run(RunStartParams { thread_id: None, text: "Reply to the school.".into() }).await.unwrap();
    while events.recv().await.is_some() {}
    let mut waiting: Vec<ProposalView> =
        hearth.approval_list().await.unwrap().into_iter().filter(|p| p.status == ProposalStatus::AwaitingReview).collect();
    waiting.pop().expect("the turn left a proposal")
}

fn approve(proposal: &ProposalView) -> ApprovalDecideParams {
    ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Approve }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("load average before: {}", scripted::load_average());
    let email = r#"{"to":["alvarez@riverside-school.example"],"subject":"Re: visit","body":"The form is attached."}"#;
    let mut script = Script::new();
    for n in 0..2 * (RUNS + WARMUP) + 2 * RUNS {
        script = script.turn(Reply::new().tool_call(&format!("call-{n}"), "prepare_email", &[email]));
    }
    let (_server, _dir, hearth) = scripted::hearth_with_model(script).await;
    hearth.pairing_serve(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let offer =
        hearth.device_pair_offer(&DevicePairOfferParams { name: "Bench phone".into(), scopes: DeviceScopes::DEFAULT }).await.unwrap();
    let device = Companion::new(StaticKeypair::generate().unwrap(), CompanionConfig::default());
    let pairing = device.pair(&PairingOffer::parse(&offer.uri).unwrap(), "bench").await.unwrap();

    let mut connects = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        drop(device.connect(&pairing).await.unwrap());
        connects.push(started.elapsed());
    }
    let mut connection = device.connect(&pairing).await.unwrap();

    // An approval: from the device (request → the host's gate → Sent → the answer), and the
    // same in the host's own process, alternating so both meet the same database.
    let (mut remote, mut local) = (Vec::new(), Vec::new());
    for n in 0..(RUNS + WARMUP) {
        let sent_before = hearth.store().sent_messages().await.unwrap().len();
        let shown = proposal(&hearth).await;
        let started = Instant::now();
        let view = connection.request("approval_decide", serde_json::to_value(approve(&shown)).unwrap()).await.unwrap();
        let took = started.elapsed();
        assert_eq!(view["status"], json!("succeeded"));
        assert_eq!(hearth.store().sent_messages().await.unwrap().len(), sent_before + 1, "one Sent row per approval");
        let shown = proposal(&hearth).await;
        let started = Instant::now();
        let view = hearth.approval_decide(&approve(&shown)).await.unwrap();
        let took_here = started.elapsed();
        assert_eq!(view.status, ProposalStatus::Succeeded);
        if n >= WARMUP {
            remote.push(took);
            local.push(took_here);
        }
    }

    let mut requests = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        connection.request("app_info", serde_json::Value::Null).await.unwrap();
        requests.push(started.elapsed());
    }
    // A chat's first event: through the device (run_start, then the first pushed event of its
    // stream), and in the host's own process (start_run, then the first event off its stream).
    let (mut firsts, mut firsts_here) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let started = Instant::now();
        let client = connection.client();
        let request = client.reserve();
        client.request_as(request, "run_start", json!({"text": "Reply to the school."})).await.unwrap();
        let run = StreamId::opened_by(request);
        let mut first = None;
        loop {
            match connection.next_push().await {
                Some(Push::StreamEnd { stream }) if stream == run => break,
                Some(Push::Event { .. }) => {
                    first.get_or_insert_with(|| started.elapsed());
                }
                Some(_) => {}
                None => panic!("the connection ended"),
            }
        }
        firsts.push(first.expect("the run sent events"));
        let started = Instant::now();
        let (_, mut events) = hearth.start_run(RunStartParams { thread_id: None, text: "Reply to the school.".into() }).await.unwrap();
        events.recv().await.expect("the run sent events");
        firsts_here.push(started.elapsed());
        while events.recv().await.is_some() {}
    }

    let (remote50, remote95) = quantiles(remote);
    let (local50, local95) = quantiles(local);
    let (connect50, connect95) = quantiles(connects);
    let (request50, request95) = quantiles(requests);
    let (first50, first95) = quantiles(firsts);
    let (here50, here95) = quantiles(firsts_here);
    println!("approval from the device → Sent row: p50 {remote50:.2} ms, p95 {remote95:.2} ms ({RUNS} runs)");
    println!("approval in the host's process → Sent row: p50 {local50:.2} ms, p95 {local95:.2} ms ({RUNS} runs)");
    println!("session handshake (IK + hello): p50 {connect50:.2} ms, p95 {connect95:.2} ms");
    println!("request round trip (app_info): p50 {request50:.3} ms, p95 {request95:.3} ms");
    println!("chat, send → first event on the device: p50 {first50:.2} ms, p95 {first95:.2} ms");
    println!("chat, send → first event in the host's process: p50 {here50:.2} ms, p95 {here95:.2} ms");
    figure::figure(
        "Approval from a paired device → the host's Sent row (loopback), p50 / p95",
        &format!("{remote50:.2} / {remote95:.2} ms"),
        &format!("the same approval in the host's process: {local50:.2} / {local95:.2} ms"),
        "under 200 ms p50",
    );
    figure::figure(
        "Chat from a paired device: send → first event on the device (loopback), p50 / p95",
        &format!("{first50:.2} / {first95:.2} ms"),
        &format!("the same in the host's process: {here50:.2} / {here95:.2} ms"),
        "the device adds under 50 ms p50",
    );
    figure::figure(
        "Request round trip from a paired device (app_info, loopback), p50 / p95",
        &format!("{request50:.3} / {request95:.3} ms"),
        "none (the wire's own cost)",
        "no target (reported)",
    );
    println!("load average after: {}", scripted::load_average());
    hearth.shutdown().await;
}
