//! The owner's Google account: signing in (`oauth`), reading Gmail (`gmail`) and the messages
//! Gmail sends (`mime`). The Calendar client and the `Workspace` implementation build on them.

pub mod gmail;
pub mod mime;
pub mod oauth;
