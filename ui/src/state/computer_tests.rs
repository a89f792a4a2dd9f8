#![allow(clippy::unwrap_used)]

use hearth_protocol::computer::OutputStream;

use super::*;

fn receipt(status: CommandStatus, stdout: &str, stderr: &str) -> CommandReceipt {
    CommandReceipt {
        status,
        exit_code: Some(if status == CommandStatus::Succeeded { 0 } else { 2 }),
        stdout: stdout.into(),
        stderr: stderr.into(),
        truncated: false,
        duration_ms: 1_234,
        note: None,
    }
}

fn chunk(text: &str) -> CommandOutput {
    CommandOutput { stream: OutputStream::Stdout, text: text.into() }
}

#[test]
fn output_arrives_into_the_running_run_only() {
    let mut runs = vec![TerminalRun::started("a".into(), "ls".into()), TerminalRun::started("b".into(), "pwd".into())];
    push_output(&mut runs, "b", &chunk("/work"));
    push_output(&mut runs, "b", &chunk("space\n"));
    assert_eq!(runs[1].live, "/workspace\n");
    assert_eq!(runs[0].live, "");
    settle(&mut runs, "b", Ok(ComputerRunResponse::Finished { receipt: receipt(CommandStatus::Succeeded, "/workspace\n", "") }));
    // A chunk after the answer changes nothing.
    push_output(&mut runs, "b", &chunk("late"));
    assert_eq!(runs[1].live, "/workspace\n");
    assert!(!runs[1].is_running());
    assert!(runs[0].is_running());
}

#[test]
fn every_ending_is_told_apart() {
    let mut runs = vec![
        TerminalRun::started("a".into(), "x".into()),
        TerminalRun::started("b".into(), "y".into()),
        TerminalRun::started("c".into(), "z".into()),
    ];
    settle(&mut runs, "a", Ok(ComputerRunResponse::Finished { receipt: receipt(CommandStatus::Failed, "", "no") }));
    settle(&mut runs, "b", Ok(ComputerRunResponse::InDoubt { message: "stopped while running".into() }));
    settle(&mut runs, "c", Err("the computer is busy".into()));
    assert!(matches!(&runs[0].state, RunState::Finished(r) if r.status == CommandStatus::Failed));
    assert_eq!(runs[1].state, RunState::InDoubt("stopped while running".into()));
    assert_eq!(runs[2].state, RunState::Refused("the computer is busy".into()));
}

#[test]
fn receipts_read_in_words() {
    let mut r = receipt(CommandStatus::Succeeded, "out", "err\n");
    assert_eq!(summary(&r), "exit 0 · 1.2 s");
    assert_eq!(output_text(&r), "out\nerr\n");
    r.truncated = true;
    assert!(output_text(&r).ends_with("[output past 128 KiB was not kept]"));
    r.exit_code = None;
    r.duration_ms = 12;
    assert_eq!(summary(&r), "no exit code · 12 ms");
    for status in [CommandStatus::Succeeded, CommandStatus::Failed, CommandStatus::TimedOut, CommandStatus::Interrupted] {
        let wire = serde_json::to_value(status).unwrap();
        assert_eq!(wire.as_str().unwrap().replace('_', " "), status_label(status));
    }
}

fn call(status: ToolStatus, args: &str, result: Option<&str>) -> ToolCallView {
    ToolCallView {
        id: "c".into(),
        name: "run_computer_command".into(),
        args: args.into(),
        status,
        result: result.map(str::to_owned),
        live: String::new(),
    }
}

#[test]
fn the_command_card_reads_the_call() {
    let args = r#"{"command":"ls -la","operationId":"op"}"#;
    let running = command_card(&call(ToolStatus::Running, args, None)).unwrap();
    assert_eq!(running.command, "ls -la");
    assert!(running.running && running.receipt.is_none() && running.problem.is_none());

    let done = serde_json::to_string(&receipt(CommandStatus::Succeeded, "a\n", "")).unwrap();
    let finished = command_card(&call(ToolStatus::Complete, args, Some(&done))).unwrap();
    assert_eq!(finished.receipt.unwrap().stdout, "a\n");

    let refused = command_card(&call(ToolStatus::Error, args, Some(r#"{"error":"the computer is turned off"}"#))).unwrap();
    assert_eq!(refused.problem.as_deref(), Some("the computer is turned off"));
    assert!(!refused.in_doubt);
    let doubtful = command_card(&call(ToolStatus::Error, args, Some(r#"{"error":"stopped while running","inDoubt":true}"#))).unwrap();
    assert!(doubtful.in_doubt, "a command that may have run is not shown as refused");
    assert!(command_card(&call(ToolStatus::Running, "{\"comm", None)).is_none(), "half-streamed arguments: the generic card");
}

#[test]
fn paths_move_within_the_workspace() {
    assert_eq!(parent("/workspace/a/b"), "/workspace/a");
    assert_eq!(parent("/workspace/a"), "/workspace");
    assert_eq!(parent("/workspace"), "/workspace");
    assert_eq!(child("/workspace/", "x.txt"), "/workspace/x.txt");
    assert_eq!(child("/workspace/a", "b"), "/workspace/a/b");
}

#[test]
fn the_editor_knows_when_there_is_something_to_save() {
    let mut editing = Editing::open(WorkspaceFile { path: "/workspace/n".into(), content: "one".into() });
    assert!(!editing.is_changed());
    editing.text = "two".into();
    assert!(editing.is_changed());
    editing.saved("two".into());
    assert!(!editing.is_changed());
}
