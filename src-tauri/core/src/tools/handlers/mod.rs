//! One handler type per tool, grouped by what they touch.

pub(crate) mod browser;
pub(crate) mod computer;
pub(crate) mod mail;
pub(crate) mod pdf;
pub(crate) mod prepare;
pub(crate) mod tasks;
