//! The one description of the computer's container and volume: what `create` asks the engine
//! for, and what `isolation` checks an existing container against. Both read these constants,
//! so what is created and what is verified cannot drift apart.

use std::collections::HashMap;

use bollard::models::{
    ContainerCreateBody, HostConfig, HostConfigCgroupnsModeEnum, Mount, MountType, RestartPolicy, RestartPolicyNameEnum,
};

/// The only user commands run as (the image's `hearth`).
pub const USER: &str = "1000:1000";
/// The working directory, and the one writable place that outlives the container.
pub const WORKSPACE: &str = "/workspace";
/// The environment, exactly: nothing of the owner's is passed in.
pub const ENV: [&str; 3] = ["HOME=/workspace", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin"];
/// What the container's main process does: nothing, until a command is exec'd.
pub const ENTRYPOINT: [&str; 2] = ["sleep", "infinity"];
/// Memory, and memory plus swap (equal: no swap).
pub const MEMORY_BYTES: i64 = 512 * 1024 * 1024;
/// One CPU, in billionths.
pub const NANO_CPUS: i64 = 1_000_000_000;
/// Processes and threads: enough for builds, not for a fork bomb.
pub const PIDS_LIMIT: i64 = 128;
/// The only tmpfs, and its options as the engine stores them.
pub const TMPFS_PATH: &str = "/tmp";
/// `/tmp`'s options: 64 MiB, no executables, no devices, no set-uid.
pub const TMPFS_OPTIONS: &str = "rw,nosuid,nodev,noexec,size=67108864,mode=1777";
/// The only security option.
pub const SECURITY_OPT: &str = "no-new-privileges";
/// The label every Hearth computer (container and volume) carries.
pub const LABEL_COMPUTER: &str = "dev.hearth.computer";
/// The deployment (one Hearth data folder) it belongs to.
pub const LABEL_DEPLOYMENT: &str = "dev.hearth.deployment";
/// The owner it belongs to.
pub const LABEL_OWNER: &str = "dev.hearth.owner";

/// One computer: its image, and the deployment and owner its names and labels derive from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputerSpec {
    /// `hearth-computer:<recipe hash>`.
    pub image: String,
    /// Lower-case letters, digits and `-`, at most 32: derived from the data folder.
    pub deployment: String,
    /// The owner's id, likewise.
    pub owner: String,
}

impl ComputerSpec {
    /// A spec; `deployment` and `owner` are reduced to `[a-z0-9-]`, at most 32 characters each,
    /// so they are valid in container and volume names.
    pub fn new(image: impl Into<String>, deployment: &str, owner: &str) -> Self {
        Self { image: image.into(), deployment: name_part(deployment), owner: name_part(owner) }
    }

    /// The container's name (the engine reports it with a leading `/`).
    pub fn container_name(&self) -> String {
        format!("hearth-computer-{}-{}", self.deployment, self.owner)
    }

    /// The workspace volume's name.
    pub fn volume_name(&self) -> String {
        format!("hearth-workspace-{}-{}", self.deployment, self.owner)
    }

    /// The labels Hearth puts on the container and the volume.
    pub fn labels(&self) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_COMPUTER.to_owned(), "1".to_owned()),
            (LABEL_DEPLOYMENT.to_owned(), self.deployment.clone()),
            (LABEL_OWNER.to_owned(), self.owner.clone()),
        ])
    }

    /// What `create` sends: every setting `isolation` checks, and nothing else.
    pub fn create_body(&self) -> ContainerCreateBody {
        ContainerCreateBody {
            image: Some(self.image.clone()),
            user: Some(USER.to_owned()),
            working_dir: Some(WORKSPACE.to_owned()),
            env: Some(ENV.iter().map(|&e| e.to_owned()).collect()),
            entrypoint: Some(ENTRYPOINT.iter().map(|&e| e.to_owned()).collect()),
            labels: Some(self.labels()),
            network_disabled: Some(true),
            host_config: Some(HostConfig {
                readonly_rootfs: Some(true),
                privileged: Some(false),
                cap_drop: Some(vec!["ALL".to_owned()]),
                security_opt: Some(vec![SECURITY_OPT.to_owned()]),
                network_mode: Some("none".to_owned()),
                ipc_mode: Some("private".to_owned()),
                // The engine's init (tini) as PID 1: it reaps orphans, whose zombies would
                // otherwise hold PIDs against the limit forever (`sleep` never waits), and it
                // passes Stop's SIGTERM on, so the container ends at once instead of after
                // the grace.
                init: Some(true),
                // The engine's default on cgroup v1 hosts is the host's namespace.
                cgroupns_mode: Some(HostConfigCgroupnsModeEnum::PRIVATE),
                memory: Some(MEMORY_BYTES),
                memory_swap: Some(MEMORY_BYTES),
                nano_cpus: Some(NANO_CPUS),
                pids_limit: Some(PIDS_LIMIT),
                restart_policy: Some(RestartPolicy { name: Some(RestartPolicyNameEnum::NO), maximum_retry_count: None }),
                tmpfs: Some(HashMap::from([(TMPFS_PATH.to_owned(), TMPFS_OPTIONS.to_owned())])),
                mounts: Some(vec![Mount {
                    target: Some(WORKSPACE.to_owned()),
                    source: Some(self.volume_name()),
                    typ: Some(MountType::VOLUME),
                    read_only: Some(false),
                    ..Mount::default()
                }]),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        }
    }
}

fn name_part(raw: &str) -> String {
    let part: String =
        raw.chars().map(|c| c.to_ascii_lowercase()).map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).take(32).collect();
    if part.is_empty() { "default".to_owned() } else { part }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_for_the_engine_whatever_the_ids() {
        let spec = ComputerSpec::new("img", "Data Folder/ü", &"x".repeat(100));
        assert_eq!(spec.deployment, "data-folder--");
        assert_eq!(spec.owner.len(), 32);
        assert!(spec.container_name().chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        assert_eq!(ComputerSpec::new("img", "", "").container_name(), "hearth-computer-default-default");
    }
}
