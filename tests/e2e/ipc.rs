//! The IPC boundary of the real app: malformed payloads get typed errors, and commands the
//! window's capability does not grant are refused.

use hearth_testkit::TestHome;

use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_payloads_get_typed_errors_and_ungranted_commands_are_refused() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;

    let malformed = session.invoke("thread_history", r#"{"params": {"threadId": 42}}"#).await;
    assert!(
        malformed.starts_with(r#"rejected:{"code":"invalid_input","message":"thread_history: the request is malformed"#),
        "{malformed}"
    );
    let empty = session.invoke("thread_history", r#"{"params": {"threadId": "../../etc"}}"#).await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(empty.trim_start_matches("rejected:")).unwrap()["code"],
        "invalid_input",
        "{empty}"
    );
    let missing = session.invoke("thread_history", r#"{"params": {"threadId": "no-such-thread"}}"#).await;
    assert!(missing.contains(r#""code":"not_found""#), "{missing}");
    // A page cursor is an event number from an earlier page: 0 and below are refused.
    for before in ["0", "-3"] {
        let args = format!(r#"{{"params": {{"threadId": "no-such-thread", "before": {before}}}}}"#);
        let refused = session.invoke("thread_history", &args).await;
        assert!(refused.contains(r#""code":"invalid_input""#) && refused.contains(&format!("not {before}.")), "{refused}");
    }
    let stop = session.invoke("run_stop", r#"{"params": {"runId": "never-started"}}"#).await;
    assert_eq!(stop, r#"resolved:{"wasRunning":false}"#);

    // Not in the capability: a core plugin command and an unknown one.
    let close = session.invoke("plugin:window|close", r#"{"label": "main"}"#).await;
    assert!(close.starts_with("rejected:"), "{close}");
    let unknown = session.invoke("fs_read", "{}").await;
    assert!(unknown.starts_with("rejected:"), "{unknown}");

    // The window is still there and still works.
    session.send("hello").await;
    session.until_texts(".msg-assistant:not(.streaming)", "the app still answers", |t| t.len() == 1).await;
    session.close().await;
}
