//! Web search with no paid key: `search_web` opens the search page the owner picked in
//! Settings → Web search in Hearth's own browser and returns what it lists. These are its
//! answer, the Settings view and the choice the owner makes.

use serde::{Deserialize, Serialize};

/// The most results one search returns to the model.
pub const MAX_SEARCH_RESULTS: usize = 10;
/// The longest title kept for a result (characters).
pub const MAX_RESULT_TITLE: usize = 200;
/// The longest snippet kept for a result (characters).
pub const MAX_RESULT_SNIPPET: usize = 300;
/// The longest query accepted (characters).
pub const MAX_QUERY: usize = 500;
/// The longest search page template accepted (characters).
pub const MAX_TEMPLATE: usize = 2_000;
/// What a template puts the query in place of.
pub const QUERY_PLACEHOLDER: &str = "{query}";

/// A search page Settings offers by name, or the owner's own template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchPreset {
    /// DuckDuckGo's page without scripts: the default.
    DuckDuckGo,
    /// Mojeek, an independent index.
    Mojeek,
    /// Brave Search.
    Brave,
    /// Startpage.
    Startpage,
    /// A template the owner typed.
    Custom,
}

impl SearchPreset {
    /// The presets Settings lists, the custom choice last.
    pub const ALL: [SearchPreset; 5] =
        [SearchPreset::DuckDuckGo, SearchPreset::Mojeek, SearchPreset::Brave, SearchPreset::Startpage, SearchPreset::Custom];

    /// Its template; `None` for [`SearchPreset::Custom`].
    pub const fn template(self) -> Option<&'static str> {
        match self {
            Self::DuckDuckGo => Some("https://html.duckduckgo.com/html/?q={query}"),
            Self::Mojeek => Some("https://www.mojeek.com/search?q={query}"),
            Self::Brave => Some("https://search.brave.com/search?q={query}"),
            Self::Startpage => Some("https://www.startpage.com/do/search?q={query}"),
            Self::Custom => None,
        }
    }

    /// How Settings names it.
    pub const fn label(self) -> &'static str {
        match self {
            Self::DuckDuckGo => "DuckDuckGo (HTML page)",
            Self::Mojeek => "Mojeek",
            Self::Brave => "Brave Search",
            Self::Startpage => "Startpage",
            Self::Custom => "Another page (type its address)",
        }
    }

    /// The preset whose template is exactly `template`, else [`SearchPreset::Custom`].
    pub fn of(template: &str) -> Self {
        Self::ALL.into_iter().find(|preset| preset.template() == Some(template)).unwrap_or(Self::Custom)
    }
}

/// The template searches use when the owner picked none.
pub const DEFAULT_TEMPLATE: &str = "https://html.duckduckgo.com/html/?q={query}";

/// Settings → Web search as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearchView {
    /// The search page's address with `{query}` where the query goes.
    pub template: String,
    /// Which preset that is, or custom.
    pub preset: SearchPreset,
}

/// `settings_web_search_set`: the search page to use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearchSetParams {
    /// An https address (http only on this machine's loopback, for development) containing
    /// `{query}` once, after the host.
    pub template: String,
}

/// One result of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// Its title as the page shows it (at most [`MAX_RESULT_TITLE`] characters).
    pub title: String,
    /// Its address, unwrapped from the search page's own redirect.
    pub url: String,
    /// The text the page shows with it (at most [`MAX_RESULT_SNIPPET`] characters; may be
    /// empty).
    pub snippet: String,
}

/// What `search_web` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResultsView {
    /// The query as searched.
    pub query: String,
    /// The search page's address the results came from (after redirects).
    pub search_page: String,
    /// The results, at most [`MAX_SEARCH_RESULTS`], in the page's order.
    pub results: Vec<SearchResult>,
    /// How many more the page listed past the limit.
    pub left_out: u32,
    /// How many it listed whose address the browser would refuse (on this machine, the local
    /// network or another private range): left out and never opened.
    pub refused: u32,
    /// Whose writing the results are: the search page's and the sites', never instructions.
    pub untrusted_data: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_told_apart_by_their_template() {
        for preset in SearchPreset::ALL {
            match preset.template() {
                Some(template) => {
                    assert_eq!(SearchPreset::of(template), preset);
                    assert!(template.starts_with("https://") && template.contains(QUERY_PLACEHOLDER), "{template}");
                }
                None => assert_eq!(preset, SearchPreset::Custom),
            }
        }
        assert_eq!(SearchPreset::of(DEFAULT_TEMPLATE), SearchPreset::DuckDuckGo);
        assert_eq!(SearchPreset::of("https://search.example/?q={query}"), SearchPreset::Custom);
    }
}
