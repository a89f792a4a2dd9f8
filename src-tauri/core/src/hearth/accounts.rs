//! Settings → Accounts: the owner's Google OAuth client, connecting Google accounts (read, or
//! read and write), disconnecting them, and which account the agent's mail and calendar tools
//! use — the sample mailbox, or a connected account.
//!
//! A sign-in is two calls, so the window stays responsive while the owner is at Google's
//! consent page: `account_connect_begin` binds the loopback redirect and answers the consent
//! address (the shell opens it in the system browser); `account_connect_finish` waits for
//! Google to send the browser back, exchanges the code, asks Gmail which account it is, and
//! makes it the chosen one. Every sign-in is a new connection: a reconnect of the same account
//! replaces the old one, whose pending proposals can then no longer be approved.
//!
//! Mobile (iOS/Android) has no loopback listener the system browser can reach: there the same
//! flow needs a redirect through a deep link (tauri-plugin-deep-link) handing `code` and
//! `state` to [`GoogleAuth::complete`]. That is the seam; it is not built yet.

use std::collections::HashMap;
use std::sync::Arc;

use hearth_protocol::accounts::{
    AccountAccess, AccountProvider, AccountView, AccountsView, ConnectBegun, GoogleClientParams, GoogleClientView, SAMPLE_ACCOUNT,
};
use tokio_util::sync::CancellationToken;

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::settings::GOOGLE_CLIENT_SECRET;
use crate::store::accounts::GoogleAccountRow;
use crate::store::now_ms;
use crate::workspace::google::oauth::{
    Access, ClientConfig, GoogleAuth, LoopbackRedirect, Revocation, STATE_TTL, WRITE_SCOPES, tokens_name,
};
use crate::workspace::{GoogleWorkspace, Workspace};

/// Sign-ins waiting for Google at once (an abandoned one is dropped for a new one).
const MAX_PENDING: usize = 3;

/// A sign-in waiting for the browser to come back.
struct Pending {
    redirect: LoopbackRedirect,
    state: String,
    auth: GoogleAuth,
    started_at: i64,
}

/// What Accounts keeps while Hearth runs.
pub(super) struct AccountsState {
    /// The sample mailbox, to switch back to.
    local: Arc<dyn Workspace>,
    /// The sign-in flow for the configured client (one instance, so refreshes stay
    /// single-flight), with the client it was made for.
    auth: tokio::sync::Mutex<Option<(String, GoogleAuth)>>,
    /// Google accounts opened in this session, by connection id.
    open: std::sync::Mutex<HashMap<String, GoogleWorkspace>>,
    pending: tokio::sync::Mutex<HashMap<String, Pending>>,
    /// One switch of account at a time (choose, connect, disconnect): what is stored and what
    /// is in use never disagree.
    switching: tokio::sync::Mutex<()>,
}

impl AccountsState {
    pub(super) fn new(local: Arc<dyn Workspace>) -> Self {
        Self {
            local,
            auth: tokio::sync::Mutex::default(),
            open: std::sync::Mutex::default(),
            pending: tokio::sync::Mutex::default(),
            switching: tokio::sync::Mutex::default(),
        }
    }

    fn opened(&self, connection_id: &str) -> Option<GoogleWorkspace> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(connection_id).cloned()
    }

    fn keep(&self, workspace: GoogleWorkspace) {
        let id = workspace.connection_now().id.clone();
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, workspace);
    }

    fn drop_open(&self, connection_id: &str) {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(connection_id);
    }
}

impl Hearth {
    /// Settings → Accounts.
    pub async fn accounts_get(&self) -> Result<AccountsView> {
        self.accounts_view(None).await
    }

    async fn accounts_view(&self, notice: Option<String>) -> Result<AccountsView> {
        let stored = self.settings.load().await?;
        let mut accounts = vec![AccountView {
            connection_id: SAMPLE_ACCOUNT.into(),
            provider: AccountProvider::Sample,
            account: self.store.local_account().await?,
            access: AccountAccess::ReadWrite,
            scopes: Vec::new(),
            connected_at: 0,
            last_sync: None,
        }];
        for row in self.store.google_accounts().await? {
            let writes = WRITE_SCOPES.iter().all(|w| row.scopes.iter().any(|s| s == w));
            accounts.push(AccountView {
                last_sync: self.accounts.opened(&row.connection_id).and_then(|w| w.last_sync()),
                connection_id: row.connection_id,
                provider: AccountProvider::Google,
                account: row.account,
                access: if writes { AccountAccess::ReadWrite } else { AccountAccess::Read },
                scopes: row.scopes,
                connected_at: row.connected_at,
            });
        }
        // What is in use, not what was stored: a stored choice that could not be opened at
        // start-up left the sample mailbox in use.
        let in_use = self.chosen.connection().await?;
        Ok(AccountsView {
            accounts,
            chosen: if in_use.id == crate::workspace::LOCAL_CONNECTION_ID { SAMPLE_ACCOUNT.into() } else { in_use.id },
            client: GoogleClientView {
                client_id: stored.google_client_id,
                has_secret: self.settings.has_secret(GOOGLE_CLIENT_SECRET).await?,
            },
            notice,
        })
    }

    /// The owner's own Google Cloud OAuth client (its secret: `None` keeps, empty removes).
    pub async fn accounts_client_set(&self, params: &GoogleClientParams) -> Result<AccountsView> {
        self.settings.update_secret(GOOGLE_CLIENT_SECRET, params.client_secret.as_deref()).await?;
        let client_id = params.client_id.trim().to_owned();
        self.settings.update(|s| s.google_client_id = Some(client_id)).await?;
        // The next sign-in uses the new client; open accounts keep theirs (their tokens were
        // issued to it).
        *self.accounts.auth.lock().await = None;
        self.accounts_get().await
    }

    /// The sign-in flow of the configured client.
    async fn google_auth(&self) -> Result<GoogleAuth> {
        let stored = self.settings.load().await?;
        let client_id = stored.google_client_id.ok_or_else(|| {
            CoreError::InvalidInput(
                "Set your Google OAuth client first (Settings → Accounts → Google client): Hearth signs in with your own \
                 Google Cloud client."
                    .into(),
            )
        })?;
        let mut cached = self.accounts.auth.lock().await;
        if let Some((id, auth)) = cached.as_ref()
            && *id == client_id
        {
            return Ok(auth.clone());
        }
        let client = ClientConfig {
            client_id: client_id.clone(),
            client_secret: self.settings.secret(GOOGLE_CLIENT_SECRET).await?,
            endpoints: self.config.google.oauth.clone(),
        };
        let auth = GoogleAuth::new(self.store.clone(), self.settings.vault().clone(), client)?;
        *cached = Some((client_id, auth.clone()));
        Ok(auth)
    }

    /// Starts a Google sign-in: the consent page's address for the owner's browser.
    pub async fn account_connect_begin(&self, access: AccountAccess) -> Result<ConnectBegun> {
        let auth = self.google_auth().await?;
        let redirect = LoopbackRedirect::bind().await?;
        let access = match access {
            AccountAccess::Read => Access::Read,
            AccountAccess::ReadWrite => Access::ReadWrite,
        };
        let consent_url = auth.begin(access, redirect.uri()).await?;
        let state = url::Url::parse(&consent_url)
            .ok()
            .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
            .ok_or_else(|| CoreError::Unavailable("The sign-in address came out without its state; try again.".into()))?;
        let attempt_id = uuid::Uuid::new_v4().to_string();
        let mut pending = self.accounts.pending.lock().await;
        while pending.len() >= MAX_PENDING {
            let oldest = pending.iter().min_by_key(|(_, p)| p.started_at).map(|(id, _)| id.clone());
            match oldest {
                Some(id) => pending.remove(&id),
                None => break,
            };
        }
        pending.insert(attempt_id.clone(), Pending { redirect, state, auth, started_at: now_ms() });
        Ok(ConnectBegun { attempt_id, consent_url })
    }

    /// Waits for Google to send the owner's browser back (at most 10 minutes), completes the
    /// sign-in, and makes the account the one the tools use.
    pub async fn account_connect_finish(&self, attempt_id: &str) -> Result<AccountsView> {
        let pending = self.accounts.pending.lock().await.remove(attempt_id).ok_or_else(|| {
            CoreError::NotFound("That sign-in is no longer waiting (it finished, or a newer one replaced it); start it again.".into())
        })?;
        let cancel = CancellationToken::new();
        let callback = tokio::time::timeout(STATE_TTL, pending.redirect.next_callback(&pending.state, &cancel))
            .await
            .map_err(|_| CoreError::Expired("Google did not send the browser back within 10 minutes; start the sign-in again.".into()))??;
        let connection = pending.auth.complete(&callback.code, &callback.state).await?;
        let workspace =
            match GoogleWorkspace::open(self.store.clone(), pending.auth.clone(), &connection.id, &self.config.google.apis).await {
                Ok(workspace) => workspace,
                Err(err) => {
                    // A sign-in that cannot be used leaves no tokens behind.
                    if let Err(forget) = pending.auth.disconnect(&connection.id).await {
                        tracing::warn!(error = %forget, "could not remove the tokens of a sign-in that failed");
                    }
                    return Err(err);
                }
            };
        let _one_switch = self.accounts.switching.lock().await;
        let row = GoogleAccountRow {
            connection_id: connection.id.clone(),
            account: workspace.connection_now().account.clone(),
            scopes: connection.scopes.clone(),
            connected_at: now_ms(),
        };
        // The account's earlier connection ends here: its tokens go, and what was prepared for
        // it can no longer be approved.
        for replaced in self.store.put_google_account(&row).await? {
            self.accounts.drop_open(&replaced);
            if let Err(err) = pending.auth.forget(&replaced).await {
                tracing::warn!(error = %err, "could not forget a replaced Google connection's tokens");
            }
        }
        self.accounts.keep(workspace.clone());
        self.use_account_locked(Arc::new(workspace), Some(connection.id.clone())).await?;
        drop(_one_switch);
        let notice = (!connection.missing.is_empty()).then(|| format!("Google did not grant: {}", connection.missing.join(", ")));
        self.accounts_view(notice).await
    }

    /// The account the mail and calendar tools use from now on (`local`: the sample mailbox).
    pub async fn account_choose(&self, connection_id: &str) -> Result<AccountsView> {
        {
            let _one_switch = self.accounts.switching.lock().await;
            if connection_id == SAMPLE_ACCOUNT {
                self.use_account_locked(self.accounts.local.clone(), None).await?;
            } else {
                let workspace = self.google_workspace(connection_id).await?;
                self.use_account_locked(Arc::new(workspace), Some(connection_id.to_owned())).await?;
            }
        }
        self.accounts_get().await
    }

    /// Disconnects a Google account: Google is asked to revoke Hearth's access and its tokens
    /// are deleted here; if the tools used it, they use the sample mailbox from now on.
    pub async fn account_disconnect(&self, connection_id: &str) -> Result<AccountsView> {
        if connection_id == SAMPLE_ACCOUNT {
            return Err(CoreError::InvalidInput("The sample mailbox is part of Hearth; it cannot be disconnected.".into()));
        }
        let one_switch = self.accounts.switching.lock().await;
        let known = self.store.google_accounts().await?.iter().any(|r| r.connection_id == connection_id);
        if !known {
            // A disconnect that failed half-way left tokens: they go now.
            let leftover = self.settings.vault().delete(&tokens_name(connection_id)).await?;
            if leftover {
                return self.accounts_view(None).await;
            }
            return Err(CoreError::NotFound(format!("There is no connected account {connection_id}.")));
        }
        // First out of use and out of the table (no approval can be claimed for it from here
        // on), then revoked and its tokens deleted.
        if self.chosen.connection().await?.id == connection_id {
            self.use_account_locked(self.accounts.local.clone(), None).await?;
        }
        self.store.delete_google_account(connection_id).await?;
        let opened = self.accounts.opened(connection_id);
        self.accounts.drop_open(connection_id);
        drop(one_switch);
        // The workspace's own sign-in flow when it was open (its refreshes share the lock).
        let auth = match opened {
            Some(workspace) => Ok(workspace.auth().clone()),
            None => self.google_auth().await,
        };
        let notice = match auth {
            Ok(auth) => match auth.disconnect(connection_id).await {
                Ok(Revocation::Confirmed) => None,
                Ok(Revocation::NotConfirmed(why)) => Some(why),
                Err(err) => Some(format!("Hearth could not finish removing this account's tokens ({err}); try Disconnect again.")),
            },
            // No client to revoke with: the tokens are deleted all the same.
            Err(_) => {
                self.settings.vault().delete(&tokens_name(connection_id)).await?;
                Some(
                    "Hearth could not ask Google to revoke its access (no OAuth client is set); remove it on your Google account page."
                        .into(),
                )
            }
        };
        self.accounts_view(notice).await
    }

    /// A connected account's workspace, opened before or restored from its row (no network).
    async fn google_workspace(&self, connection_id: &str) -> Result<GoogleWorkspace> {
        if let Some(open) = self.accounts.opened(connection_id) {
            return Ok(open);
        }
        let row = self
            .store
            .google_accounts()
            .await?
            .into_iter()
            .find(|r| r.connection_id == connection_id)
            .ok_or_else(|| CoreError::NotFound(format!("There is no connected account {connection_id}.")))?;
        let auth = self.google_auth().await?;
        let workspace = GoogleWorkspace::restore(self.store.clone(), auth, &row.connection_id, &row.account, &self.config.google.apis)?;
        self.accounts.keep(workspace.clone());
        Ok(workspace)
    }

    /// Switches the tools and the gate to `workspace` and remembers the choice (the caller
    /// holds `switching`).
    async fn use_account_locked(&self, workspace: Arc<dyn Workspace>, connection_id: Option<String>) -> Result<()> {
        self.settings.update(|s| s.account = connection_id).await?;
        self.choose_workspace(workspace);
        Ok(())
    }

    /// At start-up: the account chosen last time, if it is still connected (no network needed).
    pub(super) async fn restore_account(&self) {
        let chosen = match self.settings.load().await {
            Ok(stored) => stored.account,
            Err(err) => {
                tracing::warn!(error = %err, "could not read which account was chosen; the sample mailbox is used");
                return;
            }
        };
        let Some(connection_id) = chosen else { return };
        match self.google_workspace(&connection_id).await {
            Ok(workspace) => self.choose_workspace(Arc::new(workspace)),
            Err(err) => tracing::warn!(error = %err, "the chosen Google account could not be opened; the sample mailbox is used"),
        }
    }
}
