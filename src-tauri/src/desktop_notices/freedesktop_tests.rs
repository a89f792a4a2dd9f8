#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;

use hearth_protocol::notifications::NotificationView;
use hearth_testkit::PATIENCE;
use hearth_testkit::desktop_bus::{NotificationServer, PrivateBus};
use pretty_assertions::assert_eq;
use tokio::sync::mpsc;

use super::{Bus, REMEMBERED, run};
use crate::desktop_notices::tests::notice;

async fn within<T>(what: &str, step: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, step).await.unwrap_or_else(|_| panic!("{what} did not happen within {PATIENCE:?}"))
}

/// The loop under test on the bus at `address`; what it opens arrives on the receiver.
fn start(address: &str) -> (mpsc::Sender<NotificationView>, mpsc::UnboundedReceiver<NotificationView>, tokio::task::JoinHandle<()>) {
    let (notices, feed) = mpsc::channel(8);
    let (opened, opens) = mpsc::unbounded_channel();
    let running = tokio::spawn(run(Bus::Address(address.to_owned()), feed, move |notice| {
        opened.send(notice).unwrap();
    }));
    (notices, opens, running)
}

/// A desktop with a notification service, and the loop under test on its bus.
struct Desk {
    server: NotificationServer,
    notices: mpsc::Sender<NotificationView>,
    opens: mpsc::UnboundedReceiver<NotificationView>,
    _running: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn desk() -> Desk {
    let dir = tempfile::tempdir().unwrap();
    let server = NotificationServer::start(dir.path()).await;
    let (notices, opens, running) = start(server.address());
    Desk { server, notices, opens, _running: running, _dir: dir }
}

async fn send(notices: &mpsc::Sender<NotificationView>, id: i64) {
    within("taking a notice", notices.send(notice(id))).await.unwrap();
}

async fn opened(opens: &mut mpsc::UnboundedReceiver<NotificationView>) -> NotificationView {
    within("opening a notice", opens.recv()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clicked_notification_opens_its_notice_and_shows_only_its_kind() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;

    send(&notices, 1).await;
    send(&notices, 2).await;
    let shown = server.until_shown(2).await;
    for one in &shown {
        assert_eq!(one.app_name, "Hearth");
        assert_eq!(one.summary, "Hearth: Review needed");
        assert_eq!(one.body, "Click to open it in Hearth.");
        assert_eq!(one.actions, ["default", "Open"]);
    }

    // The second is clicked (and then closed, as desktops do): its notice, and only it, opens.
    server.click(shown[1].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(2));
    // A second click on it, an expired one's click, an unknown id and another action open
    // nothing; the notice after them shows the loop is past all of them.
    server.click(shown[1].id, "default").await;
    server.expire(shown[0].id).await;
    server.click(shown[0].id, "default").await;
    server.click(999, "default").await;
    send(&notices, 3).await;
    let shown = server.until_shown(3).await;
    server.click(shown[2].id, "other").await;
    send(&notices, 4).await;
    let shown = server.until_shown(4).await;
    server.click(shown[3].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(4), "nothing was opened between the two clicks");
    assert_eq!(server.shown().len(), 4, "one OS notification per notice");
}

/// A click the desktop sends before it has even answered `Notify` (the earliest it can come)
/// still opens the notice: the clicks were subscribed to before anything showed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_as_early_as_the_notification_itself_is_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let server = NotificationServer::start(dir.path()).await;
    server.click_at_once();
    let (notices, mut opens, _running) = start(server.address());
    send(&notices, 7).await;
    assert_eq!(opened(&mut opens).await, notice(7));
    assert_eq!(server.shown().len(), 1);
}

/// Another program on the session bus sending the same click signal is not the desktop: it
/// opens nothing. The genuine click after it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_from_anyone_but_the_notification_service_opens_nothing() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;
    send(&notices, 1).await;
    send(&notices, 2).await;
    let shown = server.until_shown(2).await;
    // The forged click is the only click on the first until the genuine one on the second,
    // which the bus passes on after it.
    server.forge_click(shown[0].id).await;
    server.click(shown[1].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(2), "the forged click on the first opened nothing");
    // The first is still remembered: the forged click did not use it up.
    server.click(shown[0].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(1));
}

/// A restarted service numbers its notifications from 1 again: its ids name only what it
/// showed. A click on an id only the old service gave opens nothing; a click on the new
/// service's id 1 opens its own notice, not the one the old service showed as 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_service_restarts_its_ids_name_its_own_notices() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;
    send(&notices, 1).await;
    send(&notices, 2).await;
    let before = server.until_shown(2).await;
    server.restart().await;
    send(&notices, 3).await;
    let shown = server.until_shown(3).await;
    assert_eq!(shown[2].id, before[0].id, "the new service reuses the first id");
    server.click(before[1].id, "default").await;
    server.click(shown[2].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(3), "the new service's click on the old id 2 opened nothing");
}

/// The service refusing one notification (a rate limit) keeps the connection and what is
/// already shown: an earlier notification's click still opens its notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_notification_keeps_the_clicks_on_the_others() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;
    send(&notices, 1).await;
    let shown = server.until_shown(1).await;
    server.refuse_next();
    send(&notices, 2).await;
    send(&notices, 3).await;
    // Notices are taken in order: once the third shows, the second was refused.
    server.until_shown(2).await;
    assert_eq!(server.refused(), 1, "the second notice was refused");
    server.click(shown[0].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(1));
}

/// A service that gives a new notification the id of one it just closed sends that close
/// before its answer: the close is about the old notification, and the new one's click still
/// opens the new notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_id_is_not_closed_by_the_close_of_the_notification_it_named_before() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;
    send(&notices, 1).await;
    server.until_shown(1).await;
    server.reuse_next();
    send(&notices, 2).await;
    // The loop sends the third only once the second's answer is in: a click after that is one
    // the owner made on the shown notification (a click on a reused id that comes before the
    // answer is taken for the old one's).
    send(&notices, 3).await;
    let shown = server.until_shown(3).await;
    assert_eq!(shown[1].id, shown[0].id, "the second took the first's id");
    server.click(shown[1].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(2));
}

/// The memory of shown notifications is bounded: the oldest is forgotten first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_newest_notifications_are_remembered_for_a_click() {
    let Desk { server, notices, mut opens, _running, _dir } = desk().await;
    let count = REMEMBERED + 1;
    for id in 1..=i64::try_from(count).unwrap() {
        send(&notices, id).await;
    }
    let shown = server.until_shown(count).await;
    server.click(shown[0].id, "default").await;
    server.click(shown[1].id, "default").await;
    assert_eq!(opened(&mut opens).await, notice(2), "the first was forgotten, the second remembered");
}

/// A session bus with no notification service on it (a bare desktop), and no bus at all:
/// nothing fails, and the loop keeps taking notices until Hearth closes the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_notification_service_loses_nothing_but_the_os_notification() {
    let dir = tempfile::tempdir().unwrap();
    let bus = PrivateBus::start(dir.path()).await;
    let no_bus = format!("unix:path={}", dir.path().join("no-bus").display());
    for address in [bus.address.as_str(), no_bus.as_str()] {
        // The channel holds 8: a loop that stopped taking would block the sends past it.
        let (notices, _opens, running) = start(address);
        for id in 1..=12 {
            send(&notices, id).await;
        }
        drop(notices);
        within("the loop's end", running).await.unwrap();
    }
}
