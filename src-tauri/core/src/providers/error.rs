//! What can go wrong talking to a model provider, in words for the owner. No variant carries
//! the API key or the request.

use std::time::Duration;

use hearth_protocol::failures::{TransportFailure, TryOutcome};

/// A provider failure.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// 401/403.
    #[error("The model provider {provider} refused the API key ({status}). Check it in Settings.")]
    Unauthorized {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
    },
    /// 429.
    #[error("The model provider {provider} is rate-limiting Hearth (429). Wait a minute and try again, or check your plan's limits.")]
    RateLimited {
        /// The provider's name.
        provider: String,
        /// How long the provider asked Hearth to wait.
        retry_after: Option<Duration>,
    },
    /// 5xx.
    #[error("The model provider {provider} failed ({status}). Try again in a moment.")]
    ServerFailed {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
    },
    /// Another 4xx: the request itself is wrong (model name, settings).
    #[error("The model provider {provider} rejected the request ({status}): {message}. Check the model name and the provider's settings.")]
    Rejected {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's explanation (the API key scrubbed out).
        message: String,
    },
    /// The server could not be reached.
    #[error(
        "Hearth could not reach the model provider {provider} at {url}: {detail}. Check that it is running and that its address in Settings is right."
    )]
    Unreachable {
        /// The provider's name.
        provider: String,
        /// The endpoint.
        url: String,
        /// What the network said.
        detail: String,
        /// Its kind, for the run's timeline.
        transport: TransportFailure,
    },
    /// The answer broke off after it had started.
    #[error("The model provider {provider} failed in the middle of its answer: {detail}. Try again.")]
    StreamFailed {
        /// The provider's name.
        provider: String,
        /// What broke.
        detail: String,
    },
    /// The provider sent something that is not its wire format.
    #[error(
        "The model provider {provider} sent a reply Hearth could not read ({detail}). Check that its address in Settings points at the right kind of API."
    )]
    Protocol {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        detail: String,
    },
    /// The configuration cannot work (a key that is not a valid header, a bad URL).
    #[error("The model provider {provider} is not set up right: {detail}. Check it in Settings.")]
    Config {
        /// The provider's name.
        provider: String,
        /// What is wrong.
        detail: String,
    },
    /// The server answered with a 3xx. Hearth never follows one: the request carries the key
    /// and the whole conversation.
    #[error(
        "The model server at {base} answered with a redirect to {location}; Hearth does not follow redirects, because they would resend your key. Set the base URL to {suggested} if you trust it."
    )]
    Redirected {
        /// The provider's name.
        provider: String,
        /// The HTTP status (301, 302, 307, 308 …).
        status: u16,
        /// The configured base URL (without credentials).
        base: String,
        /// Where the server pointed (resolved, without credentials, shortened).
        location: String,
        /// The base URL that would reach `location` directly.
        suggested: String,
    },
    /// The model asked for more tool calls in one answer than Hearth runs.
    #[error(
        "The model from {provider} asked for more than {limit} tool calls in one answer; Hearth stopped the answer so it cannot run away. Ask again with a narrower request."
    )]
    TooManyToolCalls {
        /// The provider's name.
        provider: String,
        /// The most calls one answer may make ([`MAX_TOOL_CALLS_PER_TURN`](super::MAX_TOOL_CALLS_PER_TURN)).
        limit: usize,
    },
    /// The model on this computer (its file, its worker, llama.cpp) failed.
    #[error("The model on this computer cannot answer: {detail}.")]
    Local {
        /// What went wrong, for the owner.
        detail: String,
    },
    /// The request was cancelled.
    #[error("The model request was stopped.")]
    Cancelled,
}

impl ProviderError {
    /// How long the provider asked Hearth to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether trying the same request again may succeed (429, 5xx, unreachable).
    pub fn is_retryable(&self) -> bool {
        matches!(self, ProviderError::RateLimited { .. } | ProviderError::ServerFailed { .. } | ProviderError::Unreachable { .. })
    }

    /// How the try that ended in this error ended, for the run's timeline: the HTTP status the
    /// provider answered with, or why there was none. An error from the body of an answer that
    /// had started (200) says 200: that try was answered.
    pub fn try_outcome(&self) -> TryOutcome {
        let status = |code: u16| TryOutcome::Status { code };
        match self {
            ProviderError::Unauthorized { status: code, .. }
            | ProviderError::ServerFailed { status: code, .. }
            | ProviderError::Rejected { status: code, .. }
            | ProviderError::Redirected { status: code, .. } => status(*code),
            ProviderError::RateLimited { .. } => status(429),
            ProviderError::Unreachable { transport, .. } => TryOutcome::Transport { kind: *transport },
            ProviderError::StreamFailed { .. } | ProviderError::Protocol { .. } | ProviderError::TooManyToolCalls { .. } => status(200),
            ProviderError::Config { .. } | ProviderError::Local { .. } | ProviderError::Cancelled => {
                TryOutcome::Transport { kind: TransportFailure::Other }
            }
        }
    }
}
