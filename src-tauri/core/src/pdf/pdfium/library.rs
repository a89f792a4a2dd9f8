//! Binding libpdfium once per process.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use pdfium_render::prelude::{Pdfium, PdfiumLibraryBindingsAccessor};

use super::ffi::Lib;
use crate::pdf::{Budget, PdfError};

/// The checks before loading: [`super::trust::open_trusted`] on Linux and Android; elsewhere
/// PDFium is refused (the descriptor-based load needs `/proc/self/fd`).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_checked(library: &Path, pins: &[&str]) -> Result<std::fs::File, PdfError> {
    super::trust::open_trusted(library, pins)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn open_checked(library: &Path, _pins: &[&str]) -> Result<std::fs::File, PdfError> {
    Err(PdfError::LibraryRefused {
        path: library.to_owned(),
        why: "Hearth checks and loads PDFium on Linux only".into(),
        fix: "Use Hearth on Linux for PDF forms.",
    })
}

/// PDFium is not thread-safe: one document operation at a time in this process. (pdfium-render's
/// `thread_safe` feature locks each single call; this locks a whole inspect, fill or render.)
static PDFIUM: Mutex<()> = Mutex::new(());

/// Environment variable naming libpdfium.so.
pub const PDFIUM_LIBRARY_ENV: &str = "HEARTH_PDFIUM_LIB";

/// The SHA-256 of the one libpdfium build Hearth loads on this architecture: the libpdfium.so
/// of pypdfium2 5.15.2's manylinux x86-64 wheel, as `scripts/common.sh` installs it (it checks
/// the wheel's own SHA-256 before unpacking, and this one after).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub const PDFIUM_SHA256: &[&str] = &["c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9"];
/// On an Android phone: the libpdfium.so of the same pypdfium2 release's android arm64-v8a
/// wheel, which `scripts/android-project.sh` puts in the app's `jniLibs` (both SHA-256s pinned
/// there too). Type-checked here; no phone runs in the tests.
#[cfg(all(target_os = "android", target_arch = "aarch64"))]
pub const PDFIUM_SHA256: &[&str] = &["0090fca4cc584f1ce538e6899e43928e7c027478b64e661c05da94a6374e97bf"];
/// No build is pinned for this platform: PDFium is refused.
#[cfg(not(any(all(target_os = "linux", target_arch = "x86_64"), all(target_os = "android", target_arch = "aarch64"))))]
pub const PDFIUM_SHA256: &[&str] = &[];

/// `HEARTH_PDFIUM_LIB`, else [`private_library_path`]; on Android, the libpdfium.so the app's
/// package installed beside Hearth's own library.
pub fn default_library_path() -> PathBuf {
    #[cfg(target_os = "android")]
    if let Some(beside) = beside_this_library() {
        return beside;
    }
    match std::env::var_os(PDFIUM_LIBRARY_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => private_library_path(),
    }
}

/// Where `scripts/setup.sh` installs libpdfium: `~/.local/share/hearth/pdfium/libpdfium.so`, in
/// a folder only the owner can open (0700). `$HOME`, not `$XDG_DATA_HOME`, so the scripts and
/// the app agree even where a test points `XDG_DATA_HOME` at a scratch folder.
pub fn private_library_path() -> PathBuf {
    std::env::home_dir().unwrap_or_else(|| PathBuf::from("/")).join(".local/share/hearth/pdfium/libpdfium.so")
}

/// `libpdfium.so` in the folder this code was loaded from: on Android the package's native
/// library folder, where the installer (not the app) put both. Found from this process's own
/// map of loaded files, by the address of this function: no JNI call to ask the app's
/// `nativeLibraryDir`.
#[cfg(target_os = "android")]
fn beside_this_library() -> Option<PathBuf> {
    let here = beside_this_library as fn() -> Option<PathBuf> as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let (start, end) = (usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?);
        let path = fields.nth(4)?;
        // A library inside the APK (not extracted) has no folder to look in.
        let own = start <= here && here < end && path.starts_with('/') && path.ends_with(".so");
        own.then(|| Path::new(path).with_file_name("libpdfium.so"))
    })
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
    /// Loads libpdfium from `library` when no other user can have written it and it is the
    /// pinned build ([`PDFIUM_SHA256`]; see `trust`): the checked file descriptor is what is
    /// loaded. PDFium binds once per process: a later call naming a file that passes the same
    /// checks returns the engine already bound.
    pub fn load(library: &Path) -> Result<Self, PdfError> {
        static BOUND: OnceLock<Arc<Pdfium>> = OnceLock::new();
        let _pdfium = PDFIUM.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let checked = open_checked(library, PDFIUM_SHA256)?;
        if let Some(pdfium) = BOUND.get() {
            return Ok(Self { pdfium: Arc::clone(pdfium) });
        }
        // The file just checked, by its descriptor (the path could name another file by now).
        let by_fd = PathBuf::from(format!("/proc/self/fd/{}", checked.as_raw_fd()));
        let bindings = Pdfium::bind_to_library(&by_fd)
            .map_err(|err| PdfError::LibraryMissing { path: library.to_owned(), detail: err.to_string() })?;
        drop(checked);
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
