//! UI state that is plain data (the chat reducer, the task store), testable without a browser.

pub mod chat;
pub mod tasks;
