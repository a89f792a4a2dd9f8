//! A reload that only lets its newest reply land: a slow earlier reply never overwrites a
//! newer list.

use std::future::Future;

use hearth_protocol::IpcError;
use leptos::prelude::*;
use leptos::task::spawn_local;

/// A callback that runs `load` and hands its reply to `land`, unless another run started
/// since — then the older reply is dropped.
pub fn latest_only<T, Fut>(
    load: impl Fn() -> Fut + Send + Sync + 'static,
    land: impl Fn(Result<T, IpcError>) + Copy + Send + Sync + 'static,
) -> Callback<()>
where
    T: 'static,
    Fut: Future<Output = Result<T, IpcError>> + 'static,
{
    let latest = StoredValue::new(0_u64);
    Callback::new(move |()| {
        let fetch = latest.get_value() + 1;
        latest.set_value(fetch);
        let reply = load();
        spawn_local(async move {
            let reply = reply.await;
            if latest.try_get_value() == Some(fetch) {
                land(reply);
            }
        });
    })
}
