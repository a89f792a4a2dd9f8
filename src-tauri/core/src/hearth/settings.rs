//! The `settings_*` operations: each stores what the owner chose, applies it at once, and
//! answers with the view (which never carries a key or a stored token).

use std::net::SocketAddr;

use hearth_protocol::settings::{
    AgentMode, ConnectionTestResponse, EndpointSettings, HarnessSettings, HarnessSettingsParams, LocalModelInfo, LocalModelInspectParams,
    LocalProbeView, ModelSettings, ModelSettingsParams, ProbeAnswer, ProbeFamilyScore, ProbeProgress, ProviderKind, SettingsView,
    check_model_path,
};

use super::Hearth;
use crate::agui_server::AguiServer;
use crate::error::{CoreError, Result};
use crate::local_model::{FileStamp, LocalModel, probe};
use crate::secret::{BearerToken, ExposeSecret};
use crate::settings::{
    API_KEY_SECRET, ENDPOINT_TOKEN_SECRET, HARNESS_TOKEN_SECRET, SettingsEdit, StoredModel, StoredSettings, build_provider,
    inspect_local_model, test_provider,
};
use crate::store::threads::RunOrigin;

impl Hearth {
    /// At start-up: the stored mode and endpoint. A setting that cannot be applied (a provider
    /// this build lacks, a port in use) is logged and the sample agent answers instead.
    pub(super) async fn apply_settings(&self) {
        let edit = self.settings.edit().await;
        let stored = match edit.load().await {
            Ok(stored) => stored,
            Err(err) => {
                tracing::error!(error = %err, "could not read the settings; the sample agent answers");
                return;
            }
        };
        if stored.computer_enabled {
            self.computer.set_enabled(true);
        }
        if let Err(err) = self.apply_mode(&stored).await {
            tracing::warn!(error = %err, "the chosen agent could not start; the sample agent answers");
            self.use_sample();
        }
        if stored.endpoint_enabled
            && let Err(err) = self.start_endpoint(&edit, stored).await
        {
            tracing::warn!(error = %err, "Hearth's AG-UI endpoint could not start");
        }
    }

    async fn apply_mode(&self, stored: &StoredSettings) -> Result<()> {
        if stored.mode != AgentMode::Model {
            *self.local_model.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
        match stored.mode {
            AgentMode::Sample => self.use_sample(),
            AgentMode::Model => {
                let model = stored.model.as_ref().ok_or_else(|| CoreError::InvalidInput("Set up a model provider first.".into()))?;
                let standing = Standing::of(model).await;
                let key = self.settings.secret(API_KEY_SECRET).await?;
                let (provider, local) =
                    build_provider(model, key, self.config.local_model_worker.as_ref(), standing.permitted_file()).await?;
                self.use_model_offering(provider, &model.model, model.vision(), local_offer(model, &standing));
                *self.local_model.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = local;
            }
            AgentMode::Harness => {
                let url = stored
                    .harness_url
                    .as_deref()
                    .ok_or_else(|| CoreError::InvalidInput("Set up the external agent's URL first.".into()))?;
                self.use_harness(url, self.settings.secret(HARNESS_TOKEN_SECRET).await?)?;
            }
        }
        Ok(())
    }

    /// What Settings shows.
    pub async fn settings_get(&self) -> Result<SettingsView> {
        let stored = self.settings.load().await?;
        let model = match stored.model {
            Some(m) => {
                let standing = Standing::of(&m).await;
                Some(ModelSettings {
                    probe: standing.report.as_ref().map(|report| probe_view(report, standing.overridden)),
                    act_untested: standing.overridden,
                    kind: m.kind,
                    base_url: m.base_url,
                    model: m.model,
                    has_api_key: self.settings.has_secret(API_KEY_SECRET).await?,
                    accepts_images: m.accepts_images,
                    unload_after_minutes: m.unload_after_minutes,
                })
            }
            None => None,
        };
        let harness = match stored.harness_url {
            Some(url) => Some(HarnessSettings { url, has_token: self.settings.has_secret(HARNESS_TOKEN_SECRET).await? }),
            None => None,
        };
        let endpoint = match self.endpoint.lock().await.as_ref() {
            Some(server) => EndpointSettings {
                enabled: true,
                url: Some(format!("http://{}/", server.addr())),
                // The one place the token leaves the core: shown to the owner while it runs.
                token: self.settings.secret(ENDPOINT_TOKEN_SECRET).await?.map(|t| t.expose_secret().to_owned()),
            },
            None => EndpointSettings::default(),
        };
        let undo_window_seconds = self.approvals.undo_window_seconds().await?;
        Ok(SettingsView { mode: stored.mode, model, harness, endpoint, undo_window_seconds })
    }

    /// How long an approved email or event change waits with Undo before it leaves.
    pub async fn settings_undo_window_set(&self, params: &hearth_protocol::settings::UndoWindowParams) -> Result<SettingsView> {
        params.validate()?;
        self.approvals.set_undo_window_seconds(params.seconds).await?;
        self.settings_get().await
    }

    /// Who answers the chat. Model and external agent need their settings first.
    pub async fn settings_mode_set(&self, mode: AgentMode) -> Result<SettingsView> {
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        stored.mode = mode;
        self.apply_mode(&stored).await?;
        edit.save(&stored).await?;
        drop(edit);
        self.settings_get().await
    }

    /// The model provider (and its key: absent keeps, empty removes).
    pub async fn settings_model_set(&self, params: &ModelSettingsParams) -> Result<SettingsView> {
        params.validate()?;
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        let mut model = StoredModel {
            kind: params.kind,
            base_url: params.base_url.trim().to_owned(),
            model: params.model.trim().to_owned(),
            accepts_images: params.accepts_images,
            probe: None,
            act_untested: false,
            override_file: None,
            unload_after_minutes: params.unload_after_minutes,
        };
        if model.kind == ProviderKind::Local {
            // Its name is the file's; it reads no pictures. The same file keeps its probe
            // result and the owner's override; another file starts untested.
            model.model = inspect_local_model(&model.base_url, self.config.local_model_worker.as_ref()).await?.name;
            model.accepts_images = false;
            if let Some(old) = stored.model.as_ref().filter(|old| old.kind == ProviderKind::Local && old.base_url == model.base_url) {
                // Each still counts only for the file it was given to (`Standing`).
                model.probe = old.probe.clone();
                model.act_untested = old.act_untested;
                model.override_file = old.override_file;
            }
        } else {
            // Refuse a provider this build cannot make before storing anything.
            build_provider(&model, None, None, None).await?;
        }
        self.settings.update_secret(API_KEY_SECRET, params.api_key.as_deref()).await?;
        stored.model = Some(model);
        if stored.mode == AgentMode::Model {
            self.apply_mode(&stored).await?;
        }
        edit.save(&stored).await?;
        drop(edit);
        self.settings_get().await
    }

    /// Asks the configured model for a one-word answer.
    pub async fn settings_model_test(&self) -> Result<ConnectionTestResponse> {
        let stored = self.settings.load().await?;
        let model = stored.model.ok_or_else(|| CoreError::InvalidInput("Set up a model provider first.".into()))?;
        let (provider, _) =
            build_provider(&model, self.settings.secret(API_KEY_SECRET).await?, self.config.local_model_worker.as_ref(), None).await?;
        Ok(test_provider(provider.as_ref(), &model.model).await)
    }

    /// What the model on this computer is doing, when it answers the chat.
    pub fn local_model_activity(&self) -> Option<hearth_protocol::settings::LocalModelActivity> {
        self.local_model.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref().map(crate::local_model::LocalModel::activity)
    }

    /// How far the probe suite has got, while it runs.
    pub fn local_model_probe_progress(&self) -> Option<ProbeProgress> {
        *self.probe_progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs the probe suite on the stored local model and keeps its result: from then on the
    /// model is offered what prepares or changes things only for the families it passed. One
    /// run at a time; its progress is [`Hearth::local_model_probe_progress`].
    pub async fn settings_local_model_probe(&self) -> Result<SettingsView> {
        let total = u32::try_from(probe::PROBES.len()).unwrap_or(u32::MAX);
        let _running = ProbeRun::start(&self.probe_progress, total)?;
        let stored = self.settings.load().await?;
        let model = stored
            .model
            .filter(|m| m.kind == ProviderKind::Local)
            .ok_or_else(|| CoreError::InvalidInput("Choose a model file on this computer first.".into()))?;
        let local = self.probe_model(&model).await?;
        let tools: Vec<crate::providers::ToolSpec> = crate::tools::tool_specs(crate::tools::Vision::TextOnly)
            .into_iter()
            .map(|t| crate::providers::ToolSpec { name: t.name, description: t.description, parameters: t.parameters })
            .collect();
        let progress = |done: usize, total: usize| {
            let progress = ProbeProgress { done: u32::try_from(done).unwrap_or(u32::MAX), total: u32::try_from(total).unwrap_or(u32::MAX) };
            *self.probe_progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(progress);
        };
        // The report names the file its answers came from (`probe::run`).
        let report = probe::run(&local, &tools, &tokio_util::sync::CancellationToken::new(), &progress)
            .await
            .map_err(|err| CoreError::InvalidInput(err.to_string()))?;
        // Stored only if the owner kept the same file meanwhile.
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        if let Some(kept) = stored.model.as_mut().filter(|m| m.kind == ProviderKind::Local && m.base_url == model.base_url) {
            kept.probe = Some(report);
            if stored.mode == AgentMode::Model {
                self.apply_mode(&stored).await?;
            }
            edit.save(&stored).await?;
        }
        drop(edit);
        self.settings_get().await
    }

    /// The model the probe runs on: the chat's own when it is this file and may still load it
    /// (the probe's answers then wait their turn in its one slot, and the file is in memory
    /// once), else a worker of the probe's own.
    async fn probe_model(&self, model: &StoredModel) -> Result<LocalModel> {
        let path = std::path::Path::new(model.base_url.trim());
        let chat = self.local_model.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().filter(|m| m.path() == path);
        if let Some(chat) = chat {
            let permitted = chat.permitted_file();
            if permitted.is_none() || FileStamp::of(path).await == permitted {
                return Ok(chat);
            }
        }
        let (_, local) = build_provider(model, None, self.config.local_model_worker.as_ref(), None).await?;
        local.ok_or_else(|| CoreError::InvalidInput("Choose a model file on this computer first.".into()))
    }

    /// Lets the local model prepare and act in families it did not pass (or takes that back).
    pub async fn settings_local_model_override(&self, act_untested: bool) -> Result<SettingsView> {
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        let kept = stored
            .model
            .as_mut()
            .filter(|m| m.kind == ProviderKind::Local)
            .ok_or_else(|| CoreError::InvalidInput("Choose a model file on this computer first.".into()))?;
        // Given to the file as it is now, as a probe report is.
        kept.override_file = match act_untested {
            true => Some(
                FileStamp::of(std::path::Path::new(&kept.base_url))
                    .await
                    .ok_or_else(|| CoreError::InvalidInput(format!("{} cannot be read; choose the model file again.", kept.base_url)))?,
            ),
            false => None,
        };
        kept.act_untested = act_untested;
        if stored.mode == AgentMode::Model {
            self.apply_mode(&stored).await?;
        }
        edit.save(&stored).await?;
        drop(edit);
        self.settings_get().await
    }

    /// A model file's facts, for Settings to show before the owner keeps it.
    pub async fn settings_local_model_inspect(&self, params: &LocalModelInspectParams) -> Result<LocalModelInfo> {
        check_model_path(params.path.trim())?;
        inspect_local_model(&params.path, self.config.local_model_worker.as_ref()).await
    }

    /// The external AG-UI agent (and its token: absent keeps, empty removes).
    pub async fn settings_harness_set(&self, params: &HarnessSettingsParams) -> Result<SettingsView> {
        params.validate()?;
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        self.settings.update_secret(HARNESS_TOKEN_SECRET, params.token.as_deref()).await?;
        stored.harness_url = Some(params.url.trim().to_owned());
        if stored.mode == AgentMode::Harness {
            self.apply_mode(&stored).await?;
        }
        edit.save(&stored).await?;
        drop(edit);
        self.settings_get().await
    }

    /// Turns Hearth's AG-UI endpoint on (loopback, the stored token or a new one) or off.
    pub async fn settings_endpoint_set(&self, enabled: bool) -> Result<SettingsView> {
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        if enabled {
            stored.endpoint_enabled = true;
            self.start_endpoint(&edit, stored).await?;
        } else {
            // Closed before the lock is let go: turned on again, it finds its port free and so
            // keeps its token (a moved endpoint gets a new one).
            let mut running = self.endpoint.lock().await;
            if let Some(server) = running.take() {
                server.close().await;
            }
            drop(running);
            stored.endpoint_enabled = false;
            edit.save(&stored).await?;
        }
        drop(edit);
        self.settings_get().await
    }

    /// "Regenerate token": a new random endpoint token, stored in the vault, and — if the
    /// endpoint is running — in force at once, so the old token is refused from the next
    /// request on, and the endpoint runs in flight (all admitted under the old token) are cancelled.
    pub async fn settings_endpoint_regenerate(&self) -> Result<SettingsView> {
        {
            // Held throughout, so a concurrent start reads either the old or the new token
            // from the vault and the running server and the vault never disagree.
            let running = self.endpoint.lock().await;
            let token = BearerToken::generate();
            self.settings.put_secret(ENDPOINT_TOKEN_SECRET, token.secret()).await?;
            if let Some(server) = running.as_ref() {
                server.set_token(token);
            }
            // Every endpoint run in flight was admitted under the old token (nobody has the new
            // one until this returns): a leaked token's runs end with it.
            let stopped = self.runs.cancel_from(RunOrigin::AguiEndpoint);
            tracing::info!(running = running.is_some(), stopped, "the AG-UI endpoint's token was regenerated");
        }
        self.settings_get().await
    }

    /// Starts the endpoint on its last port with the stored token, so clients keep working
    /// across restarts. If it cannot have that port (taken, or none stored yet) it listens on
    /// a free one with a new token, stored in the vault as Regenerate stores it and shown in
    /// Settings: whatever holds the old port now may be collecting what clients send there,
    /// the old token included, so a moved endpoint never accepts it.
    async fn start_endpoint(&self, edit: &SettingsEdit<'_>, mut stored: StoredSettings) -> Result<()> {
        let mut running = self.endpoint.lock().await;
        if running.is_some() {
            return Ok(());
        }
        let loopback = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        let kept = match (stored.endpoint_port, self.settings.secret(ENDPOINT_TOKEN_SECRET).await?) {
            (Some(port), Some(token)) => match AguiServer::start(self.clone(), loopback(port), BearerToken::from(token)).await {
                Ok(server) => Some(server),
                Err(err) => {
                    tracing::warn!(port, error = %err, "the AG-UI endpoint's port is taken: it moves, with a new token");
                    None
                }
            },
            _ => None,
        };
        let server = match kept {
            Some(server) => server,
            None => {
                let token = BearerToken::generate();
                self.settings.put_secret(ENDPOINT_TOKEN_SECRET, token.secret()).await?;
                AguiServer::start(self.clone(), loopback(0), token).await?
            }
        };
        stored.endpoint_port = Some(server.addr().port());
        if let Err(err) = edit.save(&stored).await {
            server.close().await;
            return Err(err);
        }
        *running = Some(server);
        Ok(())
    }
}

/// The tools a stored model is offered: every one for a remote model or where the owner
/// overrode the probe for this file; for a local model, reads always and the rest by its probe
/// result on this file (none before it was probed, or once the file changed).
fn local_offer(model: &StoredModel, standing: &Standing) -> Option<crate::agent::ToolOffer> {
    match model.kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses | ProviderKind::Anthropic => None,
        ProviderKind::Local if standing.overridden => None,
        ProviderKind::Local => {
            let report = standing.report.clone().unwrap_or_default();
            Some(std::sync::Arc::new(move |tool: hearth_protocol::ToolName| probe::offered(tool, &report)))
        }
    }
}

/// What a stored local model may do, judged against its file as it is now: the probe report
/// and the owner's override count only for the file they were given to.
#[derive(Debug, Default)]
struct Standing {
    /// The file now.
    file: Option<FileStamp>,
    /// The probe report, if made on this file.
    report: Option<probe::ProbeReport>,
    /// The owner let this file act untested.
    overridden: bool,
}

impl Standing {
    async fn of(model: &StoredModel) -> Self {
        let file = match model.kind {
            ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses | ProviderKind::Anthropic => return Self::default(),
            ProviderKind::Local => FileStamp::of(std::path::Path::new(&model.base_url)).await,
        };
        let report = model.probe.clone().filter(|report| file.is_some() && report.file == file);
        let overridden = model.act_untested && file.is_some() && model.override_file == file;
        Self { file, report, overridden }
    }

    /// The file whose permissions the model acts with, which its worker must still be on
    /// when it loads; none when it may only read.
    fn permitted_file(&self) -> Option<FileStamp> {
        let acts = self.overridden || self.report.as_ref().is_some_and(|report| probe::Family::ALL.iter().any(|&f| report.acts(f)));
        self.file.filter(|_| acts)
    }
}

/// A probe result as Settings shows it.
fn probe_view(report: &probe::ProbeReport, act_untested: bool) -> LocalProbeView {
    LocalProbeView {
        families: report
            .scores()
            .into_iter()
            .map(|score| ProbeFamilyScore {
                label: score.family.label().to_owned(),
                passed: score.passed,
                total: score.total,
                allowed: act_untested || report.acts(score.family),
            })
            .collect(),
        answers: report
            .verdicts
            .iter()
            .map(|verdict| ProbeAnswer {
                family: verdict.family.label().to_owned(),
                prompt: probe::PROBES.get(verdict.probe).map(|p| p.prompt.to_owned()).unwrap_or_default(),
                answered: verdict.answered.clone(),
                passed: verdict.passed,
            })
            .collect(),
    }
}

/// The one probe run, while it lasts: its progress is shown from the start and cleared when
/// it ends however it ends (done, an error, or the command dropped).
struct ProbeRun<'a>(&'a std::sync::Mutex<Option<ProbeProgress>>);

impl<'a> ProbeRun<'a> {
    fn start(progress: &'a std::sync::Mutex<Option<ProbeProgress>>, total: u32) -> Result<Self> {
        let mut shown = progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if shown.is_some() {
            return Err(CoreError::InvalidInput("The model is already being tested; wait for that test to end.".into()));
        }
        *shown = Some(ProbeProgress { done: 0, total });
        Ok(Self(progress))
    }
}

impl Drop for ProbeRun<'_> {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hearth_protocol::ToolName;

    use super::*;

    fn local(path: &std::path::Path) -> StoredModel {
        StoredModel {
            kind: ProviderKind::Local,
            base_url: path.display().to_string(),
            model: "m".into(),
            accepts_images: false,
            probe: None,
            act_untested: false,
            override_file: None,
            unload_after_minutes: 10,
        }
    }

    fn all_passed(file: Option<FileStamp>) -> probe::ProbeReport {
        let verdicts = (0..probe::PROBES.len())
            .map(|i| probe::Verdict { probe: i, family: probe::PROBES[i].family, passed: true, answered: String::new() })
            .collect();
        probe::ProbeReport { verdicts, file }
    }

    fn offers(model: &StoredModel, standing: &Standing, tool: ToolName) -> bool {
        local_offer(model, standing).is_none_or(|offer| offer(tool))
    }

    /// Rewrites the file in place (its content and size as before).
    fn rewrite(path: &std::path::Path) {
        let bytes = std::fs::read(path).unwrap();
        let other = path.with_extension("new");
        std::fs::write(&other, bytes).unwrap();
        std::fs::rename(&other, path).unwrap();
    }

    #[tokio::test]
    async fn a_report_and_an_override_let_the_file_they_were_given_to_act_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, b"GGUF").unwrap();
        let now = FileStamp::of(&path).await;

        let mut tested = local(&path);
        tested.probe = Some(all_passed(now));
        let standing = Standing::of(&tested).await;
        assert!(offers(&tested, &standing, ToolName::PrepareEmail), "it passed: it may prepare");
        assert_eq!(standing.permitted_file(), now, "and its worker loads only this file");

        let mut overridden = local(&path);
        overridden.act_untested = true;
        overridden.override_file = now;
        let standing = Standing::of(&overridden).await;
        assert!(standing.overridden && offers(&overridden, &standing, ToolName::PrepareEmail));
        assert_eq!(standing.permitted_file(), now);

        let untested = local(&path);
        let standing = Standing::of(&untested).await;
        assert!(!offers(&untested, &standing, ToolName::PrepareEmail) && offers(&untested, &standing, ToolName::SearchMail));
        assert_eq!(standing.permitted_file(), None, "reads only: any file may load");

        // The same path, another file: both permissions lapse.
        rewrite(&path);
        for model in [&tested, &overridden] {
            let standing = Standing::of(model).await;
            assert!(standing.report.is_none() && !standing.overridden, "{standing:?}");
            assert!(!offers(model, &standing, ToolName::PrepareEmail), "reads only now");
            assert!(offers(model, &standing, ToolName::SearchMail));
            assert_eq!(standing.permitted_file(), None);
        }
        // A report or an override from before file stamps counts for no file.
        let mut old = local(&path);
        old.probe = Some(all_passed(None));
        old.act_untested = true;
        let standing = Standing::of(&old).await;
        assert!(standing.report.is_none() && !standing.overridden);
    }
}
