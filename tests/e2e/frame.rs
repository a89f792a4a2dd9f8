//! Every screen shares one page frame: a header bar with the screen's title, inset from the
//! sidebar like every other, over its content. One check per screen, through the real window.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

const SCREENS: [(&str, &str); 11] = [
    ("chat", "Chat"),
    ("activity", "Activity"),
    ("inbox", "Inbox"),
    ("approvals", "Approvals"),
    ("computer", "Computer"),
    ("browser", "Browser"),
    ("files", "Files"),
    ("documents", "Documents"),
    ("goals", "Goals"),
    ("memory", "Memory"),
    ("settings", "Settings"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_screen_has_the_same_page_frame() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let mut insets = Vec::new();
    for (slug, title) in SCREENS {
        session.find(&format!(".nav-item[data-screen={slug}]")).await.click().await.unwrap();
        session
            // The chat stays mounted (hidden) behind other screens: only the shown title counts.
            .until_texts(".screen .page > .page-header h1", &format!("{slug} shows its title in the page header"), |t| {
                t.iter().filter(|text| !text.is_empty()).collect::<Vec<_>>() == [title]
            })
            .await;
        // Where the title starts, measured from the page's own left edge: the same on every
        // screen (no heading flush against the sidebar).
        let inset = session
            .client
            .execute(
                "const h = [...document.querySelectorAll('.screen .page > .page-header h1')].find(e => e.offsetParent !== null); \
                 const p = h.closest('.page'); \
                 return Math.round(h.getBoundingClientRect().left - p.getBoundingClientRect().left);",
                vec![],
            )
            .await
            .unwrap();
        insets.push((slug, inset.as_i64().unwrap_or(-1)));
    }
    let first = insets[0].1;
    assert!(first >= 16, "the title is inset from the page's edge: {insets:?}");
    assert!(insets.iter().all(|(_, inset)| *inset == first), "every screen's title starts at the same inset: {insets:?}");
    session.screenshot("page-frame-browser").await;
    session.close().await;
}
