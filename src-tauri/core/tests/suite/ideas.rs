//! Ideas over the seeded mailbox, a goal and repeated requests: accept makes the task or the
//! schedule once (rows counted), dismiss is remembered across a restart.

use hearth_core::Hearth;
use hearth_protocol::goals::GoalCreateParams;
use hearth_protocol::ideas::{IdeaAccepted, IdeaKind, IdeaParams};
use hearth_protocol::tasks::TaskKind;

use super::support::{collect, fast_config, start};

fn of(kind: IdeaKind, ideas: &[hearth_protocol::ideas::IdeaView]) -> Option<String> {
    ideas.iter().find(|i| i.kind == kind).map(|i| i.id.clone())
}

#[tokio::test]
async fn ideas_are_accepted_once_and_dismissals_are_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let ideas = hearth.idea_list().await.unwrap().ideas;
    let form = of(IdeaKind::FillForm, &ideas).expect("the school's form");
    let meet = of(IdeaKind::AnswerMeeting, &ideas).expect("Sam asks whether Saturday is still on");
    assert!(ideas.iter().any(|i| i.title == "Fill the form from Ms. Alvarez"), "{ideas:?}");

    let made = hearth.idea_accept(&IdeaParams { idea_id: form.clone() }).await.unwrap();
    let IdeaAccepted::Task(task_id) = made else { panic!("a task") };
    let task = hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.kind, TaskKind::Document);
    let again = hearth.idea_accept(&IdeaParams { idea_id: form.clone() }).await.unwrap_err().to_string();
    assert!(again.contains("no longer offered"), "accepted ideas are not offered again: {again}");
    assert_eq!(hearth.store().list_tasks(50).await.unwrap().len(), 1, "one task");

    let left = hearth.idea_dismiss(&IdeaParams { idea_id: meet.clone() }).await.unwrap().ideas;
    assert!(of(IdeaKind::AnswerMeeting, &left).is_none() && of(IdeaKind::FillForm, &left).is_none());
    let late = hearth.idea_accept(&IdeaParams { idea_id: meet.clone() }).await.unwrap_err().to_string();
    assert!(late.contains("no longer offered"), "a dismissed idea makes nothing: {late}");
    assert_eq!(hearth.store().list_tasks(50).await.unwrap().len(), 1);

    // A goal without milestones, and a request made in three conversations.
    let goal = hearth
        .goal_create(&GoalCreateParams {
            title: "Learn Spanish".into(),
            description: String::new(),
            category: String::new(),
            milestones: vec![],
        })
        .await
        .unwrap();
    for _ in 0..3 {
        let (_, _, events) = start(&hearth, None, "Water the plants on the balcony").await;
        collect(events).await;
    }
    let ideas = hearth.idea_list().await.unwrap().ideas;
    let milestones = of(IdeaKind::AddMilestones, &ideas).expect("the goal without milestones");
    let repeat = of(IdeaKind::MakeSchedule, &ideas).expect("the repeated request");
    // Accepted, then Hearth stopped before making it: still offered, and accepting makes it once.
    assert!(hearth.store().accept_idea(&milestones).await.unwrap());
    assert!(of(IdeaKind::AddMilestones, &hearth.idea_list().await.unwrap().ideas).is_some());
    let IdeaAccepted::Task(task_id) = hearth.idea_accept(&IdeaParams { idea_id: milestones.clone() }).await.unwrap() else {
        panic!("a task")
    };
    assert!(of(IdeaKind::AddMilestones, &hearth.idea_list().await.unwrap().ideas).is_none());
    assert_eq!(hearth.store().get_task(&task_id).await.unwrap().unwrap().input["goalId"], serde_json::json!(goal.id));
    let IdeaAccepted::Schedule(_) = hearth.idea_accept(&IdeaParams { idea_id: repeat }).await.unwrap() else { panic!("a schedule") };
    assert_eq!(hearth.schedule_list().await.unwrap().schedules.len(), 1);
    hearth.shutdown().await;
    drop(hearth);

    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    let ideas = hearth.idea_list().await.unwrap().ideas;
    assert!(ideas.is_empty(), "decisions outlive a restart: {ideas:?}");
}
