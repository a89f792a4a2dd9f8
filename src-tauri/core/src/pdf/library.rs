//! Binding libpdfium once per process.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pdfium_render::prelude::Pdfium;

use super::PdfError;

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
    /// Loads libpdfium from `library`.
    pub fn load(library: &Path) -> Result<Self, PdfError> {
        let bindings = Pdfium::bind_to_library(library)
            .map_err(|err| PdfError::LibraryMissing { path: library.to_owned(), detail: err.to_string() })?;
        Ok(Self { pdfium: Arc::new(Pdfium::new(bindings)) })
    }
}
