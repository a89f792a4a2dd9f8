#![allow(clippy::unwrap_used)]

use hearth_protocol::ids::TaskId;
use hearth_protocol::notifications::{NotificationKind, NotificationTarget};

use super::*;

fn notice(id: i64, read: bool) -> NotificationView {
    NotificationView {
        id,
        kind: NotificationKind::TaskDone,
        title: format!("task {id}"),
        body: "Done.".into(),
        target: NotificationTarget::Task(TaskId::parse(format!("t{id}")).unwrap()),
        created_at: id * 1_000,
        read,
    }
}

#[test]
fn a_notice_seen_by_the_list_and_the_watch_counts_once() {
    let mut inbox = Inbox::default();
    assert!(inbox.push(notice(3, false)));
    inbox.replace(NotificationListResponse { notifications: vec![notice(3, false), notice(2, true)], unread: 1 });
    assert_eq!(inbox.notices.iter().map(|n| n.id).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(inbox.unread, 1);
    assert!(!inbox.push(notice(3, false)));
    assert_eq!(inbox.unread, 1);
}

#[test]
fn watched_notices_newer_than_the_list_survive_it_and_stay_ordered() {
    let mut inbox = Inbox::default();
    inbox.push(notice(5, false));
    inbox.replace(NotificationListResponse { notifications: vec![notice(4, false)], unread: 1 });
    assert_eq!(inbox.notices.iter().map(|n| n.id).collect::<Vec<_>>(), [5, 4]);
    assert_eq!(inbox.unread, 2);
    // Out of order from the watch: placed by id.
    inbox.push(notice(7, false));
    inbox.push(notice(6, true));
    assert_eq!(inbox.notices.iter().map(|n| n.id).collect::<Vec<_>>(), [7, 6, 5, 4]);
    assert_eq!(inbox.badge().as_deref(), Some("3"));
}

#[test]
fn marking_read_lowers_the_badge_once() {
    let mut inbox = Inbox::default();
    inbox.replace(NotificationListResponse { notifications: vec![notice(1, false)], unread: 1 });
    assert!(inbox.mark_read(1));
    assert!(!inbox.mark_read(1));
    assert_eq!(inbox.unread, 0);
    assert_eq!(inbox.badge(), None);
    inbox.unread = 150;
    assert_eq!(inbox.badge().as_deref(), Some("99+"));
}
