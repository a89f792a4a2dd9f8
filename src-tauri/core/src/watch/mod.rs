//! What a monitor is asked to watch: its input and the condition it looks for, apart from the
//! looking itself, so the tool that makes a monitor (watch_page) can build one without reaching
//! the task that runs it (`monitors`, which stands above the tools it calls to look).

pub mod price;

use serde::{Deserialize, Serialize};

/// Shortest interval between looks.
pub const MIN_INTERVAL_MINUTES: u32 = 1;
/// Longest interval between looks (a week).
pub const MAX_INTERVAL_MINUTES: u32 = 10_080;

/// What a monitor looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Any change of the page's text.
    Change,
    /// The text contains the value (ignoring case).
    Contains,
    /// A price on the page is below the value.
    PriceBelow,
}

/// A monitor task's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonitorInput {
    /// Title.
    pub title: String,
    /// The page.
    pub url: String,
    /// What to look for.
    pub condition: Condition,
    /// The text (contains) or the price (price_below, as written).
    #[serde(default)]
    pub value: String,
    /// Minutes between looks.
    pub interval_minutes: u32,
}

impl MonitorInput {
    /// Checks the fields; the page's address is checked again by the egress policy at every
    /// look.
    pub fn validate(&self) -> Result<Option<i64>, String> {
        if self.title.trim().is_empty() || self.title.chars().count() > 200 {
            return Err("`title` is 1 to 200 characters.".into());
        }
        let parsed = url::Url::parse(&self.url).map_err(|e| format!("`url` is not an address ({e})."))?;
        if !matches!(parsed.scheme(), "http" | "https") || self.url.len() > 4096 {
            return Err("`url` is an http or https address of at most 4,096 characters.".into());
        }
        if !(MIN_INTERVAL_MINUTES..=MAX_INTERVAL_MINUTES).contains(&self.interval_minutes) {
            return Err(format!("`intervalMinutes` is {MIN_INTERVAL_MINUTES} to {MAX_INTERVAL_MINUTES}."));
        }
        match self.condition {
            Condition::Change => Ok(None),
            Condition::Contains if self.value.trim().is_empty() || self.value.chars().count() > 200 => {
                Err("`value` is the text to look for, 1 to 200 characters.".into())
            }
            Condition::Contains => Ok(None),
            Condition::PriceBelow => match price::prices(self.value.trim()).as_slice() {
                [cents] => Ok(Some(*cents)),
                _ => Err("`value` is one price, like 19.99.".into()),
            },
        }
    }
}
