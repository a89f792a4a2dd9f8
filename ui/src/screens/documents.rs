//! Documents: the owner's folders (add by path, remove, rescan, what was not read and why),
//! a search over their text with each hit's matched passage, and a preview of a hit.

use hearth_protocol::documents::{DocFolderAddParams, DocFolderId, DocFolderView, DocHit, DocPreview, DocPreviewParams, DocSearchParams};
use leptos::prelude::*;

use crate::ipc;
use crate::request::{Reply, action_failure, last_loaded, load_failure};
use crate::state::documents::{folder_summary, passage_parts};

/// One change to the folders; their latest reply is the screen's one error line.
#[derive(Debug, Clone)]
enum FolderEdit {
    Add(String),
    Remove(DocFolderId),
    Rescan,
}

/// The Documents screen.
#[component]
pub fn DocumentsScreen() -> impl IntoView {
    let reply = LocalResource::new(ipc::document_folder_list);
    let list = last_loaded(reply);
    let path = RwSignal::new(String::new());
    let edit = Action::new_local(move |edit: &FolderEdit| {
        let edit = edit.clone();
        async move {
            let done: Reply<()> = match edit {
                FolderEdit::Add(typed) => {
                    ipc::document_folder_add(&DocFolderAddParams { path: typed }).await.map(|_| path.set(String::new()))
                }
                FolderEdit::Remove(id) => ipc::document_folder_remove(id).await.map(drop),
                FolderEdit::Rescan => ipc::document_rescan().await.map(drop),
            };
            if done.is_ok() {
                reply.refetch();
            }
            done
        }
    });
    let query = RwSignal::new(String::new());
    let search = Action::new_local(move |q: &String| {
        let params = DocSearchParams { query: q.clone(), limit: Some(20) };
        async move { ipc::document_search(&params).await.map(|r| r.hits) }
    });
    let preview = Action::new_local(move |params: &DocPreviewParams| {
        let params = params.clone();
        async move { ipc::document_preview(&params).await }
    });
    let error = move || {
        load_failure(reply, "Documents")
            .or_else(|| action_failure(edit))
            .or_else(|| action_failure(search))
            .or_else(|| action_failure(preview))
    };
    let folders = Memo::new(move |_| list.with(|l| l.as_ref().map(|l| l.folders.clone()).unwrap_or_default()));
    let hits = move || search.value().with(|v| v.as_ref().and_then(|r| r.as_ref().ok()).cloned());
    let shown = move || preview.value().with(|v| v.as_ref().and_then(|r| r.as_ref().ok()).cloned());
    view! {
        <section class="documents page">
            <header class="documents-header page-header">
                <h1>"Documents"</h1>
                <button data-action="rescan" on:click=move |_| { edit.dispatch_local(FolderEdit::Rescan); } disabled=move || edit.pending().get()>"Rescan"</button>
            </header>
            <div class="page-content">
            {move || error().map(|message| view! { <p class="error documents-error">{message}</p> })}
            <form class="documents-search" on:submit=move |ev| { ev.prevent_default(); search.dispatch_local(query.get_untracked()); }>
                <input name="query" placeholder="Search your documents" prop:value=query on:input=move |ev| query.set(event_target_value(&ev)) />
                <button type="submit" data-action="search">"Search"</button>
            </form>
            <div class="documents-results">
                <ul class="documents-hits">
                    {move || hits().map(|hits| if hits.is_empty() {
                        view! { <li class="documents-none">"No document has these words."</li> }.into_any()
                    } else {
                        hits.into_iter().map(|hit| view! { <Hit hit query preview /> }).collect_view().into_any()
                    })}
                </ul>
                {move || shown().map(|p| view! { <Preview preview=p /> })}
            </div>
            <h2>"Folders"</h2>
            <p class="documents-note">"Hearth reads text, Markdown, HTML and PDF files in these folders (up to 20 MB each) and keeps the index up to date as they change. Files are never changed or moved."</p>
            <form class="documents-add" on:submit=move |ev| { ev.prevent_default(); edit.dispatch_local(FolderEdit::Add(path.get_untracked())); }>
                <input name="folder" placeholder="~/Documents" prop:value=path on:input=move |ev| path.set(event_target_value(&ev)) />
                <button type="submit" data-action="add-folder" disabled=move || edit.pending().get()>"Add folder"</button>
            </form>
            <ul class="documents-folders">
                <For each=move || folders.get() key=|f| (f.id, f.files, f.skipped_count, f.scanned_at) let(folder)>
                    <Folder folder edit />
                </For>
            </ul>
            </div>
        </section>
    }
}

/// One hit: its title, path and passage; Preview shows its text.
#[component]
fn Hit(hit: DocHit, query: RwSignal<String>, preview: Action<DocPreviewParams, Reply<DocPreview>>) -> impl IntoView {
    let file_id = hit.file_id;
    let open = move |_| {
        preview.dispatch_local(DocPreviewParams { file_id, query: query.get_untracked() });
    };
    view! {
        <li class="documents-hit" data-file-id=file_id.0>
            <button class="documents-hit-title" data-action="preview" on:click=open>{hit.title}</button>
            <span class="documents-hit-path">{hit.path}</span>
            <p class="documents-passage">
                {passage_parts(&hit.passage).into_iter().map(|part| if part.matched {
                    view! { <mark>{part.text}</mark> }.into_any()
                } else {
                    view! { <span>{part.text}</span> }.into_any()
                }).collect_view()}
            </p>
        </li>
    }
}

/// A hit's text around its first match.
#[component]
fn Preview(preview: DocPreview) -> impl IntoView {
    view! {
        <aside class="documents-preview" data-file-id=preview.file_id.0>
            <h3>{preview.title}</h3>
            <p class="documents-preview-path">{preview.path}</p>
            <pre class="documents-preview-text">
                {if preview.cut_before { "…\n" } else { "" }}{preview.text}{if preview.cut_after { "\n…" } else { "" }}
            </pre>
        </aside>
    }
}

/// One folder: its counts, what was not read and why, and Remove.
#[component]
fn Folder(folder: DocFolderView, edit: Action<FolderEdit, Reply<()>>) -> impl IntoView {
    let id = folder.id;
    let summary = folder_summary(&folder);
    let skipped = folder.skipped.clone();
    view! {
        <li class="documents-folder" data-folder-id=id.0>
            <span class="documents-folder-path">{folder.path}</span>
            <span class="documents-folder-summary">{summary}</span>
            <button data-action="remove-folder" on:click=move |_| { edit.dispatch_local(FolderEdit::Remove(id)); }>"Remove"</button>
            {(!skipped.is_empty()).then(|| view! {
                <details class="documents-skipped">
                    <summary>"Not read"</summary>
                    <ul>{skipped.into_iter().map(|s| view! { <li><span class="skipped-path">{s.path}</span>" — "<span class="skipped-note">{s.note}</span></li> }).collect_view()}</ul>
                </details>
            })}
        </li>
    }
}
