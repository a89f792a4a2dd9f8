//! A database Hearth cannot open shows an error screen naming the file, not a crash loop.

use hearth_testkit::TestHome;

use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_database_shows_the_startup_error_screen() {
    let home = TestHome::new().unwrap();
    let db = home.data_dir().join("hearth.db");
    std::fs::write(&db, b"definitely not an SQLite file, but long enough to have a header").unwrap();
    let session = Session::start_app(APP, &home).await;
    let message = session.find("#startup-error .message").await.text().await.unwrap();
    assert!(message.contains(&db.display().to_string()), "{message}");
    assert!(message.contains("Move the file aside"), "{message}");
    assert!(std::fs::read(&db).unwrap().starts_with(b"definitely not"), "the file was left untouched");
    session.close().await;
}
