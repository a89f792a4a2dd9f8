//! The computer through the webview, against the real Docker engine and the locally built
//! image: turn it on in Settings, run a command in the Computer screen and see its output,
//! press Stop on a running one; then a model runs a command from chat, its output streams into
//! the terminal card, and the card's Stop ends it; Settings → Rebuild image makes a new image
//! and keeps the files. Oracles: the engine's state and the files
//! in the workspace volume, read on the host.

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

/// Removes the test's container, volume and image tag (the deployment's own), whatever the
/// test did.
struct Cleanup(String, String, String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker").args(["rm", "-f", &self.0]).output();
        let _ = std::process::Command::new("docker").args(["volume", "rm", "-f", &self.1]).output();
        let _ = std::process::Command::new("docker").args(["image", "rm", &self.2]).output();
    }
}

fn docker(args: &[&str]) -> String {
    let out = std::process::Command::new("docker").args(args).output().expect("the docker CLI runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Waits until the docker CLI's answer to `args` satisfies `done`, for at most `limit`; whether
/// it did.
async fn until_docker(args: &[&str], limit: std::time::Duration, done: impl Fn(&str) -> bool) -> bool {
    let wait = async {
        while !done(&docker(args)) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(limit, wait).await.is_ok()
}

/// Waits (with a deadline) until the engine reports the container stopped.
async fn until_stopped(container: &str) {
    let stopped =
        until_docker(&["inspect", "--format", "{{.State.Running}}", container], std::time::Duration::from_secs(30), |r| r == "false").await;
    assert!(stopped, "the container did not stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_runs_streams_and_stops_in_the_computer_screen_and_in_chat() {
    let args = r#"{"command":"echo tick-from-chat; while [ ! -e /workspace/release-chat ]; do sleep 0.05; done; touch /workspace/chat-late","operationId":"chat-1"}"#;
    let server = ModelServer::start(
        Script::new()
            .turn(Reply::new().text(&["Running it."]).tool_call("call-cmd", "run_computer_command", &[args]))
            .turn(Reply::new().text(&["Done."])),
    )
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let computer = hearth_core::config::ComputerConfig::for_data_dir(&home.data_dir());
    let spec = hearth_core::computer::ComputerSpec::new(computer.image.clone(), &computer.deployment, "owner");
    let _cleanup = Cleanup(spec.container_name(), spec.volume_name(), spec.image.clone());
    let session = Session::start_app(APP, &home).await;

    // Settings → Computer: on.
    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    session.find("#computer-enabled:not([disabled])").await.click().await.unwrap();
    session.until_script("return document.querySelector('#computer-enabled').checked", "the computer is on").await;
    session.until_texts(".computer-settings-meta", "the engine and image show", |t| t.len() == 1 && t[0].contains("Docker")).await;

    // The Computer screen: a command and its output.
    session.find(".nav-item[data-screen=computer]").await.click().await.unwrap();
    let input = session.find("#terminal-input").await;
    input.send_keys("echo hello-from-the-box > /workspace/greeting; cat /workspace/greeting").await.unwrap();
    session.find("#terminal-run").await.click().await.unwrap();
    session
        .until_texts(".terminal-run[data-status=succeeded] [data-role=output]", "the output shows", |t| {
            t.len() == 1 && t[0].contains("hello-from-the-box")
        })
        .await;
    let volume = docker(&["volume", "inspect", "--format", "{{.Mountpoint}}", &spec.volume_name()]);
    let host = std::path::PathBuf::from(volume);
    assert_eq!(std::fs::read_to_string(host.join("greeting")).unwrap(), "hello-from-the-box\n");

    // A long one: its first line arrives while it runs; Stop ends it with the container.
    // Its tail waits for a file the test writes after Stop: a surviving process would run it.
    let input = session.find("#terminal-input").await;
    input.send_keys("echo tick-live; while [ ! -e /workspace/release ]; do sleep 0.05; done; touch /workspace/screen-late").await.unwrap();
    session.find("#terminal-run").await.click().await.unwrap();
    session
        .until_texts(".terminal-run[data-status=running] [data-role=output]", "live output while it runs", |t| {
            t.len() == 1 && t[0].contains("tick-live")
        })
        .await;
    session.screenshot("computer-running").await;
    session.find(".terminal-run[data-status=running] [data-action=stop-command]").await.click().await.unwrap();
    session.until_texts(".terminal-run[data-status=interrupted]", "the command shows interrupted", |t| t.len() == 1).await;
    until_stopped(&spec.container_name()).await;
    std::fs::write(host.join("release"), b"").unwrap();
    // The next command starts the container again; nothing of the stopped one is left to see
    // the release.
    let input = session.find("#terminal-input").await;
    input.send_keys("ls /workspace").await.unwrap();
    session.find("#terminal-run").await.click().await.unwrap();
    session
        .until_texts(".terminal-run[data-status=succeeded] [data-role=output]", "the next command runs", |t| {
            t.len() == 2 && t[1].contains("release")
        })
        .await;
    assert!(!host.join("screen-late").exists(), "the stopped command's tail ran");

    // From chat: a model's command streams into its card, and the card's Stop ends it.
    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));
    session.find(".nav-item[data-screen=chat]").await.click().await.unwrap();
    session.send("run it").await;
    session
        .until_texts(".terminal-card[data-status=running] [data-role=output]", "the card streams the output", |t| {
            t.len() == 1 && t[0].contains("tick-from-chat")
        })
        .await;
    session.screenshot("chat-terminal-card").await;
    session.find(".terminal-card [data-action=stop-command]").await.click().await.unwrap();
    session.until_texts(".terminal-card[data-status=stopped]", "the card shows the command stopped", |t| t.len() == 1).await;
    session.until_texts(".notice.run-cancelled", "the run ends as stopped", |t| t.len() == 1).await;
    until_stopped(&spec.container_name()).await;
    std::fs::write(host.join("release-chat"), b"").unwrap();
    assert!(session.invoke("computer_start", "{}").await.starts_with("resolved:"));
    let listing = session.invoke("computer_list", r#"{"params":{"path":"/workspace"}}"#).await;
    assert!(listing.contains("release-chat"), "{listing}");
    assert!(!host.join("chat-late").exists(), "the stopped command's tail ran");
    assert_eq!(server.requests().len(), 1, "the stopped run did not go back to the model");

    // Settings → Rebuild image: a new image over the base, the old container gone with the old
    // image, the workspace kept.
    let image_before = docker(&["image", "inspect", "--format", "{{.Id}}", &spec.image]);
    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    // The status line renders above the button when its reply arrives; clicking before that
    // lands where the button was.
    session.until_texts(".computer-settings-meta", "the computer's status shows", |t| t.len() == 1 && t[0].starts_with("running")).await;
    session.find("[data-action=rebuild-computer]:not([disabled])").await.click().await.unwrap();
    let rebuilt = until_docker(&["image", "inspect", "--format", "{{.Id}}", &spec.image], std::time::Duration::from_secs(60), |id| {
        id != image_before
    })
    .await;
    if !rebuilt {
        let shot = session.screenshot("computer-rebuild-failed").await;
        let notes =
            session.until_texts("[data-section=computer] .error, [data-section=computer] .hint", "the section's notes", |_| true).await;
        panic!("Rebuild made no new image within 60 s (screenshot {}): {notes:?}", shot.display());
    }
    // The reply has arrived when the button is enabled again.
    session.find("[data-action=rebuild-computer]:not([disabled])").await;
    session.until_texts("[data-section=computer] .error", "no error after the rebuild", <[String]>::is_empty).await;
    assert_eq!(docker(&["ps", "-aq", "--filter", &format!("name=^{}$", spec.container_name())]), "", "the old container stayed");
    assert_eq!(std::fs::read_to_string(host.join("greeting")).unwrap(), "hello-from-the-box\n");
    session.close().await;
}
