//! Settings → Computer: on or off (only when a Docker engine answers), the engine, the image
//! and its size, Recreate (a new container from the spec, files kept: the way out of a failed
//! isolation check), and Reset, which removes the container and every file in /workspace after
//! a second, explicit click.

use hearth_protocol::computer::ComputerStatusView;
use leptos::prelude::*;

use crate::ipc;
use crate::request::failure;
use crate::screens::computer::{meta_line, state_label};

/// What the section asks of the computer; each answers its status.
#[derive(Debug, Clone, Copy)]
enum ComputerChange {
    Enable(bool),
    Rebuild,
    Recreate,
    Reset,
}

/// The section.
#[component]
pub fn ComputerSection() -> impl IntoView {
    let loaded = LocalResource::new(ipc::computer_status);
    let confirming = RwSignal::new(false);
    // The toggle, Rebuild, Recreate and Reset: one request at a time, its view shown, its
    // refusal said.
    let change = Action::new_local(|change: &ComputerChange| {
        let change = *change;
        async move {
            match change {
                ComputerChange::Enable(on) => ipc::computer_enable(on).await,
                ComputerChange::Rebuild => ipc::computer_rebuild().await,
                ComputerChange::Recreate => ipc::computer_recreate().await,
                ComputerChange::Reset => ipc::computer_reset().await,
            }
        }
    });
    let busy = change.pending();
    // The newest view: a change's answer, else the first load; a refusal keeps the one shown.
    let status = Memo::new(move |shown: Option<&Option<ComputerStatusView>>| {
        change.value().with(|answer| match answer {
            Some(Ok(view)) => Some(view.clone()),
            Some(Err(_)) => shown.cloned().flatten(),
            None => loaded.with(|reply| reply.clone().and_then(Result::ok)),
        })
    });
    // Also re-read after every answer, so a refused toggle's box goes back to the setting in
    // force even though that setting did not change.
    let enabled = move || {
        change.version().track();
        status.with(|s| s.as_ref().is_some_and(|s| s.enabled))
    };
    // The latest word: nothing while a change is on its way, then its refusal, if any; before
    // any change, why the status could not be read.
    let error = move || {
        if busy.get() {
            return None;
        }
        change.value().with(|answer| match answer {
            Some(answer) => failure(Some(answer)),
            None => loaded.with(|reply| failure(reply.as_ref())),
        })
    };
    let act = move |request: ComputerChange| {
        confirming.set(false);
        change.dispatch_local(request);
    };
    let toggle = move |on: bool| {
        change.dispatch_local(ComputerChange::Enable(on));
    };
    let recreate = move |_| act(ComputerChange::Recreate);
    let rebuild = move |_| act(ComputerChange::Rebuild);
    let reset = move |_| act(ComputerChange::Reset);

    view! {
        <section class="settings-section" data-section="computer">
            <h2>"Computer"</h2>
            <p class="hint">"An isolated Linux container with no network, for the agent's commands and files."</p>
            <label class="toggle">
                <input
                    type="checkbox"
                    id="computer-enabled"
                    prop:checked=enabled
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
            {move || error().map(|message| view! { <p class="error">{message}</p> })}
        </section>
    }
}
