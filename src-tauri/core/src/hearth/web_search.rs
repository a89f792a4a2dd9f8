//! Settings → Web search: the search page `search_web` opens. Read at each search, so a change
//! counts from the next one; a refused template changes nothing.

use hearth_protocol::web_search::{WebSearchSetParams, WebSearchView};

use super::Hearth;
use crate::error::Result;

impl Hearth {
    /// The search page in use (DuckDuckGo's HTML page until the owner picks another).
    pub async fn settings_web_search_get(&self) -> Result<WebSearchView> {
        Ok(self.settings.search_page().await?.view())
    }

    /// Checks and stores the owner's search page; a template that does not pass
    /// (`settings::SearchPage::parse`) is refused with its reason and nothing is stored.
    pub async fn settings_web_search_set(&self, params: &WebSearchSetParams) -> Result<WebSearchView> {
        Ok(self.settings.set_search_page(&params.template).await?.view())
    }
}
