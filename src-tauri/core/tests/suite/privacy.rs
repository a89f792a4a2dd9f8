//! The data folder is private: every folder Hearth makes there is 0700 and every file 0600
//! (mail, chats, PDFs and the vault key are nobody else's business on a shared machine), and a
//! folder an older Hearth left readable is tightened at the next start.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hearth_core::Hearth;
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;

use super::support::{collect, fast_config, settled, start, text_of};

/// Every entry under `root` (root included) with its permission bits, folders first.
fn walk(root: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(!meta.file_type().is_symlink(), "Hearth made a symbolic link: {}", path.display());
        let mode = meta.permissions().mode() & 0o7777;
        if meta.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        found.push((path, meta.is_dir(), mode));
    }
    found.sort_by_key(|(path, is_dir, _)| (!*is_dir, path.clone()));
    found
}

/// Asserts 0700 on every folder and 0600 on every file; returns the files' paths relative to
/// `root`.
fn assert_private(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for (path, is_dir, mode) in walk(root) {
        let expected = if is_dir { 0o700 } else { 0o600 };
        assert_eq!(mode, expected, "{} is {mode:o}, expected {expected:o}", path.display());
        if !is_dir {
            files.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    files.sort();
    files
}

/// Opens Hearth on `data`, has one chat, imports one PDF and seals one secret (the endpoint's
/// token, returned): the database, its WAL, the seeded attachment, the vault key and an
/// owner's file all exist afterwards.
async fn use_hearth(data: &Path) -> (Hearth, String) {
    let hearth = Hearth::open(fast_config(data)).await.unwrap();
    let (_thread, _run, events) = start(&hearth, None, "hello").await;
    let events = collect(events).await;
    assert!(!text_of(&events).is_empty(), "the sample agent answered");
    settled(&hearth).await;
    let file = hearth.files().import("file-privacy-1", PERMISSION_FORM_PDF.to_vec(), "form.pdf", "att-permission-form").await.unwrap();
    assert_eq!(std::fs::read(&file.path).unwrap(), PERMISSION_FORM_PDF);
    let token = hearth.settings_endpoint_set(true).await.unwrap().endpoint.token.unwrap();
    hearth.settings_endpoint_set(false).await.unwrap();
    (hearth, token)
}

#[tokio::test]
async fn issue10_the_data_folder_is_private() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("data");
    let (hearth, _token) = use_hearth(&data).await;

    // While Hearth runs (the WAL and shared-memory files exist), and again after it closed.
    let files = assert_private(&data);
    for expected in
        ["hearth.db", "hearth.db-wal", "hearth.db-shm", "vault.key", "attachments/att-permission-form.pdf", "files/file-privacy-1.pdf"]
    {
        assert!(files.iter().any(|f| f == expected), "{expected} was made: {files:?}");
    }
    let folders: Vec<_> = walk(&data).into_iter().filter(|(_, is_dir, _)| *is_dir).map(|(p, ..)| p).collect();
    for folder in ["attachments", "files", "artifacts"] {
        assert!(folders.contains(&data.join(folder)), "{folder} was made: {folders:?}");
    }
    hearth.store().close().await;
    drop(hearth);
    assert_private(&data);
}

#[tokio::test]
async fn issue10_a_data_folder_left_readable_is_tightened_at_open() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("data");
    let (hearth, token) = use_hearth(&data).await;
    hearth.store().close().await;
    drop(hearth);

    // What an older Hearth left: everything readable by the group and others.
    let mut loosened = 0;
    for (path, is_dir, _) in walk(&data) {
        let loose = if is_dir { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(loose)).unwrap();
        loosened += 1;
    }
    assert!(loosened >= 8, "folders and files to loosen: {loosened}");

    let hearth = Hearth::open(fast_config(&data)).await.unwrap();
    for (path, is_dir, mode) in walk(&data) {
        let name = path.strip_prefix(&data).unwrap().to_string_lossy().into_owned();
        let tightened = is_dir || matches!(name.as_str(), "hearth.db" | "hearth.db-wal" | "hearth.db-shm" | "vault.key");
        if tightened {
            assert_eq!(mode & 0o077, 0, "{} is still {mode:o}", path.display());
        }
    }
    // The folders hold the older files; with the folders private, nobody else can reach them.
    let modes: Vec<_> = walk(&data).into_iter().filter(|(_, is_dir, _)| *is_dir).map(|(.., mode)| mode).collect();
    assert_eq!(modes, vec![0o700; modes.len()]);
    assert!(modes.len() >= 4, "the data folder and its attachments, files and artifacts folders");
    // Still the same vault: the token sealed before opens.
    let view = hearth.settings_endpoint_set(true).await.unwrap();
    assert_eq!(view.endpoint.token.as_deref(), Some(token.as_str()));
    hearth.settings_endpoint_set(false).await.unwrap();
}
