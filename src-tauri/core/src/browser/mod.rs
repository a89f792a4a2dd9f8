//! The agent's browser: Chromium driven in-process over CDP, and the one way its requests
//! leave the machine.
//!
//! - [`egress`] is the policy: which URLs and addresses a request may reach, with reasons;
//! - [`proxy`] enforces it on every request Chromium makes, connecting only to the address it
//!   checked (names are resolved once, here);
//! - [`chromium`] launches the system's Chromium behind that proxy, reads pages and acts on
//!   them;
//! - `pipe` carries CDP between chromiumoxide and the browser over a pipe, never a port;
//! - `control` is Take control: the owner's screencast and input;
//! - [`error`] is what they all fail with;
//! - [`downloads`] judges what the browser downloads (PDFs within limits) until save_download
//!   puts one into Files;
//! - [`page`] lists a page's interactive elements and binds each reference to the page state;
//! - [`profiles`] keeps one browser per profile (chat thread, task), within limits;
//! - [`search`] reads a search results page's titles, addresses and snippets (search_web), and
//!   [`search_page`] keeps the page the owner picked to search with;
//! - [`shots`] keeps the pictures the browser card shows.

pub mod chromium;
mod control;
pub mod downloads;
pub mod egress;
pub mod error;
pub mod page;
mod pipe;
pub mod profiles;
pub mod proxy;
pub mod sample_page;
pub mod search;
pub mod search_page;
pub mod shots;
pub mod submit;
