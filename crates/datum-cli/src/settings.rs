//! The environment, read once before any command runs (as uv's
//! `settings.rs` does): where the fleet is, the current directory, who runs
//! Datum, the editor, and where a secret's scratch copy goes. Commands take
//! what they need from here; nothing else in the binary, and nothing in the
//! libraries, reads the environment. (`PATH` is not read at all: apply
//! starts commands with a fixed one, and the tools Datum runs itself are
//! found by the system's own lookup.)

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use datum_apply::trust::Runner;

/// What the commands need to know of the process they run in.
#[derive(Debug)]
pub struct Settings {
    /// `--fleet DIR`, else `DATUM_FLEET` (clap reads both).
    pub fleet: Option<PathBuf>,
    /// The current directory, or why it cannot be read.
    pub cwd: io::Result<PathBuf>,
    /// The effective user, and who ran sudo (`SUDO_UID`) when it is root.
    pub runner: Runner,
    /// `VISUAL`, else `EDITOR`, else `vi`: what `datum secret edit` runs.
    pub editor: String,
    /// Where `datum secret edit` makes its private directory.
    pub scratch: PathBuf,
}

impl Settings {
    /// This process's settings, with `fleet` from the command line.
    pub fn new(fleet: Option<PathBuf>) -> Settings {
        Settings::read(fleet, &Process)
    }

    /// The settings of a shell completion, which has no parsed command
    /// line: the fleet from `DATUM_FLEET` alone.
    pub fn completing() -> Settings {
        let fleet = Process.var("DATUM_FLEET").map(PathBuf::from);
        Settings::new(fleet)
    }

    fn read(fleet: Option<PathBuf>, env: &dyn Environment) -> Settings {
        let set = |name| env.var(name).filter(|v| !v.is_empty());
        let editor = ["VISUAL", "EDITOR"]
            .into_iter()
            .filter_map(|name| env.var(name)?.into_string().ok())
            .find(|e| !e.trim().is_empty())
            .unwrap_or_else(|| "vi".to_owned());
        // `TMPDIR` when set, else the user's runtime directory (a memory
        // file system, so the plaintext never reaches a disk), else the
        // system's (what `std::env::temp_dir` gives).
        let scratch = match (set("TMPDIR"), set("XDG_RUNTIME_DIR").map(PathBuf::from)) {
            (None, Some(runtime)) if private_to(&runtime, env.euid()) => runtime,
            _ => env
                .var("TMPDIR")
                .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from),
        };
        let sudo_uid = env.var("SUDO_UID");
        Settings {
            fleet,
            cwd: env.cwd(),
            runner: Runner::new(env.euid(), sudo_uid.as_deref().and_then(OsStr::to_str)),
            editor,
            scratch,
        }
    }

    /// The current directory, when it can be read.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref().ok()
    }
}

/// Where settings come from: the process, or a test's own values.
trait Environment {
    fn var(&self, name: &str) -> Option<OsString>;
    fn cwd(&self) -> io::Result<PathBuf>;
    fn euid(&self) -> u32;
}

/// This process.
struct Process;

impl Environment for Process {
    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
    fn cwd(&self) -> io::Result<PathBuf> {
        std::env::current_dir()
    }
    fn euid(&self) -> u32 {
        nix::unistd::geteuid().as_raw()
    }
}

/// A directory `euid` owns and nobody else may enter: a runtime directory
/// inherited from another user (`su`, `sudo -E`) is not one, and its owner
/// could swap the scratch directory made in it.
fn private_to(dir: &Path, euid: u32) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == euid && m.mode() & 0o077 == 0)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    struct Fake {
        vars: BTreeMap<&'static str, String>,
        euid: u32,
    }

    impl Environment for Fake {
        fn var(&self, name: &str) -> Option<OsString> {
            self.vars.get(name).map(OsString::from)
        }
        fn cwd(&self) -> io::Result<PathBuf> {
            Err(io::Error::from(io::ErrorKind::NotFound))
        }
        fn euid(&self) -> u32 {
            self.euid
        }
    }

    fn settings(vars: &[(&'static str, &str)], euid: u32) -> Settings {
        let vars = vars.iter().map(|(k, v)| (*k, v.to_string())).collect();
        Settings::read(None, &Fake { vars, euid })
    }

    #[test]
    fn the_editor_is_visual_then_editor_then_vi() {
        let both = [("VISUAL", "code -w"), ("EDITOR", "nano")];
        assert_eq!(settings(&both, 1000).editor, "code -w");
        assert_eq!(
            settings(&[("VISUAL", " "), ("EDITOR", "nano")], 1000).editor,
            "nano"
        );
        assert_eq!(settings(&[], 1000).editor, "vi");
    }

    #[test]
    fn sudo_uid_counts_only_for_root() {
        assert_eq!(
            settings(&[("SUDO_UID", "1000")], 0).runner.invoking,
            Some(1000)
        );
        assert_eq!(
            settings(&[("SUDO_UID", "1000")], 1000).runner.invoking,
            None
        );
        assert_eq!(settings(&[], 0).runner, Runner::new(0, None));
    }

    #[test]
    fn scratch_copies_go_to_tmpdir_else_a_private_runtime_directory() {
        let runtime = tempfile::tempdir().unwrap();
        let dir = runtime.path().to_str().unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let tmp = [("TMPDIR", "/scratch"), ("XDG_RUNTIME_DIR", dir)];
        assert_eq!(settings(&tmp, me).scratch, Path::new("/scratch"));
        assert_eq!(
            settings(&[("XDG_RUNTIME_DIR", dir)], me).scratch,
            runtime.path()
        );
        // Another user's runtime directory (`su`, `sudo -E`) is not used.
        let other = settings(&[("XDG_RUNTIME_DIR", dir)], me + 1).scratch;
        assert_eq!(other, Path::new("/tmp"));
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            settings(&[("XDG_RUNTIME_DIR", dir)], me).scratch,
            Path::new("/tmp")
        );
    }
}
