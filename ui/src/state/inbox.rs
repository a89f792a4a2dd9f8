//! The inbox as plain data: notices newest first, each once, and the unread count.
//!
//! The list (`notification_list`) and the watch (`notification_watch`) can deliver the same
//! notice; it is kept once, by id.

use hearth_protocol::notifications::{NotificationListResponse, NotificationView};

/// How many notices the inbox keeps in the window.
pub const KEPT: usize = 200;

/// Notices and the unread count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inbox {
    /// Newest first.
    pub notices: Vec<NotificationView>,
    /// Unread, as the backend last counted plus new unread notices since.
    pub unread: i64,
}

impl Inbox {
    /// Takes the backend's list, keeping watched notices newer than it.
    pub fn replace(&mut self, list: NotificationListResponse) {
        let newest_listed = list.notifications.first().map_or(0, |n| n.id);
        let newer: Vec<NotificationView> = self.notices.iter().filter(|n| n.id > newest_listed).cloned().collect();
        let extra_unread = i64::try_from(newer.iter().filter(|n| !n.read).count()).unwrap_or(0);
        self.notices = newer;
        self.notices.extend(list.notifications);
        self.notices.truncate(KEPT);
        self.unread = list.unread + extra_unread;
    }

    /// A notice from the watch. `false` when it was already here.
    pub fn push(&mut self, notice: NotificationView) -> bool {
        if self.notices.iter().any(|n| n.id == notice.id) {
            return false;
        }
        if !notice.read {
            self.unread += 1;
        }
        let at = self.notices.iter().position(|n| n.id < notice.id).unwrap_or(self.notices.len());
        self.notices.insert(at, notice);
        self.notices.truncate(KEPT);
        true
    }

    /// Marks one read here (the backend is told separately). `false` when it was read already.
    pub fn mark_read(&mut self, id: i64) -> bool {
        match self.notices.iter_mut().find(|n| n.id == id && !n.read) {
            Some(notice) => {
                notice.read = true;
                self.unread = (self.unread - 1).max(0);
                true
            }
            None => false,
        }
    }

    /// The nav's badge: empty when nothing is unread, "99+" past 99.
    pub fn badge(&self) -> Option<String> {
        match self.unread {
            n if n <= 0 => None,
            n if n > 99 => Some("99+".into()),
            n => Some(n.to_string()),
        }
    }
}

#[cfg(test)]
#[path = "inbox_tests.rs"]
mod tests;
