//! Signing in to Google: OAuth 2.0 for a desktop app (RFC 8252) with the `oauth2` crate.
//!
//! - **The flow**: Hearth listens on `127.0.0.1:<free port>` ([`LoopbackRedirect`]), sends the
//!   owner's own browser to Google's consent page with a PKCE S256 challenge and a random
//!   `state`, and takes the one redirect back that carries that state. The verifier never
//!   leaves Hearth until the token exchange, so a code intercepted on the way is useless.
//! - **`state` is single-use and short-lived**: only its SHA-256 is stored (`oauth_states`, with a
//!   10-minute expiry), its verifier sealed in the vault; completing a sign-in deletes and reads
//!   the row in one statement, so a replayed or late redirect is refused before any exchange.
//! - **Tokens live only in the vault** (AES-256-GCM) as one sealed record per connection, are
//!   `SecretString` from the vault to the request header, and reach no log, IPC payload or model.
//! - **Refresh is single-flight per connection**: callers wanting a token while fewer than 60 s
//!   remain queue on one lock per connection; the first refreshes, the rest read what it stored.
//! - **Each connect mints a new connection id**, so what was prepared for an earlier connection
//!   (a proposal, a cached search) can be told apart and refused.
//!
//! Nothing here follows a redirect: the token and revocation endpoints answer directly, and a
//! 3xx would resend the code or the refresh token elsewhere.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken,
    RevocationUrl, Scope, StandardRevocableToken, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::{CoreError, Result};
use crate::secret::{ExposeSecret, SecretString};
use crate::store::oauth::StateLookup;
use crate::store::{Store, now_ms};
use crate::vault::Vault;

/// How long a sign-in may take from the consent page to the redirect back.
pub const STATE_TTL: Duration = Duration::from_secs(10 * 60);

/// A token with less than this left is refreshed before use.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// What the agent may read: mail, events and the list of calendars.
pub const READ_SCOPES: [&str; 3] = [
    "https://www.googleapis.com/auth/gmail.readonly",
    "https://www.googleapis.com/auth/calendar.events.readonly",
    "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
];

/// What sending mail and writing events add, granted only when the owner asks for it.
pub const WRITE_SCOPES: [&str; 2] = ["https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/calendar.events"];

/// How much the owner grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading mail and calendars.
    Read,
    /// Reading, sending mail and writing events (always through the owner's review).
    ReadWrite,
}

impl Access {
    /// The scopes this access asks for.
    pub fn scopes(self) -> Vec<&'static str> {
        match self {
            Access::Read => READ_SCOPES.to_vec(),
            Access::ReadWrite => READ_SCOPES.iter().chain(WRITE_SCOPES.iter()).copied().collect(),
        }
    }
}

/// Where Google's OAuth endpoints are (tests point them at a fixture on loopback).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// The consent page.
    pub auth_url: String,
    /// Code and refresh-token exchange.
    pub token_url: String,
    /// Revocation.
    pub revoke_url: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self {
            auth_url: "https://accounts.google.com/o/oauth2/v2/auth".into(),
            token_url: "https://oauth2.googleapis.com/token".into(),
            revoke_url: "https://oauth2.googleapis.com/revoke".into(),
        }
    }
}

/// The owner's own Google Cloud OAuth client (a "Desktop app" client: its secret is not
/// confidential, but it is kept like one).
#[derive(Clone)]
pub struct ClientConfig {
    /// The client id.
    pub client_id: String,
    /// The client secret, if the client has one.
    pub client_secret: Option<SecretString>,
    /// Google's endpoints.
    pub endpoints: Endpoints,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[REDACTED]"))
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

/// A connection's tokens, as sealed in the vault.
#[derive(Serialize, Deserialize)]
struct StoredTokens {
    access_token: String,
    refresh_token: Option<String>,
    /// Unix ms.
    expires_at: i64,
    scopes: Vec<String>,
}

/// One connected account (its tokens stay in the vault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// New for every connect.
    pub id: String,
    /// The scopes Google granted that this sign-in asked for. Google may return more (with
    /// `include_granted_scopes`, what an earlier sign-in granted): those are not this
    /// connection's, so a read sign-in never holds write access.
    pub scopes: Vec<String>,
    /// What was asked for and not granted (the owner can untick scopes on the consent page).
    pub missing: Vec<String>,
}

/// What a disconnect achieved at Google (the tokens are gone here either way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// Google revoked the grant.
    Confirmed,
    /// Google did not confirm; the owner can remove Hearth's access on their account page.
    NotConfirmed(String),
}

/// Where the owner removes an app's access by hand.
pub const PERMISSIONS_PAGE: &str = "https://myaccount.google.com/permissions";

/// The `oauth2` client with Hearth's endpoints set: authorization, token, revocation and
/// redirect (introspection and device flow unused).
type ConfiguredClient = oauth2::Client<
    oauth2::basic::BasicErrorResponse,
    oauth2::basic::BasicTokenResponse,
    oauth2::basic::BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    oauth2::basic::BasicRevocationErrorResponse,
    oauth2::EndpointSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
    oauth2::EndpointSet,
>;

/// The sign-in flow and the tokens of every connection. Cheap to clone.
#[derive(Clone)]
pub struct GoogleAuth {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    vault: Vault,
    client: ClientConfig,
    http: reqwest::Client,
    state_ttl: Duration,
}

impl std::fmt::Debug for GoogleAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleAuth").field("client", &self.inner.client).finish_non_exhaustive()
    }
}

/// One lock per connection, for the whole process: its refreshes, its forget and its
/// disconnect never overlap, whichever `GoogleAuth` they go through (a new one is made when the
/// owner changes the OAuth client, while open accounts keep theirs). Connection ids are UUIDs.
static CONNECTION_LOCKS: std::sync::LazyLock<std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    std::sync::LazyLock::new(Default::default);

/// The vault name of a connection's tokens.
pub(crate) fn tokens_name(connection_id: &str) -> String {
    format!("google-tokens:{connection_id}")
}

/// The vault name of a sign-in's PKCE verifier.
fn verifier_name(state_hash: &str) -> String {
    format!("oauth-verifier:{state_hash}")
}

fn hash_state(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))
}

fn unavailable(what: &str, err: impl std::fmt::Display) -> CoreError {
    CoreError::Unavailable(format!("Google {what} failed: {err}"))
}

impl GoogleAuth {
    /// The flow for `client`, keeping state in `store` and tokens in `vault`.
    pub fn new(store: Store, vault: Vault, client: ClientConfig) -> Result<Self> {
        // Codes, tokens and the client secret go to these addresses.
        for url in [&client.endpoints.auth_url, &client.endpoints.token_url, &client.endpoints.revoke_url] {
            super::check_endpoint(url, "a Google OAuth")?;
        }
        let http = super::http_client("Google sign-in")?;
        Ok(Self { inner: Arc::new(Inner { store, vault, client, http, state_ttl: STATE_TTL }) })
    }

    /// The same flow with sign-ins valid for `ttl` (tests use zero: every state is late).
    #[doc(hidden)]
    pub fn with_state_ttl(self, ttl: Duration) -> Self {
        let inner = Inner {
            store: self.inner.store.clone(),
            vault: self.inner.vault.clone(),
            client: self.inner.client.clone(),
            http: self.inner.http.clone(),
            state_ttl: ttl,
        };
        Self { inner: Arc::new(inner) }
    }

    fn oauth_client(&self, redirect_uri: &str) -> Result<ConfiguredClient> {
        let endpoints = &self.inner.client.endpoints;
        let bad = |what: &str| CoreError::InvalidInput(format!("The Google {what} URL is not a valid address."));
        let mut client = BasicClient::new(ClientId::new(self.inner.client.client_id.clone()))
            .set_auth_uri(AuthUrl::new(endpoints.auth_url.clone()).map_err(|_| bad("sign-in"))?)
            .set_token_uri(TokenUrl::new(endpoints.token_url.clone()).map_err(|_| bad("token"))?)
            .set_revocation_url(RevocationUrl::new(endpoints.revoke_url.clone()).map_err(|_| bad("revocation"))?)
            .set_redirect_uri(RedirectUrl::new(redirect_uri.to_owned()).map_err(|_| bad("redirect"))?);
        if let Some(secret) = &self.inner.client.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.expose_secret().to_owned()));
        }
        Ok(client)
    }

    /// Starts a sign-in for `access` that comes back to `redirect_uri` (a
    /// [`LoopbackRedirect::uri`]): the address of Google's consent page for the owner's browser.
    /// Asks for offline access (a refresh token) and keeps what was granted before
    /// (`include_granted_scopes`), so granting write access later adds to the read scopes.
    pub async fn begin(&self, access: Access, redirect_uri: &str) -> Result<String> {
        let client = self.oauth_client(redirect_uri)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state) = client
            .authorize_url(CsrfToken::new_random)
            .add_scopes(access.scopes().into_iter().map(|s| Scope::new(s.to_owned())))
            .add_extra_param("access_type", "offline")
            .add_extra_param("include_granted_scopes", "true")
            .add_extra_param("prompt", "consent")
            .set_pkce_challenge(challenge)
            .url();
        let state_hash = hash_state(state.secret());
        // The verifier first: a state row without its verifier would fail at the exchange.
        self.inner.vault.put(&verifier_name(&state_hash), &SecretString::from(verifier.secret().to_owned())).await?;
        let ttl = i64::try_from(self.inner.state_ttl.as_millis()).unwrap_or(i64::MAX);
        let scopes = access.scopes().join(" ");
        let swept = match self.inner.store.begin_oauth_state(&state_hash, redirect_uri, &scopes, now_ms().saturating_add(ttl)).await {
            Ok(swept) => swept,
            Err(err) => {
                let _ = self.inner.vault.delete(&verifier_name(&state_hash)).await;
                return Err(err.into());
            }
        };
        // Sign-ins abandoned earlier take their verifiers with them.
        for hash in swept {
            self.inner.vault.delete(&verifier_name(&hash)).await?;
        }
        Ok(url.to_string())
    }

    /// Completes the sign-in that `state` names with Google's `code`: the state is consumed
    /// (a second use, or one after 10 minutes, is refused before anything is sent), the code
    /// exchanged with its PKCE verifier, and the tokens sealed under a new connection id.
    pub async fn complete(&self, code: &str, state: &str) -> Result<Connection> {
        let state_hash = hash_state(state);
        let minutes = self.inner.state_ttl.as_secs() / 60;
        let consumed = match self.inner.store.consume_oauth_state(&state_hash).await? {
            // This call took the sign-in: its verifier is this call's alone.
            StateLookup::Valid(consumed) => consumed,
            StateLookup::Expired => {
                self.inner.vault.delete(&verifier_name(&state_hash)).await?;
                return Err(CoreError::NeedsSignIn(format!(
                    "This Google sign-in took longer than {minutes} minutes and has expired; start it again in Settings → Accounts."
                )));
            }
            StateLookup::Unknown => {
                return Err(CoreError::Forbidden(
                    "This Google sign-in was already used or was never started here; start it again in Settings → Accounts.".into(),
                ));
            }
        };
        let verifier = self.inner.vault.get(&verifier_name(&state_hash)).await;
        self.inner.vault.delete(&verifier_name(&state_hash)).await?;
        let verifier = verifier?.ok_or_else(|| {
            CoreError::Unavailable("This Google sign-in lost its key (PKCE verifier); start it again in Settings → Accounts.".into())
        })?;
        let client = self.oauth_client(&consumed.redirect_uri)?;
        let http = self.http_client();
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.expose_secret().to_owned()))
            .request_async(&http)
            .await
            .map_err(|err| token_error("sign-in", "start the sign-in again in Settings → Accounts", &err))?;
        let asked: Vec<String> = consumed.scopes.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect();
        // Without a `scope` in the answer, what was asked for was granted (RFC 6749 §5.1).
        let granted: Vec<String> = token.scopes().map_or_else(|| asked.clone(), |g| g.iter().map(|s| s.to_string()).collect());
        let scopes: Vec<String> = asked.iter().filter(|s| granted.contains(s)).cloned().collect();
        let missing: Vec<String> = asked.iter().filter(|s| !granted.contains(s)).cloned().collect();
        let stored = StoredTokens {
            access_token: token.access_token().secret().clone(),
            refresh_token: token.refresh_token().map(|t| t.secret().clone()),
            expires_at: expires_at(token.expires_in()),
            scopes: scopes.clone(),
        };
        let connection = Connection { id: uuid::Uuid::new_v4().to_string(), scopes, missing };
        self.seal(&connection.id, &stored).await?;
        Ok(connection)
    }

    /// An access token of `connection_id` with at least a minute left, refreshed first if
    /// needed. Concurrent callers share one refresh.
    pub async fn access_token(&self, connection_id: &str) -> Result<SecretString> {
        let lock = self.lock_of(connection_id);
        let _one_at_a_time = lock.lock().await;
        let stored = self.unseal(connection_id).await?;
        let margin = i64::try_from(REFRESH_MARGIN.as_millis()).unwrap_or(i64::MAX);
        if stored.expires_at.saturating_sub(now_ms()) > margin {
            return Ok(SecretString::from(stored.access_token));
        }
        let refresh = stored.refresh_token.clone().ok_or_else(|| {
            CoreError::NeedsSignIn("Google's access for this account has ended; connect it again in Settings → Accounts.".into())
        })?;
        // The redirect is not used by a refresh; any valid one will do.
        let client = self.oauth_client("http://127.0.0.1/")?;
        let http = self.http_client();
        let token = client
            .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
            .request_async(&http)
            .await
            .map_err(|err| token_error("token refresh", "connect the account again in Settings → Accounts", &err))?;
        let renewed = StoredTokens {
            access_token: token.access_token().secret().clone(),
            // Google keeps the refresh token unless it sends a new one.
            refresh_token: token.refresh_token().map(|t| t.secret().clone()).or(Some(refresh)),
            expires_at: expires_at(token.expires_in()),
            scopes: stored.scopes,
        };
        self.seal(connection_id, &renewed).await?;
        Ok(SecretString::from(renewed.access_token))
    }

    /// The scopes `connection_id` holds (what its sign-in asked for and Google granted): a
    /// write is refused before anything is sent unless its scope is here.
    pub async fn scopes(&self, connection_id: &str) -> Result<Vec<String>> {
        Ok(self.unseal(connection_id).await?.scopes)
    }

    /// Forgets `connection_id`'s tokens here without revoking them at Google: for a connection
    /// a newer sign-in of the same account replaced (revoking its refresh token could end the
    /// grant the new sign-in holds too).
    pub async fn forget(&self, connection_id: &str) -> Result<()> {
        let lock = self.lock_of(connection_id);
        let _one_at_a_time = lock.lock().await;
        self.inner.vault.delete(&tokens_name(connection_id)).await?;
        CONNECTION_LOCKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(connection_id);
        Ok(())
    }

    /// Disconnects: Google is asked to revoke the grant (its refresh token, else its access
    /// token), and the tokens are deleted here whatever Google answered or whether they could
    /// still be read — the owner asked for them to be gone. Waits for a refresh in flight, so
    /// none writes the tokens back afterwards.
    pub async fn disconnect(&self, connection_id: &str) -> Result<Revocation> {
        let lock = self.lock_of(connection_id);
        let _one_at_a_time = lock.lock().await;
        let stored = self.unseal(connection_id).await;
        let revocation = match stored {
            Ok(stored) => match self.revoke(stored.refresh_token.unwrap_or(stored.access_token)).await {
                Ok(()) => Revocation::Confirmed,
                Err(err) => Revocation::NotConfirmed(format!(
                    "Google did not confirm that Hearth's access is revoked ({err}); remove it at {PERMISSIONS_PAGE}."
                )),
            },
            Err(CoreError::NotFound(_)) => Revocation::Confirmed,
            Err(err) => Revocation::NotConfirmed(format!(
                "Hearth could not read this account's tokens to revoke them ({err}); remove its access at {PERMISSIONS_PAGE}."
            )),
        };
        self.inner.vault.delete(&tokens_name(connection_id)).await?;
        CONNECTION_LOCKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(connection_id);
        Ok(revocation)
    }

    /// The lock of `connection_id`'s refreshes and disconnect.
    fn lock_of(&self, connection_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = CONNECTION_LOCKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        locks.entry(connection_id.to_owned()).or_default().clone()
    }

    /// Revokes `token` (RFC 7009: one form POST). Sent here rather than through the `oauth2`
    /// crate's `revoke_token`, which refuses any revocation URL that is not https — Google's is,
    /// but the loopback fixture the tests run against cannot be.
    async fn revoke(&self, token: String) -> std::result::Result<(), String> {
        let body = url::form_urlencoded::Serializer::new(String::new()).append_pair("token", &token).finish();
        let response = self
            .inner
            .http
            .post(&self.inner.client.endpoints.revoke_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        let status = response.status();
        if status.is_success() { Ok(()) } else { Err(format!("Google answered {status}")) }
    }

    async fn seal(&self, connection_id: &str, tokens: &StoredTokens) -> Result<()> {
        let json = serde_json::to_string(tokens)?;
        self.inner.vault.put(&tokens_name(connection_id), &SecretString::from(json)).await?;
        Ok(())
    }

    async fn unseal(&self, connection_id: &str) -> Result<StoredTokens> {
        let sealed = self
            .inner
            .vault
            .get(&tokens_name(connection_id))
            .await?
            .ok_or_else(|| CoreError::NotFound("This Google account is not connected; connect it in Settings → Accounts.".into()))?;
        // serde's message may quote what it read: a fixed message instead.
        serde_json::from_str(sealed.expose_secret())
            .map_err(|_| CoreError::CorruptRow("a Google connection's sealed tokens are not in the expected shape".into()))
    }

    /// The `oauth2` crate's HTTP client: Hearth's reqwest client (no redirects, a timeout).
    fn http_client(
        &self,
    ) -> impl Fn(oauth2::HttpRequest) -> futures::future::BoxFuture<'static, std::result::Result<oauth2::HttpResponse, HttpError>> + use<>
    {
        let http = self.inner.http.clone();
        move |request: oauth2::HttpRequest| {
            let http = http.clone();
            Box::pin(async move {
                let request = reqwest::Request::try_from(request).map_err(|e| HttpError(e.to_string()))?;
                let response = http.execute(request).await.map_err(|e| HttpError(e.without_url().to_string()))?;
                let status = response.status();
                if status.is_redirection() {
                    return Err(HttpError(format!("Google answered with a redirect ({status}), which Hearth does not follow")));
                }
                let headers = response.headers().clone();
                let body = response.bytes().await.map_err(|e| HttpError(e.without_url().to_string()))?;
                let mut built = hyper::Response::builder().status(status);
                if let Some(map) = built.headers_mut() {
                    *map = headers;
                }
                built.body(body.to_vec()).map_err(|e| HttpError(e.to_string()))
            })
        }
    }
}

/// An HTTP failure talking to Google (never carries a token: request bodies are not in it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(String);

/// A token-endpoint failure in words: Google's error code and description, never the request.
/// A refused grant or code (`invalid_grant`: revoked, expired, used) is not an outage: it says
/// what to do (`then`).
fn token_error<E>(what: &str, then: &str, err: &oauth2::RequestTokenError<E, oauth2::basic::BasicErrorResponse>) -> CoreError
where
    E: std::error::Error + 'static,
{
    match err {
        oauth2::RequestTokenError::ServerResponse(response) => {
            let mut said = response.error().to_string();
            if let Some(description) = response.error_description() {
                said.push_str(": ");
                said.extend(description.chars().filter(|c| !c.is_control()).take(300));
            }
            match response.error() {
                oauth2::basic::BasicErrorResponseType::InvalidGrant => {
                    CoreError::NeedsSignIn(format!("Google no longer accepts this {what} ({said}); {then}."))
                }
                _ => unavailable(what, said),
            }
        }
        oauth2::RequestTokenError::Request(err) => unavailable(what, err),
        // serde's message may quote Google's body: only that it did not parse.
        oauth2::RequestTokenError::Parse(_, _) => unavailable(what, "its answer was not the JSON OAuth defines"),
        oauth2::RequestTokenError::Other(other) => unavailable(what, other),
    }
}

fn expires_at(expires_in: Option<Duration>) -> i64 {
    // Without an expiry, Google's documented lifetime of an access token (one hour).
    let lifetime = expires_in.unwrap_or(Duration::from_secs(3600));
    now_ms().saturating_add(i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX))
}

/// The redirect Google sends the owner's browser back to: a listener on `127.0.0.1` at a port
/// the system picks (RFC 8252 §7.3), answering one request on `/callback`.
pub struct LoopbackRedirect {
    listener: TcpListener,
    uri: String,
}

/// What the redirect carried.
#[derive(Clone, PartialEq, Eq)]
pub struct Callback {
    /// Google's authorization code.
    pub code: String,
    /// The `state` it came back with.
    pub state: String,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback").finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on a free port of `127.0.0.1`.
    pub async fn bind() -> Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| unavailable("sign-in listener", e))?;
        let port = listener.local_addr().map_err(|e| unavailable("sign-in listener", e))?.port();
        Ok(Self { listener, uri: format!("http://127.0.0.1:{port}/callback") })
    }

    /// The redirect URI to register with the sign-in.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the redirect of the sign-in whose consent URL carried `expected_state`: a
    /// request to `/callback` with that state and a `code` (or Google's `error`, which ends the
    /// wait with it). A request with any other state — a local process or page that found the
    /// port — gets a 400 and the wait goes on, as does anything else (404). Connections are
    /// served side by side, each for at most 10 s, so an idle one cannot hold up the real
    /// redirect. Ends at `cancel`.
    pub async fn next_callback(&self, expected_state: &str, cancel: &CancellationToken) -> Result<Callback> {
        let expected = Arc::new(hash_state(expected_state));
        let (said_tx, mut said_rx) = tokio::sync::mpsc::channel::<std::result::Result<Callback, String>>(4);
        // Dropped on return: connections still being served end with it.
        let mut serving = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return Err(CoreError::Stopped("The Google sign-in was cancelled.".into())),
                Some(said) = said_rx.recv() => {
                    return said.map_err(|error| CoreError::Forbidden(format!("{error} Start the sign-in again in Settings → Accounts.")));
                }
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        serving.spawn(serve_redirect(stream, expected.clone(), said_tx.clone()));
                    }
                    // A connection that failed before it was accepted (reset, out of files for
                    // a moment) is not the redirect's: keep listening.
                    Err(err) => tracing::debug!(error = %err, "a connection to the sign-in listener failed"),
                },
                Some(_) = serving.join_next(), if !serving.is_empty() => {}
            }
        }
    }
}

/// Serves one connection to the sign-in listener: at most one request, for at most 10 s.
async fn serve_redirect(
    stream: tokio::net::TcpStream,
    expected: Arc<String>,
    said: tokio::sync::mpsc::Sender<std::result::Result<Callback, String>>,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let outcome = read_callback(request.uri(), &expected);
        let (status, page) = match &outcome {
            Redirect::Code(_) => (200, "Return to Hearth to finish signing in. You can close this tab."),
            Redirect::Refused(_) => (400, "Google did not grant access. You can close this tab and try again in Hearth."),
            Redirect::OtherState => (400, "This is not the sign-in Hearth is waiting for."),
            Redirect::NotOurs => (404, "Not found."),
        };
        let said = said.clone();
        async move {
            match outcome {
                Redirect::Code(callback) => {
                    let _ = said.send(Ok(callback)).await;
                }
                Redirect::Refused(error) => {
                    let _ = said.send(Err(error)).await;
                }
                Redirect::OtherState | Redirect::NotOurs => {}
            }
            hyper::Response::builder()
                .status(status)
                .header("content-type", "text/plain; charset=utf-8")
                .header("connection", "close")
                .body(http_body_util::Full::new(hyper::body::Bytes::from_static(page.as_bytes())))
        }
    });
    let io = hyper_util::rt::TokioIo::new(stream);
    let serve = hyper::server::conn::http1::Builder::new().keep_alive(false).serve_connection(io, service);
    let _ = tokio::time::timeout(Duration::from_secs(10), serve).await;
}

/// What one request to the sign-in listener was.
enum Redirect {
    /// The redirect of this sign-in, with its code.
    Code(Callback),
    /// The redirect of this sign-in, with Google's refusal (in words for the owner).
    Refused(String),
    /// A redirect carrying another state.
    OtherState,
    /// Not a redirect.
    NotOurs,
}

/// Reads `/callback?code=…&state=…` (or `?error=…&state=…`), the state compared with the one
/// expected by its hash, in constant time.
fn read_callback(uri: &hyper::Uri, expected_hash: &str) -> Redirect {
    use subtle::ConstantTimeEq;
    if uri.path() != "/callback" {
        return Redirect::NotOurs;
    }
    let query = uri.query().unwrap_or_default();
    let (mut code, mut state, mut error) = (None, None, None);
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "code" => code = Some(value.into_owned()),
            "state" => state = Some(value.into_owned()),
            "error" => error = Some(value.into_owned()),
            _ => {}
        }
    }
    let Some(state) = state else { return Redirect::NotOurs };
    if !bool::from(hash_state(&state).as_bytes().ct_eq(expected_hash.as_bytes())) {
        return Redirect::OtherState;
    }
    match (code, error) {
        (_, Some(error)) => Redirect::Refused(refusal_in_words(&error)),
        (Some(code), None) => Redirect::Code(Callback { code, state }),
        (None, None) => Redirect::NotOurs,
    }
}

/// Google's `error` on the redirect, in the owner's words (its own text is never shown: anyone
/// who can reach the port could write it).
fn refusal_in_words(error: &str) -> String {
    match error {
        "access_denied" => "You declined to give Hearth access on Google's page.".into(),
        "admin_policy_enforced" => "Your Google Workspace administrator does not allow Hearth's access.".into(),
        "invalid_scope" | "invalid_request" | "unauthorized_client" => {
            "Google refused the sign-in request; check the OAuth client in Settings → Accounts.".into()
        }
        _ => "Google did not grant access.".into(),
    }
}
