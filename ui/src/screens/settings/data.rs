//! Settings → Data: a backup now (the vault key in it only when the owner asks, under a
//! passphrase), scheduled backups with a kept count, and restoring a backup into a new folder.
//!
//! A restore never replaces the folder in use: it writes a new one and says how to start Hearth
//! on it, so the owner's current data stays until they choose (`core::backup::restore`).

use hearth_protocol::backup::{
    BackupCreateParams, BackupMadeView, BackupRestoreParams, BackupRestoredView, BackupSchedule, BackupScheduleParams, BackupSettingsView,
    MAX_EVERY_HOURS, MAX_KEEP,
};
use leptos::prelude::*;

use crate::ipc;
use crate::request::{Reply, failure, load_failure};

/// The section.
#[component]
pub fn DataSection() -> impl IntoView {
    let loaded = LocalResource::new(ipc::backup_settings_get);
    let view_now = Memo::new(move |_| loaded.with(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned()));
    view! {
        <section class="settings-section settings-data" data-section="data">
            <h2>"Data"</h2>
            <p class="settings-note">
                "A backup is one file holding Hearth's database, files and settings. Secrets stay encrypted in it; the key \
                 that opens them goes in only if you ask, protected by a passphrase."
            </p>
            {move || view_now.get().map(|v| view! {
                <p class="settings-note data-folder">"Data folder: " <code>{v.data_dir}</code></p>
                {v.last.map(|last| view! {
                    <p class="settings-note backup-newest">
                        "Newest backup: " <code>{last.path}</code> {format!(" ({} bytes)", last.bytes)}
                    </p>
                })}
            })}
            <BackupNow loaded />
            {move || view_now.get().map(|v| view! { <Schedule stored=v loaded /> })}
            <Restore />
            {move || load_failure(loaded, "Backups").map(|message| view! { <p class="error settings-error">{message}</p> })}
        </section>
    }
}

/// "Back up now", with the vault key optionally.
#[component]
fn BackupNow(loaded: LocalResource<Reply<BackupSettingsView>>) -> impl IntoView {
    let with_key = RwSignal::new(false);
    let passphrase = RwSignal::new(String::new());
    let make = Action::new_local(move |params: &BackupCreateParams| {
        let params = params.clone();
        async move {
            let made = ipc::backup_create(&params).await;
            if made.is_ok() {
                passphrase.set(String::new());
                loaded.refetch();
            }
            made
        }
    });
    let busy = make.pending();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let include = with_key.get_untracked();
        let params = BackupCreateParams { include_vault_key: include, passphrase: include.then(|| passphrase.get_untracked()) };
        make.dispatch_local(params);
    };
    view! {
        <form class="settings-form backup-now" on:submit=submit>
            <label class="settings-check">
                <input type="checkbox" id="backup-with-key" prop:checked=move || with_key.get() on:change=move |ev| with_key.set(event_target_checked(&ev)) />
                " Include the vault key (to open secrets on another computer)"
            </label>
            {move || with_key.get().then(|| view! {
                <label class="settings-field" for="backup-passphrase">"Passphrase (10 characters or more)"</label>
                <input id="backup-passphrase" type="password" autocomplete="new-password"
                    prop:value=move || passphrase.get() on:input=move |ev| passphrase.set(event_target_value(&ev)) />
            })}
            <div class="settings-actions">
                <button type="submit" class="settings-primary" data-action="backup-now" disabled=move || busy.get()>
                    {move || if busy.get() { "Backing up…" } else { "Back up now" }}
                </button>
            </div>
            {move || make.value().with(|reply| match reply {
                Some(Ok(made)) => Some(made_line(made).into_any()),
                Some(Err(_)) => failure(reply.as_ref()).map(|message| view! { <p class="error settings-error">{message}</p> }.into_any()),
                None => None,
            })}
        </form>
    }
}

fn made_line(made: &BackupMadeView) -> impl IntoView {
    let key = if made.holds_vault_key { " It holds the vault key." } else { "" };
    view! {
        <p class="settings-note backup-made" data-path=made.path.clone() data-bytes=made.bytes.to_string() data-sha256=made.sha256.clone()>
            "Backup made: " <code>{made.path.clone()}</code> {format!(" ({} bytes). SHA-256 {}.{key}", made.bytes, made.sha256)}
        </p>
    }
}

/// The schedule, the kept count and the folder.
#[component]
fn Schedule(stored: BackupSettingsView, loaded: LocalResource<Reply<BackupSettingsView>>) -> impl IntoView {
    let hours = RwSignal::new(match stored.schedule {
        BackupSchedule::Off => "0".to_owned(),
        BackupSchedule::Every { hours } => hours.to_string(),
    });
    let keep = RwSignal::new(stored.keep.to_string());
    let folder = RwSignal::new(stored.folder);
    let error = RwSignal::new(None::<String>);
    let save = Action::new_local(move |params: &BackupScheduleParams| {
        let params = params.clone();
        async move {
            let saved = ipc::backup_schedule_set(&params).await;
            if saved.is_ok() {
                loaded.refetch();
            }
            saved
        }
    });
    let busy = save.pending();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let (Ok(h), Ok(k)) = (hours.get_untracked().trim().parse::<u32>(), keep.get_untracked().trim().parse::<u32>()) else {
            error.set(Some(format!("Enter whole numbers: every 0 to {MAX_EVERY_HOURS} hours (0 is off), keep 1 to {MAX_KEEP}.")));
            return;
        };
        let schedule = if h == 0 { BackupSchedule::Off } else { BackupSchedule::Every { hours: h } };
        let typed = folder.get_untracked();
        let params = BackupScheduleParams { schedule, keep: k, folder: (!typed.trim().is_empty()).then_some(typed) };
        match params.validate() {
            Ok(()) => {
                error.set(None);
                save.dispatch_local(params);
            }
            Err(refused) => error.set(Some(refused.message)),
        }
    };
    view! {
        <form class="settings-form backup-schedule" on:submit=submit>
            <label class="settings-field" for="backup-every">"Back up every (hours, 0 is off)"</label>
            <input id="backup-every" type="number" min="0" max=MAX_EVERY_HOURS.to_string() step="1"
                prop:value=move || hours.get() on:input=move |ev| hours.set(event_target_value(&ev)) />
            <label class="settings-field" for="backup-keep">"Keep the newest"</label>
            <input id="backup-keep" type="number" min="1" max=MAX_KEEP.to_string() step="1"
                prop:value=move || keep.get() on:input=move |ev| keep.set(event_target_value(&ev)) />
            <label class="settings-field" for="backup-folder">"Folder"</label>
            <input id="backup-folder" type="text" spellcheck="false"
                prop:value=move || folder.get() on:input=move |ev| folder.set(event_target_value(&ev)) />
            <div class="settings-actions">
                <button type="submit" data-action="save-backup-schedule" disabled=move || busy.get()>"Save"</button>
                {move || matches!(save.value().get(), Some(Ok(_))).then(|| view! { <span class="settings-saved">"Saved"</span> })}
            </div>
            {move || error.get().or_else(|| save.value().with(|r| failure(r.as_ref()))).map(|message| view! { <p class="error settings-error">{message}</p> })}
        </form>
    }
}

/// Restore a backup file into a new folder.
#[component]
fn Restore() -> impl IntoView {
    let file = RwSignal::new(String::new());
    let target = RwSignal::new(String::new());
    let passphrase = RwSignal::new(String::new());
    let restore = Action::new_local(move |params: &BackupRestoreParams| {
        let params = params.clone();
        async move { ipc::backup_restore(&params).await }
    });
    let busy = restore.pending();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let typed = passphrase.get_untracked();
        restore.dispatch_local(BackupRestoreParams {
            file: file.get_untracked(),
            target: target.get_untracked(),
            passphrase: (!typed.is_empty()).then_some(typed),
        });
    };
    view! {
        <form class="settings-form backup-restore" on:submit=submit>
            <h3>"Restore"</h3>
            <p class="settings-note">"Hearth restores into a new, empty folder and leaves the one in use as it is."</p>
            <label class="settings-field" for="restore-file">"Backup file"</label>
            <input id="restore-file" type="text" spellcheck="false" prop:value=move || file.get() on:input=move |ev| file.set(event_target_value(&ev)) />
            <label class="settings-field" for="restore-target">"New folder"</label>
            <input id="restore-target" type="text" spellcheck="false" prop:value=move || target.get() on:input=move |ev| target.set(event_target_value(&ev)) />
            <label class="settings-field" for="restore-passphrase">"Passphrase (if the backup holds the vault key)"</label>
            <input id="restore-passphrase" type="password" autocomplete="off" prop:value=move || passphrase.get() on:input=move |ev| passphrase.set(event_target_value(&ev)) />
            <div class="settings-actions">
                <button type="submit" data-action="restore-backup" disabled=move || busy.get()>
                    {move || if busy.get() { "Restoring…" } else { "Restore" }}
                </button>
            </div>
            {move || restore.value().with(|reply| match reply {
                Some(Ok(done)) => Some(restored_line(done).into_any()),
                Some(Err(_)) => failure(reply.as_ref()).map(|message| view! { <p class="error settings-error">{message}</p> }.into_any()),
                None => None,
            })}
        </form>
    }
}

fn restored_line(done: &BackupRestoredView) -> impl IntoView {
    view! {
        <p class="settings-note backup-restored" data-target=done.target.clone()>
            {format!("Restored {} files ({} bytes) into {}. {}", done.entries, done.bytes, done.target, done.start_hint)}
        </p>
    }
}
