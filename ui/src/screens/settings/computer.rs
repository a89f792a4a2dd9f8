//! Settings → Computer: on or off (only when a Docker engine answers), the engine, the image
//! and its size, Recreate (a new container from the spec, files kept: the way out of a failed
//! isolation check), and Reset, which removes the container and every file in /workspace after
//! a second, explicit click.

use hearth_protocol::computer::ComputerStatusView;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::screens::computer::{meta_line, state_label};

/// A request that answers the computer's status.
type StatusRequest = std::pin::Pin<Box<dyn std::future::Future<Output = Result<ComputerStatusView, hearth_protocol::IpcError>>>>;

/// The section.
#[component]
pub fn ComputerSection() -> impl IntoView {
    let status = RwSignal::new(None::<ComputerStatusView>);
    let enabled = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let confirming = RwSignal::new(false);
    let busy = RwSignal::new(false);
    spawn_local(async move {
        match ipc::computer_status().await {
            Ok(view) => {
                enabled.set(view.enabled);
                status.set(Some(view));
            }
            Err(err) => error.set(Some(err.message)),
        }
    });
    let toggle = move |on: bool| {
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            let reply = ipc::computer_enable(on).await;
            busy.set(false);
            match reply {
                Ok(view) => {
                    enabled.set(view.enabled);
                    status.set(Some(view));
                }
                Err(err) => {
                    enabled.set(!on);
                    error.set(Some(err.message));
                }
            }
        });
    };
    // Rebuild, Recreate and Reset: one request, its view shown, its refusal said.
    let act = move |request: fn() -> StatusRequest| {
        busy.set(true);
        confirming.set(false);
        error.set(None);
        spawn_local(async move {
            let reply = request().await;
            busy.set(false);
            match reply {
                Ok(view) => status.set(Some(view)),
                Err(err) => error.set(Some(err.message)),
            }
        });
    };
    let recreate = move |_| act(|| Box::pin(ipc::computer_recreate()));
    let rebuild = move |_| act(|| Box::pin(ipc::computer_rebuild()));
    let reset = move |_| act(|| Box::pin(ipc::computer_reset()));

    view! {
        <section class="settings-section" data-section="computer">
            <h2>"Computer"</h2>
            <p class="hint">"An isolated Linux container with no network, for the agent's commands and files."</p>
            <label class="toggle">
                <input
                    type="checkbox"
                    id="computer-enabled"
                    prop:checked=move || enabled.get()
                    disabled=move || busy.get()
                    on:change=move |ev| toggle(event_target_checked(&ev))
                />
                " Let Hearth use the computer"
            </label>
            {move || status.get().map(|s| view! {
                <p class="computer-settings-meta">{state_label(s.state)} " · " {meta_line(&s)}</p>
                {s.note.map(|note| view! { <p class="hint">{note}</p> })}
            })}
            <p class="hint">"Rebuild makes Hearth's image again over its Debian base (never pulled); the next start makes a new container from it, and the files stay. The base itself is made by scripts/computer-image.sh."</p>
            <button data-action="rebuild-computer" disabled=move || busy.get() on:click=rebuild>"Rebuild image (keeps files)"</button>
            <button data-action="recreate-computer" disabled=move || busy.get() on:click=recreate>"Recreate container (keeps files)"</button>
            {move || if confirming.get() {
                view! {
                    <p class="confirm">
                        "This deletes the container and every file in /workspace. "
                        <button class="danger" data-action="confirm-reset" disabled=move || busy.get() on:click=reset>"Delete everything"</button>
                        <button data-action="cancel-reset" on:click=move |_| confirming.set(false)>"Cancel"</button>
                    </p>
                }.into_any()
            } else {
                view! { <button data-action="reset-computer" disabled=move || busy.get() on:click=move |_| confirming.set(true)>"Reset workspace…"</button> }.into_any()
            }}
            {move || error.get().map(|message| view! { <p class="error">{message}</p> })}
        </section>
    }
}
