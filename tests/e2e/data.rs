//! Settings → Data through the webview: the owner makes a backup, and a whole backup file
//! appears in the data folder's `backups` with the size and SHA-256 the window shows; it
//! restores into an empty folder.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;
use sha2::{Digest, Sha256};

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue36_the_owner_backs_up_from_settings_and_a_whole_file_appears() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    let folder = home.data_dir().join("backups");

    session.find(".nav-item[data-screen=settings]").await.click().await.unwrap();
    session.find("[data-action=backup-now]:not([disabled])").await.click().await.unwrap();
    session.until_texts(".backup-made", "the window says the backup was made", |t| t.len() == 1 && t[0].starts_with("Backup made")).await;
    session.screenshot("settings-data-backup").await;
    let shown = session.find(".backup-made").await;
    let path = shown.attr("data-path").await.unwrap().unwrap();
    let bytes: u64 = shown.attr("data-bytes").await.unwrap().unwrap().parse().unwrap();
    let sha256 = shown.attr("data-sha256").await.unwrap().unwrap();

    let made: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(made, vec![std::path::PathBuf::from(&path)], "one backup file, where the window says");
    let content = std::fs::read(&path).unwrap();
    assert_eq!(content.len() as u64, bytes);
    assert_eq!(hex::encode(Sha256::digest(&content)), sha256);
    assert!(bytes > 4096, "it holds the database");

    // It is a whole backup: it restores into an empty folder, database and all.
    let target = tempfile::tempdir().unwrap();
    let restored = hearth_core::backup::restore(std::path::Path::new(&path), &target.path().join("restored"), None).unwrap();
    assert!(restored.entries >= 1);
    assert!(target.path().join("restored").join("hearth.db").metadata().unwrap().len() > 0);
    session.close().await;
}
