//! The freedesktop Notifications protocol on the session bus (Linux and the BSDs): shows each
//! notice and reports the one whose notification the owner clicked.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures::StreamExt;
use hearth_protocol::notifications::NotificationView;
use tokio::sync::mpsc;
use zbus::message::Sequence;

/// How many shown notifications are remembered for a click. A desktop closes a notification
/// when it expires and says so; one that never says so is forgotten after this many newer ones
/// (its click then opens nothing; the Inbox still has the notice).
pub(super) const REMEMBERED: usize = 64;

/// The action a desktop invokes for a click on the notification's body.
const CLICK: &str = "default";

/// How long one call to the desktop may take: a service that stops answering must not hold
/// up the clicks on what is already shown, or the notices behind it.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// How many signals may wait while a call is answered (zbus's default is 64, and a full
/// queue stops it reading the socket, the call's answer included). A service that tells every
/// client of every other program's notifications closing can send that many in a burst.
const SIGNALS_QUEUED: usize = 1024;

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications",
    gen_blocking = false
)]
trait Notifications {
    // Notify is called through `Proxy::call_method` (see `Desktop::show`): its answer's sender
    // is needed, not only the id.
    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
}

/// Which bus the desktop's notification service is on.
pub(super) enum Bus {
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
    Session,
    /// A bus at this address (the tests).
    #[cfg(test)]
    Address(String),
}

/// One connection to the desktop's notification service, subscribed to clicks and closes.
struct Desktop {
    proxy: NotificationsProxy<'static>,
    /// Clicks and closes in the order the desktop sent them (one stream, not one per signal: a
    /// desktop closes a clicked notification right after the click, and taken in the other
    /// order the click would find nothing to open). zbus lets through only what the current
    /// owner of the service's name sends.
    signals: zbus::proxy::SignalStream<'static>,
    /// Whether the desktop shows actions (a click can open the notice).
    clickable: bool,
    /// Shown notifications, oldest first, each by the service that showed it and the id it
    /// gave. A restarted service numbers its notifications afresh: its ids name only its own.
    shown: VecDeque<Entry>,
}

impl Desktop {
    async fn connect(bus: &Bus) -> zbus::Result<Desktop> {
        let builder = match bus {
            Bus::Session => zbus::connection::Builder::session()?,
            #[cfg(test)]
            Bus::Address(address) => zbus::connection::Builder::address(address.as_str())?,
        };
        let connection = builder.method_timeout(CALL_LIMIT).max_queued(SIGNALS_QUEUED).build().await?;
        let proxy = NotificationsProxy::new(&connection).await?;
        // Subscribed before anything is shown: a click that comes the moment a notification
        // appears is already on its way to this stream.
        let signals = proxy.inner().receive_all_signals().await?;
        let clickable = proxy.get_capabilities().await?.iter().any(|c| c == "actions");
        Ok(Desktop { proxy, signals, clickable, shown: VecDeque::new() })
    }

    async fn show(&mut self, notice: NotificationView) -> zbus::Result<()> {
        let summary = super::summary(notice.kind);
        let (body, actions): (&str, &[&str]) =
            if self.clickable { ("Click to open it in Hearth.", &[CLICK, "Open"]) } else { (super::SEE_THE_INBOX, &[]) };
        // -1: the desktop's own expiry.
        let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
        let answer =
            self.proxy.inner().call_method("Notify", &("Hearth", 0_u32, "", summary.as_str(), body, actions, hints, -1_i32)).await?;
        let id: u32 = answer.body().deserialize()?;
        let Some(service) = answer.header().sender().map(|sender| sender.to_owned()) else {
            // A bus always names the sender; without one no click could be matched.
            return Err(zbus::Error::MissingField);
        };
        let shown = Shown { service: service.into(), id };
        // A service may reuse an id it closed without saying so yet: the close (or a click) of
        // the old notification is then still queued, ahead of this answer, and is not this
        // one's. A fresh id's early click, queued the same way, is.
        let reused = self.take(&shown).is_some();
        if self.shown.len() == REMEMBERED {
            self.shown.pop_front();
        }
        let answered_at = reused.then(|| answer.recv_position());
        self.shown.push_back(Entry { shown, notice, answered_at });
        Ok(())
    }

    fn take(&mut self, which: &Shown) -> Option<NotificationView> {
        let at = self.shown.iter().position(|entry| entry.shown == *which)?;
        self.shown.remove(at).map(|entry| entry.notice)
    }

    /// The notice a signal received at `at` is about, taken: none when the signal came before
    /// the answer that reused its id (it is about the notification the id named before).
    fn take_signalled(&mut self, which: &Shown, at: Sequence) -> Option<NotificationView> {
        let entry = self.shown.iter().find(|entry| entry.shown == *which)?;
        if entry.answered_at.is_some_and(|answered| at < answered) {
            return None;
        }
        self.take(which)
    }
}

/// One remembered notification.
struct Entry {
    shown: Shown,
    notice: NotificationView,
    /// When the answer that showed it was received, if its id had named an earlier one.
    answered_at: Option<Sequence>,
}

/// One notification: the service that showed it (its unique name on the bus) and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    service: zbus::names::OwnedUniqueName,
    id: u32,
}

enum Event {
    Notice(NotificationView),
    Clicked {
        which: Shown,
        action: String,
        at: Sequence,
    },
    Closed {
        which: Shown,
        at: Sequence,
    },
    /// The bus connection ended (the desktop's session went away).
    Lost,
    /// The core closed the stream: Hearth is shutting down.
    End,
}

fn read_signal(message: zbus::Message) -> Option<Event> {
    let service: zbus::names::OwnedUniqueName = message.header().sender()?.to_owned().into();
    let at = message.recv_position();
    if let Some(click) = ActionInvoked::from_message(message.clone()) {
        let args = click.args().ok()?;
        return Some(Event::Clicked { which: Shown { service, id: args.id }, action: args.action_key, at });
    }
    let closed = NotificationClosed::from_message(message)?;
    let args = closed.args().ok()?;
    Some(Event::Closed { which: Shown { service, id: args.id }, at })
}

/// Whether the connection is still good after `err`: the service answered with an error
/// (refused one notification, or no service owns the name yet) or did not answer in time (zbus
/// drops a late answer), as against a connection that broke.
fn connection_kept(err: &zbus::Error) -> bool {
    match err {
        zbus::Error::MethodError(..) | zbus::Error::FDO(_) => true,
        zbus::Error::InputOutput(io) => io.kind() == std::io::ErrorKind::TimedOut,
        _ => false,
    }
}

/// Logs a desktop that cannot show notifications once per outage, not once per notice.
#[derive(Default)]
struct Outage {
    reported: bool,
}

impl Outage {
    fn report(&mut self, why: &dyn std::fmt::Display, what: &str) {
        if !std::mem::replace(&mut self.reported, true) {
            tracing::warn!(error = %why, "{what}; the inbox still has every notice");
        }
    }

    fn over(&mut self) {
        self.reported = false;
    }
}

/// Connects within [`CALL_LIMIT`].
async fn connect(bus: &Bus) -> Result<Desktop, String> {
    match tokio::time::timeout(CALL_LIMIT, Desktop::connect(bus)).await {
        Ok(connected) => connected.map_err(|err| err.to_string()),
        Err(_) => Err(format!("the session bus did not answer within {CALL_LIMIT:?}")),
    }
}

/// Shows each notice and calls `on_open` with the notice whose notification the owner clicked.
/// Connects at the first notice (an idle Hearth holds no bus connection), and again after the
/// connection is lost. A desktop without a notification service (a bare Xvfb) is logged once
/// per outage and otherwise ignored: the Inbox has every notice.
pub(super) async fn run(bus: Bus, mut notices: mpsc::Receiver<NotificationView>, on_open: impl Fn(NotificationView)) {
    let mut desktop: Option<Desktop> = None;
    let mut outage = Outage::default();
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
            Event::Closed { which, at } => {
                if let Some(connected) = desktop.as_mut() {
                    connected.take_signalled(&which, at);
                }
            }
            Event::Clicked { which, action, at } => {
                // Only the click Hearth offered opens anything; the notification is gone from
                // the desktop either way once an action is invoked.
                if let Some(notice) = desktop.as_mut().and_then(|connected| connected.take_signalled(&which, at))
                    && action == CLICK
                {
                    on_open(notice);
                }
            }
            Event::Notice(notice) => {
                if desktop.is_none() {
                    desktop = connect(&bus).await.map_err(|why| outage.report(&why, "the desktop has no notification service")).ok();
                }
                let Some(connected) = desktop.as_mut() else { continue };
                match connected.show(notice).await {
                    Ok(()) => outage.over(),
                    Err(err) => {
                        outage.report(&err, "the desktop did not show a notification");
                        if !connection_kept(&err) {
                            // Connect afresh for the next one; what is shown is forgotten with
                            // the connection its clicks would have come on.
                            desktop = None;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "freedesktop_tests.rs"]
mod tests;
