//! The app as the end-to-end tests start it: `hearth-e2e`, the same program as `main.rs`, built
//! only with the `e2e` feature and under a name no other build writes.
//!
//! Why not `target/debug/hearth`: every build of the app re-points that path, with or without
//! `e2e` (`scripts/setup.sh`, `cargo test --workspace`, any build beside a running test), and an
//! app without `e2e` ignores the tests' loopback allowances — its looks at the test's own page
//! are refused, and the browser and monitor tests fail with nothing on the page to say why.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    hearth_app::run();
}
