//! A scripted corpus: one conversation per chat tool (and a few with several), each played
//! through the real OpenAI Chat client against the scripted server. Every stream passes the
//! AG-UI verifier, and every tool result reaches the model in the next request.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::Hearth;
use hearth_core::providers::{OpenAiChat, ProviderConfig, RetryPolicy};
use hearth_protocol::agui::verify::verify_all;
use hearth_testkit::model_server::{ModelServer, Reply, Script, ScriptedCall};
use serde_json::{Value, json};

use super::support::{collect, fast_config, start};

/// (what the owner says, the calls of the model's first turn as (tool, arguments)).
fn corpus(file_id: &str) -> Vec<(&'static str, Vec<(&'static str, Value)>)> {
    vec![
        ("any mail from school?", vec![("search_mail", json!({ "query": "permission" }))]),
        ("read the school thread", vec![("read_mail_thread", json!({ "threadId": "thr-school" }))]),
        (
            "what's on this week?",
            vec![("read_calendar", json!({ "timeMin": "2026-11-30T00:00:00+01:00", "timeMax": "2026-12-07T00:00:00+01:00" }))],
        ),
        (
            "reply to the school",
            vec![("prepare_email", json!({ "to": ["alvarez@riverside-school.example"], "subject": "Re: visit", "body": "Thanks!" }))],
        ),
        (
            "book the garden visit",
            vec![(
                "prepare_event",
                json!({ "title": "Garden visit", "start": "2026-12-03T09:00:00+01:00", "end": "2026-12-03T12:00:00+01:00", "timeZone": "Europe/Paris" }),
            )],
        ),
        ("save the form", vec![("import_pdf", json!({ "attachmentId": "att-permission-form" }))]),
        ("what fields are on it?", vec![("inspect_pdf", json!({ "fileId": file_id }))]),
        (
            "fill it for Léa",
            vec![("fill_pdf", json!({ "fileId": file_id, "values": { "participant_name": "Léa Martin", "permission_granted": true } }))],
        ),
        ("find me a plumber over the week", vec![("delegate_task", json!({ "title": "Find a plumber", "instructions": "Two quotes." }))]),
        ("how are my tasks?", vec![("agent_status", json!({}))]),
        ("what's in my workspace?", vec![("read_workspace", json!({}))]),
        ("plan it", vec![("set_plan", json!({ "steps": ["One"] }))]),
        ("save notes", vec![("save_artifact", json!({ "name": "notes.txt", "content": "x" }))]),
        ("ask me something", vec![("ask_user", json!({ "question": "Which day?" }))]),
        ("finish up", vec![("finish_task", json!({ "result": "Done." }))]),
        (
            "search and read",
            vec![("search_mail", json!({ "query": "dentist" })), ("read_mail_thread", json!({ "threadId": "thr-dentist" }))],
        ),
        (
            "calendar and workspace",
            vec![
                ("read_calendar", json!({ "timeMin": "2026-12-01T00:00:00Z", "timeMax": "2026-12-02T00:00:00Z" })),
                ("read_workspace", json!({})),
            ],
        ),
        ("mail with a typo", vec![("search_mail", json!({ "qeury": "oops" }))]),
        ("a tool that does not exist", vec![("launch_rockets", json!({}))]),
        (
            "propose then search",
            vec![
                ("prepare_email", json!({ "to": ["a@b.example"], "subject": "Hi", "body": "Hello" })),
                ("search_mail", json!({ "query": "x" })),
            ],
        ),
        ("status twice", vec![("agent_status", json!({})), ("agent_status", json!({}))]),
        // The computer is off here (its own tests run it): each call still answers the model.
        ("is the computer on?", vec![("computer_status", json!({}))]),
        ("start the computer", vec![("start_computer", json!({}))]),
        ("stop the computer", vec![("stop_computer", json!({}))]),
        ("run ls", vec![("run_computer_command", json!({ "command": "ls", "operationId": "ls-1" }))]),
        ("list the workspace", vec![("list_computer_files", json!({ "path": "/workspace" }))]),
        ("read notes", vec![("read_computer_file", json!({ "path": "/workspace/notes.txt" }))]),
        ("write notes", vec![("write_computer_file", json!({ "path": "/workspace/notes.txt", "content": "hi" }))]),
        ("make a folder", vec![("mkdir_computer", json!({ "path": "/workspace/src" }))]),
        ("put the form in the computer", vec![("import_computer_pdf", json!({ "fileId": file_id, "path": "/workspace/form.pdf" }))]),
        ("bring the form back", vec![("export_computer_pdf", json!({ "path": "/workspace/form.pdf" }))]),
        // Addresses the policy refuses (no network here): each call still answers the model.
        ("open the router page", vec![("browse_web", json!({ "url": "http://192.168.1.1/" }))]),
        ("read the metadata page", vec![("read_web", json!({ "url": "http://169.254.169.254/latest" }))]),
        ("what can I click?", vec![("page_elements", json!({}))]),
        // This model reads no images: it is told so, and no picture is taken.
        ("how does the page look?", vec![("look_page", json!({}))]),
        ("click the first button", vec![("page_act", json!({ "ref": "000000000000:0", "action": "click", "operationId": "click-1" }))]),
        ("save the PDF it downloaded", vec![("save_download", json!({ "downloadId": "0b5a3d2e-9c1f-4e7a-8d6b-2f4c1a9e7d30" }))]),
        // No page is open: the model is told so, and nothing is prepared.
        ("send the form for review", vec![("prepare_form_submission", json!({ "ref": "000000000000:0", "gesture": "click" }))]),
        // Issue 14's tools.
        (
            "remind me every morning",
            vec![(
                "schedule_task",
                json!({ "title": "Check the garden", "repeat": { "every": "week", "days": ["monday"], "at": "08:00" }, "timeZone": "UTC" }),
            )],
        ),
        ("watch the router page", vec![("watch_page", json!({ "title": "Router", "url": "http://192.168.1.1/", "condition": "change" }))]),
        ("I want to run a marathon", vec![("create_goal", json!({ "title": "Marathon", "milestones": ["10 km"] }))]),
        ("remember I'm vegetarian", vec![("remember_fact", json!({ "text": "The owner is vegetarian." }))]),
        ("tea or coffee?", vec![("present_choices", json!({ "question": "Which?", "options": ["Tea", "Coffee"] }))]),
        (
            "summarize this statement",
            vec![("summarize_statement", json!({ "csv": "date,description,amount\n2026-11-01,Pay,100.10\n2026-11-02,Tea,-0.20" }))],
        ),
        ("what do my notes say about the permission form?", vec![("search_documents", json!({ "query": "permission form" }))]),
        // A query the search page cannot take: the model hears why, and no page is opened.
        ("search the web for nothing", vec![("search_web", json!({ "query": "   " }))]),
    ]
}

#[tokio::test]
async fn every_chat_tool_runs_verified_and_its_result_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let base = Hearth::open(fast_config(dir.path())).await.unwrap();
    // A file to inspect and fill, imported the way import_pdf does it.
    let (info, bytes) = base.mail().fetch_attachment("att-permission-form").await.unwrap();
    let file = base.files().import("corpus-form", bytes, &info.filename, &info.id).await.unwrap();
    let conversations = corpus(&file.id);
    assert!(conversations.len() >= 20);
    let mut used = std::collections::BTreeSet::new();
    for (n, (said, calls)) in conversations.into_iter().enumerate() {
        let scripted: Vec<ScriptedCall> =
            calls.iter().enumerate().map(|(i, (tool, args))| ScriptedCall::new(&format!("c{n}-{i}"), tool, &[&args.to_string()])).collect();
        let server = ModelServer::start(Script::new().turn(Reply::new().parallel_tool_calls(scripted)).turn(Reply::new().text(&["Done."])))
            .await
            .unwrap();
        let config = ProviderConfig::new("Scripted", server.base_url(), None).with_retry(RetryPolicy {
            max_retries: 0,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        });
        let hearth = base.clone().with_model(Arc::new(OpenAiChat::new(&config).unwrap()), "scripted-model");
        let (_, _, events) = start(&hearth, None, said).await;
        let events = collect(events).await;
        verify_all(&events).unwrap_or_else(|err| panic!("{said:?}: the stream breaks the AG-UI rules: {err}"));
        let requests = server.requests();
        // A proposal or a question ends the run for the owner; otherwise the model hears back.
        let settles = calls
            .iter()
            .any(|(tool, _)| matches!(*tool, "prepare_email" | "prepare_event" | "ask_user" | "finish_task" | "present_choices"));
        if settles {
            assert_eq!(requests.len(), 1, "{said:?}: the run waits for the owner");
        } else {
            assert_eq!(requests.len(), 2, "{said:?}");
            let tool_messages: Vec<&Value> =
                requests[1].body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
            assert_eq!(tool_messages.len(), calls.len(), "{said:?}: every result went back");
            for (i, message) in tool_messages.iter().enumerate() {
                assert_eq!(message["tool_call_id"], format!("c{n}-{i}"), "{said:?}: in order");
                assert!(!message["content"].as_str().unwrap_or_default().is_empty());
            }
        }
        for (tool, _) in &calls {
            used.insert(*tool);
        }
    }
    for spec in hearth_core::tools::tool_specs(hearth_core::tools::Vision::Images) {
        assert!(used.contains(spec.name.as_str()), "the corpus never uses {}", spec.name);
    }
}
