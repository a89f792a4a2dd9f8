//! The inbox shared app-wide, fed by one `notification_list` and then `notification_watch`
//! (started first, so no notice falls between the two). The nav's badge reads it. A click on
//! an OS notification (`notification_open_watch`) opens its notice here.

use hearth_protocol::notifications::{NotificationOpened, NotificationReadParams, NotificationTarget, NotificationView};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc::{self, NoticeOpenSubscription, NoticeSubscription};
use crate::navigation::Navigation;
use crate::screens::Screen;
use crate::state::inbox::Inbox;

/// The inbox and why it could not be filled, if it could not.
#[derive(Debug, Clone, Copy)]
pub struct LiveInbox {
    /// Notices, kept current.
    pub inbox: RwSignal<Inbox>,
    /// The list or the watch failed.
    pub error: RwSignal<Option<String>>,
}

impl LiveInbox {
    /// The inbox provided by [`LiveInboxProvider`], if any.
    pub fn from_context() -> Option<Self> {
        use_context::<Self>()
    }

    /// Opens what a notice is about and marks it read.
    pub fn open(self, nav: Navigation, notice: &NotificationView) {
        if self.inbox.try_update(|inbox| inbox.mark_read(notice.id)).unwrap_or(false) {
            let params = NotificationReadParams { ids: vec![notice.id], all: false };
            // Kept: fire-and-forget; the notice is already marked read here, only a refusal is said.
            spawn_local(async move {
                if let Err(err) = ipc::notification_read(&params).await {
                    self.error.set(Some(format!("The notice could not be marked read: {}", err.message)));
                }
            });
        }
        match &notice.target {
            NotificationTarget::Task(id) => nav.open_task(id.clone()),
            NotificationTarget::Proposal(id) => nav.open_proposal(id.clone()),
            NotificationTarget::Schedule(_) => nav.screen.set(Screen::Activity),
        }
    }

    /// Marks every notice read.
    pub fn read_all(self) {
        // Kept: fire-and-forget into the app-wide inbox, which outlives any screen's action.
        spawn_local(async move {
            match ipc::notification_read(&NotificationReadParams { ids: vec![], all: true }).await {
                Ok(list) => self.inbox.update(|inbox| inbox.replace(list)),
                Err(err) => self.error.set(Some(format!("The notices could not be marked read: {}", err.message))),
            }
        });
    }
}

/// Fills the inbox, keeps it live, and provides it to `children`.
#[component]
pub fn LiveInboxProvider(children: Children) -> impl IntoView {
    let live = LiveInbox { inbox: RwSignal::new(Inbox::default()), error: RwSignal::new(None) };
    provide_context(live);
    let subscription = StoredValue::new_local(None::<NoticeSubscription>);
    let clicks = StoredValue::new_local(None::<NoticeOpenSubscription>);
    let nav = Navigation::from_context();
    // Kept: the app-wide notice and click watches (live subscriptions).
    spawn_local(async move {
        match ipc::notification_watch(move |notice| {
            live.inbox.maybe_update(|inbox| inbox.push(notice));
        })
        .await
        {
            Ok(sub) => subscription.set_value(Some(sub)),
            Err(err) => live.error.set(Some(format!("New notices are not arriving: {}", err.message))),
        }
        match ipc::notification_list().await {
            Ok(list) => live.inbox.update(|inbox| inbox.replace(list)),
            Err(err) => live.error.set(Some(format!("Notices could not be loaded: {}", err.message))),
        }
        // A click on an OS notification opens its notice as a click in the Inbox does.
        // Subscribed after the list: a click held while the window loaded marks its notice
        // read after the list arrived, not before a list that would show it unread again.
        let Some(nav) = nav else { return };
        let opened = ipc::notification_open_watch(move |opened: NotificationOpened| {
            live.inbox.maybe_update(|inbox| inbox.push(opened.notice.clone()));
            live.open(nav, &opened.notice);
        })
        .await;
        match opened {
            Ok(sub) => clicks.set_value(Some(sub)),
            Err(err) => live.error.set(Some(format!("Clicked notifications will not open here: {}", err.message))),
        }
    });
    children()
}
