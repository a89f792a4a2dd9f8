//! The window at phone size, 390×844 CSS px: the sidebar is a tab bar at the bottom, every screen
//! is reached through it, nothing is wider than the window, and every button is at least 44 px
//! tall — on each screen, with a task open in Activity, and on an approval card's buttons.
//!
//! Each test starts its own app, so the size it sets ends with its window and no other test
//! sees it, whichever order they run in.

use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;

use crate::APP;

const PHONE: (u32, u32) = (390, 844);

/// What a thumb needs (Apple's and Google's guidelines agree within a few px).
const TOUCH: f64 = 44.0;

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

/// Everything that would make the page scroll sideways, each as "tag.classes#id: what": the
/// document wider than the window, an element reaching past its left or right edge, an area
/// that scrolls sideways. Code blocks and the PDF page scroll sideways on their own by design,
/// so they and what is inside them are left out.
const OVERFLOW: &str = r#"
    const width = document.documentElement.clientWidth;
    const own = e => e.closest('pre, .pdf-canvas');
    const name = e => e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('') + (e.id ? '#' + e.id : '');
    const found = [];
    for (const root of [document.documentElement, document.body]) {
        if (root.scrollWidth > width) found.push(`${name(root)}: ${root.scrollWidth} px wide in a ${width} px window`);
    }
    for (const e of document.querySelectorAll('body *')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (!(e.parentElement && own(e.parentElement)) && (r.left < -0.5 || r.right > width + 0.5)) {
            found.push(`${name(e)}: ${Math.round(r.width)} px wide, from ${Math.round(r.left)} to ${Math.round(r.right)} in a ${width} px window`);
        }
        const x = getComputedStyle(e).overflowX;
        if ((x === 'auto' || x === 'scroll') && !own(e) && e.scrollWidth > e.clientWidth + 1) {
            found.push(`${name(e)}: scrolls sideways, ${e.scrollWidth} px of content in ${e.clientWidth}`);
        }
    }
    return found;
"#;

/// The shown touch targets (buttons, tab items, what is styled or acts as a button) inside
/// `arguments[0]`: how many there are, and each shorter than `arguments[1]` px as
/// "tag.classes "label": height".
const SHORT_TARGETS: &str = r#"
    const [scope, least] = arguments;
    const name = e => e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('') + (e.id ? '#' + e.id : '');
    const targets = [...document.querySelectorAll(`${scope} :is(button, [role=button], a[href], .nav-item, .button, input[type=submit], input[type=button])`)]
        .filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; });
    const short = targets.filter(e => e.getBoundingClientRect().height < least - 0.5)
        .map(e => `${name(e)} "${e.textContent.trim().slice(0, 30)}": ${e.getBoundingClientRect().height.toFixed(1)} px tall`);
    return { shown: targets.length, short };
"#;

/// Makes the window phone-sized and waits until the page has the phone layout (the tab bar).
async fn phone_sized(session: &Session) {
    session.client.set_window_size(PHONE.0, PHONE.1).await.unwrap();
    session
        .until_script(
            "return window.innerWidth <= 720 && getComputedStyle(document.querySelector('.nav')).display === 'grid'",
            "the window is phone-sized and shows the tab bar",
        )
        .await;
    let size = session.client.execute("return [window.innerWidth, window.innerHeight]", vec![]).await.unwrap();
    let size: (u32, u32) = serde_json::from_value(size).unwrap();
    assert!((370..=400).contains(&size.0) && (780..=850).contains(&size.1), "the window was asked for {PHONE:?} CSS px and shows {size:?}");
}

/// Goes to a screen through the (phone) tab bar and waits until it shows its title and has
/// loaded what it lists.
async fn open(session: &Session, slug: &str, title: &str) {
    session.find(&format!(".nav-item[data-screen={slug}]")).await.click().await.unwrap();
    session
        // The chat stays mounted (hidden) behind other screens: only the shown title counts.
        .until_texts(".screen .page > .page-header h1", &format!("{slug} shows its title"), |t| {
            t.iter().filter(|text| !text.is_empty()).collect::<Vec<_>>() == [title]
        })
        .await;
    session
        .until_script(
            "return ![...document.querySelectorAll('.screen .empty')].some(e => e.offsetParent !== null && e.textContent.startsWith('Loading'))",
            &format!("{slug} has loaded"),
        )
        .await;
}

/// What the page shows now overflows nowhere, and no touch target inside `scope` is short;
/// returns how many touch targets were measured there.
async fn fits(session: &Session, scope: &str, what: &str) -> usize {
    let overflow: Vec<String> = serde_json::from_value(session.client.execute(OVERFLOW, vec![]).await.unwrap()).unwrap();
    assert!(overflow.is_empty(), "{what} scrolls sideways at {PHONE:?}:\n{}", overflow.join("\n"));
    let targets = session.client.execute(SHORT_TARGETS, vec![scope.into(), TOUCH.into()]).await.unwrap();
    let short: Vec<String> = serde_json::from_value(targets["short"].clone()).unwrap();
    assert!(short.is_empty(), "{what} has touch targets under {TOUCH} px at {PHONE:?}:\n{}", short.join("\n"));
    targets["shown"].as_u64().unwrap_or(0) as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_screen_fits_a_phone_and_is_reached_through_the_tab_bar() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    phone_sized(&session).await;

    // The navigation is a bar along the bottom, the full width, with every screen on it.
    let bar = session
        .client
        .execute(
            "const nav = document.querySelector('.nav').getBoundingClientRect(); \
             const items = [...document.querySelectorAll('.nav-item')].map(i => i.getBoundingClientRect()); \
             return { bottom: Math.abs(nav.bottom - window.innerHeight) < 1, full: Math.abs(nav.width - window.innerWidth) < 1, \
                      items: items.length, shown: items.filter(r => r.height > 0 && r.top >= nav.top && r.bottom <= window.innerHeight).length };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        bar,
        serde_json::json!({ "bottom": true, "full": true, "items": SCREENS.len(), "shown": SCREENS.len() }),
        "the tab bar runs along the bottom and shows every screen"
    );

    // A job in chat: a message, a task card with its Open button, and a task for Activity.
    session.send("Book a table for two at Luigi's on Friday").await;
    session.until_texts(".card-delegate-task .task-status", "the task card shows its live status", |t| t == ["waiting input"]).await;
    session.until_texts(".msg-assistant:not(.streaming)", "the reply finishes", |t| t.len() == 1).await;
    // The composer stays at the bottom of the chat, right above the tab bar.
    session
        .until_script(
            "const c = document.querySelector('.composer').getBoundingClientRect(); \
             return Math.abs(c.bottom - document.querySelector('.nav').getBoundingClientRect().top) < 1",
            "the composer sits right above the tab bar",
        )
        .await;

    for (slug, title) in SCREENS {
        open(&session, slug, title).await;
        if slug == "activity" {
            // The list and the task's page, one above the other.
            session.find(".task-row").await.click().await.unwrap();
            session.until_texts(".task-detail .task-status", "Activity opens the task", |t| t.len() == 1 && t[0].contains("waiting")).await;
        }
        // The whole window: the screen and the tab bar.
        let measured = fits(&session, "body", &format!("the {slug} screen")).await;
        assert!(measured > SCREENS.len(), "{slug}: only {measured} touch targets were measured");
    }
    session.screenshot("phone-settings").await;
    open(&session, "chat", "Chat").await;
    session.screenshot("phone-chat").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_cards_buttons_are_touch_sized_on_a_phone() {
    let email = r#"{"to":["alvarez@riverside-school.example"],"subject":"Re: Community visit","body":"Léa can come. Thank you!"}"#;
    let server = ModelServer::start(Script::new().turn(Reply::new().text(&["I'll draft the reply."]).tool_call(
        "call-mail",
        "prepare_email",
        &[email],
    )))
    .await
    .unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    phone_sized(&session).await;
    let params = format!(r#"{{"params":{{"kind":"openai_chat","baseUrl":"{}","model":"scripted-model"}}}}"#, server.base_url());
    assert!(session.invoke("settings_model_set", &params).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));

    session.send("Tell the school Léa can come").await;
    session
        .until_texts(".approval-card[data-status=awaiting_review] .approval-to", "the approval card shows in chat", |t| {
            t.len() == 1 && t[0].contains("alvarez@riverside-school.example")
        })
        .await;
    session
        .until_texts(".approval-card [data-action=approve], .approval-card [data-action=deny]", "Approve and Deny show", |t| t.len() == 2)
        .await;
    let measured = fits(&session, ".approval-card", "the chat with an approval card").await;
    assert!(measured >= 2, "Approve and Deny were measured: {measured} buttons");
    session.screenshot("phone-approval-card").await;

    // The same card on the Approvals screen, reached through the tab bar.
    open(&session, "approvals", "Approvals").await;
    session
        .until_texts(".approvals .approval-card [data-action=approve]", "the card waits on the Approvals screen", |t| t.len() == 1)
        .await;
    let measured = fits(&session, ".approvals", "the Approvals screen").await;
    assert!(measured >= 3, "Refresh, Approve and Deny were measured: {measured} buttons");
    assert_eq!(server.requests().len(), 1, "the run ended for the owner's review");
    session.close().await;
}
