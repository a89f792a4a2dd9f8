//! Pictures and text of pages.

use super::ffi::Form;
use super::{PdfEngine, open, page_count};
use crate::pdf::{Budget, PdfError};

/// The largest image `render_page` makes, in pixels (40 megapixels: a US Letter page at
/// about 9.7× scale, 700 dpi).
pub const MAX_RENDER_PIXELS: u64 = 40_000_000;

/// One rendered page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPage {
    /// An 8-bit RGBA PNG.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
}

/// Renders page `page` (1-based) at `scale` (1.0 = 72 dpi, one pixel per point) on white,
/// with form fields drawn as they are filled. The caller clamps the scale to what it needs;
/// images over [`MAX_RENDER_PIXELS`] are refused.
pub(in crate::pdf) fn render_page(
    engine: &PdfEngine,
    bytes: &[u8],
    page: u16,
    scale: f32,
    budget: &Budget,
) -> Result<RenderedPage, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
    let document = open(engine, bytes)?;
    let pages = page_count(&document);
    if page == 0 || page > pages {
        return Err(PdfError::PageOutOfRange { page, pages });
    }
    let index = i32::from(page - 1);
    let (width_pt, height_pt) =
        document.page_size(index).ok_or_else(|| PdfError::Damaged { detail: format!("page {page} has no size") })?;
    let (width, height) = pixels(width_pt, height_pt, scale)?;
    let loaded = document.page(index).ok_or_else(|| PdfError::Damaged { detail: format!("page {page} does not load") })?;
    let form = Form::new(&document);
    let bgra = match &form {
        Some(form) => form.view(&loaded).render_bgra(width, height),
        None => loaded.render_bgra(width, height),
    }
    .ok_or_else(|| PdfError::Damaged { detail: format!("page {page} could not be drawn") })?;
    let (width, height) = (width.unsigned_abs(), height.unsigned_abs());
    let png =
        encode_png(bgra, width, height).map_err(|err| PdfError::Damaged { detail: format!("page {page} could not be encoded: {err}") })?;
    Ok(RenderedPage { png, width, height })
}

/// The image size for a page of `width_pt`×`height_pt` points at `scale`.
fn pixels(width_pt: f32, height_pt: f32, scale: f32) -> Result<(i32, i32), PdfError> {
    let size = |points: f32| (f64::from(points) * f64::from(scale)).round().max(1.0);
    let (w, h) = (size(width_pt), size(height_pt));
    // Saturating float-to-int casts: NaN → 0, huge → u64::MAX; both refused below.
    let (w_px, h_px) = (w as u64, h as u64);
    if !scale.is_finite() || scale <= 0.0 || w_px.saturating_mul(h_px) > MAX_RENDER_PIXELS {
        return Err(PdfError::ImageTooLarge { scale, width: w_px, height: h_px });
    }
    // Both are ≤ 40 000 000 here, so they fit an i32.
    Ok((i32::try_from(w_px).unwrap_or(i32::MAX), i32::try_from(h_px).unwrap_or(i32::MAX)))
}

fn encode_png(mut pixels: Vec<u8>, width: u32, height: u32) -> Result<Vec<u8>, png::EncodingError> {
    // PDFium writes B, G, R, A; PNG wants R, G, B, A.
    for px in pixels.chunks_exact_mut(4) {
        px.swap(0, 2);
    }
    let mut out = Vec::with_capacity(pixels.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}

/// The text of each page, in PDFium's reading order, lines separated by `\n` (form field
/// values are not part of a page's text).
pub(in crate::pdf) fn extract_text(engine: &PdfEngine, bytes: &[u8], budget: &Budget) -> Result<Vec<String>, PdfError> {
    let _pdfium = engine.lock_within(budget)?;
    let document = open(engine, bytes)?;
    (0..document.page_count())
        .map(|i| {
            let page = document.page(i).ok_or_else(|| PdfError::Damaged { detail: format!("page {} does not load", i + 1) })?;
            Ok(page.text().replace("\r\n", "\n"))
        })
        .collect()
}
