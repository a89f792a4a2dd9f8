//! Pages rendered by the backend (`file_render`), one at a time, with page and zoom controls.

use hearth_protocol::files::{FileRenderParams, FileRenderResponse};
use hearth_protocol::ids::FileId;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::state::files::{
    DEFAULT_ZOOM, can_zoom_in, can_zoom_out, is_image_data_url, next_page, page_label, prev_page, zoom_in, zoom_label, zoom_out,
};

/// The viewer for `file_id`, which has `pages` pages.
#[component]
pub fn PdfViewer(file_id: FileId, pages: u16) -> impl IntoView {
    let page = RwSignal::new(1_u16);
    let scale = RwSignal::new(DEFAULT_ZOOM);
    // The page shown and its image, kept together so the label never runs ahead of the image.
    let rendered = RwSignal::new(None::<(u16, FileRenderResponse)>);
    let error = RwSignal::new(None::<String>);
    let loading = RwSignal::new(false);
    // Only the newest render may land; flipping pages fast never shows an older page last.
    let latest_render = StoredValue::new(0_u64);

    Effect::new(move |_| {
        let shown_page = page.get();
        let params = FileRenderParams { file_id: file_id.clone(), page: shown_page, scale: scale.get() };
        if pages == 0 {
            return;
        }
        let render = latest_render.get_value() + 1;
        latest_render.set_value(render);
        loading.set(true);
        spawn_local(async move {
            let reply = ipc::file_render(&params).await;
            if latest_render.try_get_value() != Some(render) {
                return;
            }
            loading.set(false);
            match reply {
                Ok(image) if is_image_data_url(&image.data_url) => {
                    rendered.set(Some((shown_page, image)));
                    error.set(None);
                }
                Ok(_) => error.set(Some("The page came back in a form the viewer does not show. Reload the app.".to_owned())),
                Err(err) => error.set(Some(err.message)),
            }
        });
    });

    view! {
        <div class="pdf-viewer" class:loading=move || loading.get()>
            <div class="pdf-toolbar">
                <button data-action="prev-page" disabled={move || page.get() <= 1} on:click=move |_| page.update(|p| *p = prev_page(*p))>"‹ Previous"</button>
                <span class="pdf-page-label">{move || page_label(page.get(), pages)}</span>
                <button data-action="next-page" disabled={move || page.get() >= pages} on:click=move |_| page.update(|p| *p = next_page(*p, pages))>"Next ›"</button>
                <span class="pdf-toolbar-gap"></span>
                <button data-action="zoom-out" disabled=move || !can_zoom_out(scale.get()) on:click=move |_| scale.update(|s| *s = zoom_out(*s))>"−"</button>
                <span class="pdf-zoom-label">{move || zoom_label(scale.get())}</span>
                <button data-action="zoom-in" disabled=move || !can_zoom_in(scale.get()) on:click=move |_| scale.update(|s| *s = zoom_in(*s))>"+"</button>
            </div>
            {move || error.get().map(|message| view! { <p class="error pdf-error">{message}</p> })}
            <div class="pdf-canvas">
                {(pages == 0).then(|| view! { <p class="empty">"This file has no pages."</p> })}
                {move || rendered.get().map(|(shown_page, image)| view! {
                    <img
                        class="pdf-page"
                        data-page=shown_page
                        src=image.data_url
                        width=image.width
                        height=image.height
                        alt=page_label(shown_page, pages)
                    />
                })}
            </div>
        </div>
    }
}
