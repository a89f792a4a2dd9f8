//! Binding libpdfium once per process.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use pdfium_render::prelude::{Pdfium, PdfiumLibraryBindingsAccessor};

use crate::pdf::{Budget, PdfError};
use super::ffi::Lib;

/// PDFium is not thread-safe: one document operation at a time in this process. (pdfium-render's
/// `thread_safe` feature locks each single call; this locks a whole inspect, fill or render.)
static PDFIUM: Mutex<()> = Mutex::new(());

/// Environment variable naming libpdfium.so.
pub const PDFIUM_LIBRARY_ENV: &str = "HEARTH_PDFIUM_LIB";

/// `HEARTH_PDFIUM_LIB`, else where `scripts/setup.sh` installs it (the pypdfium2 wheel's copy).
pub fn default_library_path() -> PathBuf {
    match std::env::var_os(PDFIUM_LIBRARY_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from("/var/tmp/hearth-pdfium/pypdfium2_raw/libpdfium.so"),
    }
}

/// A bound PDFium. Cheap to clone; bind it once per process.
#[derive(Clone)]
pub struct PdfEngine {
    pub(super) pdfium: Arc<Pdfium>,
}

impl std::fmt::Debug for PdfEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PdfEngine").finish_non_exhaustive()
    }
}

impl PdfEngine {
    /// Loads libpdfium from `library`. PDFium binds once per process: a later call naming an
    /// existing file returns the engine already bound.
    pub fn load(library: &Path) -> Result<Self, PdfError> {
        static BOUND: OnceLock<Arc<Pdfium>> = OnceLock::new();
        let _pdfium = PDFIUM.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !library.is_file() {
            return Err(PdfError::LibraryMissing { path: library.to_owned(), detail: "no such file".into() });
        }
        if let Some(pdfium) = BOUND.get() {
            return Ok(Self { pdfium: Arc::clone(pdfium) });
        }
        let bindings = Pdfium::bind_to_library(library)
            .map_err(|err| PdfError::LibraryMissing { path: library.to_owned(), detail: err.to_string() })?;
        let pdfium = Arc::clone(BOUND.get_or_init(|| Arc::new(Pdfium::new(bindings))));
        Ok(Self { pdfium })
    }

    /// PDFium's functions, for `raw`.
    pub(super) fn lib(&self) -> Lib {
        self.pdfium.bindings()
    }

    /// Holds PDFium for one operation. A panic elsewhere while holding it leaves nothing to
    /// repair (each operation opens and closes its own document), so poisoning is ignored.
    pub(super) fn lock(&self) -> MutexGuard<'static, ()> {
        PDFIUM.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// [`PdfEngine::lock`], then the budget's Stop and deadline: work that waited for PDFium
    /// while it was stopped ends here instead of running its whole PDFium operation.
    pub(super) fn lock_within(&self, budget: &Budget) -> Result<MutexGuard<'static, ()>, PdfError> {
        let guard = self.lock();
        budget.alive()?;
        Ok(guard)
    }
}
