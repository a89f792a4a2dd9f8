//! Files through the real window: the owner imports a PDF from disk (the same import path the
//! agent's attachment import takes) and deletes it. Oracles: the file's row and its bytes.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_imports_a_pdf_from_disk_and_deletes_it() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let store = hearth_core::store::Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();
    let before = store.list_files(1_000).await.unwrap().len();

    session.find(".nav-item[data-screen=files]").await.click().await.unwrap();
    let pdf = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/core/tests/fixtures/choices.pdf");
    session.find(".files-import-input").await.send_keys(pdf.to_str().unwrap()).await.unwrap();
    session.until_texts(".file-detail-name", "the imported file opens", |t| t == ["choices.pdf"]).await;
    session.until_texts(".file-detail .file-source", "it says where it came from", |t| t == ["Imported from your disk"]).await;

    let files = store.list_files(1_000).await.unwrap();
    assert_eq!(files.len(), before + 1, "one file row more");
    let imported = files.iter().find(|f| f.name == "choices.pdf").expect("the imported row");
    let bytes = std::fs::read(&imported.path).unwrap();
    assert_eq!(bytes, std::fs::read(&pdf).unwrap(), "the stored bytes are the file's");

    session.find(".file-detail [data-action=delete-file]").await.click().await.unwrap();
    session.until_texts(".file-detail-empty", "the detail closes", |t| t.len() == 1).await;
    let row = store.get_file(&imported.id).await.unwrap().expect("the record stays for receipts");
    assert!(row.deleted_at.is_some(), "marked deleted");
    assert!(!std::path::Path::new(&imported.path).exists(), "its bytes are gone");
    session.close().await;
}
