//! Helpers shared by Hearth's integration and end-to-end tests.
//!
//! Grows with loopback servers that speak real wire protocols (model providers, Gmail,
//! OAuth) and effect counters; for now: isolated data folders and free ports.

/// How long any one condition may take on a loaded 2-core machine before a test fails (rather
/// than hangs).
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

#[cfg(feature = "desktop-bus")]
pub mod desktop_bus;
#[cfg(feature = "dns-stub")]
pub mod dns_stub;
#[cfg(feature = "google")]
pub mod google;
pub mod history;
#[cfg(feature = "home-server")]
pub mod home_server;
#[cfg(feature = "model-server")]
pub mod model_server;
#[cfg(feature = "pages")]
pub mod pages;
pub mod perf_gate;
#[cfg(feature = "webdriver")]
pub mod webdriver;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// A temporary home for one test: Hearth's data folder plus XDG folders, so nothing is shared.
#[derive(Debug)]
pub struct TestHome {
    dir: tempfile::TempDir,
}

impl TestHome {
    /// Creates the folders.
    pub fn new() -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("hearth-test-").tempdir()?;
        for sub in ["data", "config", "cache", "xdg-data"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        Ok(Self { dir })
    }

    /// The root of the temporary home.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `HEARTH_DATA_DIR`.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Environment that points Hearth and the webview at this home.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("HEARTH_DATA_DIR", self.data_dir()),
            ("XDG_CONFIG_HOME", self.dir.path().join("config")),
            ("XDG_CACHE_HOME", self.dir.path().join("cache")),
            ("XDG_DATA_HOME", self.dir.path().join("xdg-data")),
        ]
    }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}
