//! The owner's Google account: signing in (`oauth`), reading Gmail (`gmail`) and the messages
//! Gmail sends (`mime`). The Calendar client and the `Workspace` implementation build on them.

pub mod gmail;
pub mod mime;
pub mod oauth;

use std::time::Duration;

use crate::error::{CoreError, Result};

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
/// token elsewhere), and no call waits longer than 30 s.
fn http_client(what: &str) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|err| CoreError::Unavailable(format!("{what} could not be set up: {err}")))
}
