//! The floor's window: one Leptos component, mounted like Hearth's, that reports its first
//! frame exactly as Hearth's window does (two animation frames after mount, then
//! `app_painted`): the second frame callback runs once the frame holding the mounted page has
//! been produced.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI__", "core"], js_name = invoke, catch)]
    async fn tauri_invoke(cmd: &str) -> Result<JsValue, JsValue>;
}

#[component]
fn Hello() -> impl IntoView {
    view! { <main><h1>"Hello from the floor"</h1><p>"Tauri v2 + Leptos, nothing else."</p></main> }
}

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(Hello);
    after_two_frames(|| {
        leptos::task::spawn_local(async {
            let _ = tauri_invoke("app_painted").await;
        });
    });
}

fn after_two_frames(then: impl FnOnce() + 'static) {
    request_animation_frame(move || request_animation_frame(then));
}
