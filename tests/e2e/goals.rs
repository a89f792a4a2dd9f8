//! Goals through the real window: a goal's milestones are added, renamed and removed after it
//! was made. Oracle: the milestone rows in the database.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goals_milestones_are_added_renamed_and_removed() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.find("#composer").await;
    let store = hearth_core::store::Store::open(&home.data_dir().join("hearth.db"), std::time::Duration::from_secs(5)).await.unwrap();
    let milestones = || async {
        let goals = store.goals().await.unwrap();
        goals.first().map(|g| g.milestones.iter().map(|m| (m.position, m.title.clone())).collect::<Vec<_>>()).unwrap_or_default()
    };

    session.find(".nav-item[data-screen=goals]").await.click().await.unwrap();
    session.find(".goal-form input[name=title]").await.send_keys("Move house").await.unwrap();
    session.find(".goal-form textarea[name=milestones]").await.send_keys("Find a flat\u{E007}Pack").await.unwrap();
    session.find(".goal-form [data-action=create-goal]").await.click().await.unwrap();
    session.until_texts(".goal .goal-title", "the goal is listed", |t| t == ["Move house"]).await;
    // (WebDriver's Enter key, U+E007, is the line break between the two milestones typed.)
    assert_eq!(milestones().await.len(), 2, "two milestones typed on two lines");

    session.find(".goal .milestone-new").await.send_keys("Hand back the keys").await.unwrap();
    session.find(".goal [data-action=add-milestone]").await.click().await.unwrap();
    session.until_script("return document.querySelectorAll('.goal .milestone').length === 3", "the new milestone shows").await;
    assert_eq!(milestones().await, [(1, "Find a flat".into()), (2, "Pack".into()), (3, "Hand back the keys".into())]);

    let second = session.find(".goal .milestone[data-position='2'] .milestone-title").await;
    second.clear().await.unwrap();
    second.send_keys("Pack the books").await.unwrap();
    session.find(".goal .milestone[data-position='2'] [data-action=rename-milestone]").await.click().await.unwrap();
    // The rename is saved when its row says so (a bound, not a wait).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while milestones().await.get(1) != Some(&(2, "Pack the books".to_owned())) {
        assert!(std::time::Instant::now() < deadline, "the rename never reached the database: {:?}", milestones().await);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    session.find(".goal .milestone[data-position='1'] [data-action=remove-milestone]").await.click().await.unwrap();
    session.until_script("return document.querySelectorAll('.goal .milestone').length === 2", "the removed milestone is gone").await;
    assert_eq!(milestones().await, [(2, "Pack the books".into()), (3, "Hand back the keys".into())]);
    session.close().await;
}
