//! Every IPC command of Hearth's window, declared once.
//!
//! The shell's ACL manifest (`src-tauri/build.rs`) is built from [`ALL`]; the UI calls commands
//! only through these constants (`ui/src/ipc.rs`: a misspelt name does not compile); and a test
//! (`tests/architecture.rs`) checks that the handlers the shell registers and the
//! window's capability in `tauri.conf.json` (one `allow-<name>` permission each) are exactly
//! these. A new command is a line here, its `*Params`/answer types, its handler, and its
//! `allow-` line; the test names whichever is missing.

/// One IPC command: its wire name (`<resource>_<verb>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Command(&'static str);

impl Command {
    /// The name the window invokes and the shell registers.
    pub const fn name(self) -> &'static str {
        self.0
    }

    /// The capability permission that lets the window call it (`allow-` and the name with
    /// dashes, as Tauri spells a command's permission).
    pub fn permission(self) -> String {
        format!("allow-{}", self.0.replace('_', "-"))
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

macro_rules! commands {
    ($($konst:ident = $name:literal;)*) => {
        $(
            #[doc = concat!("`", $name, "`.")]
            pub const $konst: Command = Command($name);
        )*
        /// Every command, in the order the manifest lists them.
        pub const ALL: &[Command] = &[$($konst),*];
        /// Every command's name (what the ACL manifest takes).
        pub const NAMES: &[&str] = &[$($name),*];
    };
}

commands! {
    APP_INFO = "app_info";
    APP_PAINTED = "app_painted";
    RUN_START = "run_start";
    RUN_STOP = "run_stop";
    THREAD_LIST = "thread_list";
    THREAD_HISTORY = "thread_history";
    THREAD_DELETE = "thread_delete";
    TASK_LIST = "task_list";
    TASK_GET = "task_get";
    TASK_CONTROL = "task_control";
    TASK_WATCH = "task_watch";
    FAILURE_LIST = "failure_list";
    FAILURE_TIMELINE = "failure_timeline";
    SCHEDULE_LIST = "schedule_list";
    SCHEDULE_CREATE = "schedule_create";
    SCHEDULE_CONTROL = "schedule_control";
    MONITOR_CHECK_NOW = "monitor_check_now";
    IDEA_LIST = "idea_list";
    IDEA_ACCEPT = "idea_accept";
    IDEA_DISMISS = "idea_dismiss";
    NOTIFICATION_LIST = "notification_list";
    NOTIFICATION_READ = "notification_read";
    NOTIFICATION_WATCH = "notification_watch";
    NOTIFICATION_OPEN_WATCH = "notification_open_watch";
    FINANCE_START = "finance_start";
    GOAL_LIST = "goal_list";
    GOAL_CREATE = "goal_create";
    GOAL_CONTROL = "goal_control";
    GOAL_MILESTONES = "goal_milestones";
    MEMORY_LIST = "memory_list";
    MEMORY_SAVE = "memory_save";
    MEMORY_FORGET = "memory_forget";
    MANDATE_LIST = "mandate_list";
    MANDATE_GRANT = "mandate_grant";
    MANDATE_REVOKE = "mandate_revoke";
    APPROVAL_LIST = "approval_list";
    APPROVAL_GET = "approval_get";
    APPROVAL_DECIDE = "approval_decide";
    APPROVAL_RECHECK = "approval_recheck";
    APPROVAL_LEAVING = "approval_leaving";
    FILE_LIST = "file_list";
    FILE_GET = "file_get";
    FILE_RENDER = "file_render";
    FILE_FILL = "file_fill";
    FILE_IMPORT = "file_import";
    FILE_DELETE = "file_delete";
    MAIL_THREAD_GET = "mail_thread_get";
    ACCOUNTS_GET = "accounts_get";
    ACCOUNTS_CLIENT_SET = "accounts_client_set";
    ACCOUNT_CONNECT_BEGIN = "account_connect_begin";
    ACCOUNT_CONNECT_FINISH = "account_connect_finish";
    ACCOUNT_CHOOSE = "account_choose";
    ACCOUNT_DISCONNECT = "account_disconnect";
    SETTINGS_GET = "settings_get";
    SETTINGS_MODE_SET = "settings_mode_set";
    SETTINGS_MODEL_SET = "settings_model_set";
    SETTINGS_MODEL_TEST = "settings_model_test";
    SETTINGS_LOCAL_MODEL_INSPECT = "settings_local_model_inspect";
    SETTINGS_LOCAL_MODEL_PROBE = "settings_local_model_probe";
    SETTINGS_LOCAL_MODEL_OVERRIDE = "settings_local_model_override";
    LOCAL_MODEL_ACTIVITY = "local_model_activity";
    LOCAL_MODEL_PROBE_PROGRESS = "local_model_probe_progress";
    LOCAL_MODEL_CHOOSE_FILE = "local_model_choose_file";
    SETTINGS_HARNESS_SET = "settings_harness_set";
    SETTINGS_ENDPOINT_SET = "settings_endpoint_set";
    SETTINGS_ENDPOINT_REGENERATE = "settings_endpoint_regenerate";
    SETTINGS_UNDO_WINDOW_SET = "settings_undo_window_set";
    SETTINGS_WEB_SEARCH_GET = "settings_web_search_get";
    SETTINGS_WEB_SEARCH_SET = "settings_web_search_set";
    BACKUP_SETTINGS_GET = "backup_settings_get";
    BACKUP_SCHEDULE_SET = "backup_schedule_set";
    BACKUP_CREATE = "backup_create";
    BACKUP_RESTORE = "backup_restore";
    COMPUTER_STATUS = "computer_status";
    COMPUTER_ENABLE = "computer_enable";
    COMPUTER_START = "computer_start";
    COMPUTER_STOP = "computer_stop";
    COMPUTER_RESET = "computer_reset";
    COMPUTER_RECREATE = "computer_recreate";
    COMPUTER_REBUILD = "computer_rebuild";
    COMPUTER_RUN = "computer_run";
    COMPUTER_RUN_STOP = "computer_run_stop";
    COMPUTER_LIST = "computer_list";
    COMPUTER_READ = "computer_read";
    COMPUTER_WRITE = "computer_write";
    BROWSER_SCREENSHOT = "browser_screenshot";
    BROWSER_LIST = "browser_list";
    BROWSER_CLOSE = "browser_close";
    BROWSER_USE_PROFILE = "browser_use_profile";
    BROWSER_DELETE_PROFILE = "browser_delete_profile";
    BROWSER_CONTROL_START = "browser_control_start";
    BROWSER_CONTROL_INPUT = "browser_control_input";
    BROWSER_CONTROL_STOP = "browser_control_stop";
    BROWSER_CONTROL_RELEASE_ALL = "browser_control_release_all";
    DEVICE_LIST = "device_list";
    DEVICE_PAIR_OFFER = "device_pair_offer";
    DEVICE_REVOKE = "device_revoke";
    HOST_LINK_STATUS = "host_link_status";
    HOST_LINK_PAIR = "host_link_pair";
    HOST_LINK_FORGET = "host_link_forget";
    HOST_CALL = "host_call";
    HOST_STREAM = "host_stream";
    MCP_SERVER_LIST = "mcp_server_list";
    MCP_SERVER_SAVE = "mcp_server_save";
    MCP_SERVER_TEST = "mcp_server_test";
    MCP_SERVER_ENABLE = "mcp_server_enable";
    MCP_SERVER_REMOVE = "mcp_server_remove";
    MCP_SERVER_LOG = "mcp_server_log";
    MCP_TOOL_POLICY = "mcp_tool_policy";
    DOCUMENT_FOLDER_LIST = "document_folder_list";
    DOCUMENT_FOLDER_ADD = "document_folder_add";
    DOCUMENT_FOLDER_REMOVE = "document_folder_remove";
    DOCUMENT_RESCAN = "document_rescan";
    DOCUMENT_SEARCH = "document_search";
    DOCUMENT_PREVIEW = "document_preview";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_snake_case_resource_verb() {
        let mut seen = std::collections::BTreeSet::new();
        for command in ALL {
            let name = command.name();
            assert!(seen.insert(name), "{name} is declared twice");
            assert!(name.contains('_') && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{name}");
        }
        assert_eq!(ALL.len(), NAMES.len());
        assert_eq!(RUN_START.permission(), "allow-run-start");
    }
}
