//! Where libpdfium is loaded from (pdf::pdfium::trust): only a file that no other user could
//! have written, in folders no other user can write up to `/`, and only the pinned build. Each
//! refusal comes before the library is loaded: the refused file never appears in this
//! process's memory map. (Only the default library is ever loaded here, so PDFium, bound once
//! per process, is always that file whichever test binds it first.)

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hearth_core::pdf::{PDFIUM_SHA256, PdfEngine, PdfError, default_library_path, inspect, private_library_path};
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;
use sha2::{Digest, Sha256};

/// A scratch folder (0700) below `$HOME`, where the pinned library is installed too: every
/// folder above a library must be writable by no one else, which `/tmp` is not.
fn private_scratch() -> tempfile::TempDir {
    let home = std::env::home_dir().expect("a home folder");
    tempfile::Builder::new().prefix(".hearth-pdfium-test-").tempdir_in(home).unwrap()
}

/// The installed library's bytes (scripts/test.sh installs it).
fn pinned_library() -> Vec<u8> {
    let path = default_library_path();
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err} (scripts/setup.sh installs libpdfium)", path.display()))
}

/// `bytes` as `dir/libpdfium.so` (0644), the folders made 0700.
fn place(dir: &Path, bytes: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, Permissions::from_mode(0o700)).unwrap();
    let library = dir.join("libpdfium.so");
    std::fs::write(&library, bytes).unwrap();
    std::fs::set_permissions(&library, Permissions::from_mode(0o644)).unwrap();
    library
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
}

/// Whether a file at `path` is mapped into this process (what loading a library does).
fn mapped(path: &Path) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let path = path.to_str().unwrap();
    maps.lines().any(|line| line.contains(path))
}

/// The refusal's words, after checking it is one and that the file was not loaded.
fn refused(library: &Path) -> String {
    let err = PdfEngine::load(library).unwrap_err();
    assert!(matches!(err, PdfError::LibraryRefused { .. }), "{err:?}");
    assert!(!mapped(library), "{} was loaded", library.display());
    let message = err.to_string();
    assert!(message.contains(library.to_str().unwrap()), "the message names the library: {message}");
    message
}

#[test]
fn a_library_in_a_group_writable_folder_is_refused_before_it_is_loaded() {
    let scratch = private_scratch();
    let shared = scratch.path().join("shared");
    let library = place(&shared, &pinned_library());
    chmod(&shared, 0o775);

    let message = refused(&library);

    assert!(message.contains(&format!("{} is writable by its group (mode 775)", shared.display())), "{message}");
    assert!(message.contains("scripts/setup.sh"), "it says what to do: {message}");
}

#[test]
fn a_library_below_a_world_writable_folder_is_refused_even_in_a_private_one() {
    let scratch = private_scratch();
    let open = scratch.path().join("open");
    // The library's own folder is private; one further up is sticky and world-writable, like /tmp.
    let library = place(&open.join("private"), &pinned_library());
    chmod(&open, 0o1777);

    let message = refused(&library);

    assert!(message.contains(&format!("{} is writable by group and others (mode 1777)", open.display())), "{message}");
}

#[test]
fn a_library_directly_in_var_tmp_is_refused() {
    // The place the scripts used to install it: a private folder of ours directly in /var/tmp.
    let scratch = tempfile::Builder::new().prefix("hearth-pdfium-test-").tempdir_in("/var/tmp").unwrap();
    let library = place(scratch.path(), &pinned_library());

    let message = refused(&library);

    assert!(message.contains("/var/tmp is writable by group and others (mode 1777)"), "{message}");
}

#[test]
fn a_group_writable_library_is_refused() {
    let scratch = private_scratch();
    let library = place(&scratch.path().join("lib"), &pinned_library());
    chmod(&library, 0o664);

    let message = refused(&library);

    assert!(message.contains("is writable by its group (mode 664)"), "{message}");
}

#[test]
fn a_library_another_user_owns_is_refused() {
    let scratch = private_scratch();
    let library = place(&scratch.path().join("lib"), &pinned_library());
    match std::os::unix::fs::chown(&library, Some(65534), None) {
        Ok(()) => {}
        // Only root can give a file away; CI runs as root.
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => return,
        Err(err) => panic!("{err}"),
    }

    let message = refused(&library);

    assert!(message.contains("belongs to uid 65534"), "{message}");
}

#[test]
fn a_library_in_a_private_folder_with_another_hash_is_refused() {
    let scratch = private_scratch();
    // The pinned build with one byte more: a loadable library, but not the pinned bytes.
    let mut bytes = pinned_library();
    bytes.push(0);
    let library = place(&scratch.path().join("lib"), &bytes);

    let message = refused(&library);

    let digest = hex::encode(Sha256::digest(&bytes));
    assert!(message.contains(&format!("its SHA-256 is {digest}, not {}", PDFIUM_SHA256[0])), "{message}");
    assert!(message.contains("Reinstall it with scripts/setup.sh"), "{message}");
}

#[test]
fn a_missing_library_says_how_to_install_it() {
    let scratch = private_scratch();
    let library = scratch.path().join("libpdfium.so");
    let err = PdfEngine::load(&library).unwrap_err();
    assert!(matches!(err, PdfError::LibraryMissing { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(library.to_str().unwrap()), "{message}");
    assert!(message.contains("Run scripts/setup.sh"), "{message}");
}

#[test]
fn the_pinned_library_in_the_private_default_loads_and_the_seeded_form_opens() {
    assert!(private_library_path().ends_with(".local/share/hearth/pdfium/libpdfium.so"));
    let library = default_library_path();
    assert_eq!(hex::encode(Sha256::digest(pinned_library())), PDFIUM_SHA256[0]);

    let engine = PdfEngine::load(&library).unwrap();

    let info = inspect(&engine, PERMISSION_FORM_PDF).unwrap();
    assert_eq!(info.pages, 2);
    assert_eq!(info.fields.len(), 6);
    // Loaded through its descriptor, the mapped file is the checked one, at its real path.
    assert!(mapped(&std::fs::canonicalize(&library).unwrap()));
}
