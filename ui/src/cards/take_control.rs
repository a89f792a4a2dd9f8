//! Take control: the agent's browser full-size, live (a screencast), driven by the owner's
//! mouse and keyboard, with back, forward, reload and Give back. While it is open the agent
//! does not act on that browser.

use hearth_protocol::browser::{ControlFrame, ControlInput, ControlNavigation, MouseButton, MouseKind};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::state::browser::{key, modifiers, mouse, mouse_button, to_page};

/// The live view of `profile`'s browser; `on_close` runs after Give back.
#[component]
pub fn TakeControl(profile: String, on_close: Callback<()>) -> impl IntoView {
    let frame = RwSignal::new(None::<ControlFrame>);
    let error = RwSignal::new(None::<String>);
    let subscription = StoredValue::new_local(None::<ipc::ControlSubscription>);
    let held = RwSignal::new(None::<MouseButton>);
    let view_ref = NodeRef::<leptos::html::Div>::new();
    let id = StoredValue::new(profile.clone());
    spawn_local(async move {
        match ipc::browser_control_start(&id.get_value(), move |shown| frame.set(Some(shown))).await {
            Ok(live) => subscription.set_value(Some(live)),
            Err(err) => error.set(Some(err.message)),
        }
    });
    // Closing the view any way gives the browser back.
    on_cleanup(move || {
        let id = id.get_value();
        spawn_local(async move {
            let _ = ipc::browser_control_stop(&id).await;
        });
    });
    let send = move |input: ControlInput| {
        spawn_local(async move {
            if let Err(err) = ipc::browser_control_input(&id.get_value(), input).await {
                error.set(Some(err.message));
            }
        });
    };
    // The page point under a mouse event on the picture.
    let point = move |event: &ev::MouseEvent| {
        let shown: web_sys::HtmlElement = event_target(event);
        let (width, height) = frame.get_untracked().map_or((1280, 800), |f| (f.width, f.height));
        (
            to_page(f64::from(event.offset_x()), f64::from(shown.client_width()), width),
            to_page(f64::from(event.offset_y()), f64::from(shown.client_height()), height),
        )
    };
    let keys = |event: &ev::MouseEvent| modifiers(event.alt_key(), event.ctrl_key(), event.meta_key(), event.shift_key());
    let on_down = move |event: ev::MouseEvent| {
        event.prevent_default();
        // Keys go to the page from now on (the default the press prevented would have done it).
        if let Some(view) = view_ref.get_untracked() {
            let _ = view.focus();
        }
        let (x, y) = point(&event);
        let button = mouse_button(event.button());
        held.set(Some(button));
        send(mouse(MouseKind::Down, x, y, button, u8::try_from(event.detail().clamp(1, 3)).unwrap_or(1), keys(&event)));
    };
    let on_up = move |event: ev::MouseEvent| {
        let (x, y) = point(&event);
        let button = mouse_button(event.button());
        held.set(None);
        send(mouse(MouseKind::Up, x, y, button, u8::try_from(event.detail().clamp(1, 3)).unwrap_or(1), keys(&event)));
    };
    // Moves are sent only while a button is held (a drag): hovering alone sends nothing.
    let on_move = move |event: ev::MouseEvent| {
        if let Some(button) = held.get_untracked() {
            let (x, y) = point(&event);
            send(mouse(MouseKind::Move, x, y, button, 0, keys(&event)));
        }
    };
    let on_wheel = move |event: ev::WheelEvent| {
        event.prevent_default();
        let (x, y) = point(&event);
        send(ControlInput::Mouse {
            kind: MouseKind::Wheel,
            x,
            y,
            button: MouseButton::None,
            click_count: 0,
            delta_x: event.delta_x(),
            delta_y: event.delta_y(),
            modifiers: keys(&event),
        });
    };
    let on_key = move |event: ev::KeyboardEvent, down: bool| {
        event.prevent_default();
        let bits = modifiers(event.alt_key(), event.ctrl_key(), event.meta_key(), event.shift_key());
        send(key(down, event.key(), event.code(), bits));
    };
    let navigate = move |to: ControlNavigation| send(ControlInput::Navigate { to });
    let give_back = move |_| {
        spawn_local(async move {
            let _ = ipc::browser_control_stop(&id.get_value()).await;
            on_close.run(());
        });
    };
    view! {
        <div class="take-control" data-profile=profile role="dialog" aria-label="Take control of the agent's browser">
            <div class="take-control-bar">
                <button class="control-back" title="Back" on:click=move |_| navigate(ControlNavigation::Back)>"←"</button>
                <button class="control-forward" title="Forward" on:click=move |_| navigate(ControlNavigation::Forward)>"→"</button>
                <button class="control-reload" title="Reload" on:click=move |_| navigate(ControlNavigation::Reload)>"↻"</button>
                <span class="take-control-note">"You have control; the agent waits until you give it back."</span>
                <button class="give-back" on:click=give_back>"Give back"</button>
            </div>
            {move || error.get().map(|message| view! { <p class="error">{message}</p> })}
            <div
                class="take-control-view"
                node_ref=view_ref
                tabindex="0"
                on:keydown=move |event| on_key(event, true)
                on:keyup=move |event| on_key(event, false)
            >
                {move || match frame.get() {
                    None => view! { <p class="empty">"Connecting to the browser…"</p> }.into_any(),
                    Some(shown) => view! {
                        <img
                            class="control-frame"
                            data-seq=shown.seq
                            draggable="false"
                            alt="The agent's browser, live"
                            src=format!("data:image/jpeg;base64,{}", shown.jpeg_base64)
                            on:mousedown=on_down
                            on:mouseup=on_up
                            on:mousemove=on_move
                            on:wheel=on_wheel
                            on:contextmenu=|event: ev::MouseEvent| event.prevent_default()
                        />
                    }.into_any(),
                }}
            </div>
        </div>
    }
}
