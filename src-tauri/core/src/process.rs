//! Who holds a lease or claims an operation: a process named by boot, pid and start time, so a
//! restart can tell a crashed holder (interrupt its tasks now) from a live one in another
//! process (leave them). It stands apart from `tasks` and `journal`, which both name their
//! claimants by it, so neither reaches into the other for it.

/// This process, as written into `tasks.lease_owner`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity(String);

/// Whether a lease owner is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The same process is still there.
    Alive,
    /// It is gone (or the machine rebooted since).
    Dead,
    /// Cannot tell here (another OS, unreadable /proc): rely on lease expiry.
    Unknown,
}

impl ProcessIdentity {
    /// The current process.
    pub fn current() -> Self {
        let pid = std::process::id();
        Self(format!("{}:{pid}:{}", boot_id().unwrap_or_default(), start_time(pid).unwrap_or_default()))
    }

    /// The stored form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the process that wrote `owner` still runs.
    pub fn liveness(owner: &str) -> Liveness {
        let mut parts = owner.split(':');
        let (Some(boot), Some(pid), Some(started)) = (parts.next(), parts.next(), parts.next()) else {
            return Liveness::Unknown;
        };
        let (Some(current_boot), Ok(pid)) = (boot_id(), pid.parse::<u32>()) else { return Liveness::Unknown };
        if boot.is_empty() || started.is_empty() {
            return Liveness::Unknown;
        }
        if boot != current_boot {
            return Liveness::Dead;
        }
        match start_time(pid) {
            Some(now_started) if now_started == started => Liveness::Alive,
            _ => Liveness::Dead,
        }
    }
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_owned())
}

/// Field 22 of /proc/<pid>/stat: start time in clock ticks since boot (pids are reused;
/// the pair is not).
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        let me = ProcessIdentity::current();
        if cfg!(target_os = "linux") {
            assert_eq!(ProcessIdentity::liveness(me.as_str()), Liveness::Alive);
            let boot = boot_id().unwrap_or_default();
            assert_eq!(ProcessIdentity::liveness(&format!("{boot}:{}:1", std::process::id())), Liveness::Dead);
            assert_eq!(ProcessIdentity::liveness("other-boot:1:1"), Liveness::Dead);
        }
        assert_eq!(ProcessIdentity::liveness("garbage"), Liveness::Unknown);
    }
}
