//! Settings: which agent answers (the offline sample, a model, or an external AG-UI agent),
//! the model provider, and Hearth's own AG-UI endpoint. Secrets go in and never come out:
//! views say only whether a key or token is stored.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// Which wire format a model provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions and compatible servers (Ollama, llama.cpp, vLLM, LM Studio).
    OpenaiChat,
    /// The OpenAI Responses API.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A GGUF model file run on this computer by Hearth's built-in engine (llama.cpp); its
    /// `base_url` is the file's path.
    Local,
}

impl ProviderKind {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// The name the owner sees.
    pub const fn label(self) -> &'static str {
        match self {
            Self::OpenaiChat => "OpenAI-compatible (Chat Completions)",
            Self::OpenaiResponses => "OpenAI Responses",
            Self::Anthropic => "Anthropic",
            Self::Local => "On this computer (a GGUF model file)",
        }
    }

    /// A sensible base URL to start from.
    pub const fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenaiChat | Self::OpenaiResponses => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Local => "",
        }
    }
}

/// Who answers the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    /// The offline sample agent (no model, no network).
    Sample,
    /// A model through a provider, with Hearth's tools.
    Model,
    /// An external agent over AG-UI, with Hearth's tools.
    Harness,
}

/// The model provider as stored (the key itself never leaves the backend).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL up to the version (`https://api.openai.com/v1`, `http://localhost:11434/v1`).
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// An API key is stored (encrypted).
    pub has_api_key: bool,
    /// The model reads images: look_page is offered to it and sends it the page's picture.
    #[serde(default)]
    pub accepts_images: bool,
    /// A local model's probe result, once run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<LocalProbeView>,
    /// The owner let a local model prepare and act in families it did not pass.
    #[serde(default)]
    pub act_untested: bool,
    /// A local model leaves memory after this many minutes without a question; 0 keeps it
    /// loaded while Hearth runs.
    #[serde(default = "default_unload_minutes")]
    pub unload_after_minutes: u32,
}

/// Minutes a local model stays loaded without a question, unless the owner sets otherwise.
pub const DEFAULT_UNLOAD_MINUTES: u32 = 10;

/// The longest the owner may set: a day.
pub const MAX_UNLOAD_MINUTES: u32 = 24 * 60;

fn default_unload_minutes() -> u32 {
    DEFAULT_UNLOAD_MINUTES
}

/// How far the probe suite has got, while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeProgress {
    /// Probes answered.
    pub done: u32,
    /// Probes in the suite.
    pub total: u32,
}

/// A local model's probe suite result: its score per family of Hearth's tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalProbeView {
    /// Each family, in a fixed order.
    pub families: Vec<ProbeFamilyScore>,
    /// Each probe's task, what the model did and whether that passed, in the suite's order:
    /// why a family failed.
    #[serde(default)]
    pub answers: Vec<ProbeAnswer>,
}

/// One probe of the suite, as it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeAnswer {
    /// Its family, as the owner reads it.
    pub family: String,
    /// What the owner asked.
    pub prompt: String,
    /// What the model did: `tool {arguments}`, or `text: ` and the first of its words.
    pub answered: String,
    /// Whether that was what the task needed.
    pub passed: bool,
}

/// One family's score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeFamilyScore {
    /// The family, as the owner reads it.
    pub label: String,
    /// Probes passed.
    pub passed: u32,
    /// Probes run.
    pub total: u32,
    /// Its tools are offered to the model (it passed, or the owner overrode).
    pub allowed: bool,
}

/// What the model on this computer is doing, for the chat's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelActivity {
    /// The model's name.
    pub name: String,
    /// What it is doing.
    pub state: LocalModelState,
    /// For how long, in ms.
    pub for_ms: u64,
    /// Answers waiting for this one to end (one at a time per model).
    pub waiting: u32,
    /// The last answer's writing speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_second: Option<f32>,
    /// The last answer's time to its first token, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u32>,
}

/// What the model on this computer is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalModelState {
    /// Nothing.
    Idle,
    /// Reading the prompt (the first token comes after).
    Reading,
    /// Writing the answer.
    Writing,
}

/// `settings_local_model_override`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelOverrideParams {
    /// Let the local model prepare and act in families it did not pass.
    pub act_untested: bool,
}

/// The external AG-UI agent as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarnessSettings {
    /// Its endpoint.
    pub url: String,
    /// A bearer token is stored (encrypted).
    pub has_token: bool,
}

/// Hearth's own AG-UI endpoint. Its `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSettings {
    /// It is listening.
    pub enabled: bool,
    /// `http://127.0.0.1:<port>/` while enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The bearer token clients must send, shown to the owner while enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl std::fmt::Debug for EndpointSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointSettings")
            .field("enabled", &self.enabled)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

/// Answer to every `settings_*` command. Its `Debug` never shows a token: the only one it
/// carries is the endpoint's, which [`EndpointSettings`]'s `Debug` redacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// Who answers the chat now.
    pub mode: AgentMode,
    /// The model provider, once configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSettings>,
    /// The external agent, once configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessSettings>,
    /// Hearth's AG-UI endpoint.
    pub endpoint: EndpointSettings,
    /// How long an approved email or event change waits, with Undo, before it leaves (0: it
    /// leaves at once).
    #[serde(default = "default_undo_window")]
    pub undo_window_seconds: u32,
}

/// The undo window when the owner has not chosen one.
pub const DEFAULT_UNDO_WINDOW_SECONDS: u32 = 10;

/// The longest undo window Settings accepts: longer holds a send the owner meant to go.
pub const MAX_UNDO_WINDOW_SECONDS: u32 = 120;

fn default_undo_window() -> u32 {
    DEFAULT_UNDO_WINDOW_SECONDS
}

/// `settings_undo_window_set`: how long an approved send waits with Undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoWindowParams {
    /// Seconds, 0 to [`MAX_UNDO_WINDOW_SECONDS`]; 0 turns the window off.
    pub seconds: u32,
}

impl UndoWindowParams {
    /// In range.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.seconds > MAX_UNDO_WINDOW_SECONDS {
            return Err(IpcError::invalid(format!("Choose an undo window of 0 to {MAX_UNDO_WINDOW_SECONDS} seconds (0 sends at once).")));
        }
        Ok(())
    }
}

/// A model file's path: absolute, one line, of a sane length (what is in it is the core's check).
pub fn check_model_path(path: &str) -> Result<(), IpcError> {
    if path.is_empty() || path.len() > 4096 || path.contains(['\n', '\r', '\0']) || !std::path::Path::new(path).is_absolute() {
        return Err(IpcError::invalid("Enter the full path of the model's .gguf file (starting with / or a drive letter)."));
    }
    Ok(())
}

/// `settings_local_model_inspect`: a model file the owner is choosing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelInspectParams {
    /// The .gguf file's full path.
    pub path: String,
}

/// What Settings shows of a model file before the owner keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelInfo {
    /// Its name (`general.name`, else the file's).
    pub name: String,
    /// Its architecture (`llama`, `qwen2`).
    pub architecture: String,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// Its parameters.
    pub parameters: u64,
    /// The context it was trained for, in tokens.
    pub trained_context: u32,
    /// The context Hearth runs it with, in tokens.
    pub context: u32,
    /// The first line of the chat template it carries.
    pub chat_template: String,
    /// The memory it needs at that context: weights and KV cache.
    pub memory_bytes: u64,
}

fn check_url(field: &str, url: &str) -> Result<(), IpcError> {
    let ok = (url.starts_with("http://") || url.starts_with("https://")) && url.len() <= 2048 && !url.contains(char::is_whitespace);
    if ok { Ok(()) } else { Err(IpcError::invalid(format!("{field} must be an http:// or https:// URL."))) }
}

/// `settings_model_set`. Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettingsParams {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// A new API key; absent keeps the stored one, empty removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The model reads images (look_page is offered to it).
    #[serde(default)]
    pub accepts_images: bool,
    /// A local model's idle minutes before it leaves memory (0: never).
    #[serde(default = "default_unload_minutes")]
    pub unload_after_minutes: u32,
}

impl std::fmt::Debug for ModelSettingsParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSettingsParams")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("accepts_images", &self.accepts_images)
            .field("unload_after_minutes", &self.unload_after_minutes)
            .finish()
    }
}

impl ModelSettingsParams {
    /// Checks bounds.
    pub fn validate(&self) -> Result<(), IpcError> {
        match self.kind {
            ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses | ProviderKind::Anthropic => {
                check_url("The base URL", self.base_url.trim())?;
                let model = self.model.trim();
                if model.is_empty() || model.len() > 200 {
                    return Err(IpcError::invalid("Enter the model's name (at most 200 characters)."));
                }
            }
            // The model's name comes from its file.
            ProviderKind::Local => check_model_path(self.base_url.trim())?,
        }
        if self.unload_after_minutes > MAX_UNLOAD_MINUTES {
            return Err(IpcError::invalid(format!(
                "Unloading after {} minutes is longer than a day; set at most {MAX_UNLOAD_MINUTES}, or 0 to keep the model loaded.",
                self.unload_after_minutes
            )));
        }
        // Only what an HTTP header carries as is (visible ASCII): anything else would be stored
        // and then fail on every request, over a key that worked.
        if self.api_key.as_ref().is_some_and(|k| k.len() > 4096 || !k.chars().all(|c| c.is_ascii_graphic())) {
            return Err(IpcError::invalid("The API key has spaces, control or non-ASCII characters, or is too long; paste it again."));
        }
        Ok(())
    }
}

/// `settings_harness_set`. Its `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarnessSettingsParams {
    /// The agent's AG-UI endpoint.
    pub url: String,
    /// A new bearer token; absent keeps the stored one, empty removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl std::fmt::Debug for HarnessSettingsParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessSettingsParams").field("url", &self.url).field("token", &self.token.as_ref().map(|_| "[REDACTED]")).finish()
    }
}

impl HarnessSettingsParams {
    /// Checks bounds.
    pub fn validate(&self) -> Result<(), IpcError> {
        check_url("The agent's URL", self.url.trim())?;
        if self.token.as_ref().is_some_and(|t| t.len() > 4096 || !t.chars().all(|c| c.is_ascii_graphic())) {
            return Err(IpcError::invalid("The token has spaces, control or non-ASCII characters, or is too long; paste it again."));
        }
        Ok(())
    }
}

/// `settings_mode_set`: who answers the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentModeParams {
    /// The new mode (Model and Harness need their settings first).
    pub mode: AgentMode,
}

/// `settings_endpoint_set`: turn Hearth's AG-UI endpoint on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointParams {
    /// On or off.
    pub enabled: bool,
}

/// Answer to `settings_model_test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionTestResponse {
    /// The provider answered.
    pub ok: bool,
    /// What happened, for the owner ("Connected: the model answered in 420 ms.").
    pub message: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn model_params_are_checked_and_camel_case() {
        let p: ModelSettingsParams =
            serde_json::from_str(r#"{"kind":"openai_chat","baseUrl":"http://localhost:11434/v1","model":"llama3.2"}"#).unwrap();
        assert!(p.validate().is_ok());
        assert!(ModelSettingsParams { base_url: "ftp://x".into(), ..p.clone() }.validate().is_err());
        assert!(ModelSettingsParams { model: " ".into(), ..p.clone() }.validate().is_err());
        assert!(ModelSettingsParams { api_key: Some("a b".into()), ..p.clone() }.validate().is_err());
        assert_eq!(p.unload_after_minutes, DEFAULT_UNLOAD_MINUTES, "absent: the default");
        assert!(ModelSettingsParams { unload_after_minutes: 0, ..p.clone() }.validate().is_ok(), "0 keeps it loaded");
        let day = ModelSettingsParams { unload_after_minutes: MAX_UNLOAD_MINUTES, ..p.clone() };
        assert!(day.validate().is_ok());
        let longer = ModelSettingsParams { unload_after_minutes: MAX_UNLOAD_MINUTES + 1, ..p.clone() }.validate().unwrap_err();
        assert!(longer.message.contains("at most 1440"), "{longer:?}");
        let secret = ModelSettingsParams { api_key: Some("sk-very-secret".into()), ..p };
        assert!(!format!("{secret:?}").contains("sk-very-secret"));
    }

    #[test]
    fn settings_views_never_debug_print_the_endpoint_token() {
        let endpoint =
            EndpointSettings { enabled: true, url: Some("http://127.0.0.1:4100/".into()), token: Some("hearth_0123456789abcdef".into()) };
        let view =
            SettingsView { mode: AgentMode::Sample, model: None, harness: None, endpoint: endpoint.clone(), undo_window_seconds: 10 };
        for printed in [format!("{endpoint:?}"), format!("{view:?}"), format!("{view:#?}")] {
            assert!(!printed.contains("hearth_0123456789abcdef"), "{printed}");
            assert!(printed.contains("[REDACTED]") && printed.contains("127.0.0.1:4100"), "{printed}");
        }
        // The wire form still carries it: the owner is shown the token while the endpoint runs.
        assert!(serde_json::to_string(&view).unwrap().contains("hearth_0123456789abcdef"));
    }
}
