//! The workspace pane: a folder's entries (folders first; click to open), and a text editor
//! for the file opened, with Save.

use hearth_protocol::computer::{ComputerWriteParams, EntryKind, WorkspaceListing};
use hearth_protocol::ids::OperationId;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::state::computer::{Editing, WORKSPACE, child, kind_marker, parent};

/// The folder shown, its entries, and the editor.
#[component]
pub fn WorkspacePane() -> impl IntoView {
    let folder = RwSignal::new(WORKSPACE.to_owned());
    let listing = RwSignal::new(None::<WorkspaceListing>);
    let editing = RwSignal::new(None::<Editing>);
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);
    let saving = RwSignal::new(false);
    // One operation id per (path, text) until it is saved: a repeated Save of the same text
    // (after an error, or a double click) is the same operation, written once.
    let pending = StoredValue::new(None::<(String, String, OperationId)>);
    // The editor is built again only when another file is opened, not on every keystroke.
    let open_path = Memo::new(move |_| editing.with(|e| e.as_ref().map(|e| e.file.path.clone())));
    let load = move |path: String| {
        spawn_local(async move {
            match ipc::computer_list(&path).await {
                Ok(list) => {
                    folder.set(list.path.clone());
                    listing.set(Some(list));
                    error.set(None);
                }
                Err(err) => error.set(Some(err.message)),
            }
        });
    };
    // The workspace's root, once, when the pane opens (an off computer says so here).
    load(WORKSPACE.to_owned());
    let open = move |path: String| {
        spawn_local(async move {
            match ipc::computer_read(&path).await {
                Ok(file) => {
                    editing.set(Some(Editing::open(file)));
                    saved.set(false);
                    error.set(None);
                }
                Err(err) => error.set(Some(err.message)),
            }
        });
    };
    let save = move |_| {
        let Some(current) = editing.get_untracked() else { return };
        if saving.get_untracked() {
            return;
        }
        let operation_id = match pending.get_value() {
            Some((path, text, id)) if path == current.file.path && text == current.text => id,
            _ => super::operation_id("save"),
        };
        pending.set_value(Some((current.file.path.clone(), current.text.clone(), operation_id.clone())));
        let params = ComputerWriteParams { path: current.file.path.clone(), content: current.text, operation_id };
        saving.set(true);
        spawn_local(async move {
            let reply = ipc::computer_write(&params).await;
            saving.set(false);
            match reply {
                Ok(()) => {
                    pending.set_value(None);
                    editing.update(|e| {
                        if let Some(e) = e {
                            e.saved(params.content.clone());
                        }
                    });
                    saved.set(true);
                    load(folder.get_untracked());
                }
                Err(err) => error.set(Some(err.message)),
            }
        });
    };

    view! {
        <div class="workspace-pane">
            <h2>"Files in /workspace"</h2>
            <div class="workspace-path">
                <button data-action="up" on:click=move |_| load(parent(&folder.get_untracked()))>"Up"</button>
                <code id="workspace-folder">{move || folder.get()}</code>
                <button data-action="refresh-workspace" on:click=move |_| load(folder.get_untracked())>"Refresh"</button>
            </div>
            {move || error.get().map(|message| view! { <p class="error workspace-error">{message}</p> })}
            <ul class="workspace-entries" id="workspace-entries">
                {move || listing.get().map(|list| list.entries.into_iter().map(|entry| {
                    let path = child(&list.path, &entry.name);
                    let kind = entry.kind;
                    let name = entry.name.clone();
                    let on_click = move |_| match kind {
                        EntryKind::Directory => load(path.clone()),
                        EntryKind::File => open(path.clone()),
                        EntryKind::Symlink | EntryKind::Other => {}
                    };
                    view! {
                        <li class="workspace-entry" data-kind=format!("{kind:?}").to_lowercase() data-name=name on:click=on_click>
                            <span class="entry-marker">{kind_marker(kind)}</span> " " {entry.name}
                        </li>
                    }
                }).collect_view())}
            </ul>
            {move || open_path.get().map(|path| view! {
                <div class="workspace-editor">
                    <code class="editor-path">{path}</code>
                    <textarea
                        id="workspace-editor"
                        prop:value=editing.with_untracked(|e| e.as_ref().map(|e| e.text.clone()).unwrap_or_default())
                        on:input=move |ev| {
                            let text = event_target_value(&ev);
                            editing.update(|e| if let Some(e) = e { e.text = text; });
                            saved.set(false);
                        }
                    ></textarea>
                    <button id="workspace-save" disabled=move || saving.get() || !editing.with(|e| e.as_ref().is_some_and(Editing::is_changed)) on:click=save>"Save"</button>
                    {move || saved.get().then(|| view! { <span class="saved" id="workspace-saved">"Saved"</span> })}
                </div>
            })}
        </div>
    }
}
