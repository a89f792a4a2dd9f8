//! The owner's Google account: signing in (`oauth`), Gmail (`gmail`), the messages Gmail sends
//! (`mime`) and Calendar (`calendar`). The `Workspace` implementation builds on them.

mod account;
pub mod calendar;
pub mod gmail;
pub mod mime;
pub mod oauth;

use std::time::Duration;

pub use account::{GoogleApis, GoogleWorkspace};

use serde::Deserialize;

use crate::error::{CoreError, Result};
use crate::secret::{ExposeSecret, SecretString};

/// The most of one Google answer read (a Gmail thread of 100 long messages stays under it).
const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// One Google API, as its errors name it.
struct Api {
    /// "Gmail", "Google Calendar".
    name: &'static str,
    /// What a 404 tells the model to do.
    not_found: &'static str,
}

/// GETs `url` with the access token and reads its JSON answer, at most 32 MiB, each failure
/// said in words the owner can act on: 401 and a refused scope are a sign-in matter, a 403 rate
/// limit or 429 is not. Errors never quote the answer (it may be mail) or the token.
async fn get_json<T: serde::de::DeserializeOwned>(http: &reqwest::Client, url: reqwest::Url, token: &SecretString, api: &Api) -> Result<T> {
    let name = api.name;
    let mut response = http
        .get(url)
        .bearer_auth(token.expose_secret())
        .send()
        .await
        .map_err(|err| CoreError::Unavailable(format!("{name} could not be reached: {}", err.without_url())))?;
    let status = response.status();
    let mut bytes = Vec::new();
    while let Some(chunk) =
        response.chunk().await.map_err(|err| CoreError::Unavailable(format!("{name}'s answer was cut off: {}", err.without_url())))?
    {
        if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(CoreError::Unavailable(format!("{name}'s answer is larger than Hearth reads (32 MiB).")));
        }
        bytes.extend_from_slice(&chunk);
    }
    match status.as_u16() {
        200 => {}
        401 => {
            return Err(CoreError::NeedsSignIn(format!(
                "{name} refused Hearth's access ({status}); connect the account again in Settings → Accounts."
            )));
        }
        // 403 is also Google's answer to too many requests: only a refused scope or account is a
        // sign-in matter.
        403 if is_rate_limit(&bytes) => {
            return Err(CoreError::Unavailable(format!("{name} asks Hearth to slow down (a rate limit); try again in a minute.")));
        }
        403 => {
            return Err(CoreError::NeedsSignIn(format!(
                "{name} does not allow this with the access Hearth has; connect the account again in Settings → Accounts."
            )));
        }
        404 => return Err(CoreError::NotFound(api.not_found.to_owned())),
        429 => return Err(CoreError::Unavailable(format!("{name} asks Hearth to slow down (a rate limit); try again in a minute."))),
        _ => return Err(CoreError::Unavailable(format!("{name} answered {status}; try again in a moment."))),
    }
    // serde's message may quote mail: only that it did not parse.
    serde_json::from_slice(&bytes).map_err(|_| CoreError::Unavailable(format!("{name} answered in a shape Hearth does not know.")))
}

/// Whether a Google error body names a rate limit (`error.errors[].reason`).
fn is_rate_limit(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Reason {
        #[serde(default)]
        reason: String,
    }
    #[derive(Deserialize)]
    struct Inner {
        #[serde(default)]
        errors: Vec<Reason>,
    }
    #[derive(Deserialize)]
    struct Outer {
        error: Inner,
    }
    serde_json::from_slice::<Outer>(body).is_ok_and(|o| {
        o.error.errors.iter().any(|r| matches!(r.reason.as_str(), "rateLimitExceeded" | "userRateLimitExceeded" | "dailyLimitExceeded"))
    })
}

/// Checks an address codes or tokens are sent to: https, or http only to a server on this
/// computer (the tests' fixture). `what` names it in the error ("Gmail's", "a Google OAuth").
fn check_endpoint(url: &str, what: &str) -> Result<()> {
    let parsed = reqwest::Url::parse(url).map_err(|_| CoreError::InvalidInput(format!("{url:?} is not {what} address.")))?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if crate::providers::config::is_loopback(&parsed) => Ok(()),
        _ => Err(CoreError::InvalidInput(format!("{url} must use https:// (http:// only for a server on this computer)."))),
    }
}

/// The HTTP client of every Google call: no redirect is followed (it would resend a code or a
/// token elsewhere), nothing is retried, a connect waits at most 10 s and a call 30 s (a send
/// sets its own, by its size).
fn http_client(what: &str) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // A stalled connect is a connect error (nothing left Hearth), not the whole call's
        // time-out, which a send could not tell from a lost answer.
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        // Never sent twice by the client itself: a send has no idempotency key.
        .retry(reqwest::retry::never())
        .build()
        .map_err(|err| CoreError::Unavailable(format!("{what} could not be set up: {err}")))
}
