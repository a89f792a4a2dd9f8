//! A desktop's notification service for tests: a private session bus (the real
//! `dbus-daemon`) and, on it, a server of the freedesktop Notifications protocol that records
//! every notification it is asked to show and clicks one when the test says so.
//!
//! This is the wire protocol a desktop (GNOME Shell, KDE, dunst, mako) speaks to Hearth, so the
//! app under test cannot tell it from one. These helpers panic with a message on failure, as
//! test code does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

use crate::PATIENCE;

const PATH: &str = "/org/freedesktop/Notifications";
const NAME: &str = "org.freedesktop.Notifications";

/// One `Notify` call the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The id the server gave it.
    pub id: u32,
    /// The sender's application name.
    pub app_name: String,
    /// The headline.
    pub summary: String,
    /// The text under it.
    pub body: String,
    /// Action keys and labels, alternating, as sent.
    pub actions: Vec<String>,
}

#[derive(Default)]
struct Record {
    shown: Mutex<Vec<Shown>>,
    changed: Notify,
    /// The id the next notification gets; a restarted service starts again at 1.
    next_id: Mutex<u32>,
    /// When set, the server clicks a notification's "default" action before it answers the
    /// `Notify` call that showed it: the earliest a click can come.
    click_at_once: Mutex<bool>,
    /// When set, the next `Notify` is refused with an error (and shows nothing).
    refuse_next: Mutex<bool>,
    /// How many were refused.
    refused: Mutex<usize>,
    /// When set, the next `Notify` closes the newest notification and gives its id to the new
    /// one, the close sent before the answer (as a service that reuses ids may).
    reuse_next: Mutex<bool>,
    /// The unique name of the last program that called `Notify`.
    client: Mutex<Option<String>>,
}

struct Server {
    record: Arc<Record>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[expect(clippy::too_many_arguments, reason = "the protocol's Notify takes eight arguments")]
    async fn notify(
        &self,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: zbus::message::Header<'_>,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> zbus::fdo::Result<u32> {
        *self.record.client.lock().unwrap() = header.sender().map(ToString::to_string);
        if std::mem::take(&mut *self.record.refuse_next.lock().unwrap()) {
            *self.record.refused.lock().unwrap() += 1;
            self.record.changed.notify_waiters();
            return Err(zbus::fdo::Error::LimitsExceeded("too many notifications".into()));
        }
        let reuse = std::mem::take(&mut *self.record.reuse_next.lock().unwrap());
        let id = {
            // Ids start at 1 (0 means "no notification to replace" in the protocol).
            let mut next = self.record.next_id.lock().unwrap();
            if !reuse || *next == 0 {
                *next += 1;
            }
            *next
        };
        if reuse {
            // 1: expired.
            Self::notification_closed(&emitter, id, 1).await.unwrap();
        }
        self.record.shown.lock().unwrap().push(Shown { id, app_name, summary, body, actions });
        if *self.record.click_at_once.lock().unwrap() {
            Self::action_invoked(&emitter, id, "default").await.unwrap();
        }
        self.record.changed.notify_waiters();
        Ok(id)
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("hearth-test".into(), "hearth".into(), "1".into(), "1.2".into())
    }

    async fn close_notification(&self, #[zbus(signal_emitter)] emitter: SignalEmitter<'_>, id: u32) {
        // 3: closed by a call to CloseNotification.
        Self::notification_closed(&emitter, id, 3).await.unwrap();
    }

    #[zbus(signal)]
    async fn action_invoked(emitter: &SignalEmitter<'_>, id: u32, action_key: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn notification_closed(emitter: &SignalEmitter<'_>, id: u32, reason: u32) -> zbus::Result<()>;
}

/// A private session bus with a notification server on it; both end when this is dropped.
pub struct NotificationServer {
    record: Arc<Record>,
    /// The server's connection (a restart replaces it).
    connection: Mutex<zbus::Connection>,
    bus: PrivateBus,
}

/// A `dbus-daemon` of its own, sealed off from the machine's services: its configuration
/// names no service directory, so nothing is started on it that the test did not start
/// (WebKit asks for the accessibility bus, GTK for settings; a real notification daemon
/// installed here would otherwise be started too).
pub struct PrivateBus {
    /// The bus's address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
    _daemon: Child,
}

impl PrivateBus {
    /// Starts the daemon with its socket and configuration in `dir`.
    pub async fn start(dir: &Path) -> PrivateBus {
        let socket = dir.join("session-bus");
        let config = dir.join("session-bus.conf");
        let text = format!(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n \
             \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
             <busconfig>\n  <type>session</type>\n  <listen>unix:path={}</listen>\n  <auth>EXTERNAL</auth>\n\
             \x20 <policy context=\"default\">\n    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n\
             \x20   <allow eavesdrop=\"true\"/>\n    <allow own=\"*\"/>\n  </policy>\n</busconfig>\n",
            socket.display()
        );
        std::fs::write(&config, text).unwrap();
        let mut daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("dbus-daemon must be installed (scripts/test.sh installs it)");
        // The daemon prints its address once it listens: no polling for the socket.
        let mut line = String::new();
        let stdout = daemon.stdout.take().unwrap();
        tokio::time::timeout(PATIENCE, BufReader::new(stdout).read_line(&mut line)).await.expect("dbus-daemon printed no address").unwrap();
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "dbus-daemon printed {address:?}, not an address");
        PrivateBus { address, _daemon: daemon }
    }
}

async fn serve(address: &str, record: &Arc<Record>) -> zbus::Connection {
    zbus::connection::Builder::address(address)
        .unwrap()
        .serve_at(PATH, Server { record: Arc::clone(record) })
        .unwrap()
        .name(NAME)
        .unwrap()
        .build()
        .await
        .unwrap_or_else(|err| panic!("could not serve notifications on {address}: {err}"))
}

impl NotificationServer {
    /// Starts `dbus-daemon` listening in `dir` and serves notifications on it.
    pub async fn start(dir: &Path) -> NotificationServer {
        let bus = PrivateBus::start(dir).await;
        let record = Arc::new(Record::default());
        let connection = serve(&bus.address, &record).await;
        NotificationServer { record, connection: Mutex::new(connection), bus }
    }

    /// The bus's address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub fn address(&self) -> &str {
        &self.bus.address
    }

    /// From now on, click each notification as it is shown, before `Notify` returns.
    pub fn click_at_once(&self) {
        *self.record.click_at_once.lock().unwrap() = true;
    }

    /// Every notification shown so far, in order.
    pub fn shown(&self) -> Vec<Shown> {
        self.record.shown.lock().unwrap().clone()
    }

    /// Waits until `count` notifications have been shown; returns them all.
    pub async fn until_shown(&self, count: usize) -> Vec<Shown> {
        let wait = async {
            loop {
                let changed = self.record.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                let shown = self.shown();
                if shown.len() >= count {
                    return shown;
                }
                changed.await;
            }
        };
        tokio::time::timeout(PATIENCE, wait)
            .await
            .unwrap_or_else(|_| panic!("{count} notification(s) were not shown within {PATIENCE:?}; shown: {:?}", self.shown()))
    }

    fn connection(&self) -> zbus::Connection {
        self.connection.lock().unwrap().clone()
    }

    /// Clicks notification `id` (its `action` key; "default" is a click on its body), then
    /// closes it, as desktops do (reason 2: dismissed by the user).
    pub async fn click(&self, id: u32, action: &str) {
        let server = self.connection().object_server().interface::<_, Server>(PATH).await.unwrap();
        Server::action_invoked(server.signal_emitter(), id, action).await.unwrap();
        Server::notification_closed(server.signal_emitter(), id, 2).await.unwrap();
    }

    /// Closes notification `id` as a desktop does when it expires (reason 1).
    pub async fn expire(&self, id: u32) {
        let server = self.connection().object_server().interface::<_, Server>(PATH).await.unwrap();
        Server::notification_closed(server.signal_emitter(), id, 1).await.unwrap();
    }

    /// Another program on the bus (not the notification service) sends a click on `id`: the
    /// same signal, from a sender that does not own the service's name, sent straight to the
    /// program that showed the notifications. Returns once the bus has passed it on (a call
    /// from the same program is answered after it), so a later genuine click comes after it.
    pub async fn forge_click(&self, id: u32) {
        let client = self.record.client.lock().unwrap().clone().expect("nothing was shown yet, so there is no one to send to");
        let other = zbus::connection::Builder::address(self.bus.address.as_str()).unwrap().build().await.unwrap();
        let destination = zbus::names::BusName::try_from(client).unwrap();
        let emitter = SignalEmitter::new(&other, PATH).unwrap().set_destination(destination);
        Server::action_invoked(&emitter, id, "default").await.unwrap();
        zbus::fdo::DBusProxy::new(&other).await.unwrap().get_id().await.unwrap();
    }

    /// The next notification is refused with an error.
    pub fn refuse_next(&self) {
        *self.record.refuse_next.lock().unwrap() = true;
    }

    /// How many notifications were refused.
    pub fn refused(&self) -> usize {
        *self.record.refused.lock().unwrap()
    }

    /// The next notification takes the newest one's id, which is closed just before.
    pub fn reuse_next(&self) {
        *self.record.reuse_next.lock().unwrap() = true;
    }

    /// The service restarts: the name gets a new owner, which numbers notifications from 1
    /// again. What was shown before stays in [`NotificationServer::shown`].
    pub async fn restart(&self) {
        let old = self.connection();
        old.release_name(NAME).await.unwrap();
        *self.record.next_id.lock().unwrap() = 0;
        let new = serve(&self.bus.address, &self.record).await;
        *self.connection.lock().unwrap() = new;
        old.close().await.unwrap();
    }
}
