//! The isolation checks made before every attach: the container (and its volume) as the engine
//! reports them must be exactly what [`super::spec`] creates. Anyone with the Docker socket can
//! replace or change a container under Hearth's name; this is what keeps a command from running
//! in one that has the network, the host's files or more privileges.
//!
//! Each check is a named [`Predicate`], tried in order; the first that fails is reported, with
//! what the engine showed (settings only: never file contents or environment values beyond the
//! names), so the owner knows what changed and what to do.

use std::collections::HashMap;
use std::fmt;

use bollard::models::{
    ContainerInspectResponse, HostConfig, HostConfigCgroupnsModeEnum, MountType, RestartPolicyNameEnum, Volume, VolumeScopeEnum,
};

use super::spec::{self, ComputerSpec};

/// One isolation property. The order is the order of the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Predicate {
    /// The container's name is Hearth's.
    Name,
    /// It runs Hearth's image (by id, not tag: a retagged image is another image).
    Image,
    /// As uid:gid 1000:1000.
    User,
    /// In /workspace.
    WorkingDir,
    /// With exactly Hearth's labels (and the image's own).
    Labels,
    /// With exactly HOME, LANG and PATH, at Hearth's values.
    Env,
    /// Its main process is `sleep infinity`.
    Entrypoint,
    /// With no command arguments.
    Cmd,
    /// With no health check (it would run commands on a timer, beside Hearth's).
    NoHealthcheck,
    /// With the engine's init as PID 1 (it reaps orphaned processes).
    Init,
    /// With networking disabled in its config.
    NetworkDisabled,
    /// On a read-only root file system.
    ReadOnlyRoot,
    /// Not privileged.
    NotPrivileged,
    /// With every capability dropped.
    CapDropAll,
    /// And none added back.
    NoCapAdd,
    /// In network mode none.
    NetworkMode,
    /// Attached to the `none` network only (or, before it starts, to none at all).
    Networks,
    /// With 512 MiB of memory.
    Memory,
    /// And no swap beyond it.
    MemorySwap,
    /// With at most 128 processes.
    PidsLimit,
    /// With one CPU.
    Cpus,
    /// With no bind mounts.
    NoBinds,
    /// No devices.
    NoDevices,
    /// No device requests (GPUs).
    NoDeviceRequests,
    /// No device cgroup rules.
    NoDeviceCgroupRules,
    /// No published ports.
    NoPortBindings,
    /// Nor all ports published.
    NoPublishAll,
    /// No volumes taken from other containers.
    NoVolumesFrom,
    /// In its own process namespace.
    PidMode,
    /// In its own UTS namespace.
    UtsMode,
    /// In the user namespace the engine gives every container.
    UsernsMode,
    /// With a private IPC namespace.
    IpcMode,
    /// With exactly one security option: no-new-privileges. (After the namespace modes: the
    /// engine adds `label=disable` when one of them is the host's, and that one is named.)
    SecurityOptions,
    /// In the engine's default cgroup (no cgroup-parent escape).
    CgroupParent,
    /// In its own cgroup namespace (asked for: the engine's default may be the host's).
    CgroupnsMode,
    /// With the engine's masked /proc and /sys paths (never unmasked).
    MaskedPaths,
    /// And its read-only ones.
    ReadonlyPaths,
    /// With the OOM killer left on (the memory limit holds by it).
    OomKillEnabled,
    /// On the engine's default runtime.
    Runtime,
    /// With no kernel parameters changed.
    NoSysctls,
    /// In no extra groups.
    NoGroupAdd,
    /// Never restarted by the engine.
    RestartNo,
    /// With exactly the one tmpfs, /tmp, with exactly its options.
    Tmpfs,
    /// With exactly one mount: the workspace volume, read-write, at /workspace.
    WorkspaceMount,
    /// The volume is Hearth's, by name.
    VolumeName,
    /// On the local driver.
    VolumeDriver,
    /// With local scope.
    VolumeScope,
    /// With no driver options (which could make it a bind of a host folder).
    VolumeOptions,
    /// With exactly Hearth's labels.
    VolumeLabels,
}

impl Predicate {
    /// The predicate's name, as the owner sees it.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// All of them, in check order.
    pub fn all() -> impl Iterator<Item = Predicate> {
        <Self as strum::IntoEnumIterator>::iter()
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The first check that failed, and what the engine showed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the computer's container failed the isolation check `{predicate}` (found {found}), so nothing was run in it. \
     It was changed outside Hearth, or made by an older Hearth: Recreate it in Settings → Computer (its files in \
     /workspace stay), or Reset it (files too)"
)]
pub struct Mismatch {
    /// Which check.
    pub predicate: Predicate,
    /// What the engine showed (a setting, never content).
    pub found: String,
}

/// Checks `container` (and `volume`, the volume mounted at /workspace) against `spec`, whose
/// image has id `image_id` and labels `image_labels`.
pub fn verify(
    spec: &ComputerSpec,
    image_id: &str,
    image_labels: &HashMap<String, String>,
    container: &ContainerInspectResponse,
    volume: &Volume,
) -> Result<(), Mismatch> {
    let empty = HostConfig::default();
    let host = container.host_config.as_ref().unwrap_or(&empty);
    let config = container.config.clone().unwrap_or_default();
    let mut expected_labels = image_labels.clone();
    expected_labels.extend(spec.labels());

    for predicate in Predicate::all() {
        let found: Option<String> = match predicate {
            Predicate::Name => differs(container.name.as_deref(), Some(format!("/{}", spec.container_name()).as_str())),
            Predicate::Image => differs(container.image.as_deref(), Some(image_id)),
            Predicate::User => differs(config.user.as_deref(), Some(spec::USER)),
            Predicate::WorkingDir => differs(config.working_dir.as_deref(), Some(spec::WORKSPACE)),
            Predicate::Labels => {
                let labels = config.labels.clone().unwrap_or_default();
                (labels != expected_labels).then(|| sorted_keys(&labels))
            }
            Predicate::Env => {
                let env = config.env.clone().unwrap_or_default();
                let mut want: Vec<&str> = spec::ENV.to_vec();
                let mut have: Vec<&str> = env.iter().map(String::as_str).collect();
                want.sort_unstable();
                have.sort_unstable();
                // Names only: a value may be a secret someone put there.
                (have != want).then(|| format!("{:?}", env.iter().map(|e| e.split('=').next().unwrap_or("")).collect::<Vec<_>>()))
            }
            // Counts, not words: a command line may hold a secret someone put there.
            Predicate::Entrypoint => {
                let entry = config.entrypoint.clone().unwrap_or_default();
                (entry != spec::ENTRYPOINT).then(|| format!("an entrypoint of {} words", entry.len()))
            }
            Predicate::Cmd => config.cmd.as_ref().filter(|cmd| !cmd.is_empty()).map(|cmd| format!("a command of {} words", cmd.len())),
            Predicate::Init => flag(host.init, true),
            Predicate::NoHealthcheck => config
                .healthcheck
                .as_ref()
                .filter(|h| h.test.as_ref().is_some_and(|t| !t.is_empty() && t[0] != "NONE"))
                .map(|_| "a health check".to_owned()),
            Predicate::NetworkDisabled => flag(config.network_disabled, true),
            Predicate::ReadOnlyRoot => flag(host.readonly_rootfs, true),
            Predicate::NotPrivileged => flag(host.privileged, false),
            Predicate::CapDropAll => {
                let drop = host.cap_drop.clone().unwrap_or_default();
                (drop.len() != 1 || !drop[0].eq_ignore_ascii_case("ALL")).then(|| format!("{drop:?}"))
            }
            Predicate::NoCapAdd => some_items(host.cap_add.as_deref()),
            Predicate::SecurityOptions => {
                let opts = host.security_opt.clone().unwrap_or_default();
                (opts.len() != 1 || !matches!(opts[0].as_str(), "no-new-privileges" | "no-new-privileges:true"))
                    .then(|| format!("{opts:?}"))
            }
            Predicate::NetworkMode => differs(host.network_mode.as_deref(), Some("none")),
            Predicate::Networks => {
                let networks = container.network_settings.as_ref().and_then(|n| n.networks.as_ref());
                let names: Vec<&String> = networks.map(|n| n.keys().collect()).unwrap_or_default();
                // A created container is on no network until it starts; then only on `none`.
                let only_none = names.is_empty() || (names.len() == 1 && names[0] == "none");
                (!only_none).then(|| format!("{names:?}"))
            }
            Predicate::Memory => number(host.memory, spec::MEMORY_BYTES),
            Predicate::MemorySwap => number(host.memory_swap, spec::MEMORY_BYTES),
            Predicate::PidsLimit => number(host.pids_limit, spec::PIDS_LIMIT),
            Predicate::Cpus => number(host.nano_cpus, spec::NANO_CPUS)
                .or_else(|| host.cpu_quota.filter(|&q| q != 0).map(|q| format!("a CPU quota of {q}"))),
            Predicate::NoBinds => some_items(host.binds.as_deref()),
            Predicate::NoDevices => host.devices.as_ref().filter(|d| !d.is_empty()).map(|d| format!("{} devices", d.len())),
            Predicate::NoDeviceRequests => {
                host.device_requests.as_ref().filter(|d| !d.is_empty()).map(|d| format!("{} device requests", d.len()))
            }
            Predicate::NoDeviceCgroupRules => some_items(host.device_cgroup_rules.as_deref()),
            Predicate::NoPortBindings => {
                host.port_bindings.as_ref().filter(|p| !p.is_empty()).map(|p| format!("ports {:?}", sorted_keys(p)))
            }
            Predicate::NoPublishAll => flag(host.publish_all_ports, false),
            Predicate::NoVolumesFrom => some_items(host.volumes_from.as_deref()),
            Predicate::PidMode => empty_mode(host.pid_mode.as_deref()),
            Predicate::UtsMode => empty_mode(host.uts_mode.as_deref()),
            Predicate::UsernsMode => empty_mode(host.userns_mode.as_deref()),
            Predicate::IpcMode => differs(host.ipc_mode.as_deref(), Some("private")),
            Predicate::CgroupParent => empty_mode(host.cgroup_parent.as_deref()),
            Predicate::CgroupnsMode => match host.cgroupns_mode {
                Some(HostConfigCgroupnsModeEnum::PRIVATE) => None,
                other => Some(other.map_or_else(|| "the engine's default".to_owned(), |m| m.to_string())),
            },
            // The engine fills in its defaults when none are asked for; an empty list is
            // `systempaths=unconfined`.
            Predicate::MaskedPaths => match host.masked_paths.as_deref() {
                Some(paths) if paths.iter().any(|p| p == "/proc/kcore") => None,
                other => Some(format!("{} masked paths", other.map_or(0, <[String]>::len))),
            },
            Predicate::ReadonlyPaths => match host.readonly_paths.as_deref() {
                Some(paths) if paths.iter().any(|p| p == "/proc/sys") => None,
                other => Some(format!("{} read-only paths", other.map_or(0, <[String]>::len))),
            },
            Predicate::OomKillEnabled => flag(host.oom_kill_disable, false),
            Predicate::Runtime => match host.runtime.as_deref() {
                None | Some("" | "runc") => None,
                Some(other) => Some(other.to_owned()),
            },
            Predicate::NoSysctls => host.sysctls.as_ref().filter(|s| !s.is_empty()).map(sorted_keys),
            Predicate::NoGroupAdd => some_items(host.group_add.as_deref()),
            Predicate::RestartNo => {
                let name = host.restart_policy.as_ref().and_then(|p| p.name);
                match name {
                    None | Some(RestartPolicyNameEnum::NO | RestartPolicyNameEnum::EMPTY) => None,
                    Some(other) => Some(other.to_string()),
                }
            }
            Predicate::Tmpfs => {
                let tmpfs = host.tmpfs.clone().unwrap_or_default();
                let ok = tmpfs.len() == 1 && tmpfs.get(spec::TMPFS_PATH).is_some_and(|o| o == spec::TMPFS_OPTIONS);
                (!ok).then(|| format!("{tmpfs:?}"))
            }
            Predicate::WorkspaceMount => workspace_mount(spec, container, host),
            Predicate::VolumeName => differs(Some(volume.name.as_str()), Some(spec.volume_name().as_str())),
            Predicate::VolumeDriver => differs(Some(volume.driver.as_str()), Some("local")),
            Predicate::VolumeScope => match volume.scope {
                Some(VolumeScopeEnum::LOCAL) => None,
                other => Some(format!("{other:?}")),
            },
            Predicate::VolumeOptions => (!volume.options.is_empty()).then(|| sorted_keys(&volume.options)),
            Predicate::VolumeLabels => (volume.labels != spec.labels()).then(|| sorted_keys(&volume.labels)),
        };
        if let Some(found) = found {
            return Err(Mismatch { predicate, found });
        }
    }
    Ok(())
}

/// Exactly one mount, in both the config and the engine's list: the workspace volume, rw.
fn workspace_mount(spec: &ComputerSpec, container: &ContainerInspectResponse, host: &HostConfig) -> Option<String> {
    let volume = spec.volume_name();
    let configured = host.mounts.as_deref().unwrap_or_default();
    let config_ok = matches!(configured, [m] if m.typ == Some(MountType::VOLUME)
        && m.source.as_deref() == Some(volume.as_str())
        && m.target.as_deref() == Some(spec::WORKSPACE)
        && m.read_only != Some(true));
    let mounted = container.mounts.as_deref().unwrap_or_default();
    let mounted_ok = matches!(mounted, [m] if m.typ.as_deref() == Some("volume")
        && m.name.as_deref() == Some(volume.as_str())
        && m.destination.as_deref() == Some(spec::WORKSPACE)
        && m.rw == Some(true));
    (!(config_ok && mounted_ok)).then(|| {
        let list: Vec<String> =
            mounted.iter().map(|m| format!("{} at {}", m.typ.as_deref().unwrap_or("?"), m.destination.as_deref().unwrap_or("?"))).collect();
        format!("{} configured mounts; mounted: {list:?}", configured.len())
    })
}

fn differs(found: Option<&str>, want: Option<&str>) -> Option<String> {
    (found != want).then(|| format!("{found:?}"))
}

fn flag(found: Option<bool>, want: bool) -> Option<String> {
    (found.unwrap_or(false) != want).then(|| format!("{found:?}"))
}

fn number(found: Option<i64>, want: i64) -> Option<String> {
    (found != Some(want)).then(|| format!("{found:?}"))
}

fn some_items(items: Option<&[String]>) -> Option<String> {
    items.filter(|i| !i.is_empty()).map(|i| format!("{} entries", i.len()))
}

fn empty_mode(mode: Option<&str>) -> Option<String> {
    mode.filter(|m| !m.is_empty()).map(str::to_owned)
}

fn sorted_keys<V>(map: &HashMap<String, V>) -> String {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    format!("{keys:?}")
}
