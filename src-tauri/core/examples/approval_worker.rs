//! An owner's approval carried out in its own process, for the approval crash tests (they
//! SIGKILL it part-way through, then restart Hearth on the same data).
//!
//! `approval_worker <data dir> <proposal id> <hash> <stage>` approves the proposal; at
//! `stage` (`claimed`: claimed, not yet carried out; `settled`: carried out and its receipt
//! recorded, the task not yet released; `leaving`: approved, waiting out an undo window) it
//! prints `AT_STAGE` and hangs until killed. If the approval ends before reaching the stage,
//! it prints `DECIDED <what happened>` and exits 1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use hearth_core::approvals::{DecideHook, DecideStage};
use hearth_core::{Config, Hearth};
use hearth_protocol::approvals::{ApprovalDecideParams, Decision};
use hearth_protocol::ids::ProposalId;

/// The line the parent waits for before it kills this process.
const MARKER: &str = "AT_STAGE";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(data), Some(proposal_id), Some(hash), Some(stage)) = (args.next(), args.next(), args.next(), args.next()) else {
        eprintln!("usage: approval_worker <data dir> <proposal id> <hash> <claimed|settled>");
        std::process::exit(2);
    };
    let Ok(proposal_id) = ProposalId::parse(proposal_id) else {
        eprintln!("approval_worker: the proposal id is not a valid id");
        std::process::exit(2);
    };
    // `leaving`: approved with an undo window of an hour, and killed inside it.
    let target = match stage.as_str() {
        "claimed" => Some(DecideStage::Claimed),
        "settled" => Some(DecideStage::Settled),
        "leaving" => None,
        other => {
            eprintln!("approval_worker: unknown stage {other:?}; use claimed, settled or leaving");
            std::process::exit(2);
        }
    };
    let mut config = Config::new(PathBuf::from(data));
    config.start_workers = false;
    config.undo_window = if target.is_none() { std::time::Duration::from_secs(3600) } else { std::time::Duration::ZERO };
    let hearth = Hearth::open(config).await.unwrap();
    let hook: DecideHook = Arc::new(move |stage: DecideStage| {
        Box::pin(async move {
            if Some(stage) == target {
                announce();
                std::future::pending::<()>().await;
            }
        })
    });
    hearth.approvals().set_decide_hook(Some(hook));
    let decided = hearth.approval_decide(&ApprovalDecideParams { proposal_id, hash, decision: Decision::Approve }).await;
    if target.is_none() && decided.as_ref().is_ok_and(|view| view.status == hearth_protocol::approvals::ProposalStatus::Leaving) {
        announce();
        std::future::pending::<()>().await;
    }
    // Reaching here means the approval never got to the stage.
    let mut out = std::io::stdout();
    writeln!(out, "DECIDED {decided:?}").unwrap();
    out.flush().unwrap();
    std::process::exit(1);
}

fn announce() {
    let mut out = std::io::stdout();
    writeln!(out, "{MARKER}").unwrap();
    out.flush().unwrap();
}
