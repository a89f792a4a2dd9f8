//! Devices: pairing the owner's phone (or another desktop in companion mode) with this Hearth.
//! The owner names the device and ticks what it may do; "Pair a device" shows a QR code (and a
//! short code to type) for ten minutes. The list shows each paired device with its last use,
//! and Revoke, which refuses it from its next request and closes what it has open.

use hearth_protocol::devices::{DevicePairOfferParams, DeviceScopes, PairedDeviceView, PairingOfferView};
use leptos::prelude::*;

use crate::clock::local_time;
use crate::ipc;
use crate::request::settled_failure;

/// The Devices section.
#[component]
pub fn DevicesSection() -> impl IntoView {
    let devices = LocalResource::new(ipc::device_list);
    let name = RwSignal::new(String::new());
    let scopes = RwSignal::new(DeviceScopes::DEFAULT);
    let offer = Action::new_local(move |params: &DevicePairOfferParams| {
        let params = params.clone();
        async move { ipc::device_pair_offer(&params).await }
    });
    let revoke = Action::new_local(move |id: &String| {
        let id = id.clone();
        async move {
            let revoked = ipc::device_revoke(&id).await;
            devices.refetch();
            revoked
        }
    });
    let pair = move |_| {
        if !offer.pending().get_untracked() {
            offer.dispatch_local(DevicePairOfferParams { name: name.get_untracked(), scopes: scopes.get_untracked() });
        }
    };
    let shown = move || offer.value().get().and_then(Result::ok);

    view! {
        <section class="settings-section settings-devices">
            <h2>"Devices"</h2>
            <p class="settings-note">
                "Pair your phone, or another computer in companion mode, to chat and decide approvals through this Hearth. "
                "The computer and the browser stay here; each device can do only what you tick."
            </p>
            <div class="settings-form devices-pair">
                <label class="settings-field" for="device-name">"Device name"</label>
                <input id="device-name" type="text" maxlength="60" placeholder="My phone" prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev)) />
                <span class="settings-field">"It may"</span>
                <div class="devices-scopes">
                    <ScopeBox id="scope-read" label="see chats, tasks and approvals" scopes get=|s| s.read set=|s, on| s.read = on />
                    <ScopeBox id="scope-chat" label="chat with the agent" scopes get=|s| s.chat set=|s, on| s.chat = on />
                    <ScopeBox id="scope-decide" label="approve or deny" scopes get=|s| s.decide_approvals set=|s, on| s.decide_approvals = on />
                    <ScopeBox id="scope-control" label="start and stop work" scopes get=|s| s.control_tasks set=|s, on| s.control_tasks = on />
                    <ScopeBox id="scope-destructive" label="delete chats, files and memories" scopes get=|s| s.destructive set=|s, on| s.destructive = on />
                </div>
                <div>
                    <button type="button" data-action="pair-device" disabled=move || offer.pending().get() on:click=pair>"Pair a device"</button>
                </div>
            </div>
            {move || settled_failure(offer).map(|message| view! { <p class="error settings-error">{message}</p> })}
            {move || shown().map(|offer| view! { <OfferCard offer /> })}
            <h3>"Paired"</h3>
            <Suspense fallback=|| view! { <p class="empty">"Loading devices…"</p> }>
                {move || devices.get().map(|listed| match listed {
                    Ok(list) if list.is_empty() => view! { <p class="empty">"No device is paired."</p> }.into_any(),
                    Ok(list) => view! {
                        <ul class="devices-list">
                            {list.into_iter().map(|device| view! { <DeviceRow device revoke /> }).collect_view()}
                        </ul>
                    }.into_any(),
                    Err(err) => view! { <p class="error settings-error">{format!("Devices could not be listed: {}", err.message)}</p> }.into_any(),
                })}
            </Suspense>
            {move || settled_failure(revoke).map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}

/// One scope's checkbox.
#[component]
fn ScopeBox(
    id: &'static str,
    label: &'static str,
    scopes: RwSignal<DeviceScopes>,
    get: fn(&DeviceScopes) -> bool,
    set: fn(&mut DeviceScopes, bool),
) -> impl IntoView {
    view! {
        <label class="settings-toggle" for=id>
            <input type="checkbox" id=id prop:checked=move || scopes.with(get)
                on:change=move |ev| scopes.update(|s| set(s, event_target_checked(&ev))) />
            <span>{label}</span>
        </label>
    }
}

/// The live offer: the QR code, the short code, the fingerprint to compare, until when.
#[component]
fn OfferCard(offer: PairingOfferView) -> impl IntoView {
    // The core draws the QR code as SVG; shown as an image, so no markup of it enters the page.
    let picture = format!("data:image/svg+xml;charset=utf-8,{}", String::from(js_sys::encode_uri_component(&offer.qr_svg)));
    let address = offer.address.clone();
    view! {
        <div class="devices-offer" data-offer-address=address>
            <img class="devices-qr" alt="Pairing QR code" src=picture width="240" height="240" />
            <dl>
                <dt>"Or type this code"</dt>
                <dd><code class="devices-code">{offer.short_code}</code></dd>
                <dt>"This Hearth's fingerprint (the device shows it too)"</dt>
                <dd><code class="devices-fingerprint">{offer.fingerprint}</code></dd>
                <dt>"Address"</dt>
                <dd><code>{offer.address}</code></dd>
                <dt>"Valid until"</dt>
                <dd>{local_time(offer.expires_at)}" — once"</dd>
            </dl>
        </div>
    }
}

/// One paired device, with its scopes, last use and Revoke.
#[component]
fn DeviceRow(device: PairedDeviceView, revoke: Action<String, Result<PairedDeviceView, hearth_protocol::IpcError>>) -> impl IntoView {
    let scopes = describe(&device.scopes);
    let used = device.last_used_at.map_or_else(|| "never used".to_owned(), |at| format!("last used {}", local_time(at)));
    let id = device.id.as_str().to_owned();
    let row_id = id.clone();
    let revoked = device.revoked_at.is_some();
    view! {
        <li class="devices-row" data-device=row_id data-revoked=if revoked { "true" } else { "false" }>
            <strong>{device.name}</strong>
            <span class="settings-note">{scopes}" · "{used}</span>
            <code class="devices-fingerprint">{device.fingerprint}</code>
            {if revoked {
                view! { <span class="pill">"revoked"</span> }.into_any()
            } else {
                view! {
                    <button type="button" data-action="revoke-device" disabled=move || revoke.pending().get()
                        on:click=move |_| { revoke.dispatch_local(id.clone()); }>"Revoke"</button>
                }.into_any()
            }}
        </li>
    }
}

/// The scopes in words, for the list.
fn describe(scopes: &DeviceScopes) -> String {
    let words: Vec<&str> = [
        (scopes.read, "reads"),
        (scopes.chat, "chats"),
        (scopes.decide_approvals, "approves"),
        (scopes.control_tasks, "controls work"),
        (scopes.destructive, "deletes"),
    ]
    .into_iter()
    .filter_map(|(on, word)| on.then_some(word))
    .collect();
    if words.is_empty() { "may do nothing".to_owned() } else { words.join(", ") }
}
