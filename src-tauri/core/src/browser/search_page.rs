//! The search page `search_web` opens (Settings → Web search): a URL template the owner picks
//! (a preset or their own), checked when it is set so a search never starts from an address
//! the browser would not open or one that cannot carry the query.
//!
//! Kept under its own key in `meta` (not with `settings::StoredSettings`): it changes alone,
//! nothing else is read or written with it, and the search tool reads it here without reaching
//! into the rest of Settings.

use hearth_protocol::web_search::{DEFAULT_TEMPLATE, MAX_QUERY, MAX_TEMPLATE, QUERY_PLACEHOLDER, SearchPreset, WebSearchView};
use serde::{Deserialize, Serialize};
use url::{Host, Url};

use crate::store::Store;
use crate::store::error::StoreError;

/// The `meta` key the template is stored under.
const WEB_SEARCH_KEY: &str = "web_search";

/// A search page template that passed [`SearchPage::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    template: String,
}

/// Why a template was refused; each says what to type instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchPageError {
    /// Empty or longer than [`MAX_TEMPLATE`].
    #[error("type the search page's address (at most {MAX_TEMPLATE} characters), with {{query}} where the query goes")]
    Length,
    /// No `{query}`, or more than one.
    #[error(
        "the address must contain {{query}} exactly once, where the query goes, for example https://html.duckduckgo.com/html/?q={{query}}"
    )]
    Placeholder,
    /// Not a URL once the query is put in.
    #[error("this is not a web address; start it with https://")]
    NotAnAddress,
    /// `{query}` in the scheme, the host or the port: it must come after them.
    #[error("{{query}} must come after the site's name (in the path or after ?), not in it")]
    PlaceholderInHost,
    /// Anything but https, except http on this machine's loopback.
    #[error("the search page must be https:// (http:// only for a page on this machine's loopback address, for development)")]
    Scheme,
    /// A user name or password in it.
    #[error("remove the user name and password from the address")]
    UserInfo,
}

/// Why a query cannot be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Empty (or only spaces) or longer than [`MAX_QUERY`] characters.
    #[error("the query must be 1 to {MAX_QUERY} characters")]
    Length,
}

impl SearchPage {
    /// `template` checked: at most [`MAX_TEMPLATE`] characters, `{query}` exactly once and
    /// after the host, https (or http on a loopback address, for tests and development), no
    /// user info.
    pub fn parse(template: &str) -> std::result::Result<Self, SearchPageError> {
        let template = template.trim();
        if template.is_empty() || template.chars().count() > MAX_TEMPLATE {
            return Err(SearchPageError::Length);
        }
        if template.matches(QUERY_PLACEHOLDER).count() != 1 {
            return Err(SearchPageError::Placeholder);
        }
        // A probe no host can contain by accident shows where the query lands.
        const PROBE: &str = "hearthqueryprobe";
        let probed = Url::parse(&template.replace(QUERY_PLACEHOLDER, PROBE)).map_err(|_| SearchPageError::NotAnAddress)?;
        let host = probed.host().ok_or(SearchPageError::NotAnAddress)?;
        if probed.scheme().contains(PROBE) || host.to_string().contains(PROBE) || template.find(QUERY_PLACEHOLDER) < authority_end(template)
        {
            return Err(SearchPageError::PlaceholderInHost);
        }
        if !probed.username().is_empty() || probed.password().is_some() {
            return Err(SearchPageError::UserInfo);
        }
        let loopback = match host {
            Host::Ipv4(ip) => ip.is_loopback(),
            Host::Ipv6(ip) => ip.is_loopback(),
            Host::Domain(_) => false,
        };
        match probed.scheme() {
            "https" => {}
            "http" if loopback => {}
            _ => return Err(SearchPageError::Scheme),
        }
        Ok(Self { template: template.to_owned() })
    }

    /// The template as the owner set it (trimmed).
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The address that searches for `query`: the query percent-encoded for where it stands
    /// (form encoding after `?`, where `+` is a space; `%20` in a path, where it is not).
    pub fn url_for(&self, query: &str) -> std::result::Result<Url, QueryError> {
        let query = query.trim();
        if query.is_empty() || query.chars().count() > MAX_QUERY {
            return Err(QueryError::Length);
        }
        let encoded: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        let in_query = self.template.find('?').is_some_and(|mark| self.template.find(QUERY_PLACEHOLDER) > Some(mark));
        // Form encoding writes a space as `+` and a `+` as `%2B`: every `+` left is a space.
        let encoded = if in_query { encoded } else { encoded.replace('+', "%20") };
        // parse() proved the template with its placeholder replaced is a URL; any encoded
        // query is made of the same URL-safe characters as its probe.
        Url::parse(&self.template.replace(QUERY_PLACEHOLDER, &encoded)).map_err(|_| QueryError::Length)
    }

    /// What Settings shows.
    pub fn view(&self) -> WebSearchView {
        WebSearchView { template: self.template.clone(), preset: SearchPreset::of(&self.template) }
    }
}

impl Default for SearchPage {
    fn default() -> Self {
        Self { template: DEFAULT_TEMPLATE.to_owned() }
    }
}

/// Where the scheme and authority of `template` end (the first `/`, `?` or `#` after `//`).
fn authority_end(template: &str) -> Option<usize> {
    let start = template.find("//")? + 2;
    Some(template[start..].find(['/', '?', '#']).map_or(template.len(), |at| start + at))
}

/// How it is stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    template: String,
}

/// The search page searches use: the owner's, else DuckDuckGo's HTML page. Read at each
/// search, so a change in Settings counts from the next one.
pub async fn load(store: &Store) -> Result<SearchPage, StoreError> {
    let Some(json) = store.setting(WEB_SEARCH_KEY).await? else { return Ok(SearchPage::default()) };
    let page = serde_json::from_str::<Stored>(&json).ok().and_then(|stored| SearchPage::parse(&stored.template).ok());
    Ok(page.unwrap_or_else(|| {
        // Stored only after the same check: a row that fails it was not written by Hearth.
        tracing::warn!("the stored search page does not pass its check; searching with the default");
        SearchPage::default()
    }))
}

/// Stores `page` (checked by [`SearchPage::parse`], so nothing unchecked is ever stored).
pub async fn save(store: &Store, page: &SearchPage) -> Result<(), StoreError> {
    let stored = serde_json::to_string(&Stored { template: page.template.clone() })?;
    store.put_setting(WEB_SEARCH_KEY, &stored).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_preset_passes_and_its_query_is_form_encoded() {
        for preset in SearchPreset::ALL {
            let Some(template) = preset.template() else { continue };
            let page = SearchPage::parse(template).unwrap();
            let url = page.url_for("café & bars +1").unwrap();
            let q = url.query_pairs().find(|(k, _)| k == "q").map(|(_, v)| v.into_owned());
            assert_eq!(q.as_deref(), Some("café & bars +1"), "{url}");
            assert_eq!(page.view().preset, preset);
        }
        assert_eq!(SearchPage::default().template(), DEFAULT_TEMPLATE);
    }

    #[test]
    fn a_query_in_the_path_is_percent_encoded_with_spaces_as_percent_20() {
        let page = SearchPage::parse("https://search.example/s/{query}/page").unwrap();
        assert_eq!(page.url_for(" a b/c+d ").unwrap().as_str(), "https://search.example/s/a%20b%2Fc%2Bd/page");
        assert_eq!(page.url_for("   "), Err(QueryError::Length));
        assert_eq!(page.url_for(&"x".repeat(MAX_QUERY + 1)), Err(QueryError::Length));
        assert!(page.url_for(&"é".repeat(MAX_QUERY)).is_ok());
    }

    #[test]
    fn templates_the_browser_could_not_search_with_are_refused_with_their_reason() {
        use SearchPageError::*;
        let cases = [
            ("", Length),
            ("   ", Length),
            ("https://search.example/?q=", Placeholder),
            ("https://search.example/?q={query}&again={query}", Placeholder),
            ("not an address {query}", NotAnAddress),
            ("https://{query}.example/", PlaceholderInHost),
            ("https://search.example:{query}/", NotAnAddress),
            ("https://search{query}/", PlaceholderInHost),
            ("{query}://search.example/", PlaceholderInHost),
            ("http://search.example/?q={query}", Scheme),
            ("http://10.0.0.5/?q={query}", Scheme),
            ("http://localhost:8080/?q={query}", Scheme),
            ("ftp://search.example/{query}", Scheme),
            ("javascript:alert(1)//{query}", NotAnAddress),
            ("https://me:secret@search.example/?q={query}", UserInfo),
        ];
        for (template, reason) in cases {
            assert_eq!(SearchPage::parse(template), Err(reason), "{template:?}");
        }
        let long = format!("https://search.example/?q={{query}}&pad={}", "a".repeat(MAX_TEMPLATE));
        assert_eq!(SearchPage::parse(&long), Err(Length));
        // Loopback over http is for tests and development; https anywhere.
        for ok in ["http://127.0.0.2:8080/html/?q={query}", "http://[::1]:9000/s?q={query}", "https://search.example/{query}"] {
            assert!(SearchPage::parse(ok).is_ok(), "{ok}");
        }
    }
}
