//! The file list, newest first.

use hearth_protocol::files::FileView;
use leptos::prelude::*;

use crate::navigation::Navigation;
use crate::state::files::{pages_label, size_label, source_label, source_slug};

/// Every file; clicking one selects it.
#[component]
pub fn FileList(files: Signal<Option<Vec<FileView>>>, nav: Navigation) -> impl IntoView {
    let loaded = Memo::new(move |_| files.with(Option::is_some));
    let empty = Memo::new(move |_| files.with(|list| list.as_ref().is_some_and(Vec::is_empty)));
    view! {
        <div class="file-list">
            <Show when=move || !loaded.get()>
                <p class="empty">"Loading files…"</p>
            </Show>
            <Show when=move || empty.get()>
                <p class="empty">"No files yet. PDFs Hearth imports from mail, and the copies it fills, show up here."</p>
            </Show>
            <ul>
                <For
                    each=move || files.get().unwrap_or_default()
                    // A file never changes once made (filling makes a new one), so its id is its key.
                    key=|file: &FileView| file.id.clone()
                    let(file)
                >
                    <FileRow file nav />
                </For>
            </ul>
        </div>
    }
}

#[component]
fn FileRow(file: FileView, nav: Navigation) -> impl IntoView {
    let id = file.id.clone();
    let selected = {
        let id = id.clone();
        Memo::new(move |_| nav.selected_file.with(|selected| selected.as_deref() == Some(id.as_str())))
    };
    view! {
        <li>
            <button
                class="file-row"
                class:selected=move || selected.get()
                data-file-id=file.id.to_string()
                data-source=source_slug(file.source)
                on:click=move |_| nav.selected_file.set(Some(id.clone()))
            >
                <span class="file-row-name">{file.name.clone()}</span>
                <span class="file-row-meta">
                    <span class="file-size">{size_label(file.size)}</span>
                    <span class="file-pages">{pages_label(file.pages)}</span>
                </span>
                <span class="file-row-source">{source_label(&file)}</span>
            </button>
        </li>
    }
}
