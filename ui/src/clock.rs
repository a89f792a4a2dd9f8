//! Time in the window: the owner's local date and time, and one ticking "now" for countdowns.

use std::time::Duration;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// `ms` in the webview's locale and time zone.
pub fn local_time(ms: i64) -> String {
    date(ms).to_locale_string("default", &JsValue::UNDEFINED).into()
}

/// `ms` as a date and time in the IANA `time_zone`, or `None` when the webview does not know it.
pub fn zoned_time(ms: i64, time_zone: &str) -> Option<String> {
    let options = js_sys::Object::new();
    for (key, value) in [("timeZone", time_zone), ("dateStyle", "medium"), ("timeStyle", "short")] {
        js_sys::Reflect::set(&options, &JsValue::from_str(key), &JsValue::from_str(value)).ok()?;
    }
    // Called through `Reflect::apply`, which returns the RangeError a time zone the webview
    // does not know throws, where js_sys's binding would trap.
    let date = date(ms);
    let method: js_sys::Function = js_sys::Reflect::get(&date, &JsValue::from_str("toLocaleString")).ok()?.dyn_into().ok()?;
    let args = js_sys::Array::of2(&JsValue::from_str("default"), &options);
    js_sys::Reflect::apply(&method, &date, &args).ok()?.as_string()
}

/// An RFC 3339 timestamp as Unix ms, or `None` when it does not parse.
pub fn parse_time(text: &str) -> Option<i64> {
    let ms = js_sys::Date::parse(text);
    #[expect(clippy::cast_possible_truncation, reason = "Unix ms fit an i64 exactly for any date JavaScript can hold")]
    ms.is_finite().then_some(ms as i64)
}

/// Minutes east of UTC of the webview's time zone at `ms`: asked per instant, so a date
/// across a summer-time change gets the offset that will apply then.
pub fn utc_offset_minutes(ms: i64) -> i32 {
    // getTimezoneOffset counts minutes *behind* UTC; whole minutes within a day either way
    // (NaN, for a date JavaScript cannot hold, becomes 0).
    #[expect(clippy::cast_possible_truncation, reason = "whole minutes within a day")]
    let behind = date(ms).get_timezone_offset() as i32;
    -behind
}

/// Now, Unix ms.
pub fn now_ms() -> i64 {
    #[expect(clippy::cast_possible_truncation, reason = "Unix ms fit an i64 exactly")]
    let now = js_sys::Date::now() as i64;
    now
}

fn date(ms: i64) -> js_sys::Date {
    #[expect(clippy::cast_precision_loss, reason = "exact for any date within 285,000 years")]
    js_sys::Date::new(&JsValue::from_f64(ms as f64))
}

/// One "now" for the whole window, ticking every second, so every countdown moves together
/// and only one timer runs.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Unix ms, updated every second.
    pub now: ReadSignal<i64>,
}

impl Clock {
    /// Starts the tick and provides the clock to the component tree.
    pub fn provide() -> Self {
        let (now, set_now) = signal(now_ms());
        match set_interval_with_handle(move || set_now.set(now_ms()), Duration::from_secs(1)) {
            Ok(handle) => on_cleanup(move || handle.clear()),
            Err(_) => leptos::logging::warn!("Hearth: the clock could not start; countdowns will not move."),
        }
        let clock = Self { now };
        provide_context(clock);
        clock
    }

    /// The app's clock, or a still one read now when none is provided (a card rendered alone).
    pub fn from_context() -> Self {
        use_context::<Self>().unwrap_or_else(|| Self { now: signal(now_ms()).0 })
    }
}
