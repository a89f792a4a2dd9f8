//! The agent's browser: Chromium driven in-process over CDP, and the one way its requests
//! leave the machine.
//!
//! - [`egress`] is the policy: which URLs and addresses a request may reach, with reasons;
//! - [`proxy`] enforces it on every request Chromium makes, connecting only to the address it
//!   checked (names are resolved once, here);
//! - [`chromium`] launches the system's Chromium behind that proxy and reads pages.

pub mod chromium;
pub mod egress;
pub mod proxy;
