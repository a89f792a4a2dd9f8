//! How a provider is reached: base URL, API key, name, retries.

use std::fmt;
use std::time::Duration;

/// Where and how to reach a provider.
#[derive(Clone)]
pub struct ProviderConfig {
    /// The name the owner knows it by, used in error messages ("OpenAI", "Ollama").
    pub name: String,
    /// The API's base URL, up to and including the version (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, `https://api.anthropic.com/v1`).
    pub base_url: String,
    /// The API key, if the provider needs one.
    pub api_key: Option<String>,
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
    pub fn new(name: impl Into<String>, base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self { name: name.into(), base_url: base_url.into(), api_key, retry: RetryPolicy::default() }
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }
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
    fn debug_never_shows_the_key() {
        let c = ProviderConfig::new("OpenAI", "https://api.openai.com/v1", Some("sk-secret-123".to_owned()));
        assert!(!format!("{c:?}").contains("sk-secret-123"));
    }
}
