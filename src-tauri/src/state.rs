//! What the shell holds: the core once it has opened, or why it could not open.
//!
//! The core opens beside the window, not before it: the window's page loads while SQLite,
//! the vault and the workers start (160–185 ms, scripts/footprint.sh), and a command that
//! arrives first waits for the core. A failed start keeps the window up with an error screen that names
//! the file, instead of exiting (and being restarted into the same failure).

use std::sync::Arc;

use hearth_core::{Config, Hearth};
use hearth_protocol::{ErrorCode, IpcError};
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::watch;

/// The shell's managed state.
#[derive(Debug, Clone)]
pub struct AppState {
    opened: watch::Receiver<Option<Opened>>,
}

/// How opening the core ended.
#[derive(Debug, Clone)]
enum Opened {
    /// The core is open (boxed: the handle is large next to an error message).
    Ready(Box<Hearth>),
    /// The core could not open; the message says why and what to do.
    Failed(Arc<str>),
}

/// Reports how opening the core ended, once.
pub struct Opening {
    report: watch::Sender<Option<Opened>>,
}

impl AppState {
    /// A state whose core is still opening, and the handle that reports the end of it.
    pub fn opening() -> (AppState, Opening) {
        let (report, opened) = watch::channel(None);
        (AppState { opened }, Opening { report })
    }

    /// The core, once it has opened, or the start-up failure as an IPC error.
    pub async fn ready(&self) -> Result<Hearth, IpcError> {
        let mut opened = self.opened.clone();
        let outcome = opened.wait_for(Option::is_some).await.map(|o| o.clone());
        match outcome {
            Ok(Some(Opened::Ready(hearth))) => Ok(*hearth),
            Ok(Some(Opened::Failed(message))) => Err(IpcError::new(ErrorCode::Unavailable, message.to_string())),
            // The opening task ended without reporting: it panicked.
            Ok(None) | Err(_) => Err(IpcError::new(
                ErrorCode::Unavailable,
                "Hearth stopped while opening its data; its log says why. Restart Hearth.".to_owned(),
            )),
        }
    }
}

impl AppState {
    /// The core if it has opened, without waiting.
    pub fn now(&self) -> Option<Hearth> {
        match self.opened.borrow().as_ref() {
            Some(Opened::Ready(hearth)) => Some(Hearth::clone(hearth)),
            Some(Opened::Failed(_)) | None => None,
        }
    }
}

impl Opening {
    /// Opens the core in the data directory (`HEARTH_DATA_DIR`, else the platform's) and
    /// reports the outcome; returns the core when it opened.
    pub async fn open<R: Runtime>(self, app: &AppHandle<R>) -> Option<Hearth> {
        let opened = open(app).await;
        let hearth = match &opened {
            Opened::Ready(hearth) => Some(Hearth::clone(hearth)),
            Opened::Failed(_) => None,
        };
        self.report.send_replace(Some(opened));
        hearth
    }
}

async fn open<R: Runtime>(app: &AppHandle<R>) -> Opened {
    let default_dir = match app.path().app_data_dir() {
        Ok(dir) => dir,
        Err(err) => return Opened::Failed(format!("Hearth could not find a data folder: {err}. Set HEARTH_DATA_DIR.").into()),
    };
    #[cfg_attr(not(any(feature = "e2e", feature = "local-model")), allow(unused_mut))]
    let mut config = Config::from_env_or(default_dir);
    // The local model's worker is this binary in its worker mode (hearth_app::run).
    #[cfg(feature = "local-model")]
    {
        config.local_model_worker = hearth_core::local_model::WorkerCommand::this_binary().ok();
    }
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
    match Hearth::open(config).await {
        Ok(hearth) => {
            tracing::info!(data_dir = %hearth.config().data_dir.display(), "Hearth is ready");
            Opened::Ready(Box::new(hearth))
        }
        Err(err) => {
            tracing::error!(error = %err, "Hearth could not start");
            Opened::Failed(err.to_string().into())
        }
    }
}
