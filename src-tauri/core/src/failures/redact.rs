//! Redaction for the failure report: the report leaves the machine by the owner's hand (pasted
//! into a mail or a chat with whoever helps), so free text in it is scrubbed of what could be a
//! secret or point at the owner's private things.
//!
//! Known secrets (the vault's values) go first, exactly; then anything shaped like a credential
//! (a word after `Bearer`, a provider key prefix, a long run of letters and digits); then
//! addresses: a URL keeps only its scheme and host, a mail address only its domain.

use crate::secret::{ExposeSecret, SecretString};

/// What a removed credential reads as.
pub const REDACTED: &str = "[redacted]";

/// Prefixes of well-known API keys and tokens (OpenAI, Anthropic, GitHub, Slack, Google).
const KEY_PREFIXES: &[&str] = &["sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "github_pat_", "xoxb-", "xoxp-", "AIza", "ya29."];

/// A word this long, mixing letters and digits, is taken for a token.
const TOKEN_LEN: usize = 24;

/// `text` with `secrets`, credential-shaped words and full addresses removed.
pub fn redact(text: &str, secrets: &[SecretString]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        let secret = secret.expose_secret();
        // A very short "secret" would blank ordinary words; such a value is no secret worth the name.
        if secret.len() >= 8 {
            text = text.replace(secret, REDACTED);
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut after_bearer = false;
    let mut after_name = false;
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, after_bearer: &mut bool, after_name: &mut bool| {
        if word.is_empty() {
            return;
        }
        let scrubbed = if *after_bearer { REDACTED.to_owned() } else { scrub_word(word) };
        // The word after `Bearer`/`Basic`, or after a header or field name that names a secret
        // (`X-Api-Key: abc`, `password = abc`), is the secret itself, however short.
        let name = word.trim_end_matches([':', '=']);
        let was_after = *after_bearer;
        *after_bearer = word.eq_ignore_ascii_case("bearer")
            || (was_after && word.eq_ignore_ascii_case("basic"))
            || (name.len() < word.len() && is_secret_field(name))
            || (word == ":" || word == "=") && *after_name;
        *after_name = is_secret_field(word);
        out.push_str(&scrubbed);
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | '<' | '>' | '[' | ']' | '{' | '}' | ',' | ';') {
            flush(&mut word, &mut out, &mut after_bearer, &mut after_name);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out, &mut after_bearer, &mut after_name);
    out
}

/// One word (no spaces, quotes or brackets), scrubbed.
fn scrub_word(word: &str) -> String {
    if let Some(host) = url_host(word) {
        return host;
    }
    if let Some((local, domain)) = word.split_once('@')
        && !local.is_empty()
        && domain.contains('.')
    {
        return format!("…@{}", domain.trim_end_matches(['.', ':']));
    }
    // `key=…`, `token: …` in a query or a header line.
    if let Some((name, value)) = word.split_once(['=', ':'])
        && !value.is_empty()
        && is_secret_name(name)
    {
        return format!("{name}={REDACTED}");
    }
    if looks_like_token(word.trim_end_matches(['.', ':'])) {
        return REDACTED.to_owned();
    }
    word.to_owned()
}

/// `scheme://host/…` for a URL, so a link's path and query (which may name a message, a
/// document or carry a token) stay out.
fn url_host(word: &str) -> Option<String> {
    let start = word.find("://")?;
    // The scheme: the letters and digits just before `://`.
    let scheme_start = word[..start].char_indices().rev().take_while(|(_, c)| c.is_ascii_alphanumeric()).last().map_or(start, |(i, _)| i);
    let parsed = url::Url::parse(&word[scheme_start..]).ok()?;
    let host = parsed.host_str()?;
    Some(format!("{}://{host}/…", parsed.scheme()))
}

/// A header or field name whose value is a secret, exactly (so "vault key:" in a message is
/// not taken for one).
fn is_secret_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "api_key",
        "apikey",
        "access_token",
        "refresh_token",
        "client_secret",
        "token",
        "password",
        "passwd",
        "secret",
    ]
    .contains(&name.as_str())
}

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["key", "token", "secret", "password", "authorization", "api_key", "apikey", "access_token", "auth"]
        .iter()
        .any(|n| name.trim_start_matches(['?', '&']).ends_with(n))
}

fn looks_like_token(word: &str) -> bool {
    if KEY_PREFIXES.iter().any(|p| word.starts_with(p) && word.len() > p.len() + 8) {
        return true;
    }
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+' | '='));
    let letters = word.chars().any(|c| c.is_ascii_alphabetic());
    let digits = word.chars().any(|c| c.is_ascii_digit());
    plain && letters && digits && word.len() >= TOKEN_LEN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_addresses_and_known_secrets_go() {
        let vault = [SecretString::from("hunter2-correct-horse".to_owned())];
        let text = "Authorization: Bearer abc.def and sk-live-0123456789abcdefghij at https://api.example.com/v1/x?key=zz \
                    for anna@example.org, password hunter2-correct-horse, token=short1, plain words stay.";
        let out = redact(text, &vault);
        for gone in ["abc.def", "0123456789abcdef", "/v1/x", "key=zz", "anna@", "hunter2", "short1"] {
            assert!(!out.contains(gone), "{gone} left in: {out}");
        }
        for kept in ["https://api.example.com/…", "…@example.org", "plain words stay."] {
            assert!(out.contains(kept), "{kept} missing from: {out}");
        }
    }

    #[test]
    fn a_short_secret_after_its_header_or_field_name_goes() {
        let text = "sent X-Api-Key: abc123 and Authorization: Basic dXNlcg== then password = hunter then token: t0k";
        let out = redact(text, &[]);
        for gone in ["abc123", "dXNlcg", "hunter", "t0k"] {
            assert!(!out.contains(gone), "{gone} left in: {out}");
        }
        assert!(out.starts_with("sent X-Api-Key: [redacted]"), "{out}");
        // Hearth's own words after a name that only ends like one stay.
        let own = "Hearth could not open the vault key: permission denied. A basic check failed.";
        assert_eq!(redact(own, &[]), own);
    }

    #[test]
    fn ordinary_messages_are_unchanged() {
        let text = "The model provider Scripted failed (500). Try again in a moment.";
        assert_eq!(redact(text, &[]), text);
    }
}
