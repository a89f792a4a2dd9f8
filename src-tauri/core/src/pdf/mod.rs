//! PDFs through PDFium (pdfium-render), loaded at run time from a configured library path.
//!
//! This first piece inspects documents: pages and AcroForm fields of every kind PDFium knows
//! (text, checkbox, radio, combo box, list box …), with clear errors for files Hearth must
//! refuse. Filling, rendering and the document task build on it.

mod inspect;
mod library;

pub use inspect::{FieldKind, PdfField, PdfInfo, inspect};
pub use library::{PDFIUM_LIBRARY_ENV, PdfEngine, default_library_path};

use std::path::PathBuf;

/// The largest PDF Hearth accepts.
pub const MAX_PDF_BYTES: usize = 10 * 1024 * 1024;
/// The most pages Hearth accepts.
pub const MAX_PDF_PAGES: u16 = 500;

/// Why a PDF could not be handled; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// libpdfium is not where Hearth was told to find it.
    #[error(
        "Hearth could not load PDFium from {path} ({detail}). Run scripts/setup.sh, or set HEARTH_PDFIUM_LIB to a libpdfium.so."
    )]
    LibraryMissing {
        /// Where Hearth looked.
        path: PathBuf,
        /// The loader's words.
        detail: String,
    },
    /// Not a PDF at all.
    #[error("This file is not a PDF (it does not start with %PDF-). Attach the PDF itself.")]
    NotPdf,
    /// Over the size limit.
    #[error("This PDF is {bytes} bytes; Hearth accepts PDFs up to 10 MB.")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Over the page limit.
    #[error("This PDF has {pages} pages; Hearth accepts up to 500.")]
    TooManyPages {
        /// Its pages.
        pages: u16,
    },
    /// Password-protected or restricted.
    #[error("This PDF is encrypted or password-protected. Ask the sender for an unprotected copy.")]
    Encrypted,
    /// PDFium could not parse it (truncated, damaged).
    #[error("This PDF is damaged or incomplete ({detail}). Ask the sender to send it again.")]
    Damaged {
        /// PDFium's words.
        detail: String,
    },
}
