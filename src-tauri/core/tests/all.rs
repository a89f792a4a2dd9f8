//! The core's integration tests, one binary (faster to link on 2 cores).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
