//! `hearth --restore FILE --data-dir FOLDER [--passphrase-stdin]`: restores a backup from the
//! command line, without opening a window or any data folder, then exits.
//!
//! For the owner whose window does not start (a lost or damaged data folder). The passphrase,
//! when the backup holds the vault key, is read as one line from standard input — never from
//! the command line or the environment, where other programs can read it.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use hearth_core::vault::SecretString;

/// The flag that selects this mode (first on the command line).
pub const RESTORE: &str = "--restore";

const USAGE: &str = "usage: hearth --restore BACKUP_FILE --data-dir NEW_FOLDER [--passphrase-stdin]";

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    file: PathBuf,
    target: PathBuf,
    passphrase_stdin: bool,
}

fn parse(args: &[OsString]) -> Result<Request, String> {
    let mut file = None;
    let mut target = None;
    let mut passphrase_stdin = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.to_str() {
            Some(RESTORE) => file = Some(rest.next().ok_or("--restore needs the backup file")?.into()),
            Some("--data-dir") => target = Some(rest.next().ok_or("--data-dir needs the folder to restore into")?.into()),
            Some("--passphrase-stdin") => passphrase_stdin = true,
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    match (file, target) {
        (Some(file), Some(target)) => Ok(Request { file, target, passphrase_stdin }),
        (None, _) => Err("name the backup file after --restore".to_owned()),
        (Some(_), None) => Err("name a new or empty folder to restore into with --data-dir".to_owned()),
    }
}

/// Runs the restore; the process's exit code (0 done, 1 refused or failed, 2 wrong usage).
pub fn run(args: &[OsString]) -> i32 {
    let request = match parse(args) {
        Ok(request) => request,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "{message}\n{USAGE}");
            return 2;
        }
    };
    let passphrase = if request.passphrase_stdin {
        let mut line = String::new();
        if let Err(err) = std::io::stdin().lock().read_line(&mut line) {
            let _ = writeln!(std::io::stderr(), "the passphrase could not be read from standard input: {err}");
            return 1;
        }
        Some(SecretString::from(line.trim_end_matches(['\r', '\n']).to_owned()))
    } else {
        None
    };
    match hearth_core::backup::restore(&request.file, &request.target, passphrase.as_ref()) {
        Ok(restored) => {
            let view = restored.view();
            let _ = writeln!(
                std::io::stdout(),
                "Restored {} files ({} bytes) into {}.\n{}",
                view.entries,
                view.bytes,
                view.target,
                view.start_hint
            );
            0
        }
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "{err}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_restore_flags_parse_in_any_order_and_refuse_the_rest() {
        let want = Request { file: "b.tar".into(), target: "/new".into(), passphrase_stdin: true };
        assert_eq!(parse(&args(&["--restore", "b.tar", "--data-dir", "/new", "--passphrase-stdin"])), Ok(want));
        assert!(parse(&args(&["--restore", "b.tar"])).is_err());
        assert!(parse(&args(&["--restore", "b.tar", "--data-dir"])).is_err());
        assert!(parse(&args(&["--restore", "b.tar", "--data-dir", "/new", "--force"])).is_err());
    }
}
