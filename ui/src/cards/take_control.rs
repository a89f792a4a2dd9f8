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
    let closed = StoredValue::new(false);
    // Kept: opens the live frame stream, whose subscription the cleanup gives back.
    spawn_local(async move {
        match ipc::browser_control_start(&id.get_value(), move |shown| frame.set(Some(shown))).await {
            // Closed while it started: give this session back by its ticket (the cleanup's Give
            // back may have reached the core before the start did).
            Ok(live) if closed.try_get_value().unwrap_or(true) => {
                let _ = ipc::browser_control_stop(&id.get_value(), Some(live.ticket)).await;
            }
            Ok(live) => subscription.set_value(Some(live)),
            Err(err) => error.set(Some(err.message)),
        }
    });
    // Closing the view any way (Give back, the card leaving) gives the browser back, once; a
    // view closed before its start finished names no session, and the start gives back itself.
    on_cleanup(move || {
        closed.set_value(true);
        let id = id.get_value();
        let ticket = subscription.try_with_value(|live| live.as_ref().map(|l| l.ticket)).flatten();
        // Kept: fire-and-forget give-back while the view is being disposed.
        spawn_local(async move {
            let _ = ipc::browser_control_stop(&id, ticket).await;
        });
    });
    // Inputs go one after another, each sent once the one before was taken, so a release never
    // overtakes its press nor a letter the one typed before it.
    let queue = StoredValue::new_local(std::collections::VecDeque::<ControlInput>::new());
    let draining = StoredValue::new(false);
    let send = move |input: ControlInput| {
        queue.update_value(|q| q.push_back(input));
        if draining.get_value() {
            return;
        }
        draining.set_value(true);
        // Kept: a queue drainer that sends inputs in order; no reply is shown but an error.
        spawn_local(async move {
            while let Some(next) = queue.try_update_value(|q| q.pop_front()).flatten() {
                if let Err(err) = ipc::browser_control_input(&id.get_value(), next).await {
                    error.set(Some(err.message));
                }
            }
            let _ = draining.try_set_value(false);
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
    // A button released off the picture is released on the page too.
    let on_leave = move |event: ev::MouseEvent| {
        if let Some(button) = held.get_untracked() {
            held.set(None);
            let (x, y) = point(&event);
            send(mouse(MouseKind::Up, x, y, button, 1, keys(&event)));
        }
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
    // A paste arrives as text, as an input method's result would.
    let on_paste = move |event: ev::ClipboardEvent| {
        event.prevent_default();
        if let Some(text) = event.clipboard_data().and_then(|data| data.get_data("text/plain").ok()) {
            send(ControlInput::Text { text });
        }
    };
    let navigate = move |to: ControlNavigation| send(ControlInput::Navigate { to });
    // The view unmounts, and its cleanup gives back.
    let give_back = move |_| on_close.run(());
    // Keys reach the page from the start.
    Effect::new(move |_| {
        if let Some(view) = view_ref.get() {
            let _ = view.focus();
        }
    });
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
                on:paste=on_paste
            >
                {move || frame.with(Option::is_none).then(|| view! { <p class="empty">"Connecting to the browser…"</p> })}
                // One picture for the whole session, its source changed per frame: the element
                // (and a double click's count) lives on.
                <img
                    class="control-frame"
                    class:hidden=move || frame.with(Option::is_none)
                    data-seq=move || frame.with(|f| f.as_ref().map_or(0, |f| f.seq))
                    draggable="false"
                    alt="The agent's browser, live"
                    src=move || frame.with(|f| f.as_ref().map(|f| format!("data:image/jpeg;base64,{}", f.jpeg_base64)).unwrap_or_default())
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:mousemove=on_move
                    on:mouseleave=on_leave
                    on:wheel=on_wheel
                    on:contextmenu=|event: ev::MouseEvent| event.prevent_default()
                />
            </div>
        </div>
    }
}
