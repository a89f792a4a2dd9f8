#![allow(clippy::unwrap_used)]

use hearth_protocol::approvals::{ProposalKind, ProposalStatus};
use hearth_protocol::files::FileSource;
use pretty_assertions::assert_eq;

use super::*;

fn call(name: &str, status: ToolStatus, result: Option<&str>) -> ToolCallView {
    ToolCallView {
        id: "call-1".into(),
        name: name.into(),
        args: "{}".into(),
        status,
        result: result.map(str::to_owned),
        live: String::new(),
    }
}

const FILE: &str = r#"{"id":"f2","name":"form (filled).pdf","size":4096,"pages":2,"fields":5,
    "source":"filled","parentId":"f1","parentName":"form.pdf","sha256":"00","createdAt":7}"#;

#[test]
fn a_prepare_result_becomes_an_approval_card() {
    let result = r#"{"proposalId":"p1","kind":"email.send","status":"awaiting_review","note":"Nothing was sent."}"#;
    let prepared = prepared(&call("prepare_email", ToolStatus::Complete, Some(result))).unwrap();
    assert_eq!(prepared.proposal_id, "p1");
    assert_eq!(prepared.kind, ProposalKind::EmailSend);
    assert_eq!(prepared.status, ProposalStatus::AwaitingReview);
}

#[test]
fn a_held_call_of_any_tool_becomes_its_approval_card_and_a_prepare_does_not_count_as_held() {
    let result = r#"{"proposalId":"p9","kind":"agent.call","status":"awaiting_review","note":"Nothing has been sent or changed."}"#;
    let held_call = held(&call("schedule_task", ToolStatus::Complete, Some(result))).unwrap();
    assert_eq!((held_call.proposal_id.as_str(), held_call.kind), ("p9", ProposalKind::HeldCall));
    let email = r#"{"proposalId":"p1","kind":"email.send","status":"awaiting_review","note":"Nothing was sent."}"#;
    assert_eq!(held(&call("prepare_email", ToolStatus::Complete, Some(email))), None);
}

#[test]
fn bad_or_missing_results_fall_back_to_the_generic_card() {
    for result in [None, Some(""), Some("not json"), Some("{}"), Some(r#"{"proposalId":42}"#), Some("[1,2]")] {
        assert_eq!(prepared(&call("prepare_email", ToolStatus::Complete, result)), None, "{result:?}");
        assert_eq!(mail_search(&call("search_mail", ToolStatus::Complete, result)), None, "{result:?}");
        assert_eq!(file_made(&call("import_pdf", ToolStatus::Complete, result)), None, "{result:?}");
    }
}

#[test]
fn a_running_or_failed_call_keeps_the_generic_card() {
    let result = r#"{"proposalId":"p1","kind":"email.send","status":"awaiting_review","note":""}"#;
    assert_eq!(prepared(&call("prepare_email", ToolStatus::Running, Some(result))), None);
    assert_eq!(prepared(&call("prepare_email", ToolStatus::Error, Some(result))), None);
}

#[test]
fn mail_results_parse_with_their_optional_parts_missing() {
    let search = r#"{"query":"permission","matches":[{"messageId":"m1","threadId":"t1","from":"school@example.org",
        "subject":"Trip","snippet":"Please sign","sentAt":5}],"truncated":false}"#;
    let found = mail_search(&call("search_mail", ToolStatus::Complete, Some(search))).unwrap();
    assert_eq!(found.matches[0].attachments, 0);

    let thread = r#"{"threadId":"t1","messages":[{"id":"m1","from":"school@example.org","to":["me@example.org"],
        "subject":"Trip","body":"<script>alert(1)</script>","sentAt":5,"folder":"inbox"}],"truncated":false}"#;
    let read = mail_thread(&call("read_mail_thread", ToolStatus::Complete, Some(thread))).unwrap();
    assert_eq!(read.messages[0].body, "<script>alert(1)</script>", "kept as text; the card renders it as text");
    assert!(read.messages[0].attachments.is_empty());
}

#[test]
fn file_tools_all_give_the_file() {
    let made = file_made(&call("fill_pdf", ToolStatus::Complete, Some(FILE))).unwrap();
    assert_eq!(made.source, FileSource::Filled);
    assert_eq!(made.parent_name.as_deref(), Some("form.pdf"));

    let detail = format!(r#"{{"file":{FILE},"info":{{"pages":2,"fields":[{{"name":"a","kind":"text","page":1}}]}}}}"#);
    assert_eq!(file_inspected(&call("inspect_pdf", ToolStatus::Complete, Some(&detail))), Some(made));
    assert_eq!(file_inspected(&call("inspect_pdf", ToolStatus::Complete, Some(FILE))), None, "a bare file is not a detail");
}

#[test]
fn a_page_result_gives_the_browser_card_and_its_meta_line() {
    let page = r#"{"finalUrl":"https://shop.example/prices?x=1","title":"Prices","text":"a","truncated":true,
        "screenshotId":"0123456789abcdef0123456789abcdef","profile":"thread-t1","restarted":true,"untrustedData":"…"}"#;
    let seen = page_seen(&call("browse_web", ToolStatus::Complete, Some(page))).unwrap();
    assert_eq!(seen.screenshot_id.as_deref(), Some("0123456789abcdef0123456789abcdef"));
    let meta = page_meta(&seen);
    assert!(meta.starts_with("shop.example/prices?x=1"), "{meta}");
    assert!(meta.contains("cut") && meta.contains("started again"), "{meta}");
    assert_eq!(page_seen(&call("browse_web", ToolStatus::Error, Some(page))), None);
    assert_eq!(page_seen(&call("browse_web", ToolStatus::Complete, Some(r#"{"error":"refused"}"#))), None);
}

#[test]
fn a_page_act_receipt_says_what_it_did_and_where_the_page_went() {
    let receipt = r#"{"action":"click","ref":"a1b2c3d4e5f6:3","role":"button","name":"Add","urlBefore":"http://a.example/","urlAfter":"http://a.example/done","titleAfter":"Done"}"#;
    let acted = page_acted(&call("page_act", ToolStatus::Complete, Some(receipt))).unwrap();
    assert_eq!(act_line(&acted), "Clicked button \"Add\" → http://a.example/done");
    let stayed = r#"{"action":"type","ref":"a1b2c3d4e5f6:1","role":"textbox","name":"","urlBefore":"http://a.example/","urlAfter":"http://a.example/","titleAfter":""}"#;
    assert_eq!(act_line(&page_acted(&call("page_act", ToolStatus::Complete, Some(stayed))).unwrap()), "Typed into a textbox");
}

#[test]
fn a_download_says_what_became_of_it() {
    let page = r#"{"finalUrl":"https://a.example/r.pdf","title":"","text":"","truncated":false,"screenshotId":null,
        "profile":"thread-t1","restarted":false,"untrustedData":"…",
        "download":{"id":"9f0e","name":"report.pdf","bytes":2048,"status":{"state":"ready"}}}"#;
    let seen = page_seen(&call("browse_web", ToolStatus::Complete, Some(page))).unwrap();
    let download = seen.download.unwrap();
    assert_eq!(download_line(&download), "Download report.pdf: downloaded, 2 KiB: ready to save into Files");
    let refused = r#"{"action":"click","ref":"a1b2c3d4e5f6:3","role":"link","name":"Get","urlBefore":"http://a.example/","urlAfter":"http://a.example/","titleAfter":"",
        "download":{"id":"77","name":"tool.exe","bytes":5000,"status":{"state":"refused","reason":"not_pdf"}}}"#;
    let acted = page_acted(&call("page_act", ToolStatus::Complete, Some(refused))).unwrap();
    let line = download_line(acted.download.as_ref().unwrap());
    assert!(line.starts_with("Download tool.exe: refused") && line.contains("PDF downloads only"), "{line}");
}

#[test]
fn a_search_result_becomes_a_search_card_saying_what_was_left_out() {
    let result = r#"{"query":"tides","searchPage":"https://html.duckduckgo.com/html/?q=tides","results":[
        {"title":"Harbour","url":"https://tides.example/","snippet":"High water"}],"leftOut":3,"refused":2,
        "untrustedData":"data"}"#;
    let found = search_results(&call("search_web", ToolStatus::Complete, Some(result))).unwrap();
    assert_eq!(found.results[0].url, "https://tides.example/");
    assert_eq!(search_meta(&found), "1 result · 3 more not read · 2 left out: on this machine or a private network");
    assert!(search_results(&call("search_web", ToolStatus::Running, Some(result))).is_none());
    let none = hearth_protocol::web_search::SearchResultsView { results: Vec::new(), left_out: 0, refused: 0, ..found };
    assert_eq!(search_meta(&none), "No results");
}
