//! What the shell holds: the opened core, or why it could not open.
//!
//! A failed start keeps the window up with an error screen that names the file, instead
//! of exiting (and being restarted into the same failure).

use hearth_core::{Config, Hearth};
use hearth_protocol::{ErrorCode, IpcError};
use tauri::{AppHandle, Manager, Runtime};

/// The shell's managed state.
#[derive(Debug)]
pub enum AppState {
    /// The core is open (boxed: the handle is large next to an error message).
    Ready(Box<Hearth>),
    /// The core could not open; the message says why and what to do.
    Failed(String),
}

impl AppState {
    /// Opens the core in the data directory (`HEARTH_DATA_DIR`, else the platform's).
    pub fn open<R: Runtime>(app: &AppHandle<R>) -> Self {
        let default_dir = match app.path().app_data_dir() {
            Ok(dir) => dir,
            Err(err) => return AppState::Failed(format!("Hearth could not find a data folder: {err}. Set HEARTH_DATA_DIR.")),
        };
        #[cfg_attr(not(feature = "e2e"), allow(unused_mut))]
        let mut config = Config::from_env_or(default_dir);
        // Only the end-to-end build reads this: the test's loopback page server, past the
        // egress policy. A shipped build has no way to widen it.
        #[cfg(feature = "e2e")]
        if let Ok(list) = std::env::var("HEARTH_E2E_BROWSER_ALLOW") {
            let addresses = list.split(',').filter_map(|a| a.trim().parse::<std::net::SocketAddr>().ok());
            config.browser.allow = hearth_core::browser::egress::AllowList::of(addresses);
        }
        // Only the end-to-end build reads this: Google's endpoints on the test's loopback
        // fixture. A shipped build signs in at Google only.
        #[cfg(feature = "e2e")]
        if let Ok(base) = std::env::var("HEARTH_E2E_GOOGLE_BASE") {
            config.google = hearth_core::config::GoogleEndpoints::all_at(&base);
        }
        match tauri::async_runtime::block_on(Hearth::open(config)) {
            Ok(hearth) => {
                tracing::info!(data_dir = %hearth.config().data_dir.display(), "Hearth is ready");
                AppState::Ready(Box::new(hearth))
            }
            Err(err) => {
                tracing::error!(error = %err, "Hearth could not start");
                AppState::Failed(err.to_string())
            }
        }
    }

    /// The core, if it opened.
    pub fn hearth(&self) -> Option<&Hearth> {
        match self {
            AppState::Ready(hearth) => Some(hearth),
            AppState::Failed(_) => None,
        }
    }

    /// The core, or the start-up failure as an IPC error.
    pub fn ready(&self) -> Result<&Hearth, IpcError> {
        match self {
            AppState::Ready(hearth) => Ok(hearth),
            AppState::Failed(message) => Err(IpcError::new(ErrorCode::Unavailable, message.clone())),
        }
    }
}
