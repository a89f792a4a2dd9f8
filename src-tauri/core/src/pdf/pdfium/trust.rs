//! Opening libpdfium only from where no other user can write, and only the pinned build.
//!
//! Loading a library runs its code in this process, which holds the vault's key: a library
//! another local user could write or replace is theirs to run as the owner. So the file and
//! every folder above it, up to `/`, must belong to the owner or root and be writable by
//! neither group nor others (a sticky world-writable folder such as `/var/tmp` included), and
//! its SHA-256 must be the pinned one. The checks are made on file descriptors: each folder is
//! opened below the one checked before it without following a link, the library is opened and
//! hashed through its descriptor, and the caller loads `/proc/self/fd/N` of that descriptor,
//! so the file checked is the file loaded.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use crate::pdf::PdfError;

/// What to do when the place is refused.
const MOVE_IT: &str = "Install it where only you can write: run scripts/setup.sh (it puts libpdfium.so in \
    ~/.local/share/hearth/pdfium, private to you), or point HEARTH_PDFIUM_LIB at a copy whose folders only you or \
    root can write.";
/// What to do when the bytes are not the pinned build.
const REINSTALL: &str = "Reinstall it with scripts/setup.sh, which downloads pypdfium2 5.15.2's wheel, checks \
    its SHA-256 and puts its libpdfium.so in ~/.local/share/hearth/pdfium.";

/// Opens `path` for loading when it and every folder above it are the owner's or root's and
/// writable by no one else, and its bytes hash to one of `pins` (lowercase hex SHA-256).
/// Returns the open file; load it through `/proc/self/fd/<its fd>`.
pub(super) fn open_trusted(path: &Path, pins: &[&str]) -> Result<File, PdfError> {
    let missing = |detail: String| PdfError::LibraryMissing { path: path.to_owned(), detail };
    // Links and `..` are resolved once here; the walk below follows none, so a folder swapped
    // for a link after this point fails the walk instead of leading it elsewhere.
    let real = std::fs::canonicalize(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => missing("no such file".into()),
        _ => missing(err.to_string()),
    })?;
    let owner = rustix::process::geteuid().as_raw();
    let refused = |why: String, fix: &'static str| PdfError::LibraryRefused { path: path.to_owned(), why, fix };
    let misplaced = |at: &Path, why: String| refused(format!("{} {why}", at.display()), MOVE_IT);
    let io_error = |at: &Path, err: rustix::io::Errno| missing(format!("{}: {err}", at.display()));

    let names: Vec<&OsStr> = real
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some((file_name, folders)) = names.split_last() else {
        return Err(missing("not a file".into()));
    };
    let folder_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut at = PathBuf::from("/");
    let mut folder: OwnedFd = rustix::fs::open("/", folder_flags, Mode::empty()).map_err(|e| io_error(&at, e))?;
    check_owner_and_mode(&folder, owner).map_err(|why| misplaced(&at, why))?;
    for name in folders {
        at.push(name);
        folder = rustix::fs::openat(&folder, *name, folder_flags, Mode::empty()).map_err(|e| io_error(&at, e))?;
        check_owner_and_mode(&folder, owner).map_err(|why| misplaced(&at, why))?;
    }
    at.push(file_name);
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::openat(&folder, *file_name, flags, Mode::empty()).map_err(|e| io_error(&at, e))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_error(&at, e))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(missing("not a regular file".into()));
    }
    check_owner_and_mode(&fd, owner).map_err(|why| misplaced(&at, why))?;

    // The same file, unchanged since it was hashed in this process, is not hashed again (each
    // FileStore binds once, and a debug build hashes 8 MB in about a quarter of a second). Only
    // the owner or root can write it (checked above), and its change time moves with every write
    // and cannot be set back.
    let seen = format!("{}:{}:{}:{}.{}", stat.st_dev, stat.st_ino, stat.st_size, stat.st_ctime, stat.st_ctime_nsec);
    let mut file = File::from(fd);
    let mut verified = VERIFIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if verified.contains(&seen) {
        return Ok(file);
    }
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|err| missing(format!("reading it failed: {err}")))?;
    let digest = hex::encode(hasher.finalize());
    if pins.contains(&digest.as_str()) {
        verified.push(seen);
    } else {
        let why = match pins.first() {
            Some(pin) => format!("its SHA-256 is {digest}, not {pin} (pypdfium2 5.15.2's libpdfium.so, the build Hearth is pinned to)"),
            None => format!("its SHA-256 is {digest}, and no libpdfium build is pinned for this architecture"),
        };
        return Err(refused(why, REINSTALL));
    }
    Ok(file)
}

/// The user that installs apps and owns their native-library folders: `system` on Android.
/// Elsewhere only the owner and root are trusted.
#[cfg(target_os = "android")]
const INSTALLER_UID: Option<u32> = Some(1000);
#[cfg(not(target_os = "android"))]
const INSTALLER_UID: Option<u32> = None;

/// Files that hashed to a pin in this process: `device:inode:size:change time`.
static VERIFIED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Why `fd`'s file is not safe to trust, if it is not: owned by someone other than `owner` or
/// root, or writable by group or others.
fn check_owner_and_mode(fd: impl AsFd, owner: u32) -> Result<(), String> {
    let stat = rustix::fs::fstat(fd).map_err(|err| format!("could not be examined ({err})"))?;
    let uid = stat.st_uid;
    if uid != owner && uid != 0 && Some(uid) != INSTALLER_UID {
        return Err(format!("belongs to uid {uid}, not to you (uid {owner}) or root"));
    }
    let mode = stat.st_mode & 0o7777;
    // Android's /data and /data/app are 0771 system:system: writable by the system group only.
    let trusted_group = INSTALLER_UID.is_some_and(|installer| stat.st_gid == 0 || stat.st_gid == installer);
    let writable = if trusted_group { mode & 0o002 } else { mode & 0o022 };
    if writable != 0 {
        let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
            (true, true) => "group and others",
            (true, false) => "its group",
            _ => "others",
        };
        return Err(format!("is writable by {who} (mode {mode:o})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A file that hashed to its pin once is not trusted again after it changed: a byte more,
    /// or the same size rewritten (its change time moves), is hashed again and refused.
    #[test]
    fn a_verified_file_changed_afterwards_is_hashed_again_and_refused() {
        let home = std::env::home_dir().expect("a home folder");
        let scratch = tempfile::Builder::new().prefix(".hearth-trust-test-").tempdir_in(home).unwrap();
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = scratch.path().join("lib.so");
        std::fs::write(&path, b"pinned bytes").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let pin = hex::encode(Sha256::digest(b"pinned bytes"));
        let pins = [pin.as_str()];

        assert!(open_trusted(&path, &pins).is_ok());
        assert!(open_trusted(&path, &pins).is_ok(), "unchanged: still trusted");

        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"!").unwrap();
        let err = open_trusted(&path, &pins).unwrap_err();
        assert!(err.to_string().contains("its SHA-256 is"), "{err}");

        std::fs::write(&path, b"pinned bytez").unwrap();
        let err = open_trusted(&path, &pins).unwrap_err();
        assert!(err.to_string().contains("its SHA-256 is"), "same size, other bytes: {err}");
    }
}
