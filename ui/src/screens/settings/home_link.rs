//! Your Hearth at home: this app as a companion of the owner's Hearth (the other side of the
//! Devices section). Paired, every screen works through it — its agent, its tools, its data —
//! and it decides what this device may do. Pairing or forgetting reloads the window, so every
//! screen and watch starts again on the new transport.

use hearth_protocol::devices::{HostLinkPairParams, HostLinkStatus, HostLinkView};
use leptos::prelude::*;

use crate::ipc;
use crate::request::settled_failure;

/// The section: the link, or the form that makes one.
#[component]
pub fn HomeLinkSection() -> impl IntoView {
    let status = LocalResource::new(ipc::host_link_status);
    let address = RwSignal::new(String::new());
    let code = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let pair = Action::new_local(move |params: &HostLinkPairParams| {
        let params = params.clone();
        async move { settle(ipc::host_link_pair(&params).await) }
    });
    let forget = Action::new_local(move |()| async move { settle(ipc::host_link_forget().await) });
    let submit = move |_| {
        if !pair.pending().get_untracked() {
            pair.dispatch_local(HostLinkPairParams {
                address: address.get_untracked(),
                code: code.get_untracked(),
                name: name.get_untracked(),
            });
        }
    };

    view! {
        <section class="settings-section settings-home-link">
            <h2>"Your Hearth at home"</h2>
            <Suspense fallback=|| view! { <p class="empty">"Loading…"</p> }>
                {move || status.get().map(|shown| match shown {
                    Ok(HostLinkStatus { link: Some(link), .. }) => view! { <Linked link forget /> }.into_any(),
                    Ok(HostLinkStatus { link: None, problem: Some(problem) }) => view! {
                        <p class="error settings-error home-link-problem">{problem}</p>
                        <button type="button" data-action="forget-home" disabled=move || forget.pending().get()
                            on:click=move |_| { forget.dispatch_local(()); }>"Forget it"</button>
                    }.into_any(),
                    Ok(HostLinkStatus { link: None, problem: None }) => view! {
                        <p class="settings-note">
                            "Work through the Hearth on your computer at home: chat with its agent, see its tasks and decide its approvals from here. "
                            "On that Hearth, open Settings → Devices, choose what this device may do and press Pair a device; then paste its pairing text, or type its address and code."
                        </p>
                        <div class="settings-form home-link-pair">
                            <label class="settings-field" for="home-address">"Pairing text or address"</label>
                            <input id="home-address" type="text" maxlength="512" placeholder="192.168.1.20:47800" autocomplete="off"
                                prop:value=move || address.get() on:input=move |ev| address.set(event_target_value(&ev)) />
                            <label class="settings-field" for="home-code">"Code"</label>
                            <input id="home-code" type="text" maxlength="64" placeholder="ABCD-EFGH-JKMN-PQRS" autocomplete="off"
                                prop:value=move || code.get() on:input=move |ev| code.set(event_target_value(&ev)) />
                            <label class="settings-field" for="home-name">"This device's name"</label>
                            <input id="home-name" type="text" maxlength="60" placeholder="My laptop"
                                prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
                            <div>
                                <button type="button" data-action="pair-home" disabled=move || pair.pending().get() on:click=submit>
                                    {move || if pair.pending().get() { "Pairing…" } else { "Pair with my Hearth" }}
                                </button>
                            </div>
                        </div>
                    }.into_any(),
                    Err(err) => view! { <p class="error settings-error">{format!("The link could not be read: {}", err.message)}</p> }.into_any(),
                })}
            </Suspense>
            {move || settled_failure(pair).map(|message| view! { <p class="error settings-error home-link-error">{message}</p> })}
            {move || settled_failure(forget).map(|message| view! { <p class="error settings-error home-link-error">{message}</p> })}
        </section>
    }
}

/// The Hearth this app works through, and the way back to working alone.
#[component]
fn Linked(link: HostLinkView, forget: Action<(), Result<(), hearth_protocol::IpcError>>) -> impl IntoView {
    let address = link.address.clone();
    view! {
        <div class="home-link-linked" data-home-address=address>
            <p>"This app works through your Hearth at "<code>{link.address}</code>
                {if link.connected { " (connected)." } else { "." }}</p>
            <p class="settings-note">"Its fingerprint, to compare with Settings → Devices there: "
                <code class="home-link-fingerprint">{link.fingerprint}</code></p>
            <p class="settings-note">"Settings, accounts, the computer and the browser are changed on that Hearth itself."</p>
            <button type="button" data-action="forget-home" disabled=move || forget.pending().get()
                on:click=move |_| { forget.dispatch_local(()); }>"Work on this device alone"</button>
        </div>
    }
}

/// A new link (or none): every screen starts again on the transport it chooses.
fn settle(changed: Result<HostLinkStatus, hearth_protocol::IpcError>) -> Result<(), hearth_protocol::IpcError> {
    let status = changed?;
    ipc::set_transport(if status.link.is_some() { ipc::Transport::Home } else { ipc::Transport::Local });
    if let Some(window) = web_sys::window() {
        let _ = window.location().reload();
    }
    Ok(())
}
