//! The form editor: every field by kind, pre-filled with the file's values, and "Fill a
//! copy", which sends only the fields the owner changed (see `FormDraft`).

use hearth_protocol::files::{FileFillParams, FileView};
use hearth_protocol::ids::FileId;
use hearth_protocol::pdf::PdfField;
use leptos::prelude::*;

use crate::ipc;
use crate::request::settled_failure;
use crate::state::files::{FieldEditor, FormDraft, editor_for, field_kind_label, field_kind_slug};

/// The editor for `file_id`'s `fields`; `on_filled` gets the new copy.
#[component]
pub fn FormEditor(file_id: FileId, fields: Vec<PdfField>, on_filled: Callback<FileView>) -> impl IntoView {
    let draft = RwSignal::new(FormDraft::from_fields(&fields));
    let changed = Memo::new(move |_| draft.with(FormDraft::has_changes));
    let fill_copy = Action::new_local(move |params: &FileFillParams| {
        let params = params.clone();
        async move {
            let copy = ipc::file_fill(&params).await?;
            on_filled.try_run(copy);
            Ok(())
        }
    });
    let busy = fill_copy.pending();
    let error = move || settled_failure(fill_copy);

    let fill = move |_| {
        if busy.get_untracked() {
            return;
        }
        fill_copy.dispatch_local(FileFillParams { file_id: file_id.clone(), values: draft.with_untracked(FormDraft::changed_values) });
    };
    let has_fields = !fields.is_empty();

    view! {
        <form class="pdf-form" on:submit=|ev| ev.prevent_default()>
            <h3>"Form"</h3>
            {(!has_fields).then(|| view! { <p class="empty">"This PDF has no form fields."</p> })}
            {fields.into_iter().map(|field| view! { <FieldRow field draft /> }).collect_view()}
            {has_fields.then(|| view! {
                <div class="pdf-form-actions">
                    <button
                        type="button"
                        data-action="fill-copy"
                        disabled=move || busy.get() || !changed.get()
                        on:click=fill
                    >{move || if busy.get() { "Filling…" } else { "Fill a copy" }}</button>
                    <span class="pdf-form-note">"The original stays as it is."</span>
                </div>
            })}
            {move || error().map(|message| view! { <p class="error pdf-form-error">{message}</p> })}
        </form>
    }
}

/// One field: its name, its kind and page, and the input for its kind.
#[component]
fn FieldRow(field: PdfField, draft: RwSignal<FormDraft>) -> impl IntoView {
    let editor = editor_for(&field);
    let kind = field_kind_label(field.kind);
    let name = field.name.clone();
    let input = match editor {
        FieldEditor::Text => {
            let (read, write) = (name.clone(), name.clone());
            view! {
                <input
                    type="text"
                    data-field=name
                    prop:value=move || draft.with(|d| d.text(&read))
                    on:input=move |ev| draft.update(|d| d.set_text(&write, event_target_value(&ev)))
                />
            }
            .into_any()
        }
        FieldEditor::Checkbox => {
            let (read, write) = (name.clone(), name.clone());
            view! {
                <input
                    type="checkbox"
                    data-field=name
                    prop:checked=move || draft.with(|d| d.checked(&read))
                    on:change=move |ev| draft.update(|d| d.set_checked(&write, event_target_checked(&ev)))
                />
            }
            .into_any()
        }
        FieldEditor::Choice(options) => {
            let (write, blank_read, options_read) = (name.clone(), name.clone(), name.clone());
            let blank = move || draft.with(|d| d.text(&blank_read).is_empty());
            view! {
                <select data-field=name on:change=move |ev| draft.update(|d| d.set_text(&write, event_target_value(&ev)))>
                    <option value="" selected=blank>"—"</option>
                    {options.into_iter().map(|option| {
                        let read = options_read.clone();
                        let (value, label) = (option.clone(), option.clone());
                        view! {
                            <option value=option selected=move || draft.with(|d| d.text(&read) == value)>{label}</option>
                        }
                    }).collect_view()}
                </select>
            }
            .into_any()
        }
        FieldEditor::ReadOnly => view! {
            <span class="pdf-field-readonly" data-field=name>
                {field.value.clone().unwrap_or_else(|| "not fillable".to_owned())}
            </span>
        }
        .into_any(),
    };
    view! {
        <label class="pdf-field" data-kind=field_kind_slug(field.kind)>
            <span class="pdf-field-name">{field.name}</span>
            <span class="pdf-field-kind">{kind} " · page " {field.page}</span>
            {input}
        </label>
    }
}
