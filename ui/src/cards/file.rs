//! The file card for import_pdf, fill_pdf and inspect_pdf: the file and Open.

use hearth_protocol::files::FileView;
use leptos::prelude::*;

use crate::navigation::Navigation;
use crate::state::files::{fields_label, pages_label, size_label, source_label};

/// Name, pages, fields and where the file came from; Open shows it in Files.
#[component]
pub fn FileCard(file: FileView, tool: &'static str) -> impl IntoView {
    let meta = format!("{} · {} · {}", pages_label(file.pages), fields_label(file.fields), size_label(file.size));
    let source = source_label(&file);
    let file_id = file.id.clone();
    view! {
        <article class="card file-card" data-tool=tool data-file-id=file.id.into_string()>
            <header>
                <span class="card-kind">"PDF"</span>
                <span class="file-card-source">{source}</span>
            </header>
            <p class="file-card-name">{file.name}</p>
            <footer class="card-footer">
                <p class="file-card-meta">{meta}</p>
                {Navigation::from_context().map(|nav| view! {
                    <button class="open-file" data-action="open-file" on:click=move |_| nav.open_file(file_id.clone())>"Open"</button>
                })}
            </footer>
        </article>
    }
}
