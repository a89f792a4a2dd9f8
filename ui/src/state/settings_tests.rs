#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

fn stored_model(has_api_key: bool) -> ModelSettings {
    ModelSettings {
        kind: ProviderKind::OpenaiChat,
        base_url: "http://localhost:11434/v1".into(),
        model: "llama3.2".into(),
        has_api_key,
        accepts_images: false,
        probe: None,
        act_untested: false,
        unload_after_minutes: 10,
    }
}

#[test]
fn the_unload_time_is_loaded_sent_and_counts_as_a_change() {
    let stored = ModelSettings { kind: ProviderKind::Local, unload_after_minutes: 30, ..stored_model(false) };
    let mut form = ModelForm::from_settings(Some(&stored));
    assert_eq!(form.unload_after_minutes, 30);
    assert!(!form.is_unsaved(Some(&stored)));
    form.unload_after_minutes = 0;
    assert!(form.is_unsaved(Some(&stored)), "keeping it loaded is a change to save");
    assert_eq!(form.params().unload_after_minutes, 0);
    assert_eq!(remove_key_params(&stored).unload_after_minutes, 30, "removing the key keeps the stored time");
    assert_eq!(ModelForm::from_settings(None).unload_after_minutes, DEFAULT_UNLOAD_MINUTES);
}

#[test]
fn accepts_images_is_loaded_sent_and_counts_as_a_change() {
    let stored = ModelSettings { accepts_images: true, ..stored_model(false) };
    let mut form = ModelForm::from_settings(Some(&stored));
    assert!(form.accepts_images);
    assert!(!form.is_unsaved(Some(&stored)));
    form.accepts_images = false;
    assert!(form.is_unsaved(Some(&stored)), "unticking it is a change to save");
    assert!(!form.params().accepts_images);
    assert!(remove_key_params(&stored).accepts_images, "removing the key keeps the stored choice");
    assert!(!ModelForm::from_settings(None).accepts_images, "off until the owner says the model reads images");
}

#[test]
fn modes_and_kinds_round_trip_their_wire_spelling() {
    for mode in MODES {
        let wire = serde_json::to_value(mode).unwrap();
        assert_eq!(wire, serde_json::json!(mode_slug(mode)));
    }
    for &kind in ProviderKind::ALL {
        assert_eq!(kind_from_slug(kind_slug(kind)), Some(kind));
        let wire = serde_json::to_value(kind).unwrap();
        assert_eq!(wire, serde_json::json!(kind_slug(kind)));
    }
    assert_eq!(MODES.map(mode_slug), ["sample", "model", "harness"]);
    assert_eq!(kind_from_slug(""), None);
    assert_eq!(mode_label(AgentMode::Harness), "External agent (AG-UI)");
}

#[test]
fn an_empty_model_form_starts_openai_compatible_at_its_default_url() {
    let form = ModelForm::from_settings(None);
    assert_eq!(form.kind, ProviderKind::OpenaiChat);
    assert_eq!(form.base_url, ProviderKind::OpenaiChat.default_base_url());
    assert_eq!(form.model, "");
    assert_eq!(form.api_key, "");
}

#[test]
fn a_stored_model_fills_the_form_but_never_the_key() {
    let form = ModelForm::from_settings(Some(&stored_model(true)));
    assert_eq!(form.kind, ProviderKind::OpenaiChat);
    assert_eq!(form.base_url, "http://localhost:11434/v1");
    assert_eq!(form.model, "llama3.2");
    assert_eq!(form.api_key, "", "the key is never pre-filled");
}

#[test]
fn switching_kind_moves_a_default_url_to_the_new_default() {
    let mut form = ModelForm::from_settings(None);
    form.set_kind(ProviderKind::Anthropic);
    assert_eq!(form.kind, ProviderKind::Anthropic);
    assert_eq!(form.base_url, "https://api.anthropic.com/v1");
    form.set_kind(ProviderKind::OpenaiResponses);
    assert_eq!(form.base_url, "https://api.openai.com/v1");
    form.base_url = "  https://api.anthropic.com/v1 ".into();
    form.set_kind(ProviderKind::OpenaiChat);
    assert_eq!(form.base_url, "https://api.openai.com/v1", "a default with stray spaces is still a default");
    form.base_url = "   ".into();
    form.set_kind(ProviderKind::Anthropic);
    assert_eq!(form.base_url, "https://api.anthropic.com/v1", "an empty URL gets the default");
}

#[test]
fn switching_kind_keeps_a_url_the_owner_typed() {
    let mut form = ModelForm::from_settings(Some(&stored_model(false)));
    form.set_kind(ProviderKind::Anthropic);
    assert_eq!(form.kind, ProviderKind::Anthropic);
    assert_eq!(form.base_url, "http://localhost:11434/v1");
}

#[test]
fn model_params_are_trimmed_and_keep_the_key_unless_one_is_typed() {
    let mut form = ModelForm::from_settings(None);
    form.base_url = "  http://localhost:8080/v1 ".into();
    form.model = " qwen2.5 \n".into();
    let params = form.params();
    assert_eq!(params.base_url, "http://localhost:8080/v1");
    assert_eq!(params.model, "qwen2.5");
    assert_eq!(params.api_key, None, "an empty key keeps the stored one");
    assert!(params.validate().is_ok());
    let wire = serde_json::to_value(&params).unwrap();
    assert_eq!(
        wire,
        serde_json::json!({
            "kind": "openai_chat",
            "baseUrl": "http://localhost:8080/v1",
            "model": "qwen2.5",
            "acceptsImages": false,
            "unloadAfterMinutes": 10
        }),
        "apiKey is absent, not null"
    );

    form.api_key = "   ".into();
    assert_eq!(form.params().api_key, None, "only spaces is still empty");
    form.api_key = " sk-new \n".into();
    assert_eq!(form.params().api_key.as_deref(), Some("sk-new"), "a pasted key loses its stray whitespace");
}

#[test]
fn invalid_model_forms_fail_validation() {
    let mut form = ModelForm::from_settings(None);
    assert!(form.params().validate().is_err(), "no model name");
    form.model = "gpt-4o-mini".into();
    assert!(form.params().validate().is_ok());
    form.base_url = "localhost:11434".into();
    assert!(form.params().validate().is_err(), "no scheme");
    form.base_url = "https://api.openai.com/v1".into();
    form.api_key = "sk one".into();
    assert!(form.params().validate().is_err(), "a key with a space inside");
}

#[test]
fn remove_key_sends_the_stored_provider_with_an_empty_key() {
    let params = remove_key_params(&stored_model(true));
    assert_eq!(params.api_key.as_deref(), Some(""));
    assert_eq!(params.base_url, "http://localhost:11434/v1");
    assert_eq!(params.model, "llama3.2");
    assert!(params.validate().is_ok());
    let wire = serde_json::to_value(&params).unwrap();
    assert_eq!(wire["apiKey"], serde_json::json!(""));
}

#[test]
fn harness_form_keeps_replaces_or_removes_the_token() {
    assert_eq!(HarnessForm::from_settings(None), HarnessForm::default());
    let stored = HarnessSettings { url: "http://127.0.0.1:8000/agent".into(), has_token: true };
    let mut form = HarnessForm::from_settings(Some(&stored));
    assert_eq!(form.url, "http://127.0.0.1:8000/agent");
    assert_eq!(form.token, "", "the token is never pre-filled");
    assert_eq!(form.params().token, None);
    assert_eq!(serde_json::to_value(form.params()).unwrap(), serde_json::json!({"url": "http://127.0.0.1:8000/agent"}));

    form.url = " https://agent.example/run  ".into();
    form.token = " abc123 ".into();
    let params = form.params();
    assert_eq!(params.url, "https://agent.example/run");
    assert_eq!(params.token.as_deref(), Some("abc123"));
    assert!(params.validate().is_ok());

    let removed = remove_token_params(&stored);
    assert_eq!(removed.url, "http://127.0.0.1:8000/agent");
    assert_eq!(removed.token.as_deref(), Some(""));
    assert!(HarnessForm::default().params().validate().is_err(), "no URL");
}

#[test]
fn secret_placeholders_say_whether_empty_keeps_one() {
    assert_eq!(secret_placeholder(true), "Stored — leave empty to keep");
    assert_eq!(secret_placeholder(false), "Optional");
}

#[test]
fn model_and_harness_modes_need_their_settings_first() {
    let mut view =
        SettingsView { mode: AgentMode::Sample, model: None, harness: None, endpoint: Default::default(), undo_window_seconds: 10 };
    assert!(mode_ready(&view, AgentMode::Sample));
    assert!(!mode_ready(&view, AgentMode::Model));
    assert!(!mode_ready(&view, AgentMode::Harness));
    view.model = Some(stored_model(false));
    view.harness = Some(HarnessSettings { url: "http://127.0.0.1:8000/".into(), has_token: false });
    assert!(mode_ready(&view, AgentMode::Model));
    assert!(mode_ready(&view, AgentMode::Harness));
}

#[test]
fn the_model_form_knows_when_it_differs_from_what_is_stored() {
    assert!(ModelForm::from_settings(None).is_unsaved(None), "nothing stored yet");
    let stored = stored_model(true);
    let mut form = ModelForm::from_settings(Some(&stored));
    assert!(!form.is_unsaved(Some(&stored)));
    form.model = " llama3.2 ".into();
    assert!(!form.is_unsaved(Some(&stored)), "stray spaces are trimmed away on Save");
    form.api_key = "sk-new".into();
    assert!(form.is_unsaved(Some(&stored)), "a new key");
    form.api_key.clear();
    form.set_kind(ProviderKind::Anthropic);
    assert!(form.is_unsaved(Some(&stored)), "another kind");
}

#[test]
fn the_header_says_what_the_local_model_is_doing() {
    use hearth_protocol::settings::{LocalModelActivity, LocalModelState};
    let activity = |state, for_ms| LocalModelActivity {
        name: "SmolLM2".into(),
        state,
        for_ms,
        waiting: 0,
        tokens_per_second: Some(57.6),
        first_token_ms: Some(420),
    };
    let busy = LocalModelActivity { waiting: 1, ..activity(LocalModelState::Writing, 0) };
    assert_eq!(local_model_line(&busy), "SmolLM2 · writing · 1 answer waiting for the local model");
    assert_eq!(local_model_line(&activity(LocalModelState::Reading, 3_400)), "SmolLM2 · reading the prompt… 3 s");
    assert_eq!(local_model_line(&activity(LocalModelState::Idle, 0)), "SmolLM2 · 58 tokens/s · first token 0.4 s");
    let fresh = LocalModelActivity { tokens_per_second: None, first_token_ms: None, ..activity(LocalModelState::Idle, 0) };
    assert_eq!(local_model_line(&fresh), "SmolLM2 · on this computer");
}
