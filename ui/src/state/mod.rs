//! UI state that is plain data (the chat reducer, the task store, proposals, files, the
//! settings forms and card models), testable without a browser.

pub mod accounts;
pub mod approvals;
pub mod browser;
pub mod calendar;
pub mod cards;
pub mod chat;
pub mod computer;
pub mod documents;
pub mod files;
pub mod inbox;
pub mod mcp;
pub mod schedules;
pub mod settings;
pub mod tasks;
pub mod web_search;
