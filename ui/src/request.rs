//! Small readers over Leptos's request primitives for IPC replies.
//!
//! A screen loads with a [`LocalResource`] (the `ipc` futures hold `JsValue`s, so they are not
//! `Send`) and changes things with an [`Action`] whose future refetches the resource when the
//! backend said yes. These helpers turn the resource's `Option<Result<_, IpcError>>` into what
//! a screen shows: the last value that loaded, and the line that says what failed.

use hearth_protocol::IpcError;
use leptos::prelude::*;

/// What an `ipc` call answers.
pub type Reply<T> = Result<T, IpcError>;

/// The value `resource` last loaded, kept through a failed reload so the screen goes on showing
/// it beside the error (`None` until the first load lands).
pub fn last_loaded<T>(resource: LocalResource<Reply<T>>) -> Memo<Option<T>>
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    Memo::new(move |before: Option<&Option<T>>| {
        resource.with(|reply| match reply {
            Some(Ok(value)) => Some(value.clone()),
            _ => before.cloned().flatten(),
        })
    })
}

/// The message of a failed reply: `None` while nothing came back yet and after a success.
pub fn failure<T>(reply: Option<&Reply<T>>) -> Option<String> {
    match reply {
        Some(Err(err)) => Some(err.message.clone()),
        _ => None,
    }
}

/// Why `resource` could not load, as `what could not be loaded: why`.
pub fn load_failure<T: 'static>(resource: LocalResource<Reply<T>>, what: &'static str) -> Option<String> {
    resource.with(|reply| failure(reply.as_ref())).map(|why| format!("{what} could not be loaded: {why}"))
}

/// Why the latest run of `action` failed, if it did (kept until the action runs again).
pub fn action_failure<I: 'static, T: 'static>(action: Action<I, Reply<T>>) -> Option<String> {
    action.value().with(|reply| failure(reply.as_ref()))
}

/// Why the latest run of `action` failed, but nothing while a run is on its way: sending again
/// clears the last refusal, and the new answer says anew.
pub fn settled_failure<I: 'static, T: 'static>(action: Action<I, Reply<T>>) -> Option<String> {
    if action.pending().get() { None } else { action_failure(action) }
}

/// A settings form's send: `checked` is the params' own validation; a refusal goes to `error`
/// with nothing sent, otherwise both of the form's lines are cleared and `input` is sent.
pub fn send_checked<I: 'static, O: 'static>(
    action: Action<I, O>,
    input: I,
    checked: Result<(), IpcError>,
    error: RwSignal<Option<String>>,
    notice: RwSignal<Option<&'static str>>,
) {
    notice.set(None);
    match checked {
        Err(err) => error.set(Some(err.message)),
        Ok(()) => {
            error.set(None);
            action.dispatch_local(input);
        }
    }
}
