//! Settings → Web search: the search page `search_web` opens. Read at each search, so a change
//! counts from the next one; a refused template changes nothing.

use hearth_protocol::web_search::{WebSearchSetParams, WebSearchView};

use super::Hearth;
use crate::browser::search_page::{self, SearchPage};
use crate::error::{CoreError, Result};

impl Hearth {
    /// The search page in use (DuckDuckGo's HTML page until the owner picks another).
    pub async fn settings_web_search_get(&self) -> Result<WebSearchView> {
        Ok(search_page::load(&self.store).await?.view())
    }

    /// Checks and stores the owner's search page; a template that does not pass
    /// ([`SearchPage::parse`]) is refused with its reason and nothing is stored.
    pub async fn settings_web_search_set(&self, params: &WebSearchSetParams) -> Result<WebSearchView> {
        let page = SearchPage::parse(&params.template).map_err(|err| CoreError::InvalidInput(err.to_string()))?;
        search_page::save(&self.store, &page).await?;
        Ok(page.view())
    }
}
