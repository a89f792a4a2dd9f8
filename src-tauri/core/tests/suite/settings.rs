//! Settings: the agent is swapped while Hearth runs, the key is stored encrypted and never
//! comes back out, Test connection reaches the provider, and the endpoint turns on and off.

use hearth_core::Hearth;
use hearth_protocol::agui::Event;
use hearth_protocol::settings::{AgentMode, HarnessSettingsParams, ModelSettingsParams, ProviderKind};
use hearth_testkit::model_server::{HttpError, ModelServer, Reply, Script};

use super::support::{collect, fast_config, start, text_of};

const KEY: &str = "sk-settings-9d2f-secret";

fn model_params(server: &ModelServer, key: Option<&str>) -> ModelSettingsParams {
    ModelSettingsParams {
        kind: ProviderKind::OpenaiChat,
        base_url: server.base_url(),
        model: "scripted-model".into(),
        api_key: key.map(str::to_owned),
        accepts_images: false,
        unload_after_minutes: hearth_protocol::settings::DEFAULT_UNLOAD_MINUTES,
    }
}

/// The tool names a request offered the model.
fn offered(request: &hearth_testkit::model_server::RecordedRequest) -> Vec<String> {
    request.body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn look_page_is_offered_only_to_a_model_set_to_accept_images() {
    let server = ModelServer::start(
        Script::new().turn(Reply::new().text(&["one"])).turn(Reply::new().text(&["two"])).turn(Reply::new().text(&["three"])),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let view = hearth.settings_model_set(&model_params(&server, None)).await.unwrap();
    assert!(!view.model.unwrap().accepts_images);
    hearth.settings_mode_set(AgentMode::Model).await.unwrap();
    collect(start(&hearth, None, "hi").await.2).await;
    let sees = ModelSettingsParams { accepts_images: true, ..model_params(&server, None) };
    assert!(hearth.settings_model_set(&sees).await.unwrap().model.unwrap().accepts_images);
    collect(start(&hearth, None, "hi again").await.2).await;
    // Kept across a restart.
    drop(hearth);
    let again = Hearth::open(fast_config(dir.path())).await.unwrap();
    assert!(again.settings_get().await.unwrap().model.unwrap().accepts_images);
    collect(start(&again, None, "and again").await.2).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(offered(&requests[0]).contains(&"browse_web".to_owned()));
    assert!(!offered(&requests[0]).contains(&"look_page".to_owned()), "a model that reads no images is not offered look_page");
    assert!(offered(&requests[1]).contains(&"look_page".to_owned()));
    assert!(offered(&requests[2]).contains(&"look_page".to_owned()));
}

#[tokio::test]
async fn choosing_a_model_swaps_the_agent_and_keeps_the_key_encrypted() {
    let server = ModelServer::start(Script::new().turn(Reply::new().text(&["OK"])).turn(Reply::new().text(&["Hello from the model."])))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    assert_eq!(hearth.settings_get().await.unwrap().mode, AgentMode::Sample);
    let refused = hearth.settings_mode_set(AgentMode::Model).await.unwrap_err();
    assert!(refused.to_string().contains("model provider first"), "{refused}");

    let view = hearth.settings_model_set(&model_params(&server, Some(KEY))).await.unwrap();
    let model = view.model.unwrap();
    assert!(model.has_api_key);
    assert!(!serde_json::to_string(&hearth.settings_get().await.unwrap()).unwrap().contains(KEY), "the view never carries the key");

    let tested = hearth.settings_model_test().await.unwrap();
    assert!(tested.ok, "{}", tested.message);
    assert_eq!(server.requests()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));

    hearth.settings_mode_set(AgentMode::Model).await.unwrap();
    assert_eq!(hearth.app_info().agent, hearth_protocol::settings::AgentMode::Model);
    let (_, _, events) = start(&hearth, None, "hi").await;
    let events = collect(events).await;
    assert_eq!(text_of(&events), "Hello from the model.");
    assert!(matches!(events.last(), Some(Event::RunFinished(_))));

    // The database holds the key only encrypted.
    let raw = std::fs::read(dir.path().join("hearth.db")).unwrap();
    let wal = std::fs::read(dir.path().join("hearth.db-wal")).unwrap_or_default();
    let contains = |hay: &[u8]| hay.windows(KEY.len()).any(|w| w == KEY.as_bytes());
    assert!(!contains(&raw) && !contains(&wal), "the API key is not stored in plain text");

    // After a restart the same agent answers (mode and provider are stored).
    drop(hearth);
    let again = Hearth::open(fast_config(dir.path())).await.unwrap();
    assert_eq!(again.app_info().agent, hearth_protocol::settings::AgentMode::Model);
    // Removing the key: empty string.
    let view = again.settings_model_set(&model_params(&server, Some(""))).await.unwrap();
    assert!(!view.model.unwrap().has_api_key);
}

#[tokio::test]
async fn test_connection_reports_a_refused_key_plainly() {
    let server = ModelServer::start(Script::new().turn(HttpError::unauthorized())).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    hearth.settings_model_set(&model_params(&server, Some(KEY))).await.unwrap();
    let tested = hearth.settings_model_test().await.unwrap();
    assert!(!tested.ok);
    assert!(tested.message.contains("401"), "{}", tested.message);
    assert!(!tested.message.contains(KEY));
}

#[tokio::test]
async fn the_endpoint_turns_on_with_a_token_and_off_again() {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    assert!(!hearth.settings_get().await.unwrap().endpoint.enabled, "off by default");
    let on = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    let url = on.url.unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let token = on.token.unwrap();
    assert!(token.starts_with("hearth_"));
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    assert!(tokio::net::TcpStream::connect(&addr).await.is_ok(), "it listens");
    let off = hearth.settings_endpoint_set(false).await.unwrap().endpoint;
    assert!(!off.enabled && off.token.is_none());
    // The same token comes back when it is turned on again.
    let again = hearth.settings_endpoint_set(true).await.unwrap().endpoint;
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
    hearth.shutdown().await;
}

#[tokio::test]
async fn an_external_agent_needs_a_url_and_keeps_its_token_secret() {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let params = HarnessSettingsParams { url: "http://127.0.0.1:9/agent".into(), token: Some("harness-token-77".into()) };
    let view = hearth.settings_harness_set(&params).await.unwrap();
    assert!(view.harness.as_ref().unwrap().has_token);
    let view = hearth.settings_mode_set(AgentMode::Harness).await.unwrap();
    assert_eq!(view.mode, AgentMode::Harness);
    assert_eq!(hearth.app_info().agent, hearth_protocol::settings::AgentMode::Harness);
    assert!(!serde_json::to_string(&view).unwrap().contains("harness-token-77"));
    hearth.settings_mode_set(AgentMode::Sample).await.unwrap();
    assert_eq!(hearth.app_info().agent, hearth_protocol::settings::AgentMode::Sample);
}

#[tokio::test]
async fn every_provider_kind_can_be_chosen_and_tested() {
    // The model on this computer has no wire: suite/local_model.rs chooses and tests it.
    for &kind in ProviderKind::ALL.iter().filter(|&&k| k != ProviderKind::Local) {
        let server = ModelServer::start(Script::new().turn(Reply::new().text(&["OK"]))).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
        let params = ModelSettingsParams { kind, ..model_params(&server, Some(KEY)) };
        hearth.settings_model_set(&params).await.unwrap();
        let tested = hearth.settings_model_test().await.unwrap();
        assert!(tested.ok, "{kind:?}: {}", tested.message);
        let path = server.requests()[0].path.clone();
        let expected = match kind {
            ProviderKind::OpenaiChat => "/v1/chat/completions",
            ProviderKind::OpenaiResponses => "/v1/responses",
            ProviderKind::Anthropic => "/v1/messages",
            ProviderKind::Local => unreachable!("filtered out above"),
        };
        assert_eq!(path, expected, "{kind:?} speaks its own wire format");
    }
}
