#![allow(clippy::unwrap_used)]

use hearth_protocol::mcp::McpServerName;
use pretty_assertions::assert_eq;

use super::*;

fn stdio_form() -> McpForm {
    McpForm {
        name: " notes ".into(),
        command: " npx ".into(),
        args: "-y @acme/notes-mcp\n".into(),
        env: "# keys\nNOTES_KEY = s3cret=x\n\nLANG_X=fr\n".into(),
        ..McpForm::default()
    }
}

fn tool(policy: McpToolPolicy, read_only_hint: bool, destructive_hint: bool) -> McpToolView {
    McpToolView {
        name: "find".into(),
        description: "Finds notes".into(),
        read_only_hint,
        destructive_hint,
        policy,
        offered_as: Some("mcp__notes__find".into()),
        changed: false,
        fingerprint: "f1".into(),
    }
}

#[test]
fn a_stdio_form_sends_its_program_arguments_and_environment() {
    let params = stdio_form().params().unwrap();
    assert_eq!(params.name, "notes");
    let McpTransportInput::Stdio { command, args, env } = params.transport else { panic!("stdio") };
    assert_eq!(command, "npx");
    assert_eq!(args, ["-y", "@acme/notes-mcp"]);
    assert_eq!(env.get("NOTES_KEY").map(String::as_str), Some("s3cret=x"));
    assert_eq!(env.get("LANG_X").map(String::as_str), Some("fr"));
}

#[test]
fn arguments_on_several_lines_keep_their_spaces() {
    assert_eq!(split_args("--root\n/home/me/My Notes\n\n"), ["--root", "/home/me/My Notes"]);
    assert_eq!(split_args("  a  b "), ["a", "b"]);
    assert!(split_args(" \n ").is_empty());
}

#[test]
fn bad_input_is_refused_before_sending_and_no_secret_is_repeated() {
    let mut form = stdio_form();
    form.env = "TOKEN sekrit".into();
    let why = form.params().unwrap_err();
    assert!(why.contains("line 1") && !why.contains("sekrit"), "{why}");
    form.env = "1X=sekrit".into();
    assert!(!form.params().unwrap_err().contains("sekrit"));
    form.env = "A=1\nA=2".into();
    assert!(form.params().unwrap_err().contains("set twice"));
    form.env = String::new();
    form.name = "a__b".into();
    assert!(form.params().is_err());
    let form = McpForm { name: "x".into(), ..McpForm::default() };
    assert_eq!(form.params().unwrap_err(), "Say which program to start.");
    let form = McpForm { name: "x".into(), kind: McpKind::Http, url: "ftp://x".into(), ..McpForm::default() };
    assert!(form.params().is_err());
}

#[test]
fn an_http_form_sends_its_token_only_when_typed_and_clearing_keeps_the_kind() {
    let mut form = McpForm { name: "web".into(), kind: McpKind::Http, url: " https://x.example/mcp ".into(), ..McpForm::default() };
    assert_eq!(form.params().unwrap().transport, McpTransportInput::Http { url: "https://x.example/mcp".into(), bearer: None });
    form.bearer = "tok".into();
    assert_eq!(
        form.params().unwrap().transport,
        McpTransportInput::Http { url: "https://x.example/mcp".into(), bearer: Some("tok".into()) }
    );
    assert_eq!(form.cleared(), McpForm { kind: McpKind::Http, ..McpForm::default() });
    assert_eq!(McpKind::parse(McpKind::Http.slug()), McpKind::Http);
    assert_eq!(McpKind::parse("stdio"), McpKind::Stdio);
}

#[test]
fn transports_and_connections_read_in_plain_words() {
    let stdio =
        McpTransportView::Stdio { command: "npx".into(), args: vec!["-y".into(), "My Notes".into()], env_names: vec!["KEY".into()] };
    assert_eq!(transport_line(&stdio), "npx -y 'My Notes'");
    assert_eq!(transport_note(&stdio).as_deref(), Some("environment: KEY"));
    let http = McpTransportView::Http { url: "https://x.example/mcp".into(), has_bearer: true };
    assert_eq!(transport_line(&http), "https://x.example/mcp");
    assert_eq!(transport_note(&http).as_deref(), Some("token kept"));
    assert_eq!(transport_note(&McpTransportView::Http { url: String::new(), has_bearer: false }), None);

    let connected = McpConnection::Connected { protocol_version: "2025-11-25".into(), server: "notes 1.0".into() };
    assert_eq!(connection_label(&connected), "Connected · MCP 2025-11-25 · notes 1.0");
    assert_eq!(connection_slug(&connected), "connected");
    assert_eq!(connection_label(&McpConnection::Idle), "Not started");
    assert_eq!(connection_label(&McpConnection::Off), "Off");
    let failed = McpConnection::Failed { error: "The program was not found.".into(), retry_in_s: 90 };
    assert_eq!(connection_label(&failed), "Failed: The program was not found. · tried again in 2 min");
    let failed = McpConnection::Failed { error: "x".into(), retry_in_s: 0 };
    assert_eq!(connection_label(&failed), "Failed: x · tried again when next needed");
}

#[test]
fn only_an_allowed_read_only_tool_runs_on_its_own() {
    assert_eq!(policy_effect(&tool(McpToolPolicy::Allowed, true, false)), "Runs on its own (the server marks it read-only).");
    assert_eq!(policy_effect(&tool(McpToolPolicy::Allowed, false, true)), "Each call waits for your approval.");
    assert_eq!(policy_effect(&tool(McpToolPolicy::Ask, true, false)), "Each call waits for your approval.");
    assert_eq!(policy_effect(&tool(McpToolPolicy::Off, true, false)), "Not offered to the model.");
    assert_eq!(tool_badges(&tool(McpToolPolicy::Off, false, true)), [("may-change", "may change things")]);
    assert_eq!(tool_badges(&tool(McpToolPolicy::Off, true, false)), [("read-only", "read-only")]);
    assert_eq!(POLICIES.map(|p| McpToolPolicy::parse(p.as_str())), POLICIES.map(Some));
}

#[test]
fn an_answer_replaces_its_server_or_is_added() {
    let server = |name: &str, enabled: bool| McpServerView {
        name: McpServerName::parse(name).unwrap(),
        transport: McpTransportView::Http { url: "http://127.0.0.1:1/".into(), has_bearer: false },
        enabled,
        connection: McpConnection::Idle,
        tools: Vec::new(),
    };
    let mut list = vec![server("a", true), server("b", true)];
    merge_server(&mut list, server("a", false));
    merge_server(&mut list, server("c", true));
    assert_eq!(list, [server("a", false), server("b", true), server("c", true)]);
}

#[test]
fn a_result_reads_as_text_a_table_or_raw() {
    assert_eq!(read_result(r#"{"result":"Three notes found."}"#), McpResult::Text("Three notes found.".into()));
    let table = McpResult::Table {
        columns: vec!["id".into(), "title".into(), "done".into()],
        rows: vec![vec!["1".into(), "Milk".into(), String::new()], vec!["2".into(), String::new(), "true".into()]],
        more: 0,
    };
    assert_eq!(read_result(r#"{"result":"[{\"id\":1,\"title\":\"Milk\"},{\"id\":2,\"done\":true}]"}"#), table);
    assert_eq!(read_result(r#"[{"id":1,"title":"Milk"},{"id":2,"done":true}]"#), table);
    assert_eq!(read_result(r#"[{"a":{"nested":1}}]"#), McpResult::Raw(r#"[{"a":{"nested":1}}]"#.into()));
    assert_eq!(read_result("[]"), McpResult::Raw("[]".into()));
    assert_eq!(read_result("not json"), McpResult::Raw("not json".into()));
    let many = format!("[{}]", vec![r#"{"n":1}"#; MAX_TABLE_ROWS + 3].join(","));
    let McpResult::Table { rows, more, .. } = read_result(&many) else { panic!("table") };
    assert_eq!((rows.len(), more), (MAX_TABLE_ROWS, 3));
}

#[test]
fn a_result_says_when_the_server_marked_it_an_error_or_it_was_cut_short() {
    let text = r#"{"server":"notes","tool":"find","note":"data","result":"nope","isError":true,"truncated":true}"#;
    assert_eq!(read_result(text), McpResult::Text("nope".into()));
    assert_eq!(result_marks(text).len(), 2);
    assert!(result_marks(r#"{"result":"ok","isError":false,"truncated":false}"#).is_empty());
    assert!(result_marks("not json").is_empty());
}
