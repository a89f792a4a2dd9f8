//! Copying text for the owner through the webview's clipboard (no backend involved).

use wasm_bindgen_futures::JsFuture;

/// Puts `text` on the clipboard; false when the webview has no clipboard or refused.
pub async fn copy_text(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let clipboard = window.navigator().clipboard();
    // Absent outside a secure context; calling into `undefined` would throw.
    if clipboard.is_undefined() {
        return false;
    }
    JsFuture::from(clipboard.write_text(text)).await.is_ok()
}
