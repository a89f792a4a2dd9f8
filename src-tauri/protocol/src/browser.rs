//! The agent's browser: what its tools return, and what the browser card and the Browser
//! screen show.

use serde::{Deserialize, Serialize};

/// The browser profiles Hearth keeps at most; past it, the least recently used unused one is
/// removed to make room (the page's result and its card say which).
pub const MAX_SAVED_PROFILES: usize = 20;

/// The longest URL the browser accepts.
pub const MAX_URL: usize = 4_096;
/// How much of a page's text reaches the model (characters); the card shows the same.
pub const MAX_TEXT_TO_MODEL: usize = 30_000;
/// How many interactive elements page_elements lists.
pub const MAX_ELEMENTS: usize = 200;
/// The longest text page_act types or selects.
pub const MAX_ACT_VALUE: usize = 4_000;
/// The largest download the browser keeps (10 MiB).
pub const MAX_DOWNLOAD_BYTES: u64 = 10 * 1024 * 1024;
/// How many downloads one browser session may start.
pub const MAX_DOWNLOADS: usize = 20;

/// What browse_web and read_web return: one look at a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageView {
    /// The address the page ended on, after redirects (checked against the egress policy
    /// again).
    pub final_url: String,
    /// Its title (at most 300 characters).
    pub title: String,
    /// Its visible text, at most [`MAX_TEXT_TO_MODEL`] characters.
    pub text: String,
    /// Whether the text was cut (the page had more).
    pub truncated: bool,
    /// The picture of the page, when one was taken: `browser_screenshot` returns it.
    pub screenshot_id: Option<String>,
    /// The browser profile the page was opened in.
    pub profile: String,
    /// The browser had ended (crashed or was killed) and was started again for this look.
    pub restarted: bool,
    /// The address was a download, not a page: what became of it (the text is then empty and
    /// the tab still shows the page before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<DownloadView>,
    /// Whose writing the text is: the page's, never instructions.
    pub untrusted_data: String,
    /// The unused browser profile Hearth removed to make room for this one, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_room: Option<String>,
}

/// One download of the browser's, as its tools and cards report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadView {
    /// Its id for save_download (Chromium's own for it).
    pub id: String,
    /// The file name the site suggested (at most 200 characters).
    pub name: String,
    /// The bytes received so far.
    pub bytes: u64,
    /// What became of it.
    pub status: DownloadStatus,
}

/// Where a download stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum DownloadStatus {
    /// Still arriving.
    Downloading,
    /// A PDF within the limits, waiting for save_download.
    Ready,
    /// Saved into Files (its file id is in save_download's result).
    Saved,
    /// Refused and deleted.
    Refused(DownloadRefusal),
    /// Ended before it finished (Stop, the site, the browser closing).
    Cancelled,
}

/// Why a download was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DownloadRefusal {
    /// Its bytes do not start with `%PDF-`: the browser keeps PDFs only.
    NotPdf,
    /// Larger than [`MAX_DOWNLOAD_BYTES`].
    TooLarge,
    /// The session had started [`MAX_DOWNLOADS`] already.
    TooMany,
    /// Three downloads were arriving already.
    TooManyAtOnce,
    /// It began while a Stop ended the page.
    Stopped,
}

impl DownloadRefusal {
    /// What the model and the card are told.
    pub const fn explain(self) -> &'static str {
        match self {
            DownloadRefusal::NotPdf => "refused: the browser keeps PDF downloads only, and this file is not a PDF",
            DownloadRefusal::TooLarge => "refused: larger than 10 MiB, the most the browser keeps",
            DownloadRefusal::TooMany => "refused: this browser session has started 20 downloads, the most it may",
            DownloadRefusal::TooManyAtOnce => "refused: three downloads were arriving already; ask again when they are done",
            DownloadRefusal::Stopped => "refused: it began as the owner pressed Stop",
        }
    }
}

/// Whose browsing a profile pick is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum ProfileTarget {
    /// A chat thread, by id.
    Thread(crate::ids::ThreadId),
    /// A task, by id.
    Task(crate::ids::TaskId),
}

/// `browser_use_profile`'s parameters: the owner picks which saved profile a thread or a task
/// browses in (its logins), or (`None`) gives it back its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UseProfileParams {
    /// The thread or task.
    pub target: ProfileTarget,
    /// A saved profile's id, or `None` for the target's own.
    pub profile: Option<String>,
}

/// The interactive elements of the page as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageElements {
    /// The page's address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The elements, in document order, at most [`MAX_ELEMENTS`].
    pub elements: Vec<PageElement>,
    /// Whether the page had more.
    pub truncated: bool,
    /// This browser session's downloads not saved yet (arriving, or ready for save_download):
    /// a click's download begins after the click returns, and is found here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<DownloadView>,
    /// Whose writing the names are.
    pub untrusted_data: String,
}

/// One interactive element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageElement {
    /// Its reference for page_act: valid for this page state only (a changed page gives new
    /// references, and an old one is refused rather than acting on something else).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Its role (`button`, `link`, `textbox`, `checkbox`, `combobox`, …).
    pub role: String,
    /// Its accessible name, as far as the page gives one (at most 120 characters).
    pub name: String,
    /// A field's current value, or a link's address.
    pub value: Option<String>,
}

/// What page_act does to an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    /// A mouse click at the element's centre.
    Click,
    /// Focus the element and type `value` into it.
    Type,
    /// Pick the option whose value or label is `value`.
    Select,
    /// Focus the element and press the key `value` (`Enter`, `Tab`, `Escape`, …).
    Press,
    /// Scroll the element into view.
    Scroll,
}

impl PageAction {
    /// Whether the action takes a value.
    pub const fn takes_value(self) -> bool {
        match self {
            PageAction::Type | PageAction::Select | PageAction::Press => true,
            PageAction::Click | PageAction::Scroll => false,
        }
    }
}

/// What one page_act did: the receipt the journal keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActReceipt {
    /// The action.
    pub action: PageAction,
    /// The element it acted on.
    #[serde(rename = "ref")]
    pub reference: String,
    /// That element's role, as it was listed.
    pub role: String,
    /// That element's name, as it was listed.
    pub name: String,
    /// The page's address before.
    pub url_before: String,
    /// The page's address after (a link or a form may have navigated).
    pub url_after: String,
    /// The page's title after.
    pub title_after: String,
    /// A download the action started, when one began while it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<DownloadView>,
}

/// `browser_screenshot`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotParams {
    /// The id a [`PageView`] gave.
    pub id: String,
}

/// `browser_screenshot`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotResponse {
    /// The PNG, base64 (an `<img>` shows it as a data URL).
    pub png_base64: String,
}

/// One saved browser profile, as the Browser screen lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileView {
    /// Its id (`thread-…`, `task-…`).
    pub id: String,
    /// Whether a Chromium runs on it now.
    pub running: bool,
    /// When it was last used (ms since the epoch), when it ran in this process.
    pub last_used_ms: Option<i64>,
}

/// `browser_list`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserListResponse {
    /// Saved profiles, running first.
    pub profiles: Vec<ProfileView>,
}

/// `browser_close` and `browser_delete_profile`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileParams {
    /// The profile.
    pub id: String,
}

/// One frame of the owner's live view of a browser (Take control).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlFrame {
    /// A JPEG of the viewport, base64.
    pub jpeg_base64: String,
    /// Its width in CSS pixels (what input coordinates are in).
    pub width: u32,
    /// Its height in CSS pixels.
    pub height: u32,
    /// Counts the frames of this session from 1.
    pub seq: u64,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    /// No button (a move).
    None,
    /// The left button.
    Left,
    /// The middle button.
    Middle,
    /// The right button.
    Right,
}

/// What the mouse did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseKind {
    /// Moved (a drag when a button is held).
    Move,
    /// A button went down.
    Down,
    /// A button came up.
    Up,
    /// The wheel turned.
    Wheel,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// Pressed.
    Down,
    /// Released.
    Up,
}

/// Where the owner sends the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlNavigation {
    /// The page before.
    Back,
    /// The page after.
    Forward,
    /// The same page again.
    Reload,
}

/// One input of the owner's, in the frame's CSS pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum ControlInput {
    /// The mouse.
    #[serde(rename_all = "camelCase")]
    Mouse {
        /// What it did.
        kind: MouseKind,
        /// Where.
        x: f64,
        /// Where.
        y: f64,
        /// Which button.
        button: MouseButton,
        /// 1 for a click, 2 for a double click.
        #[serde(default)]
        click_count: u8,
        /// The wheel's turn.
        #[serde(default)]
        delta_x: f64,
        /// The wheel's turn.
        #[serde(default)]
        delta_y: f64,
        /// Alt 1, Ctrl 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: u8,
    },
    /// A key, with its DOM `key` and `code`.
    #[serde(rename_all = "camelCase")]
    Key {
        /// Pressed or released.
        kind: KeyKind,
        /// The DOM `key` (`a`, `Enter`, `ArrowLeft`).
        key: String,
        /// The DOM `code` (`KeyA`, `Enter`).
        code: String,
        /// Alt 1, Ctrl 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: u8,
    },
    /// Text typed (an input method's result, a paste).
    Text {
        /// The text (at most 4,000 characters).
        text: String,
    },
    /// Back, forward or reload.
    Navigate {
        /// Which.
        to: ControlNavigation,
    },
}

/// `browser_control_start`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlStarted {
    /// Names this session for `browser_control_stop`.
    pub ticket: u64,
}

/// `browser_control_stop`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlStopParams {
    /// The profile under control.
    pub id: String,
    /// The session to end (none: whichever, as when the view closed before it started).
    #[serde(default)]
    pub ticket: Option<u64>,
}

/// `browser_control_input`'s parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlInputParams {
    /// The profile under control.
    pub id: String,
    /// The input.
    pub input: ControlInput,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_element_is_keyed_ref_on_the_wire_and_actions_are_snake_case() {
        let element = PageElement { reference: "s1:3".into(), role: "button".into(), name: "Add".into(), value: None };
        let json = serde_json::to_value(&element).unwrap();
        assert_eq!(json["ref"], "s1:3");
        assert_eq!(serde_json::to_value(PageAction::Click).unwrap(), "click");
        assert!(serde_json::from_value::<PageAction>("submit".into()).is_err());
        assert!(PageAction::Type.takes_value() && !PageAction::Click.takes_value());
    }

    #[test]
    fn control_inputs_are_tagged_by_type_and_default_what_they_leave_out() {
        let click: ControlInput =
            serde_json::from_str(r#"{"type":"mouse","kind":"down","x":10,"y":20,"button":"left","clickCount":1}"#).unwrap();
        assert_eq!(
            click,
            ControlInput::Mouse {
                kind: MouseKind::Down,
                x: 10.0,
                y: 20.0,
                button: MouseButton::Left,
                click_count: 1,
                delta_x: 0.0,
                delta_y: 0.0,
                modifiers: 0
            }
        );
        let key: ControlInput = serde_json::from_str(r#"{"type":"key","kind":"up","key":"a","code":"KeyA"}"#).unwrap();
        assert!(matches!(key, ControlInput::Key { kind: KeyKind::Up, modifiers: 0, .. }));
        assert!(serde_json::from_str::<ControlInput>(r#"{"type":"navigate","to":"home"}"#).is_err());
    }
}
