//! Pages rendered by the backend (`file_render`), one at a time, with page and zoom controls.

use hearth_protocol::files::{FileRenderParams, FileRenderResponse};
use hearth_protocol::ids::FileId;
use leptos::prelude::*;

use crate::ipc;
use crate::state::files::{
    DEFAULT_ZOOM, can_zoom_in, can_zoom_out, is_image_data_url, next_page, page_label, prev_page, zoom_in, zoom_label, zoom_out,
};

/// The viewer for `file_id`, which has `pages` pages.
#[component]
pub fn PdfViewer(file_id: FileId, pages: u16) -> impl IntoView {
    let page = RwSignal::new(1_u16);
    let scale = RwSignal::new(DEFAULT_ZOOM);
    // The newest render, with the page and zoom it was asked for (`None` for a file without
    // pages). The resource renders again when either moves, and lands its replies in order, so
    // flipping pages fast never shows an older page last.
    let render = LocalResource::new(move || {
        let (shown_page, shown_scale) = (page.get(), scale.get());
        let params = FileRenderParams { file_id: file_id.clone(), page: shown_page, scale: shown_scale };
        async move {
            if pages == 0 {
                return None;
            }
            Some((shown_page, shown_scale, ipc::file_render(&params).await))
        }
    });
    // Waiting while the newest render is not for the page and zoom asked for.
    let loading = move || {
        pages != 0 && render.with(|r| r.as_ref().and_then(|r| r.as_ref().map(|(p, s, _)| (*p, *s)))) != Some((page.get(), scale.get()))
    };
    // The page shown and its image, kept together so the label never runs ahead of the image;
    // a failed render keeps the last page shown.
    let rendered = Memo::new(move |shown: Option<&Option<(u16, FileRenderResponse)>>| {
        render.with(|r| match r.as_ref().and_then(Option::as_ref) {
            Some((p, _, Ok(image))) if is_image_data_url(&image.data_url) => Some((*p, image.clone())),
            _ => shown.cloned().flatten(),
        })
    });
    let error = move || {
        render.with(|r| match r.as_ref().and_then(Option::as_ref) {
            Some((_, _, Ok(image))) if !is_image_data_url(&image.data_url) => {
                Some("The page came back in a form the viewer does not show. Reload the app.".to_owned())
            }
            Some((_, _, Err(err))) => Some(err.message.clone()),
            _ => None,
        })
    };

    view! {
        <div class="pdf-viewer" class:loading=loading>
            <div class="pdf-toolbar">
                <button data-action="prev-page" disabled={move || page.get() <= 1} on:click=move |_| page.update(|p| *p = prev_page(*p))>"‹ Previous"</button>
                <span class="pdf-page-label">{move || page_label(page.get(), pages)}</span>
                <button data-action="next-page" disabled={move || page.get() >= pages} on:click=move |_| page.update(|p| *p = next_page(*p, pages))>"Next ›"</button>
                <span class="pdf-toolbar-gap"></span>
                <button data-action="zoom-out" disabled=move || !can_zoom_out(scale.get()) on:click=move |_| scale.update(|s| *s = zoom_out(*s))>"−"</button>
                <span class="pdf-zoom-label">{move || zoom_label(scale.get())}</span>
                <button data-action="zoom-in" disabled=move || !can_zoom_in(scale.get()) on:click=move |_| scale.update(|s| *s = zoom_in(*s))>"+"</button>
            </div>
            {move || error().map(|message| view! { <p class="error pdf-error">{message}</p> })}
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
