//! Page monitors against a page the test edits, in real Chromium: one notice per change with
//! its line diff, none duplicated across a restart; a page that cannot be read backs off
//! 2, 4, 8, 16 minutes and pauses at the fifth failure with a notice. Oracles: notices in the
//! inbox, the task's due time and status.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

use hearth_core::Hearth;
use hearth_core::browser::egress::AllowList;
use hearth_protocol::approvals::ProposalOrigin;
use hearth_protocol::ids::TaskId;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::notifications::{NotificationKind, NotificationTarget, NotificationView};
use hearth_protocol::tasks::TaskStatus;
use hearth_testkit::dns_stub::DnsStub;
use hearth_testkit::pages::PageServer;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{engine_idle, fast_config};

const MINUTE: i64 = 60_000;

fn page(lines: &[&str]) -> String {
    format!(
        "<html><head><title>Kettle</title></head><body>{}</body></html>",
        lines.iter().map(|l| format!("<p>{l}</p>")).collect::<String>()
    )
}

async fn open(dir: &Path, server: &PageServer, dns: &DnsStub) -> Hearth {
    let mut config = fast_config(dir);
    config.browser.allow = AllowList::of([server.address()]);
    config.browser_dns = Some(dns.address());
    Hearth::open(config).await.unwrap()
}

/// One look: make it due, run it, wait for the engine to rest.
async fn look_now(hearth: &Hearth, task_id: &str, first: bool) {
    if !first {
        hearth.monitor_check_now(task_id).await.unwrap();
    }
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1, "the monitor was due");
    engine_idle(engine, &mut changes).await;
}

async fn notices(hearth: &Hearth, kind: NotificationKind) -> Vec<NotificationView> {
    hearth.notification_list().await.unwrap().notifications.into_iter().filter(|n| n.kind == kind).collect()
}

async fn watch(hearth: &Hearth, args: serde_json::Value) -> String {
    hearth.store().open_run("thread-watch", "run-watch", "watch", "test", hearth_core::store::threads::RunOrigin::Window).await.ok();
    let ctx = hearth.toolbox().for_chat("thread-watch", "run-watch", ProposalOrigin::OwnerChat, CancellationToken::new());
    let out = hearth_core::tools::dispatch(&ctx, "watch_page", &args.to_string(), hearth_core::tools::StepId::Call(args.to_string())).await;
    assert!(!out.is_error, "{out:?}");
    serde_json::from_str::<DelegateTaskResult>(&out.content).unwrap().task_id.into_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_notice_per_change_with_its_diff_and_none_again_after_a_restart() {
    let pages: HashMap<String, String> = [("/kettle".to_owned(), page(&["Kettle", "Price: $20", "In stock"]))].into();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/kettle", server.address());
    let hearth = open(dir.path(), &server, &dns).await;
    let task = watch(&hearth, json!({ "title": "Kettle page", "url": url, "condition": "change", "intervalMinutes": 30 })).await;
    // The first look records the page; nothing to compare with yet.
    let before = hearth_core::store::now_ms();
    look_now(&hearth, &task, true).await;
    let row = hearth.store().get_task(&task).await.unwrap().unwrap();
    assert_eq!(row.status, TaskStatus::Scheduled, "{:?}", row.error);
    let due = row.next_run_at.unwrap();
    assert!(due >= before + 30 * MINUTE && due <= hearth_core::store::now_ms() + 30 * MINUTE, "next look in 30 minutes");
    assert!(notices(&hearth, NotificationKind::MonitorNotice).await.is_empty());
    // Unchanged: no notice.
    look_now(&hearth, &task, false).await;
    assert!(notices(&hearth, NotificationKind::MonitorNotice).await.is_empty());
    // Changed: one notice naming the changed, removed and new lines.
    server.set_page("/kettle", &page(&["Kettle", "Price: $18", "Sale ends Friday"]));
    look_now(&hearth, &task, false).await;
    let seen = notices(&hearth, NotificationKind::MonitorNotice).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, NotificationTarget::Task(TaskId::trusted(task.as_str())));
    // Two lines replaced by two: both changed, paired in order.
    assert!(seen[0].body.ends_with("~ Price: $18\n~ Sale ends Friday"), "{}", seen[0].body);
    hearth.shutdown().await;
    drop(hearth);
    // After a restart the same page is no news.
    let hearth = open(dir.path(), &server, &dns).await;
    look_now(&hearth, &task, false).await;
    assert_eq!(notices(&hearth, NotificationKind::MonitorNotice).await.len(), 1, "nothing duplicated across the restart");
    // Changed while Hearth was closed: the look after the restart compares with what was seen
    // before it (a lost memory would take it for a first look and say nothing).
    hearth.shutdown().await;
    drop(hearth);
    server.set_page("/kettle", &page(&["Kettle", "Price: $17"]));
    let hearth = open(dir.path(), &server, &dns).await;
    look_now(&hearth, &task, false).await;
    let seen = notices(&hearth, NotificationKind::MonitorNotice).await;
    assert_eq!(seen.len(), 2);
    assert!(seen[0].body.ends_with("~ Price: $17\n- Sale ends Friday"), "{}", seen[0].body);
    look_now(&hearth, &task, false).await;
    assert_eq!(notices(&hearth, NotificationKind::MonitorNotice).await.len(), 2);
    // Back to an earlier text: a change like any other (A → B → A is news).
    server.set_page("/kettle", &page(&["Kettle", "Price: $18", "Sale ends Friday"]));
    look_now(&hearth, &task, false).await;
    assert_eq!(notices(&hearth, NotificationKind::MonitorNotice).await.len(), 3);
    hearth.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_below_the_value_notifies_and_multipliers_do_not() {
    let pages: HashMap<String, String> = [("/shop".to_owned(), page(&["Kettle", "Was $9k? No: $29.99"]))].into();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = open(dir.path(), &server, &dns).await;
    let url = format!("http://{}/shop", server.address());
    let task = watch(&hearth, json!({ "title": "Kettle under 25", "url": url, "condition": "price_below", "value": "25" })).await;
    look_now(&hearth, &task, true).await;
    assert!(notices(&hearth, NotificationKind::MonitorNotice).await.is_empty(), "$9k is not 9, and 29.99 is not below 25");
    server.set_page("/shop", &page(&["Kettle", "Now $24.50"]));
    look_now(&hearth, &task, false).await;
    let seen = notices(&hearth, NotificationKind::MonitorNotice).await;
    assert_eq!(seen.len(), 1);
    assert!(seen[0].body.starts_with("A price is below 25: 24.50."), "{}", seen[0].body);
    // Still below, the page otherwise changed: no new notice while the condition holds.
    server.set_page("/shop", &page(&["Kettle", "Now $24.00", "Updated today"]));
    look_now(&hearth, &task, false).await;
    assert_eq!(notices(&hearth, NotificationKind::MonitorNotice).await.len(), 1);
    // Back above, then below again: that is news.
    server.set_page("/shop", &page(&["Kettle", "Now $30.00"]));
    look_now(&hearth, &task, false).await;
    server.set_page("/shop", &page(&["Kettle", "Now $24.50"]));
    look_now(&hearth, &task, false).await;
    assert_eq!(notices(&hearth, NotificationKind::MonitorNotice).await.len(), 2, "the same page again is a new match after a gap");
    hearth.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_cannot_be_read_backs_off_and_pauses_at_five() {
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), HashMap::new()).await.unwrap();
    let dns = DnsStub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = open(dir.path(), &server, &dns).await;
    // The allowed address, on a port nothing listens on: the proxy cannot reach it.
    let closed = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config_allow = vec![server.address()];
    config_allow.push(SocketAddr::from(([127, 0, 0, 2], port)));
    hearth.shutdown().await;
    drop(hearth);
    let mut config = fast_config(dir.path());
    config.browser.allow = AllowList::of(config_allow);
    config.browser_dns = Some(dns.address());
    let hearth = Hearth::open(config).await.unwrap();
    let url = format!("http://127.0.0.2:{port}/gone");
    let task = watch(&hearth, json!({ "title": "Gone page", "url": url, "condition": "change", "intervalMinutes": 600 })).await;
    for (failure, backoff) in [(1, 2), (2, 4), (3, 8), (4, 16)] {
        let before = hearth_core::store::now_ms();
        look_now(&hearth, &task, failure == 1).await;
        let row = hearth.store().get_task(&task).await.unwrap().unwrap();
        assert_eq!(row.status, TaskStatus::Scheduled, "failure {failure}: {:?}", row.error);
        let due = row.next_run_at.unwrap();
        assert!(
            due >= before + backoff * MINUTE && due <= hearth_core::store::now_ms() + backoff * MINUTE,
            "failure {failure}: the next look is {backoff} minutes away"
        );
        assert!(notices(&hearth, NotificationKind::MonitorPaused).await.is_empty());
    }
    look_now(&hearth, &task, false).await;
    let row = hearth.store().get_task(&task).await.unwrap().unwrap();
    assert_eq!(row.status, TaskStatus::Paused);
    assert!(row.error.unwrap().contains("5 times in a row"));
    assert_eq!(notices(&hearth, NotificationKind::MonitorPaused).await.len(), 1);
    assert!(notices(&hearth, NotificationKind::MonitorNotice).await.is_empty(), "a failure is no change");
    hearth.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_sample_page_is_watchable_offline() {
    let t = super::support::open().await;
    let (_, _, events) = super::support::start(&t.hearth, None, "Watch the sample page").await;
    super::support::collect(events).await;
    let tasks = t.hearth.store().list_tasks(10).await.unwrap();
    let monitor = tasks.iter().find(|task| task.kind == hearth_protocol::tasks::TaskKind::Monitor).expect("a monitor task");
    look_now(&t.hearth, &monitor.id, true).await;
    let row = t.hearth.store().get_task(&monitor.id).await.unwrap().unwrap();
    assert_eq!(row.status, TaskStatus::Scheduled, "{:?}", row.error);
    assert_eq!(row.state["monitor"]["failures"], json!(0));
    assert!(row.state["monitor"]["text"].as_str().unwrap().contains("Garden hose"), "{}", row.state);
    t.hearth.shutdown().await;
}
