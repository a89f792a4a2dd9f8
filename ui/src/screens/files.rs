//! Files: the owner's PDFs, a viewer whose pages the backend renders, and a form editor that
//! fills a new copy (the original never changes).
//!
//! The selected file lives in the navigation state, so a card's Open or an approval's
//! attachment can select it from anywhere.

mod file_detail;
mod file_list;
mod form_editor;
mod pdf_viewer;

use hearth_protocol::files::{FileListResponse, FileView};
use hearth_protocol::ids::{FileId, OperationId};
use leptos::prelude::*;

use crate::ipc;
use crate::navigation::Navigation;
use crate::request::{last_loaded, load_failure};
use crate::state::files::upsert_file;
use file_detail::FileDetailPane;
use file_list::FileList;

/// The Files screen: the list beside the selected file.
#[component]
pub fn FilesScreen() -> impl IntoView {
    let Some(nav) = Navigation::from_context() else {
        return view! { <p class="error">"Files are not available in this window. Reload the app."</p> }.into_any();
    };
    let list = LocalResource::new(ipc::file_list);
    let loaded = last_loaded(list);
    // `None` until the first list arrives.
    let files = Signal::derive(move || loaded.with(|l| l.as_ref().map(|l| l.files.clone())));
    // A file made or removed here changes the list shown at once (the one last loaded, or a
    // new one); the list is then fetched again.
    let change_list = move |change: &dyn Fn(&mut Vec<FileView>)| {
        let mut files = loaded.get_untracked().map(|l| l.files).unwrap_or_default();
        change(&mut files);
        list.set(Some(Ok(FileListResponse { files })));
    };
    // The copy shows in the list at once and is selected; the list is then fetched again.
    let on_filled = Callback::new(move |copy: FileView| {
        let copy_id = copy.id.clone();
        change_list(&|files| upsert_file(files, copy.clone()));
        nav.selected_file.set(Some(copy_id));
        list.refetch();
    });
    // Re-mount the detail only when another file is selected.
    let selected = Memo::new(move |_| nav.selected_file.get());

    // Import from disk: each chosen PDF goes through the same import as an attachment's, one
    // at a time (each file is in memory only while it is sent). The action's value is the last
    // file's outcome.
    let import_all = Action::new_local(move |picked: &Vec<web_sys::File>| {
        let picked = picked.clone();
        async move {
            let mut outcome = Ok(());
            for file in picked {
                outcome = match import_file(&file).await {
                    Ok(view) => {
                        let id = view.id.clone();
                        change_list(&|files| upsert_file(files, view.clone()));
                        nav.selected_file.set(Some(id));
                        Ok(())
                    }
                    Err(message) => Err(message),
                };
            }
            outcome
        }
    });
    let import = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()) else { return };
        let Some(chosen) = input.files() else { return };
        let picked: Vec<web_sys::File> = (0..chosen.length()).filter_map(|i| chosen.get(i)).collect();
        // Cleared, so choosing the same file again imports it again (as a new file).
        input.set_value("");
        import_all.dispatch_local(picked);
    };
    let on_deleted = Callback::new(move |file_id: FileId| {
        change_list(&|files| files.retain(|f| f.id != file_id));
        nav.selected_file.set(None);
        list.refetch();
    });
    // An import's refusal, else why the list could not be loaded.
    let error = move || import_all.value().with(|outcome| outcome.clone().and_then(Result::err)).or_else(|| load_failure(list, "Files"));

    view! {
        <section class="files page">
            <header class="files-header page-header">
                <h1>"Files"</h1>
                <span class="files-actions">
                    <label class="button files-import">
                        "Import PDF…"
                        <input type="file" accept="application/pdf,.pdf" multiple class="files-import-input" on:change=import />
                    </label>
                    <button class="files-refresh" data-action="refresh" on:click=move |_| list.refetch()>"Refresh"</button>
                </span>
            </header>
            {move || error().map(|message| view! { <p class="error files-error">{message}</p> })}
            <div class="files-body">
                <FileList files nav />
                {move || match selected.get() {
                    Some(file_id) => view! { <FileDetailPane file_id on_filled on_deleted /> }.into_any(),
                    None => view! { <p class="file-detail-empty">"Select a file to view its pages and fill its form."</p> }.into_any(),
                }}
            </div>
        </section>
    }
    .into_any()
}

/// Reads `file` and imports it; the error in words.
async fn import_file(file: &web_sys::File) -> Result<FileView, String> {
    use base64::Engine;
    let name = file.name();
    // Refused before it is read: a large file never fills the window's memory.
    let limit = hearth_protocol::files::MAX_IMPORT_BYTES;
    if file.size() > limit as f64 {
        return Err(format!("{name} is larger than {} MiB; Hearth imports PDFs up to that size.", limit / (1024 * 1024)));
    }
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await.map_err(|_| format!("{name} could not be read."))?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    // One id per chosen file: a repeated request (a retry of this one) keeps one file.
    // Minted here from digits, so a valid id by construction.
    let operation_id =
        OperationId::trusted(format!("disk-{}-{:08x}", js_sys::Date::now() as u64, (js_sys::Math::random() * f64::from(u32::MAX)) as u32));
    let params = hearth_protocol::files::FileImportParams {
        operation_id,
        name,
        bytes_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    };
    ipc::file_import(&params).await.map_err(|err| err.message)
}
