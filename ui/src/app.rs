//! The app shell: start-up check, navigation, and the current screen.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::clock::Clock;
use crate::ipc;
use crate::live_inbox::{LiveInbox, LiveInboxProvider};
use crate::live_tasks::LiveTasksProvider;
use crate::navigation::Navigation;
use crate::screens::{
    Screen, activity::ActivityScreen, approvals::ApprovalsScreen, browser::BrowserScreen, chat::ChatScreen, computer::ComputerScreen,
    documents::DocumentsScreen, files::FilesScreen, goals::GoalsScreen, inbox::InboxScreen, memory::MemoryScreen, settings::SettingsScreen,
    startup_error::StartupError,
};

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
    let nav = Navigation::provide();
    Clock::provide();
    // Kept: startup runs once for the window's life and picks which tree mounts, not a screen's request.
    spawn_local(async move {
        match ipc::app_info().await {
            Ok(_) => {
                // Where every later command goes: this app's core, or the Hearth at home it is
                // paired with. Known before any screen mounts; pairing or forgetting reloads.
                // A link that cannot be read leaves this app on its own (Settings says why).
                match ipc::host_link_status().await {
                    Ok(status) if status.link.is_some() => ipc::set_transport(ipc::Transport::Home),
                    Ok(_) => {}
                    Err(err) => leptos::logging::warn!("Hearth: the link to a Hearth at home could not be read: {}", err.message),
                }
                // A Take control open when the window last went away (a reload) could not give
                // the browser back; this window has no such view.
                let _ = ipc::browser_control_release_all().await;
                startup.set(Startup::Ready);
            }
            Err(err) => startup.set(Startup::Failed(err.message)),
        }
        // The frame that shows the app (its shell, or why it could not start), not the
        // loading line before it: the moment the footprint bench calls first paint, for Hearth
        // and for the Tauri floor alike (tests/floor/ui). The core opens beside the window, so
        // this frame comes after it has opened. Kept: a fire-and-forget mark.
        crate::marks::after_next_frame(|| spawn_local(ipc::app_painted()));
    });
    view! {
        {move || match startup.get() {
            Startup::Checking => view! { <div class="loading">"Starting Hearth…"</div> }.into_any(),
            Startup::Failed(message) => view! { <StartupError message /> }.into_any(),
            Startup::Ready => view! {
                <LiveTasksProvider>
                    <LiveInboxProvider>
                        <Shell nav />
                    </LiveInboxProvider>
                </LiveTasksProvider>
            }.into_any(),
        }}
    }
}

/// Navigation beside the current screen.
#[component]
fn Shell(nav: Navigation) -> impl IntoView {
    let screen = nav.screen;
    // Re-render the screen only when it really changes, not on every click of its nav item.
    let current = Memo::new(move |_| screen.get());
    view! {
        <div class="shell">
            <Nav screen />
            <main class="screen">
                // Chat stays mounted so a streaming run survives a look at another screen.
                <div class="screen-chat" class:hidden=move || current.get() != Screen::Chat>
                    <ChatScreen />
                </div>
                {move || match current.get() {
                    Screen::Chat => None,
                    Screen::Activity => Some(view! { <ActivityScreen /> }.into_any()),
                    Screen::Inbox => Some(view! { <InboxScreen /> }.into_any()),
                    Screen::Memory => Some(view! { <MemoryScreen /> }.into_any()),
                    Screen::Goals => Some(view! { <GoalsScreen /> }.into_any()),
                    Screen::Approvals => Some(view! { <ApprovalsScreen /> }.into_any()),
                    Screen::Files => Some(view! { <FilesScreen /> }.into_any()),
                    Screen::Documents => Some(view! { <DocumentsScreen /> }.into_any()),
                    Screen::Computer => Some(view! { <ComputerScreen /> }.into_any()),
                    Screen::Browser => Some(view! { <BrowserScreen /> }.into_any()),
                    Screen::Settings => Some(view! { <SettingsScreen /> }.into_any()),
                }}
            </main>
        </div>
    }
}

#[component]
fn Nav(screen: RwSignal<Screen>) -> impl IntoView {
    let inbox = LiveInbox::from_context();
    let badge = Memo::new(move |_| inbox.and_then(|live| live.inbox.with(|inbox| inbox.badge())));
    view! {
        <nav class="nav">
            <div class="brand">"Hearth"</div>
            {(ipc::transport() == ipc::Transport::Home).then(|| view! {
                <div class="home-link" id="home-link" title="Chats, tools and approvals run on your Hearth at home">"Through your Hearth at home"</div>
            })}
            {Screen::ALL.iter().map(|&item| view! {
                <button
                    class="nav-item"
                    class:active=move || screen.get() == item
                    data-screen=item.slug()
                    on:click=move |_| screen.set(item)
                >
                    {item.title()}
                    {(item == Screen::Inbox).then_some(move || badge.get().map(|n| view! { <span class="nav-badge" id="inbox-badge">{n}</span> }))}
                </button>
            }).collect_view()}
        </nav>
    }
}
