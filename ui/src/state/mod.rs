//! UI state that is plain data: reducers over AG-UI events, testable without a browser.

pub mod chat;
