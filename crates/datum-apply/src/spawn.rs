//! Entering the machine a command runs on: chrooted into the `--root`
//! directory, as its user with that user's groups, in its working
//! directory. These steps run in the command's own process, between `fork`
//! and `exec`, so nothing a fleet gives a command (its environment above
//! all: an `LD_PRELOAD` is the classic) ever reaches a program of the host
//! such as `chroot(8)`: the first program started is the command itself,
//! already inside the root, already its user.
//!
//! This is the one module of Datum with `unsafe` code, and it is one call:
//! [`CommandExt::pre_exec`], whose closure must do nothing a forked child
//! of a threaded process may not do. Everything it needs (paths as C
//! strings, the group list) is made before the fork; the closure only
//! makes system calls that allocate nothing and take no lock: `chroot`,
//! `chdir`, `prctl`, `setgroups`, `setgid`, `setuid`.
//!
//! Under a root the command also loses `CAP_SYS_CHROOT` (dropped from the
//! bounding set, so no program it starts gets it back), which closes the
//! textbook way out of a chroot (chroot again into a subdirectory, then
//! climb `..`). It is not a sandbox: a command running as root keeps every
//! other power root has (see `docs/applying.md`, "What `--root` confines").

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use nix::unistd::{Gid, Uid};

/// `CAP_SYS_CHROOT` in `<linux/capability.h>`: the capability `chroot(2)`
/// needs.
const CAP_SYS_CHROOT: libc::c_ulong = 18;

/// The account a command becomes: its uid, primary group and
/// supplementary groups (as `initgroups` would set them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ids {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// Where and as whom a command starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The directory to chroot into; `None` runs on `/`.
    pub root: Option<CString>,
    /// `None` keeps the account running Datum.
    pub ids: Option<Ids>,
    /// The working directory, as the command sees it (inside the root).
    pub cwd: CString,
}

impl Entry {
    /// An entry into `root` (or `/`), as `ids`, in `cwd`. `None` when a path
    /// holds a NUL byte, which no system call can take.
    pub fn new(root: Option<&Path>, ids: Option<Ids>, cwd: &str) -> Option<Entry> {
        Some(Entry {
            root: match root {
                Some(dir) => Some(CString::new(dir.as_os_str().as_bytes()).ok()?),
                None => None,
            },
            ids,
            cwd: CString::new(cwd).ok()?,
        })
    }

    /// Has `cmd` take these steps in its own process before it runs: chroot
    /// (then `/`, and `CAP_SYS_CHROOT` dropped), groups, group, user, then
    /// the working directory, which is looked up inside the root as the
    /// user. A step that fails makes `spawn` fail with its error, and the
    /// command never runs.
    #[allow(unsafe_code)]
    pub fn prepare(self, cmd: &mut Command) {
        let Entry { root, ids, cwd } = self;
        let ids = ids.map(|i| {
            let groups: Vec<Gid> = i.groups.iter().copied().map(Gid::from_raw).collect();
            (Uid::from_raw(i.uid), Gid::from_raw(i.gid), groups)
        });
        let steps = move || -> io::Result<()> {
            if let Some(root) = &root {
                nix::unistd::chroot(root.as_c_str())?;
                nix::unistd::chdir(c"/")?;
                // SAFETY: prctl(PR_CAPBSET_DROP) takes plain integers and
                // touches no memory of this process.
                if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_CHROOT, 0, 0, 0) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if let Some((uid, gid, groups)) = &ids {
                nix::unistd::setgroups(groups)?;
                nix::unistd::setgid(*gid)?;
                nix::unistd::setuid(*uid)?;
            }
            nix::unistd::chdir(cwd.as_c_str())?;
            Ok(())
        };
        // SAFETY: the closure runs in the child between fork and exec. It
        // allocates nothing (every path and the group list were made above,
        // and nix passes a `CStr` and a slice straight to the kernel), takes
        // no lock and touches no state shared with other threads; its only
        // calls are async-signal-safe system calls. Its errors are plain
        // errno values (`io::Error::from_raw_os_error`, no allocation).
        unsafe {
            cmd.pre_exec(steps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_nul_byte_makes_no_entry() {
        assert_eq!(Entry::new(None, None, "/srv\0x"), None);
        let e = Entry::new(Some(Path::new("/r")), None, "/srv").unwrap();
        assert_eq!(e.root.as_deref(), Some(c"/r"));
        assert_eq!(e.cwd.as_c_str(), c"/srv");
    }

    #[test]
    fn on_slash_the_command_runs_in_its_directory_as_datum() {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("pwd");
        Entry::new(None, None, &dir.path().display().to_string())
            .unwrap()
            .prepare(&mut cmd);
        let out = cmd.output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim_end(),
            dir.path().canonicalize().unwrap().display().to_string()
        );
    }

    #[test]
    fn a_missing_directory_stops_the_command_before_it_runs() {
        let mut cmd = Command::new("true");
        Entry::new(None, None, "/nonexistent/dir")
            .unwrap()
            .prepare(&mut cmd);
        let err = cmd.spawn().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    }
}
