//! Settings → Web search as a form: the preset picked and the template typed. Picking a preset
//! puts its template in the field; typing shows which preset (or custom) the text is. The
//! core checks the template in full when it is saved; the form only catches the slip every
//! owner can see at once, a missing `{query}`, before anything is sent.

use hearth_protocol::IpcError;
use hearth_protocol::web_search::{QUERY_PLACEHOLDER, SearchPreset, WebSearchSetParams, WebSearchView};

/// What the owner is editing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebSearchForm {
    /// The template in the field.
    pub template: String,
}

impl WebSearchForm {
    /// The form as the stored view says.
    pub fn from_view(view: &WebSearchView) -> Self {
        Self { template: view.template.clone() }
    }

    /// The preset the field's text is (custom for anything else).
    pub fn preset(&self) -> SearchPreset {
        SearchPreset::of(self.template.trim())
    }

    /// Picks `preset`: its template goes into the field. Custom keeps an address the owner
    /// typed, and empties a preset's so the field is theirs to type in (a preset's address
    /// left there would still read as that preset).
    pub fn pick(&mut self, preset: SearchPreset) {
        match preset.template() {
            Some(template) => self.template = template.to_owned(),
            None if self.preset() != SearchPreset::Custom => self.template.clear(),
            None => {}
        }
    }

    /// What Save sends, or why it is not sent.
    pub fn params(&self) -> Result<WebSearchSetParams, IpcError> {
        if !self.template.contains(QUERY_PLACEHOLDER) {
            return Err(IpcError::invalid(format!("put {QUERY_PLACEHOLDER} in the address where the query goes")));
        }
        Ok(WebSearchSetParams { template: self.template.trim().to_owned() })
    }
}

/// The `<option>` value of a preset, and back.
pub fn preset_value(preset: SearchPreset) -> &'static str {
    match preset {
        SearchPreset::DuckDuckGo => "duck_duck_go",
        SearchPreset::Mojeek => "mojeek",
        SearchPreset::Brave => "brave",
        SearchPreset::Startpage => "startpage",
        SearchPreset::Custom => "custom",
    }
}

/// The preset an `<option>` value names.
pub fn preset_of_value(value: &str) -> SearchPreset {
    SearchPreset::ALL.into_iter().find(|preset| preset_value(*preset) == value).unwrap_or(SearchPreset::Custom)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hearth_protocol::ErrorCode;
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn picking_a_preset_fills_the_field_and_typing_makes_it_custom() {
        let mut form = WebSearchForm::from_view(&WebSearchView {
            template: SearchPreset::DuckDuckGo.template().unwrap().to_owned(),
            preset: SearchPreset::DuckDuckGo,
        });
        assert_eq!(form.preset(), SearchPreset::DuckDuckGo);
        form.pick(SearchPreset::Mojeek);
        assert_eq!((form.template.as_str(), form.preset()), (SearchPreset::Mojeek.template().unwrap(), SearchPreset::Mojeek));
        form.pick(SearchPreset::Custom);
        assert_eq!((form.template.as_str(), form.preset()), ("", SearchPreset::Custom), "a preset's address makes way");
        form.template = "https://search.example/?q={query}".into();
        assert_eq!(form.preset(), SearchPreset::Custom);
        form.pick(SearchPreset::Custom);
        assert_eq!(form.template, "https://search.example/?q={query}", "custom keeps what is typed");
        assert_eq!(form.params().unwrap().template, "https://search.example/?q={query}");
        form.template = "https://search.example/?q=".into();
        assert_eq!(form.params().unwrap_err().code, ErrorCode::InvalidInput);
    }

    #[test]
    fn every_preset_has_its_own_option_value() {
        for preset in SearchPreset::ALL {
            assert_eq!(preset_of_value(preset_value(preset)), preset);
        }
    }
}
