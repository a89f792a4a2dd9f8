//! How a provider is reached: base URL, API key, name, retries.

use std::fmt;
use std::time::Duration;

use crate::secret::SecretString;

/// Where and how to reach a provider.
#[derive(Clone)]
pub struct ProviderConfig {
    /// The name the owner knows it by, used in error messages ("OpenAI", "Ollama").
    pub name: String,
    /// The API's base URL, up to and including the version (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, `https://api.anthropic.com/v1`).
    pub base_url: String,
    /// The API key, if the provider needs one: a secret until its request header is built.
    pub api_key: Option<SecretString>,
    /// Retries before anything has streamed.
    pub retry: RetryPolicy,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .finish()
    }
}

impl ProviderConfig {
    /// A provider at `base_url` with the default retry policy.
    pub fn new(name: impl Into<String>, base_url: impl Into<String>, api_key: Option<SecretString>) -> Self {
        Self { name: name.into(), base_url: base_url.into(), api_key, retry: RetryPolicy::default() }
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim().trim_end_matches('/'))
    }

    /// Checks the base URL: an absolute `https://` URL, or `http://` only to this computer
    /// (`localhost`, 127.0.0.0/8, `::1`) — plain HTTP elsewhere would send the key and the
    /// conversation unencrypted. Every provider calls this when it is built, so Settings
    /// refuses such a URL before storing it.
    pub fn check_base_url(&self) -> Result<(), super::ProviderError> {
        let bad = |detail: String| super::ProviderError::Config { provider: self.name.clone(), detail };
        let shown = without_credentials(self.base_url.trim());
        let url = reqwest::Url::parse(self.base_url.trim())
            .ok()
            .filter(|url| url.host().is_some())
            .ok_or_else(|| bad(format!("the base URL {shown:?} is not an absolute http:// or https:// address")))?;
        match url.scheme() {
            "https" => Ok(()),
            "http" if is_loopback(&url) => Ok(()),
            "http" => Err(bad(format!(
                "the base URL {shown} uses plain http:// to another computer, which would send your key and \
                 conversation unencrypted; use https://, or http:// only for a server on this computer \
                 (localhost, 127.0.0.1 or ::1)"
            ))),
            other => Err(bad(format!("the base URL {shown} uses {other}://; use https:// (or http:// for a server on this computer)"))),
        }
    }
}

/// Whether `url` names this computer: `localhost`, 127.0.0.0/8 or `::1`.
pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    // The URL parser has already normalised the host (`127.1` → `127.0.0.1`, IPv6 bracketed).
    let Some(host) = url.host_str() else { return false };
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6.parse::<std::net::Ipv6Addr>().is_ok_and(|ip| ip.is_loopback());
    }
    match host.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// A URL for a message: any `user:password@` removed, at most 300 characters.
pub(crate) fn without_credentials(url: &str) -> String {
    let shown = match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => url.rsplit_once('@').map_or(url, |(_, rest)| rest).to_owned(),
    };
    shown.chars().filter(|c| !c.is_control()).take(300).collect()
}

/// Retries on 429, 5xx and unreachable servers, only before anything has streamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// At most this many retries (default 2).
    pub max_retries: u32,
    /// The first backoff; doubled on each retry (default 500 ms).
    pub base_delay: Duration,
    /// The longest wait, also for a `Retry-After` the provider asks for (default 30 s).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 2, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): exponential backoff, or the
    /// provider's `Retry-After` if longer, never beyond `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self.base_delay.saturating_mul(2u32.saturating_pow(retry));
        backoff.max(retry_after.unwrap_or_default()).min(self.max_delay)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_honours_retry_after_and_is_capped() {
        let p = RetryPolicy { max_retries: 2, base_delay: Duration::from_millis(100), max_delay: Duration::from_secs(5) };
        assert_eq!(p.delay(0, None), Duration::from_millis(100));
        assert_eq!(p.delay(1, None), Duration::from_millis(200));
        assert_eq!(p.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(p.delay(0, Some(Duration::from_secs(600))), Duration::from_secs(5));
        assert_eq!(p.delay(40, None), Duration::from_secs(5));
    }

    #[test]
    fn issue10_plain_http_is_only_for_loopback() {
        for ok in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://localhost:8080/v1",
            "http://LOCALHOST/v1",
            "http://[::1]:1234/v1",
        ] {
            assert!(ProviderConfig::new("P", ok, None).check_base_url().is_ok(), "{ok}");
        }
        for bad in [
            "http://api.example.com/v1",
            "http://192.168.1.20:11434/v1",
            "http://localhost.evil.com/v1",
            "http://[::2]/v1",
            "http://128.0.0.1/v1",
        ] {
            let err = ProviderConfig::new("P", bad, None).check_base_url().unwrap_err().to_string();
            assert!(err.contains("plain http:// to another computer") && err.contains("use https://"), "{bad}: {err}");
        }
        for bad in ["not a url", "ftp://127.0.0.1/v1", "file:///tmp/x"] {
            assert!(ProviderConfig::new("P", bad, None).check_base_url().is_err(), "{bad}");
        }
        let err = ProviderConfig::new("P", "http://user:hunter2@example.com/v1", None).check_base_url().unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let c = ProviderConfig::new("OpenAI", "https://api.openai.com/v1", Some("sk-secret-123".into()));
        assert!(!format!("{c:?}").contains("sk-secret-123"));
    }
}
