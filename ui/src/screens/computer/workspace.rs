//! The workspace pane: a folder's entries (folders first; click to open), and a text editor
//! for the file opened, with Save.

use hearth_protocol::computer::{ComputerWriteParams, EntryKind, WorkspaceListing};
use hearth_protocol::ids::OperationId;
use leptos::prelude::*;

use crate::ipc;
use crate::request::{Reply, action_failure, settled_failure};
use crate::state::computer::{Editing, WORKSPACE, child, kind_marker, parent};

/// What the pane reads from the workspace. Both go through one action, so the answer to the
/// last one sent is the pane's error line (a later success clears it). Save has its own action:
/// its button stays off for exactly as long as a write is on its way.
#[derive(Debug, Clone)]
enum WorkspaceRequest {
    /// A folder's entries.
    List(String),
    /// A file, into the editor.
    Open(String),
}

/// Lists `path` into the pane: the folder it resolved to and its entries.
async fn show_folder(path: &str, folder: RwSignal<String>, listing: RwSignal<Option<WorkspaceListing>>) -> Reply<()> {
    let list = ipc::computer_list(path).await?;
    folder.set(list.path.clone());
    listing.set(Some(list));
    Ok(())
}

/// The folder shown, its entries, and the editor.
#[component]
pub fn WorkspacePane() -> impl IntoView {
    let folder = RwSignal::new(WORKSPACE.to_owned());
    let listing = RwSignal::new(None::<WorkspaceListing>);
    let editing = RwSignal::new(None::<Editing>);
    let saved = RwSignal::new(false);
    // One operation id per (path, text) until it is saved: a repeated Save of the same text
    // (after an error, or a double click) is the same operation, written once.
    let pending = StoredValue::new(None::<(String, String, OperationId)>);
    // The editor is built again only when another file is opened, not on every keystroke.
    let open_path = Memo::new(move |_| editing.with(|e| e.as_ref().map(|e| e.file.path.clone())));
    let request = Action::new_local(move |request: &WorkspaceRequest| {
        let request = request.clone();
        async move {
            match request {
                WorkspaceRequest::List(path) => show_folder(&path, folder, listing).await?,
                WorkspaceRequest::Open(path) => {
                    let file = ipc::computer_read(&path).await?;
                    editing.set(Some(Editing::open(file)));
                    saved.set(false);
                }
            }
            Ok(())
        }
    });
    let load = move |path: String| {
        request.dispatch_local(WorkspaceRequest::List(path));
    };
    let write = Action::new_local(move |params: &ComputerWriteParams| {
        let params = params.clone();
        async move {
            ipc::computer_write(&params).await?;
            if pending.get_value().is_some_and(|(_, _, id)| id == params.operation_id) {
                pending.set_value(None);
            }
            // The answer marks the editor saved only if it still shows that file with the text
            // written: another file opened, the file opened again, or more typed while the write
            // was on its way is not what was written.
            editing.update(|e| {
                if let Some(e) = e.as_mut().filter(|e| e.file.path == params.path && e.text == params.content) {
                    e.saved(params.content.clone());
                    saved.set(true);
                }
            });
            // The folder again, with the file as written.
            load(folder.get_untracked());
            Ok(())
        }
    });
    let saving = write.pending();
    // A failed Save is shown while its file is open (its operation id is kept for the retry);
    // otherwise the last read's answer.
    let save_failure = move || {
        let failed_here = pending.with_value(|p| p.as_ref().map(|(path, _, _)| path.clone())) == open_path.get();
        if failed_here { settled_failure(write) } else { None }
    };
    let error = move || save_failure().or_else(|| action_failure(request));
    // The workspace's root, once, when the pane opens (an off computer says so here).
    load(WORKSPACE.to_owned());
    let open = move |path: String| {
        request.dispatch_local(WorkspaceRequest::Open(path));
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
        write.dispatch_local(params);
    };

    view! {
        <div class="workspace-pane">
            <h2>"Files in /workspace"</h2>
            <div class="workspace-path">
                <button data-action="up" on:click=move |_| load(parent(&folder.get_untracked()))>"Up"</button>
                <code id="workspace-folder">{move || folder.get()}</code>
                <button data-action="refresh-workspace" on:click=move |_| load(folder.get_untracked())>"Refresh"</button>
            </div>
            {move || error().map(|message| view! { <p class="error workspace-error">{message}</p> })}
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
