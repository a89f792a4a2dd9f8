//! The inbox on the desktop: each new notice shown as an OS notification, and a click on one
//! opening what it is about in the window, as a click in the Inbox does.
//!
//! An OS notification shows the notice's kind only ("Hearth: Review needed"): its title and
//! body (a task's title can carry a mail's subject; a result, a page's diff, who an email goes
//! to) stay in the window, since anyone who can see the screen sees an OS notification.
//!
//! On Linux and the BSDs Hearth speaks the freedesktop Notifications protocol on the session
//! bus itself, through zbus (the D-Bus crate notify-rust is built on). notify-rust, and so
//! tauri-plugin-notification, is not used there for a reason: its handle opens a bus
//! connection per notification and subscribes to clicks only after `Notify` has answered, so a
//! click in between is lost, and every notification waiting for a click holds a connection.
//! Here one connection subscribes first and then shows, and clicks are matched to notices by
//! the service that showed each (its unique name on the bus) and the id it gave. Elsewhere (macOS, Windows, mobile) tauri-plugin-notification
//! shows the notice, and a click does not open its screen: the plugin has no click callback on
//! desktop.
//!
//! What a click can do is bounded: it brings the window forward, opens a screen and marks the
//! notice read. The notice comes from the shell's own memory (the bus only names an id); zbus
//! drops signals from any sender but the current owner of the notification service's name.
//!
//! Limits: on Wayland, GNOME and KDE may refuse to raise the window without the activation
//! token a desktop sends before the click (not used: Tauri has no call that takes one), so the
//! screen changes behind other windows there. A click on a notification older than the newest
//! 64 opens nothing (the Inbox still has the notice).
//!
//! `freedesktop_tests.rs` uses `hearth-testkit` from a unit test, against house.md's
//! "integration tests only": the rule keeps the core's unit tests free of a cycle through the
//! testkit, and the shell has no such cycle, while the loop under test is private to the shell.

#[cfg(freedesktop)]
mod freedesktop;

use std::sync::Mutex;

use hearth_protocol::notifications::{NotificationKind, NotificationOpened, NotificationView};
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime};
use tokio::sync::mpsc;

/// An OS notification's headline: the notice's kind only.
fn summary(kind: NotificationKind) -> String {
    format!("Hearth: {}", kind.label())
}

/// The text under it where a click cannot open the notice.
const SEE_THE_INBOX: &str = "Open Hearth's Inbox to see it.";

/// Where a clicked notice goes: the window's `notification_open_watch` channel. The newest
/// subscription wins (a reloaded window subscribes again); a click while no window listens
/// (Hearth starting, the page reloading) is held, the newest one, until one does.
#[derive(Default)]
pub struct OpenRequests {
    inner: Mutex<Requests>,
}

#[derive(Default)]
struct Requests {
    window: Option<Channel<NotificationOpened>>,
    held: Option<NotificationView>,
}

impl OpenRequests {
    /// Sends clicked notices to `channel` from now on, starting with a held one.
    pub fn subscribe(&self, channel: Channel<NotificationOpened>) {
        let Ok(mut requests) = self.inner.lock() else { return };
        requests.window = Some(channel);
        if let Some(notice) = requests.held.take() {
            requests.send_or_hold(notice);
        }
    }

    /// The window's page is (re)loading: its channel is gone with it. (Tauri's channel accepts
    /// sends to a page that went away, so a send cannot tell.)
    pub fn unsubscribe(&self) {
        if let Ok(mut requests) = self.inner.lock() {
            requests.window = None;
        }
    }

    #[cfg_attr(not(freedesktop), expect(dead_code, reason = "clicks open notices only on the freedesktop path"))]
    fn deliver(&self, notice: NotificationView) {
        if let Ok(mut requests) = self.inner.lock() {
            requests.send_or_hold(notice);
        }
    }
}

impl Requests {
    /// Sends `notice` to the window, or holds it (the newest) until a window listens.
    fn send_or_hold(&mut self, notice: NotificationView) {
        let sent = self.window.as_ref().is_some_and(|channel| channel.send(NotificationOpened { notice: notice.clone() }).is_ok());
        if !sent {
            tracing::debug!("a notification was clicked while no window listened; held for the window");
            self.window = None;
            self.held = Some(notice);
        }
    }
}

/// Shows each notice from `notices` on the desktop until the core closes the stream.
pub fn show<R: Runtime>(app: AppHandle<R>, notices: mpsc::Receiver<NotificationView>) {
    #[cfg(freedesktop)]
    tauri::async_runtime::spawn(freedesktop::run(freedesktop::Bus::Session, notices, move |notice| open(&app, notice)));
    #[cfg(not(freedesktop))]
    show_through_plugin(app, notices);
}

/// Brings the window forward and has it open `notice`.
#[cfg(freedesktop)]
fn open<R: Runtime>(app: &AppHandle<R>, notice: NotificationView) {
    use tauri::Manager;
    if let Some(window) = app.get_webview_window("main") {
        // Each is best effort: a window manager may refuse focus; the screen still changes.
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    if let Some(requests) = app.try_state::<OpenRequests>() {
        requests.deliver(notice);
    }
}

#[cfg(not(freedesktop))]
fn show_through_plugin<R: Runtime>(app: AppHandle<R>, mut notices: mpsc::Receiver<NotificationView>) {
    use tauri_plugin_notification::NotificationExt;
    tauri::async_runtime::spawn(async move {
        let mut warned = false;
        while let Some(notice) = notices.recv().await {
            if let Err(err) = app.notification().builder().title(summary(notice.kind)).body(SEE_THE_INBOX).show()
                && !warned
            {
                warned = true;
                tracing::warn!(error = %err, "the desktop did not show a notification; the inbox still has it");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::{Arc, Mutex};

    use hearth_protocol::notifications::{NotificationKind, NotificationOpened, NotificationTarget, NotificationView};
    use pretty_assertions::assert_eq;
    use tauri::ipc::{Channel, InvokeResponseBody};

    use super::OpenRequests;

    /// A review notice whose title and body an OS notification must never show.
    pub(super) fn notice(id: i64) -> NotificationView {
        NotificationView {
            id,
            kind: NotificationKind::ReviewNeeded,
            title: format!("Send “Quarterly figures” to ana@example.com ({id})"),
            body: "The secret body of a mail".to_owned(),
            target: NotificationTarget::Proposal(hearth_protocol::ids::ProposalId::parse(format!("p{id}")).unwrap()),
            created_at: 0,
            read: false,
        }
    }

    /// A channel that records the notices sent down it (what the window would receive).
    fn window() -> (Channel<NotificationOpened>, Arc<Mutex<Vec<i64>>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let channel = Channel::new(move |body| {
            let InvokeResponseBody::Json(json) = body else { panic!("a notice is sent as JSON") };
            let opened: NotificationOpened = serde_json::from_str(&json).unwrap();
            sink.lock().unwrap().push(opened.notice.id);
            Ok(())
        });
        (channel, got)
    }

    /// A click while no window listens (Hearth starting, the page reloading) is held, the
    /// newest one, and opened by the next window that subscribes; a listening window gets
    /// each click at once.
    #[test]
    fn a_click_before_the_window_listens_is_held_for_it() {
        let requests = OpenRequests::default();
        requests.deliver(notice(1));
        requests.deliver(notice(2));
        let (first, got) = window();
        requests.subscribe(first);
        assert_eq!(*got.lock().unwrap(), [2], "the newest held click, once");
        requests.deliver(notice(3));
        assert_eq!(*got.lock().unwrap(), [2, 3]);

        // The page reloads: its channel is gone, the click is held for the new page.
        requests.unsubscribe();
        requests.deliver(notice(4));
        assert_eq!(*got.lock().unwrap(), [2, 3], "nothing is sent to a page that went away");
        let (second, got_again) = window();
        requests.subscribe(second);
        assert_eq!(*got_again.lock().unwrap(), [4]);
    }
}
