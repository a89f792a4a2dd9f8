//! A choice, end to end: the sample agent offers the options a message lists, the owner picks
//! one on the card, and the pick is the next message of the conversation.

use hearth_testkit::TestHome;
use hearth_testkit::webdriver::Session;

use crate::APP;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_picks_a_choice_on_its_card() {
    let home = TestHome::new().unwrap();
    let session = Session::start_app(APP, &home).await;
    session.send("Help me choose: tea or coffee").await;
    session.until_texts(".card-choices .choice-option", "the options are buttons", |t| t == ["tea", "coffee"]).await;
    session.find(".card-choices .choice-option[data-choice=coffee]").await.click().await.unwrap();
    session
        .until_texts(".transcript", "the pick went on as the next message and was answered", |t| {
            t.len() == 1 && t[0].contains("I pick: coffee") && t[0].contains("You picked coffee")
        })
        .await;
    session.until_script("return document.querySelector('.choice-option[data-choice=coffee]').disabled", "one pick per card").await;
    session.close().await;
}
