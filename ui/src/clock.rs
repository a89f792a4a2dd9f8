//! Unix-millisecond timestamps as the owner's local date and time.

use wasm_bindgen::JsValue;

/// `ms` in the webview's locale and time zone.
pub fn local_time(ms: i64) -> String {
    #[allow(clippy::cast_precision_loss)] // Exact for any date within 285,000 years.
    let date = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    date.to_locale_string("default", &JsValue::UNDEFINED).into()
}
