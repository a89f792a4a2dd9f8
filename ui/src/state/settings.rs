//! The Settings screen as plain data: the model and external-agent forms, the params they
//! send (trimmed; a secret left empty keeps the stored one), and the spellings the radios
//! and the provider select use.
//!
//! Secrets are never pre-filled: the forms start with an empty key or token, and only what
//! the owner types is sent.

use hearth_protocol::settings::{
    AgentMode, DEFAULT_UNLOAD_MINUTES, HarnessSettings, HarnessSettingsParams, LocalModelActivity, LocalModelState, ModelSettings,
    ModelSettingsParams, ProviderKind, SettingsView,
};

/// Every mode, in the order the radio group lists them.
pub const MODES: [AgentMode; 3] = [AgentMode::Sample, AgentMode::Model, AgentMode::Harness];

/// A mode's wire spelling (the radio's value and test hook).
pub const fn mode_slug(mode: AgentMode) -> &'static str {
    match mode {
        AgentMode::Sample => "sample",
        AgentMode::Model => "model",
        AgentMode::Harness => "harness",
    }
}

/// A mode as the owner reads it.
pub const fn mode_label(mode: AgentMode) -> &'static str {
    match mode {
        AgentMode::Sample => "Sample",
        AgentMode::Model => "Model",
        AgentMode::Harness => "External agent (AG-UI)",
    }
}

/// What a mode means, one line under its label.
pub const fn mode_note(mode: AgentMode) -> &'static str {
    match mode {
        AgentMode::Sample => "The offline sample agent: no model, no network.",
        AgentMode::Model => "The model provider below, with Hearth's tools.",
        AgentMode::Harness => "The external agent below, over AG-UI, with Hearth's tools.",
    }
}

/// Whether `mode` can be chosen now: Model and External agent need their settings first.
pub fn mode_ready(view: &SettingsView, mode: AgentMode) -> bool {
    match mode {
        AgentMode::Sample => true,
        AgentMode::Model => view.model.is_some(),
        AgentMode::Harness => view.harness.is_some(),
    }
}

/// The chat header's line about the model on this computer.
pub fn local_model_line(activity: &LocalModelActivity) -> String {
    let name = &activity.name;
    let line = match activity.state {
        LocalModelState::Reading => format!("{name} · reading the prompt… {} s", activity.for_ms / 1000),
        LocalModelState::Writing => format!("{name} · writing"),
        LocalModelState::Idle => match (activity.tokens_per_second, activity.first_token_ms) {
            (Some(speed), Some(first)) => format!("{name} · {speed:.0} tokens/s · first token {:.1} s", f64::from(first) / 1000.0),
            (Some(speed), None) => format!("{name} · {speed:.0} tokens/s"),
            (None, _) => format!("{name} · on this computer"),
        },
    };
    match activity.waiting {
        0 => line,
        1 => format!("{line} · 1 answer waiting for the local model"),
        n => format!("{line} · {n} answers waiting for the local model"),
    }
}

/// A provider kind's wire spelling (the select's option value).
pub const fn kind_slug(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiChat => "openai_chat",
        ProviderKind::OpenaiResponses => "openai_responses",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Local => "local",
    }
}

/// The provider kind an option value names, if any.
pub fn kind_from_slug(slug: &str) -> Option<ProviderKind> {
    ProviderKind::ALL.iter().copied().find(|&kind| kind_slug(kind) == slug)
}

/// A secret field as sent: empty (after trimming) keeps the stored secret, anything else
/// replaces it. Removing is a separate action (see [`remove_key_params`]).
fn new_secret(typed: &str) -> Option<String> {
    let typed = typed.trim();
    (!typed.is_empty()).then(|| typed.to_owned())
}

/// The model provider form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelForm {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL as typed.
    pub base_url: String,
    /// Model name as typed.
    pub model: String,
    /// A new API key as typed; never pre-filled.
    pub api_key: String,
    /// The model reads images (look_page is offered to it).
    pub accepts_images: bool,
    /// A model on this computer leaves memory after this many idle minutes (0: never).
    pub unload_after_minutes: u32,
}

impl ModelForm {
    /// The stored provider, or an OpenAI-compatible one at its default URL when none is.
    pub fn from_settings(stored: Option<&ModelSettings>) -> Self {
        match stored {
            Some(stored) => Self {
                kind: stored.kind,
                base_url: stored.base_url.clone(),
                model: stored.model.clone(),
                api_key: String::new(),
                accepts_images: stored.accepts_images,
                unload_after_minutes: stored.unload_after_minutes,
            },
            None => {
                let kind = ProviderKind::OpenaiChat;
                Self {
                    kind,
                    base_url: kind.default_base_url().to_owned(),
                    model: String::new(),
                    api_key: String::new(),
                    accepts_images: false,
                    unload_after_minutes: DEFAULT_UNLOAD_MINUTES,
                }
            }
        }
    }

    /// Switches the kind. The base URL follows when it is empty or still some kind's default;
    /// a URL the owner typed (a local server, a proxy) is kept. Between a file and a URL
    /// nothing carries over: a path is no URL.
    pub fn set_kind(&mut self, kind: ProviderKind) {
        let url = self.base_url.trim();
        let crossing = (kind == ProviderKind::Local) != (self.kind == ProviderKind::Local);
        if crossing || url.is_empty() || ProviderKind::ALL.iter().any(|k| k.default_base_url() == url) {
            self.base_url = kind.default_base_url().to_owned();
        }
        self.kind = kind;
    }

    /// Whether the form names a model file on this computer (a path field instead of a URL,
    /// a model name and a key).
    pub fn is_local(&self) -> bool {
        self.kind == ProviderKind::Local
    }

    /// What `settings_model_set` gets: trimmed, and the stored key kept unless a new one
    /// was typed.
    pub fn params(&self) -> ModelSettingsParams {
        ModelSettingsParams {
            kind: self.kind,
            base_url: self.base_url.trim().to_owned(),
            model: self.model.trim().to_owned(),
            api_key: new_secret(&self.api_key),
            accepts_images: self.accepts_images,
            unload_after_minutes: self.unload_after_minutes,
        }
    }
}

impl ModelForm {
    /// Whether Save would change anything: the form differs from what is stored, or a new
    /// key was typed. (Test connection uses the stored provider, not the form.)
    pub fn is_unsaved(&self, stored: Option<&ModelSettings>) -> bool {
        let params = self.params();
        params.api_key.is_some()
            || stored.is_none_or(|s| {
                s.kind != params.kind
                    || s.base_url != params.base_url
                    || s.model != params.model
                    || s.accepts_images != params.accepts_images
                    || s.unload_after_minutes != params.unload_after_minutes
            })
    }
}

/// What "Remove key" sends: the provider as stored (unsaved edits stay in the form), with
/// an empty key, which removes it.
pub fn remove_key_params(stored: &ModelSettings) -> ModelSettingsParams {
    ModelSettingsParams {
        kind: stored.kind,
        base_url: stored.base_url.clone(),
        model: stored.model.clone(),
        api_key: Some(String::new()),
        accepts_images: stored.accepts_images,
        unload_after_minutes: stored.unload_after_minutes,
    }
}

/// The external agent form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessForm {
    /// The agent's URL as typed.
    pub url: String,
    /// A new bearer token as typed; never pre-filled.
    pub token: String,
}

impl HarnessForm {
    /// The stored agent's URL, or an empty form.
    pub fn from_settings(stored: Option<&HarnessSettings>) -> Self {
        Self { url: stored.map(|s| s.url.clone()).unwrap_or_default(), token: String::new() }
    }

    /// What `settings_harness_set` gets: trimmed, and the stored token kept unless a new
    /// one was typed.
    pub fn params(&self) -> HarnessSettingsParams {
        HarnessSettingsParams { url: self.url.trim().to_owned(), token: new_secret(&self.token) }
    }
}

/// What "Remove token" sends: the agent as stored, with an empty token, which removes it.
pub fn remove_token_params(stored: &HarnessSettings) -> HarnessSettingsParams {
    HarnessSettingsParams { url: stored.url.clone(), token: Some(String::new()) }
}

/// The placeholder of a secret's input: whether leaving it empty keeps one.
pub const fn secret_placeholder(stored: bool) -> &'static str {
    if stored { "Stored — leave empty to keep" } else { "Optional" }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
