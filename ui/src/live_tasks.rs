//! The task store shared app-wide, fed by one `task_list` and then `task_watch`.
//!
//! The watch starts before the list loads, so no change falls between the two; the store
//! drops whichever arrives older.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc::{self, TaskSubscription};
use crate::state::tasks::{TaskStore, Upsert};

/// The task store and why it could not be filled, if it could not.
#[derive(Debug, Clone, Copy)]
pub struct LiveTasks {
    /// Every known task, kept current.
    pub store: RwSignal<TaskStore>,
    /// The list or the watch failed; shown on the Activity screen.
    pub error: RwSignal<Option<String>>,
}

impl LiveTasks {
    /// The store provided by [`LiveTasksProvider`], if any (cards can render without it).
    pub fn from_context() -> Option<Self> {
        use_context::<Self>()
    }
}

/// Fills the task store, keeps it live, and provides it to `children`.
#[component]
pub fn LiveTasksProvider(children: Children) -> impl IntoView {
    let live = LiveTasks { store: RwSignal::new(TaskStore::default()), error: RwSignal::new(None) };
    provide_context(live);
    // Keeps the watch's channel and handler alive for as long as the app shows tasks.
    let subscription = StoredValue::new_local(None::<TaskSubscription>);
    // Kept: the app-wide task watch (a live subscription) and the list it starts from.
    spawn_local(async move {
        let watch = ipc::task_watch(move |changed| {
            let id = changed.task.id.clone();
            live.store.maybe_update(|store| match store.upsert(changed.task) {
                Upsert::Stale => false,
                // The watch says the task changed even when its view did not (a new event).
                Upsert::Unchanged => {
                    store.touch(&id);
                    true
                }
                Upsert::Changed => true,
            });
        })
        .await;
        match watch {
            Ok(sub) => subscription.set_value(Some(sub)),
            Err(err) => live.error.set(Some(format!("Task updates are not arriving: {}", err.message))),
        }
        match ipc::task_list().await {
            Ok(list) => live.store.update(|store| {
                for task in list.tasks {
                    store.upsert(task);
                }
            }),
            Err(err) => live.error.set(Some(format!("Tasks could not be loaded: {}", err.message))),
        }
    });
    children()
}
