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
//! the id the desktop gave each. Elsewhere (macOS, Windows, mobile) tauri-plugin-notification
//! shows the notice, and a click does not open its screen: the plugin has no click callback on
//! desktop.

use std::sync::Mutex;

use hearth_protocol::notifications::{NotificationOpened, NotificationView};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::mpsc;

/// Where a clicked notice goes: the window's `notification_open_watch` channel. The newest
/// subscription wins (a reloaded window subscribes again).
#[derive(Default)]
pub struct OpenRequests {
    window: Mutex<Option<Channel<NotificationOpened>>>,
}

impl OpenRequests {
    /// Sends clicked notices to `channel` from now on.
    pub fn subscribe(&self, channel: Channel<NotificationOpened>) {
        if let Ok(mut window) = self.window.lock() {
            *window = Some(channel);
        }
    }

    fn deliver(&self, notice: NotificationView) {
        let Ok(mut window) = self.window.lock() else { return };
        let sent = window.as_ref().is_some_and(|channel| channel.send(NotificationOpened { notice }).is_ok());
        if !sent {
            // No window listens (it is still loading, or went away): the notice stays in the
            // Inbox, unread.
            *window = None;
            tracing::debug!("a notification was clicked while no window listened");
        }
    }
}

/// Shows each notice from `notices` on the desktop until the core closes the stream.
pub fn show<R: Runtime>(app: AppHandle<R>, notices: mpsc::Receiver<NotificationView>) {
    #[cfg(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android"))))]
    tauri::async_runtime::spawn(freedesktop::run(freedesktop::Bus::Session, notices, move |notice| open(&app, notice)));
    #[cfg(not(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android")))))]
    show_through_plugin(app, notices);
}

/// Brings the window forward and has it open `notice`.
#[cfg_attr(not(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android")))), allow(dead_code))]
fn open<R: Runtime>(app: &AppHandle<R>, notice: NotificationView) {
    if let Some(window) = app.get_webview_window("main") {
        // Each is best effort: a window manager may refuse focus; the screen still changes.
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    app.state::<OpenRequests>().deliver(notice);
}

#[cfg(not(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android")))))]
fn show_through_plugin<R: Runtime>(app: AppHandle<R>, mut notices: mpsc::Receiver<NotificationView>) {
    use tauri_plugin_notification::NotificationExt;
    tauri::async_runtime::spawn(async move {
        let mut warned = false;
        while let Some(notice) = notices.recv().await {
            let title = format!("Hearth: {}", notice.kind.label());
            if let Err(err) = app.notification().builder().title(title).body("Open Hearth's Inbox to see it.").show()
                && !warned
            {
                warned = true;
                tracing::warn!(error = %err, "the desktop did not show a notification; the inbox still has it");
            }
        }
    });
}

#[cfg(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android"))))]
mod freedesktop {
    use std::collections::{HashMap, VecDeque};

    use futures::StreamExt;
    use hearth_protocol::notifications::NotificationView;
    use tokio::sync::mpsc;

    /// How many shown notifications are remembered for a click. A desktop closes a
    /// notification when it expires and says so; one that never says so is forgotten after
    /// this many newer ones (its click then opens nothing; the Inbox still has the notice).
    const REMEMBERED: usize = 64;

    /// The action a desktop invokes for a click on the notification's body.
    const CLICK: &str = "default";

    #[zbus::proxy(
        interface = "org.freedesktop.Notifications",
        default_service = "org.freedesktop.Notifications",
        default_path = "/org/freedesktop/Notifications",
        gen_blocking = false
    )]
    trait Notifications {
        #[allow(clippy::too_many_arguments)]
        fn notify(
            &self,
            app_name: &str,
            replaces_id: u32,
            app_icon: &str,
            summary: &str,
            body: &str,
            actions: &[&str],
            hints: HashMap<&str, zbus::zvariant::Value<'_>>,
            expire_timeout: i32,
        ) -> zbus::Result<u32>;

        fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

        #[zbus(signal)]
        fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

        #[zbus(signal)]
        fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
    }

    /// Which bus the desktop's notification service is on.
    pub enum Bus {
        /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
        Session,
        /// A bus at this address (the shell's tests).
        #[cfg(test)]
        Address(String),
    }

    /// One connection to the desktop's notification service, subscribed to clicks and closes.
    struct Desktop {
        proxy: NotificationsProxy<'static>,
        /// Clicks and closes in the order the desktop sent them (one stream, not one per
        /// signal: a desktop closes a clicked notification right after the click, and taken
        /// in the other order the click would find nothing to open).
        signals: zbus::proxy::SignalStream<'static>,
        /// Whether the desktop shows actions (a click can open the notice).
        clickable: bool,
        /// Shown notifications by the desktop's id, oldest first.
        shown: VecDeque<(u32, NotificationView)>,
    }

    impl Desktop {
        async fn connect(bus: &Bus) -> zbus::Result<Desktop> {
            let connection = match bus {
                Bus::Session => zbus::Connection::session().await?,
                #[cfg(test)]
                Bus::Address(address) => zbus::connection::Builder::address(address.as_str())?.build().await?,
            };
            let proxy = NotificationsProxy::new(&connection).await?;
            // Subscribed before anything is shown: a click that comes the moment a
            // notification appears is already on its way to these streams.
            let signals = proxy.inner().receive_all_signals().await?;
            let clickable = proxy.get_capabilities().await?.iter().any(|c| c == "actions");
            Ok(Desktop { proxy, signals, clickable, shown: VecDeque::new() })
        }

        async fn show(&mut self, notice: NotificationView) -> zbus::Result<()> {
            let summary = format!("Hearth: {}", notice.kind.label());
            let (body, actions): (&str, &[&str]) = if self.clickable {
                ("Click to open it in Hearth.", &[CLICK, "Open"])
            } else {
                ("Open Hearth's Inbox to see it.", &[])
            };
            // -1: the desktop's own expiry.
            let id = self.proxy.notify("Hearth", 0, "", &summary, body, actions, HashMap::new(), -1).await?;
            if self.shown.len() == REMEMBERED {
                self.shown.pop_front();
            }
            self.shown.push_back((id, notice));
            Ok(())
        }

        fn take(&mut self, id: u32) -> Option<NotificationView> {
            let at = self.shown.iter().position(|(shown, _)| *shown == id)?;
            self.shown.remove(at).map(|(_, notice)| notice)
        }
    }

    enum Event {
        Notice(NotificationView),
        Clicked { id: u32, action: String },
        Closed(u32),
        /// The bus connection ended (the desktop's session went away).
        Lost,
        /// The core closed the stream: Hearth is shutting down.
        End,
    }

    fn read_signal(message: zbus::Message) -> Option<Event> {
        if let Some(click) = ActionInvoked::from_message(message.clone()) {
            let args = click.args().ok()?;
            return Some(Event::Clicked { id: args.id, action: args.action_key });
        }
        let closed = NotificationClosed::from_message(message)?;
        let args = closed.args().ok()?;
        Some(Event::Closed(args.id))
    }

    /// Shows each notice and calls `on_open` with the notice whose notification the owner
    /// clicked. Connects at the first notice (an idle Hearth holds no bus connection), and
    /// again after the connection is lost. A desktop without a notification service (a bare
    /// Xvfb) is logged once per outage and otherwise ignored: the Inbox has every notice.
    pub async fn run(bus: Bus, mut notices: mpsc::Receiver<NotificationView>, on_open: impl Fn(NotificationView)) {
        let mut desktop: Option<Desktop> = None;
        let mut warned = false;
        loop {
            let event = match desktop.as_mut() {
                None => notices.recv().await.map_or(Event::End, Event::Notice),
                Some(connected) => tokio::select! {
                    notice = notices.recv() => notice.map_or(Event::End, Event::Notice),
                    signal = connected.signals.next() => match signal {
                        Some(message) => match read_signal(message) {
                            Some(event) => event,
                            // Another signal of the interface, or one that does not parse: no
                            // click or close of ours.
                            None => continue,
                        },
                        None => Event::Lost,
                    },
                },
            };
            match event {
                Event::End => return,
                Event::Lost => desktop = None,
                Event::Closed(id) => {
                    if let Some(connected) = desktop.as_mut() {
                        connected.take(id);
                    }
                }
                Event::Clicked { id, action } => {
                    // Only the click Hearth offered opens anything; the notification is gone
                    // from the desktop either way once an action is invoked.
                    if let Some(notice) = desktop.as_mut().and_then(|connected| connected.take(id))
                        && action == CLICK
                    {
                        on_open(notice);
                    }
                }
                Event::Notice(notice) => {
                    if desktop.is_none() {
                        match Desktop::connect(&bus).await {
                            Ok(connected) => desktop = Some(connected),
                            Err(err) => {
                                if !warned {
                                    warned = true;
                                    tracing::warn!(error = %err, "the desktop has no notification service; the inbox still has every notice");
                                }
                                continue;
                            }
                        }
                    }
                    let kind = notice.kind;
                    if let Some(connected) = desktop.as_mut() {
                        match connected.show(notice).await {
                            Ok(()) => warned = false,
                            Err(err) => {
                                if !warned {
                                    warned = true;
                                    tracing::warn!(error = %err, kind = kind.as_str(), "the desktop did not show a notification; the inbox still has it");
                                }
                                // Connect afresh for the next one: the service may have restarted.
                                desktop = None;
                            }
                        }
                    }
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used, clippy::expect_used)]

        use hearth_protocol::notifications::{NotificationKind, NotificationTarget, NotificationView};
        use hearth_testkit::desktop_bus::NotificationServer;
        use tokio::sync::mpsc;

        use super::{Bus, REMEMBERED, run};

        fn notice(id: i64) -> NotificationView {
            NotificationView {
                id,
                kind: NotificationKind::ReviewNeeded,
                title: format!("Send “Quarterly figures” to ana@example.com ({id})"),
                body: "The secret body of a mail".to_owned(),
                target: NotificationTarget::Proposal(format!("p{id}")),
                created_at: 0,
                read: false,
            }
        }

        /// The loop under test, fed by `notices`; what it opens arrives on the receiver.
        fn start(server: &NotificationServer) -> (mpsc::Sender<NotificationView>, mpsc::UnboundedReceiver<NotificationView>) {
            let (notices, feed) = mpsc::channel(8);
            let (opened, opens) = mpsc::unbounded_channel();
            tokio::spawn(run(Bus::Address(server.address().to_owned()), feed, move |notice| {
                opened.send(notice).unwrap();
            }));
            (notices, opens)
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_clicked_notification_opens_its_notice_and_shows_only_its_kind() {
            let dir = tempfile::tempdir().unwrap();
            let server = NotificationServer::start(dir.path()).await;
            let (notices, mut opens) = start(&server);

            notices.send(notice(1)).await.unwrap();
            notices.send(notice(2)).await.unwrap();
            let shown = server.until_shown(2).await;
            assert_eq!(shown.len(), 2);
            for one in &shown {
                assert_eq!(one.app_name, "Hearth");
                assert_eq!(one.summary, "Hearth: Review needed");
                assert_eq!(one.body, "Click to open it in Hearth.");
                assert_eq!(one.actions, ["default", "Open"]);
            }

            // The second is clicked: its notice, and only it, is opened.
            server.click(shown[1].id, "default").await;
            let opened = opens.recv().await.unwrap();
            assert_eq!(opened, notice(2));
            // A second click on it, an expired one's click and an unknown id open nothing;
            // the notice after them shows the loop is past all three.
            server.click(shown[1].id, "default").await;
            server.expire(shown[0].id).await;
            server.click(shown[0].id, "default").await;
            server.click(999, "default").await;
            notices.send(notice(3)).await.unwrap();
            let shown = server.until_shown(3).await;
            server.click(shown[2].id, "default").await;
            assert_eq!(opens.recv().await.unwrap(), notice(3), "nothing was opened between the two clicks");
            assert_eq!(server.shown().len(), 3, "one OS notification per notice");
        }

        /// A click the desktop sends before it has even answered `Notify` (the earliest it can
        /// come) still opens the notice: the clicks were subscribed to before anything showed.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_click_as_early_as_the_notification_itself_is_not_lost() {
            let dir = tempfile::tempdir().unwrap();
            let server = NotificationServer::start(dir.path()).await;
            server.click_at_once();
            let (notices, mut opens) = start(&server);
            notices.send(notice(7)).await.unwrap();
            assert_eq!(opens.recv().await.unwrap(), notice(7));
            assert_eq!(server.shown().len(), 1);
        }

        /// The memory of shown notifications is bounded: the oldest is forgotten first.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn only_the_newest_notifications_are_remembered_for_a_click() {
            let dir = tempfile::tempdir().unwrap();
            let server = NotificationServer::start(dir.path()).await;
            let (notices, mut opens) = start(&server);
            let count = REMEMBERED + 1;
            for id in 1..=i64::try_from(count).unwrap() {
                notices.send(notice(id)).await.unwrap();
            }
            let shown = server.until_shown(count).await;
            server.click(shown[0].id, "default").await;
            server.click(shown[1].id, "default").await;
            assert_eq!(opens.recv().await.unwrap(), notice(2), "the first was forgotten, the second remembered");
        }

        /// Without a notification service nothing fails: the loop keeps taking notices.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn no_notification_service_loses_nothing_but_the_os_notification() {
            let dir = tempfile::tempdir().unwrap();
            let (notices, feed) = mpsc::channel(1);
            let address = format!("unix:path={}", dir.path().join("no-bus").display());
            let running = tokio::spawn(run(Bus::Address(address), feed, |_| panic!("nothing can be clicked")));
            // The channel holds one: a loop that stopped taking would block the third send.
            for id in 1..=3 {
                notices.send(notice(id)).await.unwrap();
            }
            drop(notices);
            running.await.unwrap();
        }
    }
}
