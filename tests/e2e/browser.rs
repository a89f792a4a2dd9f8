//! The browser card through the webview: the sample agent opens a page served on loopback
//! (allowed for this build only), the card shows its title and the picture the real Chromium
//! took, and the Browser screen lists the thread's profile.

use std::collections::HashMap;
use std::net::SocketAddr;

use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use hearth_testkit::TestHome;
use hearth_testkit::pages::PageServer;
use hearth_testkit::webdriver::Session;

use crate::APP;

const PAGE: &str = "<!doctype html><title>Opening hours</title><h1>Library</h1><p>Open every day from nine to five.</p>\
    <button style='position: absolute; left: 980px; top: 180px; width: 40px; height: 40px' \
      onclick=\"event.stopPropagation(); this.textContent = 'ok'; fetch('/pressed', {method: 'POST'})\">P</button>\
    <script>document.addEventListener('click', () => fetch('/missed', {method: 'POST'}));</script>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_the_agent_opens_shows_in_a_browser_card_with_its_picture() {
    let pages: HashMap<String, String> = [("/hours.html".to_owned(), PAGE.to_owned())].into();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let home = TestHome::new().unwrap();
    let allow = [("HEARTH_E2E_BROWSER_ALLOW", server.address().to_string())];
    let session = Session::start_app_with(APP, &home, &allow).await;

    session.send(&format!("open http://{}/hours.html", server.address())).await;
    session.until_texts(".browser-card .browser-title", "the card shows the page's title", |t| t == ["Opening hours"]).await;
    // The picture arrived through browser_screenshot and decoded as an image of the viewport.
    session
        .until_script(
            "const img = document.querySelector('.browser-card img.browser-shot'); \
             return !!img && img.complete && img.naturalWidth === 1280 && img.naturalHeight === 800;",
            "the card shows the 1280×800 picture",
        )
        .await;
    session
        .until_texts(".msg-assistant:not(.streaming)", "the agent names the page", |t| t.iter().any(|m| m.contains("Opening hours")))
        .await;
    assert_eq!(server.requests().iter().filter(|r| *r == "/hours.html").count(), 1, "{:?}", server.requests());
    session.screenshot("browser-card").await;

    // Take control: the live view opens with the page's frames, and a click on the picture's
    // middle presses the page's button (the server hears it).
    session.find(".browser-card .take-control-open").await.click().await.unwrap();
    session
        .until_script(
            "const img = document.querySelector('.take-control img.control-frame'); \
             return !!img && img.complete && img.naturalWidth === 1280;",
            "the live view shows the browser's frames",
        )
        .await;
    // The picture is shown at half size: a click on it must be scaled to the page. The button
    // sits at page (1000, 200); a click not scaled would land at (500, 100), on the page's
    // decoy listener.
    session.client.execute("document.querySelector('.take-control img.control-frame').style.width = '640px';", vec![]).await.unwrap();
    let shown = session.find(".take-control img.control-frame").await;
    let (scale_x, scale_y) = (640.0 / 1280.0, 400.0 / 800.0);
    let click = MouseActions::new("owner".into())
        .then(PointerAction::MoveToElement { element: shown, duration: None, x: (1000.0 - 640.0) * scale_x, y: (200.0 - 400.0) * scale_y })
        .then(PointerAction::Down { button: MOUSE_BUTTON_LEFT })
        .then(PointerAction::Up { button: MOUSE_BUTTON_LEFT });
    session.client.perform_actions(click).await.unwrap();
    let deadline = std::time::Instant::now() + hearth_testkit::webdriver::PATIENCE;
    while !server.requests().iter().any(|r| r == "/pressed") {
        assert!(std::time::Instant::now() < deadline, "the owner's click never reached the button: {:?}", server.requests());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!server.requests().iter().any(|r| r == "/missed"), "a click landed off the button: {:?}", server.requests());
    session.screenshot("take-control").await;
    session.find(".take-control .give-back").await.click().await.unwrap();
    session.until_script("return document.querySelector('.take-control') === null;", "Give back closes the view").await;

    // The Browser screen lists the thread's profile as running.
    session.find(".nav-item[data-screen=browser]").await.click().await.unwrap();
    session
        .until_texts(".profile[data-running='true'] .profile-id", "the profile is listed", |t| t.len() == 1 && t[0].starts_with("thread-"))
        .await;

    // From the Browser screen: Close it, then Open it again under the owner's control — the
    // browser starts anew (its row says so), and Give back leaves it running for the agent.
    session.find(".profile .close-profile").await.click().await.unwrap();
    session.until_texts(".profile[data-running='false'] .profile-id", "the profile closed", |t| t.len() == 1).await;
    session.find(".profile [data-action=take-control]").await.click().await.unwrap();
    session
        .until_script(
            "const img = document.querySelector('.take-control img.control-frame'); \
             return !!img && img.complete && img.naturalWidth === 1280;",
            "Open shows the closed profile's browser, live",
        )
        .await;
    session.find(".take-control .give-back").await.click().await.unwrap();
    session.until_texts(".profile[data-running='true'] .profile-id", "the opened browser runs", |t| t.len() == 1).await;
    // The owner's own profile can be opened from here too.
    session.find("[data-action=open-owner-profile]").await.click().await.unwrap();
    session
        .until_script(
            "const img = document.querySelector('.take-control img.control-frame'); return !!img && img.complete;",
            "the owner's own browser opens",
        )
        .await;
    session.find(".take-control .give-back").await.click().await.unwrap();
    session.until_texts(".profile .profile-id", "the owner's profile is listed", |t| t.iter().any(|id| id == "owner")).await;
    session.close().await;
}

/// Earlier chats left as many throwaway browser profiles as Hearth keeps: a new chat still
/// browses, its card says which unused profile made room, and the folders on disk stay at the
/// limit. (Thirty chats opening real pages one after another are `core`'s
/// `thirty_chats_each_open_a_page_then_one_more_still_browses_and_the_profiles_stay_bounded`;
/// here the window shows the owner what happened.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_profile_limit_a_new_chat_still_browses_and_the_card_says_what_made_room() {
    use hearth_protocol::browser::MAX_SAVED_PROFILES;
    let pages: HashMap<String, String> = [("/hours.html".to_owned(), PAGE.to_owned())].into();
    let server = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), pages).await.unwrap();
    let home = TestHome::new().unwrap();
    let profiles = home.data_dir().join("browser");
    for n in 0..MAX_SAVED_PROFILES {
        std::fs::create_dir_all(profiles.join(format!("thread-earlier{n:02}"))).unwrap();
    }
    let folders = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&profiles)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let allow = [("HEARTH_E2E_BROWSER_ALLOW", server.address().to_string())];
    let session = Session::start_app_with(APP, &home, &allow).await;

    session.send(&format!("open http://{}/hours.html", server.address())).await;
    session.until_texts(".browser-card .browser-title", "the page opened at the limit", |t| t == ["Opening hours"]).await;
    let note = session.until_texts(".browser-card .browser-made-room", "the card says what made room", |t| t.len() == 1).await;
    assert!(note[0].contains("thread-earlier00"), "the least recently used went: {note:?}");
    assert_eq!(server.requests().iter().filter(|r| *r == "/hours.html").count(), 1, "{:?}", server.requests());
    let kept: Vec<String> = folders().into_iter().filter(|f| f.starts_with("thread-")).collect();
    assert_eq!(kept.len(), MAX_SAVED_PROFILES, "the profiles on disk stay at the limit: {kept:?}");
    assert!(!kept.contains(&"thread-earlier00".to_owned()), "{kept:?}");
    session.close().await;
}
