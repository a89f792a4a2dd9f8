//! The one place that calls PDFium's C API (through pdfium-render's raw bindings, which are
//! `unsafe fn`s). Everything here is a small RAII wrapper whose safe methods uphold PDFium's
//! contracts; the rest of `core::pdf` is safe code.
//!
//! Contracts upheld throughout:
//! - Handles are created and closed here only, each exactly once (in `Drop`), and lifetimes
//!   tie a page to its document, an annotation to its page, a page view to its form, so no
//!   handle outlives what owns it (declare document, then form, then pages: they drop in
//!   reverse).
//! - Output buffers are passed with their true length in bytes; PDFium writes only when the
//!   buffer is large enough and returns the length it needs.
//! - Input strings are NUL-terminated UTF-16LE buffers that live across the call.
//! - Callers hold [`super::PdfEngine::lock`] for a whole operation: PDFium is not
//!   thread-safe across documents (global caches, the last-error slot), and pdfium-render's
//!   `thread_safe` feature only locks each single call.
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::os::raw::{c_int, c_ulong, c_void};

use pdfium_render::prelude::{
    FPDF_ANNOTATION, FPDF_BITMAP, FPDF_DOCUMENT, FPDF_FILEWRITE, FPDF_FORMFILLINFO, FPDF_FORMHANDLE, FPDF_PAGE, FPDF_TEXTPAGE, FS_SIZEF,
    PdfiumLibraryBindings,
};

// Constants from PDFium's public headers (pdfium-render keeps its bindgen module private).
pub(super) const FPDF_ERR_PASSWORD: c_ulong = 4;
pub(super) const FPDF_ERR_SECURITY: c_ulong = 5;
pub(super) const FORMTYPE_XFA_FULL: c_int = 2;
pub(super) const FORMTYPE_XFA_FOREGROUND: c_int = 3;
pub(super) const FPDF_ANNOT_WIDGET: c_int = 20;
pub(super) const FPDF_FORMFIELD_PUSHBUTTON: c_int = 1;
pub(super) const FPDF_FORMFIELD_CHECKBOX: c_int = 2;
pub(super) const FPDF_FORMFIELD_RADIOBUTTON: c_int = 3;
pub(super) const FPDF_FORMFIELD_COMBOBOX: c_int = 4;
pub(super) const FPDF_FORMFIELD_LISTBOX: c_int = 5;
pub(super) const FPDF_FORMFIELD_TEXTFIELD: c_int = 6;
pub(super) const FPDF_FORMFIELD_SIGNATURE: c_int = 7;
pub(super) const FPDF_FORMFLAG_READONLY: c_int = 1;
pub(super) const FPDF_FORMFLAG_CHOICE_MULTI_SELECT: c_int = 1 << 21;
const FPDF_NO_INCREMENTAL: pdfium_render::prelude::FPDF_DWORD = 2;
const FPDF_ANNOT: c_int = 0x01;
const FPDF_LCD_TEXT: c_int = 0x02;
const FPDFBITMAP_BGRA: c_int = 4;

/// PDFium's functions, bound once per process by pdfium-render.
pub(super) type Lib = &'static dyn PdfiumLibraryBindings;

/// Reads a UTF-16LE string through a PDFium getter that takes `(buffer, length in bytes)` and
/// returns the length it needs in bytes, NUL included. One call when the text fits 256 units.
fn read_utf16(mut get: impl FnMut(*mut u16, c_ulong) -> c_ulong) -> Option<String> {
    let mut small = [0u16; 256];
    let needed = get(small.as_mut_ptr(), byte_len(small.len()));
    let units = usize::try_from(needed).ok()? / 2;
    if units == 0 {
        return None;
    }
    if units <= small.len() {
        return Some(decode_utf16(&small[..units]));
    }
    let mut large = vec![0u16; units];
    let again = usize::try_from(get(large.as_mut_ptr(), byte_len(large.len()))).ok()? / 2;
    Some(decode_utf16(&large[..again.min(units)]))
}

fn byte_len(units: usize) -> c_ulong {
    c_ulong::try_from(units * 2).unwrap_or(c_ulong::MAX)
}

/// UTF-16 up to the first NUL, lossy.
pub(super) fn decode_utf16(units: &[u16]) -> String {
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end])
}

/// NUL-terminated UTF-16 for PDFium's wide-string inputs.
pub(super) fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

/// An open document over borrowed bytes (PDFium reads them lazily until it is closed).
pub(super) struct Document<'a> {
    lib: Lib,
    handle: FPDF_DOCUMENT,
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> Document<'a> {
    /// Opens `bytes`; on failure, PDFium's last error code (`FPDF_ERR_*`).
    pub(super) fn load(lib: Lib, bytes: &'a [u8]) -> Result<Self, c_ulong> {
        // SAFETY: PDFium keeps a pointer to `bytes` until FPDF_CloseDocument; `Document<'a>`
        // borrows them for 'a and closes the handle in Drop.
        let handle = unsafe { lib.FPDF_LoadMemDocument64(bytes, None) };
        if handle.is_null() {
            // SAFETY: no arguments; reads PDFium's last-error slot right after the failed call
            // (the caller holds the engine lock, so no other call intervenes).
            return Err(unsafe { lib.FPDF_GetLastError() });
        }
        Ok(Self { lib, handle, _bytes: PhantomData })
    }

    pub(super) fn page_count(&self) -> i32 {
        // SAFETY: `handle` is an open document.
        unsafe { self.lib.FPDF_GetPageCount(self.handle) }
    }

    /// `FORMTYPE_*`.
    pub(super) fn form_type(&self) -> c_int {
        // SAFETY: `handle` is an open document.
        unsafe { self.lib.FPDF_GetFormType(self.handle) }
    }

    /// -1 when the document is not encrypted.
    pub(super) fn security_revision(&self) -> c_int {
        // SAFETY: `handle` is an open document.
        unsafe { self.lib.FPDF_GetSecurityHandlerRevision(self.handle) }
    }

    /// Page size in points, without loading the page.
    pub(super) fn page_size(&self, index: i32) -> Option<(f32, f32)> {
        let mut size = FS_SIZEF { width: 0.0, height: 0.0 };
        // SAFETY: `handle` is an open document; `size` is a valid out-pointer for the call.
        let ok = unsafe { self.lib.FPDF_GetPageSizeByIndexF(self.handle, index, &mut size) };
        (ok != 0).then_some((size.width, size.height))
    }

    /// Number of document-level JavaScript actions (the /Names /JavaScript tree).
    pub(super) fn javascript_count(&self) -> i32 {
        // SAFETY: `handle` is an open document.
        unsafe { self.lib.FPDFDoc_GetJavaScriptActionCount(self.handle) }
    }

    pub(super) fn page(&self, index: i32) -> Option<Page<'_>> {
        // SAFETY: `handle` is an open document; a null result is checked.
        let handle = unsafe { self.lib.FPDF_LoadPage(self.handle, index) };
        (!handle.is_null()).then_some(Page { lib: self.lib, handle, _doc: PhantomData })
    }

    /// A full (non-incremental) rewrite of the document as PDFium holds it now.
    pub(super) fn save_copy(&self, size_hint: usize) -> Option<Vec<u8>> {
        #[repr(C)]
        struct Writer {
            // Must be first: PDFium hands back a pointer to this field, which is also a
            // pointer to the whole (repr(C)) struct.
            header: FPDF_FILEWRITE,
            out: Vec<u8>,
        }
        unsafe extern "C" fn write_block(this: *mut FPDF_FILEWRITE, data: *const c_void, size: c_ulong) -> c_int {
            let Ok(len) = usize::try_from(size) else { return 0 };
            if this.is_null() || (data.is_null() && len > 0) {
                return 0;
            }
            if len == 0 {
                return 1;
            }
            // SAFETY: `this` is the `header` of the `Writer` passed to FPDF_SaveAsCopy below
            // (first field of a repr(C) struct, so the cast is exact), alive and not otherwise
            // borrowed during the call; `data` points to `size` readable bytes per PDFium's
            // contract for WriteBlock.
            unsafe {
                let writer = &mut *this.cast::<Writer>();
                writer.out.extend_from_slice(std::slice::from_raw_parts(data.cast::<u8>(), len));
            }
            1
        }
        let mut writer =
            Writer { header: FPDF_FILEWRITE { version: 1, WriteBlock: Some(write_block) }, out: Vec::with_capacity(size_hint) };
        // SAFETY: `handle` is an open document; `writer` outlives the call and only
        // `write_block` touches it meanwhile.
        let ok = unsafe { self.lib.FPDF_SaveAsCopy(self.handle, &mut writer.header, FPDF_NO_INCREMENTAL) };
        (ok != 0).then_some(writer.out)
    }
}

impl Drop for Document<'_> {
    fn drop(&mut self) {
        // SAFETY: `handle` is open and closed only here; every page, form and annotation
        // borrowing this document has been dropped already (lifetimes).
        unsafe { self.lib.FPDF_CloseDocument(self.handle) }
    }
}

/// The form-fill environment of a document (PDFium's interactive form).
pub(super) struct Form<'d> {
    lib: Lib,
    handle: FPDF_FORMHANDLE,
    // PDFium keeps a pointer to this until FPDFDOC_ExitFormFillEnvironment; boxed so it
    // does not move.
    _info: Box<FPDF_FORMFILLINFO>,
    _doc: PhantomData<&'d Document<'d>>,
}

impl<'d> Form<'d> {
    pub(super) fn new(doc: &'d Document<'_>) -> Option<Self> {
        // Version 1, no callbacks, no JavaScript platform: PDFium checks each callback for
        // null before calling it, and with no JS platform no script runs.
        let mut info = Box::new(FPDF_FORMFILLINFO {
            version: 1,
            Release: None,
            FFI_Invalidate: None,
            FFI_OutputSelectedRect: None,
            FFI_SetCursor: None,
            FFI_SetTimer: None,
            FFI_KillTimer: None,
            FFI_GetLocalTime: None,
            FFI_OnChange: None,
            FFI_GetPage: None,
            FFI_GetCurrentPage: None,
            FFI_GetRotation: None,
            FFI_ExecuteNamedAction: None,
            FFI_SetTextFieldFocus: None,
            FFI_DoURIAction: None,
            FFI_DoGoToAction: None,
            m_pJsPlatform: std::ptr::null_mut(),
            xfa_disabled: 1,
            FFI_DisplayCaret: None,
            FFI_GetCurrentPageIndex: None,
            FFI_SetCurrentPage: None,
            FFI_GotoURL: None,
            FFI_GetPageViewRect: None,
            FFI_PageEvent: None,
            FFI_PopupMenu: None,
            FFI_OpenFile: None,
            FFI_EmailTo: None,
            FFI_UploadTo: None,
            FFI_GetPlatform: None,
            FFI_GetLanguage: None,
            FFI_DownloadFromURL: None,
            FFI_PostRequestURL: None,
            FFI_PutRequestURL: None,
            FFI_OnFocusChange: None,
            FFI_DoURIActionWithKeyboardModifier: None,
        });
        // SAFETY: `doc.handle` is open and outlives the form ('d); `info` is heap-allocated,
        // owned by the returned Form and freed only after FPDFDOC_ExitFormFillEnvironment.
        let handle = unsafe { doc.lib.FPDFDOC_InitFormFillEnvironment(doc.handle, &mut *info) };
        (!handle.is_null()).then_some(Self { lib: doc.lib, handle, _info: info, _doc: PhantomData })
    }

    /// Registers `page` with the form (PDFium's page view: widgets, appearance generation).
    pub(super) fn view<'f, 'p>(&'f self, page: &'p Page<'d>) -> PageView<'f, 'p, 'd> {
        // SAFETY: both handles are open; FORM_OnBeforeClosePage is called in PageView::drop,
        // before the page can be closed (the view borrows it).
        unsafe { self.lib.FORM_OnAfterLoadPage(page.handle, self.handle) };
        PageView { form: self, page }
    }

    /// `FPDF_FORMFIELD_*`, or -1 when the annotation is not a form field.
    pub(super) fn field_type(&self, annot: &Annot<'_>) -> c_int {
        // SAFETY: both handles are open.
        unsafe { self.lib.FPDFAnnot_GetFormFieldType(self.handle, annot.handle) }
    }

    pub(super) fn field_flags(&self, annot: &Annot<'_>) -> c_int {
        // SAFETY: both handles are open.
        unsafe { self.lib.FPDFAnnot_GetFormFieldFlags(self.handle, annot.handle) }
    }

    pub(super) fn field_name(&self, annot: &Annot<'_>) -> Option<String> {
        // SAFETY: both handles are open; `read_utf16` passes a buffer and its byte length.
        read_utf16(|buf, len| unsafe { self.lib.FPDFAnnot_GetFormFieldName(self.handle, annot.handle, buf, len) })
    }

    pub(super) fn field_value(&self, annot: &Annot<'_>) -> Option<String> {
        // SAFETY: as in `field_name`.
        read_utf16(|buf, len| unsafe { self.lib.FPDFAnnot_GetFormFieldValue(self.handle, annot.handle, buf, len) })
    }

    /// A checkbox or radio widget's "on" value. Needs the page's view.
    pub(super) fn export_value(&self, annot: &Annot<'_>) -> Option<String> {
        // SAFETY: as in `field_name`.
        read_utf16(|buf, len| unsafe { self.lib.FPDFAnnot_GetFormFieldExportValue(self.handle, annot.handle, buf, len) })
    }

    pub(super) fn option_count(&self, annot: &Annot<'_>) -> i32 {
        // SAFETY: both handles are open.
        unsafe { self.lib.FPDFAnnot_GetOptionCount(self.handle, annot.handle) }
    }

    pub(super) fn option_label(&self, annot: &Annot<'_>, index: i32) -> Option<String> {
        // SAFETY: as in `field_name`.
        read_utf16(|buf, len| unsafe { self.lib.FPDFAnnot_GetOptionLabel(self.handle, annot.handle, index, buf, len) })
    }

    pub(super) fn is_option_selected(&self, annot: &Annot<'_>, index: i32) -> bool {
        // SAFETY: both handles are open.
        unsafe { self.lib.FPDFAnnot_IsOptionSelected(self.handle, annot.handle, index) != 0 }
    }

    /// The JavaScript of a field's additional action for `event` (`FPDF_ANNOT_AACTION_*`).
    pub(super) fn additional_action_js(&self, annot: &Annot<'_>, event: c_int) -> Option<String> {
        // SAFETY: as in `field_name`.
        read_utf16(|buf, len| unsafe { self.lib.FPDFAnnot_GetFormAdditionalActionJavaScript(self.handle, annot.handle, event, buf, len) })
            .filter(|js| !js.is_empty())
    }

    pub(super) fn is_checked(&self, annot: &Annot<'_>) -> bool {
        // SAFETY: both handles are open.
        unsafe { self.lib.FPDFAnnot_IsChecked(self.handle, annot.handle) != 0 }
    }

    /// Commits whatever widget has focus (its value and appearance).
    pub(super) fn kill_focus(&self) -> bool {
        // SAFETY: `handle` is open.
        unsafe { self.lib.FORM_ForceToKillFocus(self.handle) != 0 }
    }
}

impl Drop for Form<'_> {
    fn drop(&mut self) {
        // SAFETY: `handle` is open and exited only here; all page views were dropped first
        // (they borrow the form); `_info` is freed after this returns.
        unsafe { self.lib.FPDFDOC_ExitFormFillEnvironment(self.handle) }
    }
}

/// A loaded page.
pub(super) struct Page<'d> {
    lib: Lib,
    handle: FPDF_PAGE,
    _doc: PhantomData<&'d ()>,
}

impl Page<'_> {
    pub(super) fn annot_count(&self) -> i32 {
        // SAFETY: `handle` is an open page.
        unsafe { self.lib.FPDFPage_GetAnnotCount(self.handle) }
    }

    pub(super) fn annot(&self, index: i32) -> Option<Annot<'_>> {
        // SAFETY: `handle` is an open page; a null result is checked.
        let handle = unsafe { self.lib.FPDFPage_GetAnnot(self.handle, index) };
        (!handle.is_null()).then_some(Annot { lib: self.lib, handle, _page: PhantomData })
    }

    /// Renders the page (without interactive form fields) into a BGRA buffer.
    pub(super) fn render_bgra(&self, width: i32, height: i32) -> Option<Vec<u8>> {
        self.render(None, width, height)
    }

    fn render(&self, form: Option<&Form<'_>>, width: i32, height: i32) -> Option<Vec<u8>> {
        let lib = self.lib;
        // SAFETY: PDFium allocates the bitmap (null buffer pointer); destroyed below.
        let bitmap: FPDF_BITMAP = unsafe { lib.FPDFBitmap_CreateEx(width, height, FPDFBITMAP_BGRA, std::ptr::null_mut(), 0) };
        if bitmap.is_null() {
            return None;
        }
        // SAFETY: the bitmap, page and form handles are open (a form passed here has this
        // page registered, see PageView); the rectangle is the bitmap's own; the buffer is
        // read within `stride × height` bytes, the size PDFium allocated.
        let pixels = unsafe {
            lib.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xFFFF_FFFF);
            let flags = FPDF_ANNOT | FPDF_LCD_TEXT;
            lib.FPDF_RenderPageBitmap(bitmap, self.handle, 0, 0, width, height, 0, flags);
            if let Some(form) = form {
                lib.FPDF_FFLDraw(form.handle, bitmap, self.handle, 0, 0, width, height, 0, flags);
            }
            let stride = usize::try_from(lib.FPDFBitmap_GetStride(bitmap)).unwrap_or(0);
            let buffer = lib.FPDFBitmap_GetBuffer(bitmap).cast::<u8>();
            let rows = usize::try_from(height).unwrap_or(0);
            let row_bytes = usize::try_from(width).unwrap_or(0) * 4;
            if buffer.is_null() || stride < row_bytes {
                None
            } else {
                let all = std::slice::from_raw_parts(buffer, stride * rows);
                let mut out = Vec::with_capacity(row_bytes * rows);
                for row in all.chunks_exact(stride) {
                    out.extend_from_slice(&row[..row_bytes]);
                }
                Some(out)
            }
        };
        // SAFETY: `bitmap` is open and destroyed only here; `pixels` owns a copy.
        unsafe { lib.FPDFBitmap_Destroy(bitmap) };
        pixels
    }

    /// The page's text in reading order, as PDFium extracts it.
    pub(super) fn text(&self) -> String {
        // SAFETY: `handle` is an open page; the text page is closed below before returning.
        let text_page: FPDF_TEXTPAGE = unsafe { self.lib.FPDFText_LoadPage(self.handle) };
        if text_page.is_null() {
            return String::new();
        }
        // SAFETY: `text_page` is open.
        let count = unsafe { self.lib.FPDFText_CountChars(text_page) };
        let mut out = String::new();
        if let Ok(chars) = usize::try_from(count)
            && chars > 0
        {
            let mut buf = vec![0u16; chars + 1];
            // SAFETY: `buf` has room for `count` characters plus the NUL PDFium appends.
            let written = unsafe { self.lib.FPDFText_GetText(text_page, 0, count, buf.as_mut_ptr()) };
            let written = usize::try_from(written).unwrap_or(0).min(buf.len());
            out = decode_utf16(&buf[..written]);
        }
        // SAFETY: `text_page` is open and closed only here.
        unsafe { self.lib.FPDFText_ClosePage(text_page) };
        out
    }
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        // SAFETY: `handle` is open and closed only here; its annotations and view were
        // dropped first (they borrow it).
        unsafe { self.lib.FPDF_ClosePage(self.handle) }
    }
}

/// A page registered with the form: the handle form actions need.
pub(super) struct PageView<'f, 'p, 'd> {
    form: &'f Form<'d>,
    page: &'p Page<'d>,
}

impl PageView<'_, '_, '_> {
    pub(super) fn page(&self) -> &Page<'_> {
        self.page
    }

    pub(super) fn focus(&self, annot: &Annot<'_>) -> bool {
        // SAFETY: form and annotation handles are open; the annotation's page has a view.
        unsafe { self.form.lib.FORM_SetFocusedAnnot(self.form.handle, annot.handle) != 0 }
    }

    pub(super) fn select_all_text(&self) -> bool {
        // SAFETY: form and page handles are open.
        unsafe { self.form.lib.FORM_SelectAllText(self.form.handle, self.page.handle) != 0 }
    }

    /// Replaces the focused field's selected text with `text` (NUL-terminated UTF-16).
    pub(super) fn replace_selection(&self, text: &[u16]) {
        if text.last() != Some(&0) {
            return; // not NUL-terminated: refuse rather than let PDFium read past the end
        }
        // SAFETY: form and page handles are open; `text` is NUL-terminated and outlives the call.
        unsafe { self.form.lib.FORM_ReplaceSelection(self.form.handle, self.page.handle, text.as_ptr()) }
    }

    /// Types a character into the focused widget (space toggles a checkbox, picks a radio).
    pub(super) fn char(&self, ch: u16) -> bool {
        // SAFETY: form and page handles are open.
        unsafe { self.form.lib.FORM_OnChar(self.form.handle, self.page.handle, c_int::from(ch), 0) != 0 }
    }

    /// Selects or deselects option `index` of the focused choice field.
    pub(super) fn set_index_selected(&self, index: i32, selected: bool) -> bool {
        // SAFETY: form and page handles are open.
        unsafe { self.form.lib.FORM_SetIndexSelected(self.form.handle, self.page.handle, index, c_int::from(selected)) != 0 }
    }

    /// Renders the page with its form fields into a BGRA buffer of `width`×`height`.
    pub(super) fn render_bgra(&self, width: i32, height: i32) -> Option<Vec<u8>> {
        self.page.render(Some(self.form), width, height)
    }
}

impl Drop for PageView<'_, '_, '_> {
    fn drop(&mut self) {
        // SAFETY: pairs the FORM_OnAfterLoadPage of `Form::view`; both handles are still open.
        unsafe { self.form.lib.FORM_OnBeforeClosePage(self.page.handle, self.form.handle) }
    }
}

/// An annotation of a page.
pub(super) struct Annot<'p> {
    lib: Lib,
    handle: FPDF_ANNOTATION,
    _page: PhantomData<&'p ()>,
}

impl Annot<'_> {
    pub(super) fn subtype(&self) -> c_int {
        // SAFETY: `handle` is open.
        unsafe { self.lib.FPDFAnnot_GetSubtype(self.handle) }
    }
}

impl Drop for Annot<'_> {
    fn drop(&mut self) {
        // SAFETY: `handle` is open and closed only here (closing releases the wrapper, not
        // the annotation).
        unsafe { self.lib.FPDFPage_CloseAnnot(self.handle) }
    }
}
