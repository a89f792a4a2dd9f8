//! What the owner set in Settings, persisted: who answers the chat, the model provider, the
//! external AG-UI agent and Hearth's own endpoint. Keys and tokens go to the vault; the rest
//! is plain JSON in the database. (The web search page is kept by `browser::search_page`.)

mod provider;

use hearth_protocol::settings::{AgentMode, ProviderKind};
use serde::{Deserialize, Serialize};

pub use provider::{build_provider, inspect_local_model, test_provider};

use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::vault::{SecretString, Vault};

const SETTINGS_KEY: &str = "settings";
/// Vault name of the model provider's API key.
pub const API_KEY_SECRET: &str = "provider:api_key";
/// Vault name of the external agent's bearer token.
pub const HARNESS_TOKEN_SECRET: &str = "harness:token";
/// Vault name of Hearth's own endpoint token.
pub const ENDPOINT_TOKEN_SECRET: &str = "endpoint:token";
/// Vault name of the owner's Google OAuth client secret.
pub const GOOGLE_CLIENT_SECRET: &str = "google:client_secret";

/// The model provider, without its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredModel {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The model reads images (settings stored before this existed read as `false`).
    #[serde(default)]
    pub accepts_images: bool,
    /// A local model's probe suite result (`local_model::probe`), kept with the file it was
    /// run on; replaced by the next run, dropped when the file changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::local_model::probe::ProbeReport>,
    /// The owner let a local model prepare and act in families it did not pass.
    #[serde(default)]
    pub act_untested: bool,
    /// The file that permission was given to: it counts for that file only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_file: Option<crate::local_model::FileStamp>,
    /// A local model's idle minutes before it leaves memory; 0 keeps it loaded (settings
    /// stored before this existed read as the default).
    #[serde(default = "default_unload_minutes")]
    pub unload_after_minutes: u32,
}

fn default_unload_minutes() -> u32 {
    hearth_protocol::settings::DEFAULT_UNLOAD_MINUTES
}

impl StoredModel {
    /// How the model sees, for the tools it is offered.
    pub fn vision(&self) -> crate::tools::Vision {
        if self.accepts_images { crate::tools::Vision::Images } else { crate::tools::Vision::TextOnly }
    }
}

/// Everything Settings stores outside the vault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredSettings {
    /// Who answers the chat.
    pub mode: AgentMode,
    /// The model provider.
    #[serde(default)]
    pub model: Option<StoredModel>,
    /// The external agent's URL.
    #[serde(default)]
    pub harness_url: Option<String>,
    /// Hearth's endpoint is on.
    #[serde(default)]
    pub endpoint_enabled: bool,
    /// The port it last listened on (kept so clients can reconnect after a restart).
    #[serde(default)]
    pub endpoint_port: Option<u16>,
    /// The computer is on (Settings → Computer).
    #[serde(default)]
    pub computer_enabled: bool,
    /// The owner's Google Cloud OAuth client id (its secret is in the vault).
    #[serde(default)]
    pub google_client_id: Option<String>,
    /// The Google connection the mail and calendar tools use (`None`: the sample mailbox).
    #[serde(default)]
    pub account: Option<String>,
}

impl Default for StoredSettings {
    fn default() -> Self {
        Self {
            mode: AgentMode::Sample,
            model: None,
            harness_url: None,
            endpoint_enabled: false,
            endpoint_port: None,
            computer_enabled: false,
            google_client_id: None,
            account: None,
        }
    }
}

/// Settings and their secrets. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Settings {
    store: Store,
    vault: Vault,
    /// One change ([`Settings::update`], [`Settings::edit`]) at a time: no change is lost to,
    /// or undone by, a concurrent one.
    updating: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// A change to the settings in progress, from its load to its save: it holds the one lock
/// changes take, so a slow change (one that starts a model worker before it saves) neither
/// loses a change made meanwhile nor writes back what another change undid.
#[derive(Debug)]
pub struct SettingsEdit<'a> {
    settings: &'a Settings,
    _one_at_a_time: tokio::sync::MutexGuard<'a, ()>,
}

impl SettingsEdit<'_> {
    /// What is stored now.
    pub async fn load(&self) -> Result<StoredSettings> {
        self.settings.load().await
    }

    /// Stores `settings`, the lock still held.
    pub async fn save(&self, settings: &StoredSettings) -> Result<()> {
        self.settings.save(settings).await
    }
}

impl Settings {
    /// Settings kept in `store`, secrets in `vault`.
    pub fn new(store: Store, vault: Vault) -> Self {
        Self { store, vault, updating: std::sync::Arc::default() }
    }

    /// The vault secrets are kept in (Google's sealed tokens live there too).
    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    /// A change that loads, does what it must (start what the settings describe), and saves,
    /// with no other change in between.
    pub async fn edit(&self) -> SettingsEdit<'_> {
        SettingsEdit { settings: self, _one_at_a_time: self.updating.lock().await }
    }

    /// Loads, changes and stores the settings as one step against other updates.
    pub async fn update(&self, change: impl FnOnce(&mut StoredSettings)) -> Result<StoredSettings> {
        let _one_at_a_time = self.updating.lock().await;
        let mut stored = self.load().await?;
        change(&mut stored);
        self.save(&stored).await?;
        Ok(stored)
    }

    /// What is stored (defaults when nothing is).
    pub async fn load(&self) -> Result<StoredSettings> {
        match self.store.setting(SETTINGS_KEY).await? {
            Some(json) => Ok(serde_json::from_str(&json)?),
            None => Ok(StoredSettings::default()),
        }
    }

    /// Stores `settings`; only through [`Settings::update`] or a [`SettingsEdit`], which hold
    /// the lock.
    async fn save(&self, settings: &StoredSettings) -> Result<()> {
        self.store.put_setting(SETTINGS_KEY, &serde_json::to_string(settings)?).await.map_err(Into::into)
    }

    /// A secret, if stored (still a secret: it is exposed only where a header is built or
    /// the owner is shown it).
    pub async fn secret(&self, name: &str) -> Result<Option<SecretString>> {
        self.vault.get(name).await.map_err(CoreError::from)
    }

    /// Stores `secret` under `name`.
    pub async fn put_secret(&self, name: &str, secret: &SecretString) -> Result<()> {
        self.vault.put(name, secret).await.map_err(CoreError::from)
    }

    /// Stores a secret unless one is stored under `name` already; whether this one was.
    pub async fn put_secret_if_absent(&self, name: &str, secret: &SecretString) -> Result<bool> {
        self.vault.put_if_absent(name, secret).await.map_err(CoreError::from)
    }

    /// Whether a secret is stored (without decrypting it).
    pub async fn has_secret(&self, name: &str) -> Result<bool> {
        Ok(self.vault.names().await.map_err(CoreError::from)?.iter().any(|n| n == name))
    }

    /// Applies the keep / remove / replace rule: `None` keeps, empty removes, else replaces.
    pub async fn update_secret(&self, name: &str, value: Option<&str>) -> Result<()> {
        match value {
            None => Ok(()),
            Some("") => self.vault.delete(name).await.map(|_| ()).map_err(CoreError::from),
            Some(value) => self.vault.put(name, &SecretString::from(value.to_owned())).await.map_err(CoreError::from),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A provider stored before "reads images" existed reads as text only.
    #[test]
    fn a_model_stored_before_images_reads_as_text_only() {
        let old = r#"{"kind":"openai_chat","baseUrl":"http://localhost:11434/v1","model":"llama3.2"}"#;
        let model: StoredModel = serde_json::from_str(old).unwrap();
        assert!(!model.accepts_images);
        assert_eq!(model.vision(), crate::tools::Vision::TextOnly);
        assert_eq!(model.unload_after_minutes, 10, "nor an unload time: the default");
        let seeing = StoredModel { accepts_images: true, ..model };
        assert_eq!(seeing.vision(), crate::tools::Vision::Images);
    }
}
