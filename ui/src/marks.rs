//! Named moments on the page's performance timeline (User Timing marks), for the owner's web
//! inspector and for the webview bench (tests/support/benches/webview.rs): when the chat asked
//! for a thread's history and when the frame showing it was drawn.

/// The chat asked the backend for the thread it opens.
pub const HISTORY_REQUESTED: &str = "hearth:history-requested";
/// The frame showing that thread's rows has been drawn.
pub const HISTORY_SHOWN: &str = "hearth:history-shown";

/// Marks `name` now. A webview without the Performance API marks nothing; nothing depends on it.
pub fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}

/// Runs `then` once the frame holding what the DOM shows now has been produced: the second
/// animation frame callback comes after the first frame is committed.
pub fn after_next_frame(then: impl FnOnce() + 'static) {
    leptos::prelude::request_animation_frame(move || leptos::prelude::request_animation_frame(then));
}
