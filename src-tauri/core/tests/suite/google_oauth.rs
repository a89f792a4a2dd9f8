//! Signing in to Google against the loopback fixture (hearth-testkit `google`), which speaks
//! Google's OAuth wire protocol and checks PKCE S256 itself. Oracles: the fixture's counts of
//! token requests, the tokens it revoked, and the database file's bytes.

use std::time::Duration;

use hearth_core::store::Store;
use hearth_core::vault::{KeySource, Vault};
use hearth_core::workspace::google::oauth::{Access, ClientConfig, Endpoints, GoogleAuth, LoopbackRedirect};
use hearth_testkit::google::{CLIENT_ID, CLIENT_SECRET, GoogleFixture};
use secrecy::ExposeSecret;
use tokio_util::sync::CancellationToken;

struct Setup {
    auth: GoogleAuth,
    fixture: GoogleFixture,
    dir: tempfile::TempDir,
}

async fn setup(expires_in: u64) -> Setup {
    setup_with(GoogleFixture::start(expires_in).await.unwrap()).await
}

async fn setup_with(fixture: GoogleFixture) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hearth.db"), Duration::from_secs(5)).await.unwrap();
    let vault = Vault::open(store.clone(), KeySource::file_in(dir.path())).await.unwrap();
    let base = fixture.base_url();
    let client = ClientConfig {
        client_id: CLIENT_ID.into(),
        client_secret: Some(CLIENT_SECRET.to_owned().into()),
        endpoints: Endpoints {
            auth_url: format!("{base}/o/oauth2/v2/auth"),
            token_url: format!("{base}/token"),
            revoke_url: format!("{base}/revoke"),
        },
    };
    Setup { auth: GoogleAuth::new(store, vault, client).unwrap(), fixture, dir }
}

/// The owner's browser: opens the consent page, which redirects to Hearth's loopback listener.
async fn consent(url: &str) -> reqwest::StatusCode {
    reqwest::get(url).await.unwrap().status()
}

/// One sign-in up to the redirect: what came back.
async fn sign_in(auth: &GoogleAuth, access: Access) -> hearth_core::workspace::google::oauth::Callback {
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let url = auth.begin(access, redirect.uri()).await.unwrap();
    let cancel = CancellationToken::new();
    let (status, callback) = tokio::join!(consent(&url), redirect.next_callback(&cancel));
    assert_eq!(status, reqwest::StatusCode::OK, "the listener thanked the browser");
    callback.unwrap()
}

#[tokio::test]
async fn a_sign_in_exchanges_its_code_once_with_pkce_and_keeps_tokens_only_sealed() {
    let t = setup(3600).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    assert_eq!(t.fixture.last_challenge_method().as_deref(), Some("S256"));
    assert_eq!(t.fixture.exchanges(), 1, "the fixture checked the verifier against the challenge and answered once");
    assert!(connection.scopes.iter().any(|s| s.ends_with("gmail.readonly")));
    assert!(!connection.scopes.iter().any(|s| s.ends_with("gmail.send")), "read access asks for no write scope");
    let token = t.auth.access_token(&connection.id).await.unwrap();
    assert!(token.expose_secret().starts_with("ya29."));
    assert_eq!(t.fixture.refreshes(), 0, "an hour left: no refresh");

    // The same redirect again (a replay): refused before anything reaches Google.
    let replay = t.auth.complete(&callback.code, &callback.state).await.unwrap_err();
    assert!(replay.to_string().contains("already used"), "{replay}");
    assert_eq!(t.fixture.exchanges(), 1);

    // A second connect is a new connection.
    let callback = sign_in(&t.auth, Access::ReadWrite).await;
    let second = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    assert_ne!(second.id, connection.id);
    assert!(second.scopes.iter().any(|s| s.ends_with("gmail.send")));

    // No token is in the database in the clear (its WAL included).
    let access = token.expose_secret().to_owned();
    for file in ["hearth.db", "hearth.db-wal"] {
        let raw = std::fs::read(t.dir.path().join(file)).unwrap_or_default();
        for secret in [access.as_str(), "1//refresh-", "ya29.access-"] {
            assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} is in {file} in the clear");
        }
    }

    // Disconnect revokes the grant at Google and forgets the tokens here.
    t.auth.disconnect(&connection.id).await.unwrap();
    assert_eq!(t.fixture.revoked().len(), 1);
    assert!(t.fixture.revoked()[0].starts_with("1//refresh-"), "the refresh token is what is revoked");
    let gone = t.auth.access_token(&connection.id).await.unwrap_err();
    assert!(gone.to_string().contains("not connected"), "{gone}");
}

#[tokio::test]
async fn a_late_state_is_refused_and_its_code_never_exchanged() {
    let t = setup(3600).await;
    let late = t.auth.clone().with_state_ttl(Duration::ZERO);
    let callback = sign_in(&late, Access::Read).await;
    let refused = late.complete(&callback.code, &callback.state).await.unwrap_err();
    assert!(refused.to_string().contains("expired"), "{refused}");
    // A state that was never started here either.
    let unknown = t.auth.complete(&callback.code, "forged-state").await.unwrap_err();
    assert!(unknown.to_string().contains("never started"), "{unknown}");
    assert_eq!(t.fixture.exchanges(), 0, "nothing was sent to Google");
}

#[tokio::test]
async fn ten_callers_of_a_token_about_to_expire_share_one_refresh() {
    // The first token has 30 s left (under the one-minute margin); a refreshed one an hour.
    let t = setup_with(GoogleFixture::start_with_lifetimes(30, 3600).await.unwrap()).await;
    let callback = sign_in(&t.auth, Access::Read).await;
    let connection = t.auth.complete(&callback.code, &callback.state).await.unwrap();
    let calls = (0..10).map(|_| {
        let auth = t.auth.clone();
        let id = connection.id.clone();
        tokio::spawn(async move { auth.access_token(&id).await.unwrap().expose_secret().to_owned() })
    });
    let tokens: Vec<String> = futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(t.fixture.refreshes(), 1, "one refresh served all ten");
    assert!(tokens.windows(2).all(|w| w[0] == w[1]), "every caller got the refreshed token: {tokens:?}");
    // And the next caller reads it without asking Google.
    assert_eq!(t.auth.access_token(&connection.id).await.unwrap().expose_secret(), tokens[0]);
    assert_eq!(t.fixture.refreshes(), 1);
}
