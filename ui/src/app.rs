//! The app shell: start-up check, navigation, and the current screen.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;
use crate::screens::{Screen, chat::ChatScreen, placeholder::Placeholder, startup_error::StartupError};

/// Whether the backend's core opened.
#[derive(Debug, Clone, PartialEq)]
enum Startup {
    Checking,
    Ready,
    Failed(String),
}

/// The root component.
#[component]
pub fn App() -> impl IntoView {
    let startup = RwSignal::new(Startup::Checking);
    let screen = RwSignal::new(Screen::Chat);
    spawn_local(async move {
        match ipc::app_info().await {
            Ok(_) => startup.set(Startup::Ready),
            Err(err) => startup.set(Startup::Failed(err.message)),
        }
    });
    view! {
        {move || match startup.get() {
            Startup::Checking => view! { <div class="loading">"Starting Hearth…"</div> }.into_any(),
            Startup::Failed(message) => view! { <StartupError message /> }.into_any(),
            Startup::Ready => view! {
                <div class="shell">
                    <Nav screen />
                    <main class="screen">
                        // Chat stays mounted so a streaming run survives a look at another screen.
                        <div class="screen-chat" class:hidden=move || screen.get() != Screen::Chat>
                            <ChatScreen />
                        </div>
                        {move || (screen.get() != Screen::Chat).then(|| view! { <Placeholder screen=screen.get() /> })}
                    </main>
                </div>
            }.into_any(),
        }}
    }
}

#[component]
fn Nav(screen: RwSignal<Screen>) -> impl IntoView {
    view! {
        <nav class="nav">
            <div class="brand">"Hearth"</div>
            {Screen::ALL.iter().map(|&item| view! {
                <button
                    class="nav-item"
                    class:active=move || screen.get() == item
                    data-screen=item.slug()
                    on:click=move |_| screen.set(item)
                >{item.title()}</button>
            }).collect_view()}
        </nav>
    }
}
