//! Files: the owner's PDFs, a viewer whose pages the backend renders, and a form editor that
//! fills a new copy (the original never changes).
//!
//! The selected file lives in the navigation state, so a card's Open or an approval's
//! attachment can select it from anywhere.

mod file_detail;
mod file_list;
mod form_editor;
mod pdf_viewer;

use hearth_protocol::files::FileView;
use leptos::prelude::*;

use crate::ipc;
use crate::latest_only::latest_only;
use crate::navigation::Navigation;
use crate::state::files::upsert_file;
use file_detail::FileDetailPane;
use file_list::FileList;

/// The Files screen: the list beside the selected file.
#[component]
pub fn FilesScreen() -> impl IntoView {
    let Some(nav) = Navigation::from_context() else {
        return view! { <p class="error">"Files are not available in this window. Reload the app."</p> }.into_any();
    };
    // `None` until the first list arrives.
    let files = RwSignal::new(None::<Vec<FileView>>);
    let error = RwSignal::new(None::<String>);
    let reload = latest_only(ipc::file_list, move |reply| match reply {
        Ok(list) => {
            files.set(Some(list.files));
            error.set(None);
        }
        Err(err) => error.set(Some(format!("Files could not be loaded: {}", err.message))),
    });
    reload.run(());
    // The copy shows in the list at once and is selected; the list is then fetched again.
    let on_filled = Callback::new(move |copy: FileView| {
        let copy_id = copy.id.clone();
        files.update(|list| upsert_file(list.get_or_insert_with(Vec::new), copy));
        nav.selected_file.set(Some(copy_id));
        reload.run(());
    });
    // Re-mount the detail only when another file is selected.
    let selected = Memo::new(move |_| nav.selected_file.get());

    view! {
        <section class="files page">
            <header class="files-header page-header">
                <h1>"Files"</h1>
                <button class="files-refresh" data-action="refresh" on:click=move |_| reload.run(())>"Refresh"</button>
            </header>
            {move || error.get().map(|message| view! { <p class="error files-error">{message}</p> })}
            <div class="files-body">
                <FileList files nav />
                {move || match selected.get() {
                    Some(file_id) => view! { <FileDetailPane file_id on_filled /> }.into_any(),
                    None => view! { <p class="file-detail-empty">"Select a file to view its pages and fill its form."</p> }.into_any(),
                }}
            </div>
        </section>
    }
    .into_any()
}
