//! Start-up configuration: where the data lives and how the sample agent paces itself.

use std::path::PathBuf;
use std::time::Duration;

use crate::tasks::EngineConfig;

/// Environment variable that overrides the data directory.
pub const DATA_DIR_ENV: &str = "HEARTH_DATA_DIR";

/// How Hearth starts.
#[derive(Debug, Clone)]
pub struct Config {
    /// Holds `hearth.db`, attachments and files.
    pub data_dir: PathBuf,
    /// Pacing of the sample agent's streamed text (per chunk). Zero in tests.
    pub sample_chunk_delay: Duration,
    /// Pacing of the sample agent's slow route (per number), long enough to press Stop.
    pub sample_slow_step: Duration,
    /// How long start-up waits for a database another process holds locked.
    pub busy_timeout: Duration,
    /// The task worker's pacing.
    pub engine: EngineConfig,
    /// Run the task worker loop. Tests turn it off and drive `TaskEngine::tick` themselves.
    pub start_workers: bool,
    /// How long a proposal can be approved (30 minutes).
    pub approval_ttl: Duration,
    /// How long an approved email or event change waits with Undo when the owner has not
    /// chosen (10 s; Settings overrides it; tests that count sends at once set it to zero).
    pub undo_window: Duration,
    /// libpdfium.so (see [`crate::pdf::default_library_path`]).
    pub pdfium_library: PathBuf,
    /// The wall-clock limit of one model task run (5 minutes; tests shorten it).
    pub task_run_limit: Duration,
    /// The computer (off unless Settings or the caller turns it on).
    pub computer: ComputerConfig,
    /// The agent's browser: its binary, profiles folder and the egress allow-list (empty).
    pub browser: crate::browser::chromium::ChromiumConfig,
    /// The DNS server the browser's proxy asks (`None`: the system's; tests give a stub).
    pub browser_dns: Option<std::net::SocketAddr>,
    /// Where Google's sign-in and APIs are (Google's own; tests give a loopback fixture).
    pub google: GoogleEndpoints,
    /// How to start the local model's worker: the app's own binary in its worker mode
    /// (`None` in a build without the engine, where Settings refuses a model file).
    pub local_model_worker: Option<crate::local_model::WorkerCommand>,
    /// Where the pairing host listens for the owner's other devices (Settings → Devices): every
    /// interface on [`PAIRING_PORT`] by default, so a phone on the LAN can reach it; the headless
    /// home server's `--listen` and tests choose another.
    pub pairing_listen: std::net::SocketAddr,
    /// Bounds on each of the owner's MCP servers (a start, a call, a reply's size).
    pub mcp: crate::mcp::McpLimits,
    /// Bounds on indexing the owner's document folders (file size, text per file, time per pass).
    pub documents: crate::doc_index::IndexLimits,
}

/// Names the pairing host's address and port (`0.0.0.0:47800` unless set).
pub const PAIRING_LISTEN_ENV: &str = "HEARTH_PAIRING_LISTEN";

/// The pairing host's port unless told otherwise.
pub const PAIRING_PORT: u16 = 47_800;

/// Google's OAuth endpoints and API base addresses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoogleEndpoints {
    /// Consent page, token exchange, revocation.
    pub oauth: crate::workspace::google::oauth::Endpoints,
    /// Gmail and Calendar.
    pub apis: crate::workspace::google::GoogleApis,
}

impl GoogleEndpoints {
    /// Every endpoint on one server at `base` (the test fixture serves them all, at Google's
    /// paths).
    pub fn all_at(base: &str) -> Self {
        let base = base.trim_end_matches('/');
        Self {
            oauth: crate::workspace::google::oauth::Endpoints {
                auth_url: format!("{base}/o/oauth2/v2/auth"),
                token_url: format!("{base}/token"),
                revoke_url: format!("{base}/revoke"),
            },
            apis: crate::workspace::google::GoogleApis { gmail: base.to_owned(), calendar: base.to_owned() },
        }
    }
}

/// The computer's image and whether it starts on.
#[derive(Debug, Clone)]
pub struct ComputerConfig {
    /// Whether tools may use it from the start (Settings turns it on and off later).
    pub enabled: bool,
    /// The image's tag: [`crate::computer::recipe::image_for`] this deployment, built by Hearth
    /// over the base `scripts/computer-image.sh` makes.
    pub image: String,
    /// Names and labels its container and volume (derived from the data folder by default, so
    /// two Hearth data folders on one machine get two computers).
    pub deployment: String,
    /// How long one command may run before it is killed with the container
    /// ([`crate::computer::command::TIME_LIMIT`] by default).
    pub command_time_limit: std::time::Duration,
}

impl ComputerConfig {
    /// Off, on the default image, for the data folder `data_dir`.
    pub fn for_data_dir(data_dir: &std::path::Path) -> Self {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(data_dir.to_string_lossy().as_bytes());
        let deployment = hex::encode(digest)[..12].to_owned();
        Self {
            enabled: false,
            image: crate::computer::recipe::image_for(&deployment),
            deployment,
            command_time_limit: crate::computer::command::TIME_LIMIT,
        }
    }
}

impl Config {
    /// Defaults for `data_dir`: lively pacing for a person watching.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        Self {
            computer: ComputerConfig::for_data_dir(&data_dir),
            browser: crate::browser::chromium::ChromiumConfig::for_data_dir(&data_dir),
            browser_dns: None,
            google: GoogleEndpoints::default(),
            local_model_worker: None,
            pairing_listen: std::net::SocketAddr::from(([0, 0, 0, 0], PAIRING_PORT)),
            mcp: crate::mcp::McpLimits::default(),
            documents: crate::doc_index::IndexLimits::STANDARD,
            data_dir,
            sample_chunk_delay: Duration::from_millis(25),
            sample_slow_step: Duration::from_millis(250),
            busy_timeout: Duration::from_secs(5),
            engine: EngineConfig::default(),
            start_workers: true,
            approval_ttl: crate::approvals::PROPOSAL_TTL,
            undo_window: Duration::from_secs(u64::from(hearth_protocol::settings::DEFAULT_UNDO_WINDOW_SECONDS)),
            pdfium_library: crate::pdf::default_library_path(),
            task_run_limit: crate::agent::MAX_TASK_RUN,
        }
    }

    /// Uses `HEARTH_DATA_DIR` when set and non-empty, else `default_dir`.
    pub fn from_env_or(default_dir: impl Into<PathBuf>) -> Self {
        let mut config = match std::env::var_os(DATA_DIR_ENV) {
            Some(dir) if !dir.is_empty() => Self::new(dir),
            _ => Self::new(default_dir),
        };
        // Where paired devices connect, when not the default (a malformed value is logged and
        // the default kept: the app still opens).
        if let Ok(listen) = std::env::var(PAIRING_LISTEN_ENV) {
            match listen.parse() {
                Ok(addr) => config.pairing_listen = addr,
                Err(_) => tracing::warn!(value = %listen, "{PAIRING_LISTEN_ENV} is not an address with a port; the default is used"),
            }
        }
        config
    }

    /// The database file.
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("hearth.db")
    }

    /// Where the owner's files (imported and filled PDFs) are kept.
    pub fn files_dir(&self) -> PathBuf {
        self.data_dir.join("files")
    }

    /// Where seeded and received attachments are kept.
    pub fn attachments_dir(&self) -> PathBuf {
        self.data_dir.join("attachments")
    }
}
