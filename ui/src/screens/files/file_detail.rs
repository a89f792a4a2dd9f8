//! The selected file: what it is, its pages and its form.

use hearth_protocol::files::FileView;
use hearth_protocol::ids::FileId;
use leptos::prelude::*;

use super::form_editor::FormEditor;
use super::pdf_viewer::PdfViewer;
use crate::clock::local_time;
use crate::ipc;
use crate::request::action_failure;
use crate::state::files::{fields_label, pages_label, size_label, source_label};

/// The detail pane for `file_id`; `on_filled` gets the copy the form editor made, and
/// `on_deleted` the id of a file the owner deleted.
#[component]
pub fn FileDetailPane(file_id: FileId, on_filled: Callback<FileView>, on_deleted: Callback<FileId>) -> impl IntoView {
    // Fetched once: the pane mounts again for another file.
    let detail = {
        let file_id = file_id.clone();
        LocalResource::new(move || {
            let file_id = file_id.clone();
            async move { ipc::file_get(&file_id).await }
        })
    };
    view! {
        <section class="file-detail" data-file-id=file_id.into_string()>
            {move || match detail.get() {
                None => view! { <p class="empty">"Loading the file…"</p> }.into_any(),
                Some(Err(err)) => view! { <p class="error file-detail-error">{err.message}</p> }.into_any(),
                Some(Ok(detail)) => view! {
                    <FileSummary file=detail.file.clone() on_deleted />
                    <div class="file-work">
                        <PdfViewer file_id=detail.file.id.clone() pages=detail.info.pages />
                        <FormEditor file_id=detail.file.id fields=detail.info.fields on_filled />
                    </div>
                }.into_any(),
            }}
        </section>
    }
}

#[component]
fn FileSummary(file: FileView, on_deleted: Callback<FileId>) -> impl IntoView {
    let remove = Action::new_local(move |id: &FileId| {
        let id = id.clone();
        async move {
            ipc::file_delete(&id).await?;
            on_deleted.run(id);
            Ok(())
        }
    });
    let problem = move || action_failure(remove);
    let id = file.id.clone();
    let deleting = remove.pending();
    let delete = move |_| {
        // One delete per press: a second click before the answer sends nothing.
        if !deleting.get_untracked() {
            remove.dispatch_local(id.clone());
        }
    };
    view! {
        <header class="file-detail-header">
            <h2 class="file-detail-name">{file.name.clone()}</h2>
            <button class="file-delete" data-action="delete-file" disabled=move || deleting.get() on:click=delete>"Delete"</button>
            {move || problem().map(|message| view! { <p class="error file-delete-error">{message}</p> })}
            <p class="file-meta">
                <span>{pages_label(file.pages)}</span>
                <span>{fields_label(file.fields)}</span>
                <span>{size_label(file.size)}</span>
                <span class="file-source">{source_label(&file)}</span>
                <span>"Added " {local_time(file.created_at)}</span>
            </p>
        </header>
    }
}
