//! One app session through the real webview: tauri-driver on free ports, a WebDriver
//! client, and helpers that wait for conditions (never for fixed times).
//!
//! Used by the end-to-end tests and the footprint benchmark. These helpers panic with a
//! message on failure, as test code does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{TestHome, free_port};
use fantoccini::{Client, ClientBuilder, Locator};
use tokio::process::{Child, Command};

pub use crate::PATIENCE;

/// A running app and its driver.
pub struct Session {
    /// The WebDriver client.
    pub client: Client,
    /// When the WebDriver session (and so the app's launch) was requested.
    pub launch_requested_at: Instant,
    driver: Child,
}

impl Session {
    /// Starts `app` with `home` as its data and XDG folders.
    pub async fn start_app(app: &str, home: &TestHome) -> Session {
        Self::start_app_with(app, home, &[]).await
    }

    /// [`Session::start_app`], with `extra` variables in the app's environment.
    pub async fn start_app_with(app: &str, home: &TestHome, extra: &[(&str, String)]) -> Session {
        match Self::try_start(app, home, extra).await {
            Ok(session) => session,
            // tauri-driver answered but could not reach WebKitWebDriver (seen once in ~20 runs on
            // a loaded machine: its native port, picked free, taken in between): one more try
            // with fresh ports and a fresh driver, never more.
            Err(first) => {
                eprintln!("the first WebDriver session failed ({first}); starting the driver once more");
                Self::try_start(app, home, extra)
                    .await
                    .unwrap_or_else(|err| panic!("could not open a WebDriver session with the app: {err}"))
            }
        }
    }

    async fn try_start(app: &str, home: &TestHome, extra: &[(&str, String)]) -> Result<Session, String> {
        let app = app.to_owned();
        assert!(PathBuf::from(&app).is_file(), "the app binary {app} is not a file; build it first");
        let port = free_port().unwrap();
        let native_port = free_port().unwrap();
        let mut command = Command::new("tauri-driver");
        command
            .args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // Not kill_on_drop: SIGKILL leaves WebKitWebDriver holding its port (see Drop).
        for (key, value) in home.env() {
            command.env(key, value);
        }
        for (key, value) in extra {
            command.env(key, value);
        }
        let driver = command.spawn().expect("tauri-driver must be installed (scripts/test.sh installs it)");
        wait_for_port(port).await;
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), "wry".into());
        caps.insert("tauri:options".into(), serde_json::json!({ "application": app }));
        let launch_requested_at = Instant::now();
        // WebKitWebDriver waits for the app's window without a limit of its own: an app that
        // dies at start (no display, a panic) would hang the whole run, so the wait is bounded.
        let mut builder = ClientBuilder::rustls().unwrap();
        builder.capabilities(caps);
        let url = format!("http://127.0.0.1:{port}");
        let connect = builder.connect(&url);
        let client = match tokio::time::timeout(PATIENCE, connect).await {
            Ok(Ok(client)) => client,
            Ok(Err(err)) => {
                let mut driver = driver;
                terminate(driver.id());
                let _ = tokio::time::timeout(Duration::from_secs(10), driver.wait()).await;
                return Err(err.to_string());
            }
            Err(_) => {
                terminate(driver.id());
                panic!("the app opened no window within {PATIENCE:?}; its error, if any, is printed above")
            }
        };
        Ok(Session { client, launch_requested_at, driver })
    }

    /// The driver's process id (the app runs below it).
    pub fn driver_pid(&self) -> Option<u32> {
        self.driver.id()
    }

    /// Closes the window and stops the driver with SIGTERM (SIGKILL would leave
    /// WebKitWebDriver holding its port).
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        terminate(self.driver.id());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.driver.wait()).await;
    }

    /// Waits until an element matches `css`.
    pub async fn find(&self, css: &str) -> fantoccini::elements::Element {
        match self.client.wait().at_most(PATIENCE).for_element(Locator::Css(css)).await {
            Ok(element) => element,
            Err(err) => panic!("no element {css} within {PATIENCE:?}: {err}\n{}", self.shown().await),
        }
    }

    /// Waits until `check` holds over the text of every element matching `css`.
    pub async fn until_texts(&self, css: &str, what: &str, check: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let mut texts = Vec::new();
            if let Ok(elements) = self.client.find_all(Locator::Css(css)).await {
                for element in elements {
                    texts.push(element.text().await.unwrap_or_default());
                }
            }
            if check(&texts) {
                return texts;
            }
            if Instant::now() >= deadline {
                panic!("{what}: still not true after {PATIENCE:?}; {css} shows {texts:?}\n{}", self.shown().await);
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until `script` (a function body returning a boolean) returns true in the page.
    pub async fn until_script(&self, script: &str, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self.client.execute(script, vec![]).await.unwrap_or_default();
            if value.as_bool() == Some(true) {
                return;
            }
            if Instant::now() >= deadline {
                panic!("{what}: still not true after {PATIENCE:?}\n{}", self.shown().await);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The end of what the window shows, for a failure message: when a step never comes, the
    /// conversation (an agent's error, a card's state) usually says why, and CI keeps only
    /// the test's own output.
    async fn shown(&self) -> String {
        let script = "const t = document.body ? document.body.innerText : ''; return t.slice(-3000);";
        // Bounded: a driver that stopped answering must not turn a failure into a hang.
        match tokio::time::timeout(Duration::from_secs(10), self.client.execute(script, vec![])).await {
            Ok(Ok(value)) => format!("the window shows, at its end:\n{}", value.as_str().unwrap_or_default()),
            Ok(Err(err)) => format!("(the window's text could not be read: {err})"),
            Err(_) => "(the window's text could not be read: the driver did not answer within 10 s)".to_owned(),
        }
    }

    /// Types into the composer and sends.
    pub async fn send(&self, text: &str) {
        let composer = self.find("#composer").await;
        composer.clear().await.unwrap();
        composer.send_keys(text).await.unwrap();
        self.find("#send").await.click().await.unwrap();
    }

    /// Calls a Tauri command from inside the page, as the UI would; returns
    /// `resolved:<json>` or `rejected:<json or text>`.
    pub async fn invoke(&self, cmd: &str, args_json: &str) -> String {
        let script = r#"
            const [cmd, args, done] = arguments;
            window.__TAURI__.core.invoke(cmd, JSON.parse(args))
                .then(v => done('resolved:' + JSON.stringify(v)))
                .catch(e => done('rejected:' + (typeof e === 'string' ? e : JSON.stringify(e))));
        "#;
        let result = self.client.execute_async(script, vec![cmd.into(), args_json.into()]).await.unwrap();
        result.as_str().unwrap_or_default().to_owned()
    }

    /// Runs `script` in the page, whose last argument is the callback that ends it, and returns
    /// what it passed there (WebDriver's Execute Async Script, 30 s at most).
    pub async fn run_async(&self, script: &str, args: Vec<serde_json::Value>) -> serde_json::Value {
        self.client.execute_async(script, args).await.unwrap_or_else(|err| panic!("the page script failed: {err}"))
    }

    /// Saves a screenshot under the build folder and prints its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        // Two animation frames: what the DOM holds now has been painted (a loaded machine can
        // otherwise capture an older frame).
        let painted = "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));";
        let _ = self.client.execute_async(painted, vec![]).await;
        let png = self.client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
        let dir = PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into())).join("e2e");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        println!("screenshot: {}", path.display());
        path
    }
}

async fn wait_for_port(port: u16) {
    let deadline = Instant::now() + PATIENCE;
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "tauri-driver did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Drop for Session {
    /// A test that panics never reaches `close`; SIGTERM the driver anyway so it stops
    /// WebKitWebDriver and the app instead of leaving them holding ports for the next run.
    fn drop(&mut self) {
        terminate(self.driver.id());
    }
}

/// SIGTERM (not SIGKILL: tauri-driver must get the chance to stop WebKitWebDriver).
fn terminate(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    }
}
