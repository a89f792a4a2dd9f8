//! The owner's Google account: signing in (`oauth`) and the messages Gmail sends (`mime`).
//! The Gmail and Calendar clients build on them.

pub mod mime;
pub mod oauth;
