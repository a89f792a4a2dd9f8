//! Settings → Accounts as words: what each account is and may do, and what a sign-in step
//! says. Pure, so the rules are tested without a webview.

use hearth_protocol::accounts::{AccountAccess, AccountProvider, AccountView};

/// "Sample mailbox", "Google".
pub const fn provider_label(provider: AccountProvider) -> &'static str {
    match provider {
        AccountProvider::Sample => "Sample mailbox",
        AccountProvider::Google => "Google",
    }
}

/// What the account lets Hearth do; writes always wait for the owner's approval.
pub const fn access_label(access: AccountAccess) -> &'static str {
    match access {
        AccountAccess::Read => "Reads mail and calendar",
        AccountAccess::ReadWrite => "Reads, and sends or changes after your approval",
    }
}

/// Whether "Grant write access" is offered: a Google account connected for reading.
pub fn can_grant_write(account: &AccountView) -> bool {
    account.provider == AccountProvider::Google && account.access == AccountAccess::Read
}

/// Whether "Disconnect" is offered: only a Google account (the sample mailbox is Hearth's).
pub fn can_disconnect(account: &AccountView) -> bool {
    account.provider == AccountProvider::Google
}

/// A scope as the owner reads it: its last path segment (`gmail.readonly`), not Google's URL.
pub fn scope_label(scope: &str) -> &str {
    scope.rsplit('/').next().unwrap_or(scope)
}

/// "Last read 3 min ago", "Not read yet in this session".
pub fn sync_label(last_sync: Option<i64>, now_ms: i64) -> String {
    match last_sync {
        None => "Not read yet in this session".to_owned(),
        Some(at) => {
            let minutes = (now_ms.saturating_sub(at)).max(0) / 60_000;
            match minutes {
                0 => "Last read just now".to_owned(),
                1 => "Last read 1 min ago".to_owned(),
                m => format!("Last read {m} min ago"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn account(provider: AccountProvider, access: AccountAccess) -> AccountView {
        AccountView {
            connection_id: "c1".into(),
            provider,
            account: "owner@example.com".into(),
            access,
            scopes: vec![],
            connected_at: 0,
            last_sync: None,
        }
    }

    #[test]
    fn only_a_google_account_can_be_disconnected_and_only_a_read_one_offered_write() {
        let sample = account(AccountProvider::Sample, AccountAccess::ReadWrite);
        let read = account(AccountProvider::Google, AccountAccess::Read);
        let write = account(AccountProvider::Google, AccountAccess::ReadWrite);
        assert_eq!([can_disconnect(&sample), can_disconnect(&read), can_disconnect(&write)], [false, true, true]);
        assert_eq!([can_grant_write(&sample), can_grant_write(&read), can_grant_write(&write)], [false, true, false]);
        assert_eq!(provider_label(AccountProvider::Sample), "Sample mailbox");
        assert!(access_label(AccountAccess::ReadWrite).contains("approval"));
    }

    #[test]
    fn scopes_read_as_their_short_names() {
        assert_eq!(scope_label("https://www.googleapis.com/auth/gmail.readonly"), "gmail.readonly");
        assert_eq!(scope_label("calendar.events"), "calendar.events");
    }

    #[test]
    fn the_last_read_is_in_whole_minutes_and_never_negative() {
        assert_eq!(sync_label(None, 10), "Not read yet in this session");
        assert_eq!(sync_label(Some(0), 59_999), "Last read just now");
        assert_eq!(sync_label(Some(0), 60_000), "Last read 1 min ago");
        assert_eq!(sync_label(Some(0), 185_000), "Last read 3 min ago");
        assert_eq!(sync_label(Some(10_000), 0), "Last read just now", "a clock behind the backend's");
    }
}
