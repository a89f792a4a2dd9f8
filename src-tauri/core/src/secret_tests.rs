#![allow(clippy::unwrap_used)]

use hearth_protocol::settings::{
    AgentMode, EndpointSettings, HarnessSettings, HarnessSettingsParams, ModelSettings, ModelSettingsParams, ProviderKind, SettingsView,
};

use super::*;
use crate::agent::harness::HarnessConfig;
use crate::providers::{Anthropic, OpenAiChat, OpenAiResponses, ProviderConfig};

#[test]
fn only_the_exact_bearer_token_is_admitted() {
    let token = BearerToken::generate();
    let header = format!("Bearer {}", token.reveal());
    let admits = |h: &str| token.admits(Some(h.as_bytes()));
    assert!(admits(&header));
    assert!(!admits(token.reveal()));
    assert!(!admits(&header[..header.len() - 1]));
    assert!(!admits(&format!("{header}0")));
    assert!(!admits("Bearer "));
    assert!(!admits(&format!("bearer {}", token.reveal())));
    assert!(!token.admits(None));
    // One flipped character anywhere is refused.
    let mut flipped = header.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
    assert!(!token.admits(Some(&flipped)));
    assert_ne!(BearerToken::generate().reveal(), token.reveal());
    // A token that arrives as a secret from the vault is the same token.
    let from_vault = BearerToken::from(SecretString::from(token.reveal().to_owned()));
    assert!(from_vault.admits(Some(header.as_bytes())));
}

#[test]
fn issue10_the_secret_header_is_exact_and_sensitive() {
    let token = BearerToken::new("tok-header-77");
    let value = token.header().unwrap();
    assert_eq!(value.as_bytes(), b"Bearer tok-header-77");
    assert!(value.is_sensitive());
    assert!(!format!("{value:?}").contains("tok-header-77"), "{value:?}");
    let key = secret_header("", &SecretString::from("sk-ant-1")).unwrap();
    assert_eq!((key.as_bytes(), key.is_sensitive()), (&b"sk-ant-1"[..], true));
    // What a header cannot carry is refused, not sent mangled (and the error names no secret).
    for bad in ["", " sk-lead", "sk-trail ", "sk-line\nbreak", "sk-\u{7f}del"] {
        let err = secret_header("Bearer ", &SecretString::from(bad)).unwrap_err();
        assert!(bad.is_empty() || !err.to_string().contains(bad), "{err}");
    }
    assert_eq!(token.redact("the agent said tok-header-77 twice: tok-header-77"), "the agent said [redacted] twice: [redacted]");
}

/// Issue 10 point 8: every type that holds a token or key, formatted with `{:?}` and `{:#?}`,
/// shows none of it.
#[test]
fn issue10_no_debug_output_shows_a_secret() {
    const TOKEN: &str = "hearth_debugcanary0123456789abcdef";
    const KEY: &str = "sk-debug-canary-9f3e";
    let token = BearerToken::new(TOKEN);
    let harness = HarnessConfig { bearer_token: Some(token.clone()), ..HarnessConfig::new("http://127.0.0.1:9/agent", Vec::new()) };
    let config = ProviderConfig::new("OpenAI", "https://api.openai.com/v1", Some(KEY.into()));
    let endpoint = EndpointSettings { enabled: true, url: Some("http://127.0.0.1:4100/".into()), token: Some(TOKEN.into()) };
    let view = SettingsView {
        mode: AgentMode::Model,
        model: Some(ModelSettings {
            kind: ProviderKind::OpenaiChat,
            base_url: "https://api.openai.com/v1".into(),
            model: "m".into(),
            has_api_key: true,
            accepts_images: false,
            probe: None,
            act_untested: false,
            unload_after_minutes: 10,
        }),
        harness: Some(HarnessSettings { url: "http://127.0.0.1:9/agent".into(), has_token: true }),
        endpoint: endpoint.clone(),
        undo_window_seconds: 10,
    };
    let model_params = ModelSettingsParams {
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com/v1".into(),
        model: "m".into(),
        api_key: Some(KEY.into()),
        accepts_images: true,
        unload_after_minutes: 10,
    };
    let harness_params = HarnessSettingsParams { url: "http://127.0.0.1:9/agent".into(), token: Some(TOKEN.into()) };
    let printed = [
        format!("{token:?}"),
        format!("{:?}", token.secret()),
        format!("{:?}", token.header().unwrap()),
        format!("{harness:?}"),
        format!("{harness:#?}"),
        format!("{config:?}"),
        format!("{config:#?}"),
        format!("{:?}", OpenAiChat::new(&config).unwrap()),
        format!("{:?}", OpenAiResponses::new(&config).unwrap()),
        format!("{:?}", Anthropic::new(&config).unwrap()),
        format!("{endpoint:?}"),
        format!("{view:?}"),
        format!("{view:#?}"),
        format!("{model_params:?}"),
        format!("{harness_params:?}"),
    ];
    for text in &printed {
        assert!(!text.contains(TOKEN) && !text.contains(KEY), "a secret in Debug output: {text}");
    }
    // Each of them did print something (not an empty string that would pass trivially).
    assert!(printed.iter().all(|text| text.len() > 8), "{printed:?}");
}
