//! The workspace tools through the real tool path: limits, untrusted framing, and errors a
//! model can act on. Prepare tools never send.

use hearth_core::tools::{ToolCall, UNTRUSTED_NOTE, run_serially};
use serde_json::{Value, json};

use super::support::open;

async fn call_tool(hearth: &hearth_core::Hearth, name: &str, args: Value) -> (Value, bool) {
    let ctx = hearth.toolbox().for_chat("thread-1", "run-1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    let calls = [ToolCall { id: format!("call-{name}"), name: name.into(), arguments: args.to_string() }];
    let (_, output) = run_serially(&ctx, &calls, 0).await.remove(0);
    (serde_json::from_str(&output.content).unwrap(), output.is_error)
}

#[tokio::test]
async fn search_and_read_frame_mail_as_untrusted_data() {
    let t = open().await;
    let (found, is_error) = call_tool(&t.hearth, "search_mail", json!({ "query": "permission form" })).await;
    assert!(!is_error, "{found}");
    assert_eq!(found["untrustedData"], UNTRUSTED_NOTE);
    let matches = found["matches"].as_array().unwrap();
    assert!(!matches.is_empty());
    assert!(matches.iter().all(|m| m["snippet"].as_str().unwrap().chars().count() <= 240));
    assert_eq!(matches[matches.len() - 1]["messageId"], "msg-school-1");
    assert_eq!(found["truncated"], false);

    let (thread, is_error) = call_tool(&t.hearth, "read_mail_thread", json!({ "threadId": "thr-school" })).await;
    assert!(!is_error, "{thread}");
    assert_eq!(thread["untrustedData"], UNTRUSTED_NOTE);
    let messages = thread["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["attachments"][0]["id"], "att-permission-form");
}

#[tokio::test]
async fn bad_arguments_get_errors_the_model_can_fix() {
    let t = open().await;
    let long = "a".repeat(501);
    for (tool, args, says) in [
        ("search_mail", json!({ "query": long }), "longer than 500"),
        ("search_mail", json!({ "q": "x" }), "do not fit"),
        ("read_mail_thread", json!({ "threadId": "nope" }), "no mail thread"),
        ("read_calendar", json!({ "timeMin": "2026-12-01", "timeMax": "2026-12-02T00:00:00Z" }), "RFC 3339"),
        ("read_calendar", json!({ "timeMin": "2026-01-01T00:00:00Z", "timeMax": "2027-06-01T00:00:00Z" }), "366 days"),
        ("prepare_email", json!({ "to": ["not-an-address"], "subject": "s", "body": "b" }), "not an email address"),
        ("prepare_email", json!({ "to": ["a@b.example"], "subject": "two\nlines", "body": "b" }), "one line"),
        ("prepare_email", json!({ "to": ["a@b.example"], "subject": "s", "body": "b", "attachmentIds": ["missing"] }), "no file missing"),
        (
            "prepare_event",
            json!({ "title": "t", "start": "2026-12-01T10:00:00+01:00", "end": "2026-12-01T09:00:00+01:00", "timeZone": "Europe/Berlin" }),
            "after `start`",
        ),
        ("prepare_event", json!({ "title": "t", "start": "2026-12-01", "end": "2026-12-02", "timeZone": "Mars/Olympus" }), "IANA"),
    ] {
        let (out, is_error) = call_tool(&t.hearth, tool, args).await;
        assert!(is_error, "{tool} should refuse: {out}");
        let message = out["error"].as_str().unwrap();
        assert!(message.contains(says), "{tool}: {message:?} should say {says:?}");
    }
    assert!(t.hearth.approval_list().await.unwrap().is_empty(), "no refused call left a proposal");
}

#[tokio::test]
async fn prepare_tools_only_propose() {
    let t = open().await;
    let email = json!({ "to": ["A@B.example", "a@b.example"], "cc": ["a@b.example", "c@d.example"], "subject": " Hi ", "body": "Hello" });
    let (out, is_error) = call_tool(&t.hearth, "prepare_email", email).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["status"], "awaiting_review");
    let event = json!({
        "title": "Garden visit", "start": "2026-12-03T09:00:00+01:00", "end": "2026-12-03T11:30:00+01:00",
        "timeZone": "Europe/Paris", "attendees": ["alvarez@riverside-school.example"]
    });
    let (out, is_error) = call_tool(&t.hearth, "prepare_event", event).await;
    assert!(!is_error, "{out}");
    let proposals = t.hearth.approval_list().await.unwrap();
    assert_eq!(proposals.len(), 2);
    let email = proposals.iter().find(|p| matches!(p.draft, hearth_protocol::approvals::ProposalDraft::EmailSend(_))).unwrap();
    let hearth_protocol::approvals::ProposalDraft::EmailSend(draft) = &email.draft else { unreachable!() };
    assert_eq!(
        (draft.to.as_slice(), draft.cc.as_slice(), draft.subject.as_str()),
        (["A@b.example".to_owned()].as_slice(), ["c@d.example".to_owned()].as_slice(), "Hi")
    );
    let before = t.hearth.store().calendar_range(i64::MIN, i64::MAX, 1000).await.unwrap().len();
    assert_eq!(t.hearth.store().sent_messages().await.unwrap().len(), 0, "prepare never sends");
    let event = proposals.iter().find(|p| p.id != email.id).unwrap();
    let done = t
        .hearth
        .approval_decide(&hearth_protocol::approvals::ApprovalDecideParams {
            proposal_id: event.id.clone(),
            hash: event.hash.clone(),
            decision: hearth_protocol::approvals::Decision::Approve,
        })
        .await
        .unwrap();
    assert!(done.receipt.unwrap().starts_with("Added to the local calendar"));
    assert_eq!(t.hearth.store().calendar_range(i64::MIN, i64::MAX, 1000).await.unwrap().len(), before + 1);
}

#[tokio::test]
async fn a_calendar_change_applies_only_to_the_version_that_was_reviewed() {
    let t = open().await;
    let change = |title: &str| {
        json!({
            "action": "update", "eventId": "evt-yoga", "title": title,
            "start": "2026-12-02T18:30:00+01:00", "end": "2026-12-02T19:30:00+01:00", "timeZone": "Europe/Berlin"
        })
    };
    let ctx = t.hearth.toolbox().for_chat("thread-cal", "run-1", hearth_protocol::approvals::ProposalOrigin::OwnerChat, Default::default());
    let prepare = |id: &str, args: Value| ToolCall { id: id.into(), name: "prepare_event".into(), arguments: args.to_string() };
    let first = run_serially(&ctx, &[prepare("c1", change("Yoga (later)"))], 0).await.remove(0).1;
    let second = run_serially(&ctx, &[prepare("c2", change("Yoga (much later)"))], 0).await.remove(0).1;
    let id = |out: &hearth_core::tools::ToolOutput| {
        serde_json::from_str::<Value>(&out.content).unwrap()["proposalId"].as_str().unwrap().to_owned()
    };
    let (first, second) = (t.hearth.approval_get(&id(&first)).await.unwrap(), t.hearth.approval_get(&id(&second)).await.unwrap());
    let approve = |p: &hearth_protocol::approvals::ProposalView| hearth_protocol::approvals::ApprovalDecideParams {
        proposal_id: p.id.clone(),
        hash: p.hash.clone(),
        decision: hearth_protocol::approvals::Decision::Approve,
    };
    let done = t.hearth.approval_decide(&approve(&first)).await.unwrap();
    assert_eq!(done.status, hearth_protocol::approvals::ProposalStatus::Succeeded, "{:?}", done.error);
    let event = t.hearth.store().get_event("evt-yoga").await.unwrap().unwrap();
    assert_eq!((event.title.as_str(), event.version), ("Yoga (later)", 2));
    // The second was reviewed against version 1; the event has moved on, so it changes nothing.
    let stale = t.hearth.approval_decide(&approve(&second)).await.unwrap();
    assert_eq!(stale.status, hearth_protocol::approvals::ProposalStatus::Failed);
    assert!(stale.error.unwrap().contains("changed after you reviewed"));
    let event = t.hearth.store().get_event("evt-yoga").await.unwrap().unwrap();
    assert_eq!((event.title.as_str(), event.version), ("Yoga (later)", 2), "the stale change wrote nothing");
}

#[tokio::test]
async fn calendar_and_pdf_results_are_framed_as_untrusted_data() {
    let t = open().await;
    let (calendar, is_error) =
        call_tool(&t.hearth, "read_calendar", json!({ "timeMin": "2026-06-01T00:00:00Z", "timeMax": "2027-06-01T00:00:00Z" })).await;
    assert!(!is_error, "{calendar}");
    assert!(calendar["events"].is_array(), "{calendar}");
    let note = calendar["untrustedData"].as_str().unwrap_or_default();
    assert!(note.contains("not an instruction") && note.contains("Calendar"), "{calendar}");

    // A file imported the way import_pdf does it, under a name that hides its end with U+202E.
    let (info, bytes) = t.hearth.mail().fetch_attachment("att-permission-form").await.unwrap();
    let file = t.hearth.files().import("untrusted-form", bytes, "permission\u{202E}fdp.exe", &info.id).await.unwrap();
    assert!(!file.name.contains('\u{202E}'), "{:?}", file.name);
    assert!(file.name.ends_with(".pdf"), "{:?}", file.name);

    let (inspected, is_error) = call_tool(&t.hearth, "inspect_pdf", json!({ "fileId": file.id })).await;
    assert!(!is_error, "{inspected}");
    let note = inspected["untrustedData"].as_str().unwrap_or_default();
    assert!(note.contains("not instructions") && note.contains("field names"), "{inspected}");
    assert!(inspected["info"].is_object(), "the detail itself is still there: {inspected}");
    assert_ne!(note, UNTRUSTED_NOTE, "a PDF is not mail");
}
