//! The owner's Google account: signing in (`oauth`). Gmail and Calendar build on it.

pub mod oauth;
