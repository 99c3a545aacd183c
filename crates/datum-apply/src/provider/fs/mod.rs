//! Files, directories and symbolic links.
//!
//! Every path is resolved inside the root: the directories above a managed
//! path are reached through [`Root::parent`], so a symbolic link planted
//! on the way (relative or absolute) leads somewhere inside the root, never
//! out. Nothing here follows a symbolic link at a managed path itself: it
//! is looked at without following, opened with `O_NOFOLLOW`, and content is
//! replaced by renaming a temporary file over it
//! ([`datum_fs::write_atomic_in`]). A file with more than one hard link is
//! never changed in place (another of its names may be outside the root).
//! A missing parent directory is a failure, never created on the quiet.
//!
//! One provider per file (`file`, `directory`, `symlink`); what they share
//! is here (looking at a path without following it, the parent check,
//! removing, setting attributes), in `owned` (mode, owner and group) and in
//! `content` (how a content change is shown).

mod content;
mod directory;
mod file;
mod owned;
mod symlink;

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::unistd::{UnlinkatFlags, unlinkat};

use super::{Context, Failure};
use crate::root::Root;
use datum_fs::{Attrs, kind_of};

pub use content::content_change;
pub use directory::Directories;
pub use file::Files;
pub use symlink::Symlinks;

/// The mode a new file gets when the manifest sets none.
pub const NEW_FILE_MODE: u32 = 0o644;
/// The mode a new directory gets when the manifest sets none.
pub const NEW_DIR_MODE: u32 = 0o755;

/// `0644`.
pub fn mode_text(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}

fn io_failure(path: &str, what: &str, e: io::Error) -> Failure {
    Failure::new(format!("cannot {what} {path}: {e}"))
}

/// `lstat`: what is at the path itself, `None` when nothing is.
fn lstat(root: &Root, path: &str) -> Result<Option<Metadata>, Failure> {
    root.lstat(path).map_err(|e| io_failure(path, "inspect", e))
}

/// The directory holding `path` (resolved inside the root) and its name there.
fn parent(root: &Root, path: &str) -> Result<(File, std::ffi::OsString), Failure> {
    root.parent(path)
        .map_err(|e| io_failure(parent_of(path), "open", e))
}

/// Where a symbolic link at `path` points.
fn read_link(root: &Root, path: &str) -> Result<String, Failure> {
    let (dir, name) = parent(root, path)?;
    nix::fcntl::readlinkat(&dir, name.as_os_str())
        .map(|t| t.to_string_lossy().into_owned())
        .map_err(|e| io_failure(path, "read", e.into()))
}

/// The parent of an absolute path: `/etc` for `/etc/motd`.
fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// A path can only be created in a directory that exists (or, in a noop
/// run, that an earlier resource would create).
fn check_parent(root: &Root, path: &str, cx: &Context<'_>) -> Result<(), Failure> {
    let parent = parent_of(path);
    match root.open(parent, OFlag::O_PATH | OFlag::O_DIRECTORY, true) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(Errno::ENOTDIR as i32) => Err(Failure::new(format!(
            "cannot create {path}: {parent} is not a directory"
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if cx.noop && cx.pending.paths.contains(parent) {
                return Ok(());
            }
            Err(Failure::new(format!(
                "cannot create {path}: the parent directory {parent} does not exist \
                 (Datum does not create it on its own: declare a Directory resource for it)"
            )))
        }
        Err(e) => Err(io_failure(parent, "inspect", e)),
    }
}

/// Opens what is at `path` itself (never through a link there) for
/// reading; devices and FIFOs do not block.
fn open_nofollow(root: &Root, path: &str, what: &str) -> Result<File, Failure> {
    root.open(
        path,
        OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY,
        false,
    )
    .map_err(|e| io_failure(path, what, e))
}

fn sync_parent(root: &Root, path: &str) -> Result<(), Failure> {
    let (dir, _) = parent(root, path)?;
    dir.sync_all()
        .map_err(|e| io_failure(parent_of(path), "flush", e))
}

/// Removes a file or a symbolic link (never what it points to).
fn remove(root: &Root, path: &str) -> Result<(), Failure> {
    let (dir, name) = match root.parent(path) {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_failure(parent_of(path), "open", e)),
    };
    match unlinkat(&dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
        Ok(()) => dir
            .sync_all()
            .map_err(|e| io_failure(parent_of(path), "flush", e)),
        Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(io_failure(path, "remove", e.into())),
    }
}

/// Sets the attributes that changed on an existing file or directory,
/// opened without following a link. A file with another name is refused:
/// changing it would change that name too.
fn change_attrs(root: &Root, path: &str, want_dir: bool, attrs: Attrs) -> Result<(), Failure> {
    let f = open_nofollow(root, path, "open")?;
    let m = f.metadata().map_err(|e| io_failure(path, "inspect", e))?;
    if m.is_dir() != want_dir || !(m.is_dir() || m.is_file()) {
        return Err(Failure::new(format!(
            "{path} changed under Datum: it is now {}",
            kind_of(&m)
        )));
    }
    if !m.is_dir() && m.nlink() > 1 {
        return Err(hard_links(path, m.nlink()));
    }
    datum_fs::set_attrs(&f, attrs).map_err(|e| io_failure(path, "change the attributes of", e))
}

/// The directories already cleared of temporary files in this run.
#[derive(Default)]
struct Swept(std::sync::Mutex<std::collections::BTreeSet<String>>);

impl Swept {
    /// Clears the directory holding `path` of the temporary files a killed
    /// run left there (once a run): a real run removes them, a noop run
    /// only says so. Gives the notes to show.
    fn sweep(&self, root: &Root, path: &str, cx: &Context<'_>) -> Result<Vec<String>, Failure> {
        let dir_path = parent_of(path);
        {
            let mut done = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if !done.insert(dir_path.to_owned()) {
                return Ok(Vec::new());
            }
        }
        let dir = match root.parent(path) {
            Ok((dir, _)) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) if e.raw_os_error() == Some(Errno::ENOTDIR as i32) => return Ok(Vec::new()),
            Err(e) => return Err(io_failure(dir_path, "open", e)),
        };
        let found = if cx.noop {
            datum_fs::stale_temps(&dir, None)
        } else {
            datum_fs::remove_stale_temps(&dir, None)
        }
        .map_err(|e| io_failure(dir_path, "clear the temporary files of", e))?;
        let shown = |n: &std::ffi::OsString| {
            let base = dir_path.trim_end_matches('/');
            format!("{base}/{}", n.to_string_lossy())
        };
        Ok(found
            .iter()
            .map(|n| {
                if cx.noop {
                    format!(
                        "{} was left by an interrupted run; a real run removes it",
                        shown(n)
                    )
                } else {
                    format!("removed {}, left by an interrupted run", shown(n))
                }
            })
            .collect())
    }
}

/// Why a file with several names is not changed in place.
fn hard_links(path: &str, links: u64) -> Failure {
    Failure::new(format!(
        "{path} has {links} hard links: changing its mode or owner in place would change \
         every other name of the file too (which may be outside the root), and the manifest \
         gives no content to replace it with; give the File `content` or `source`, or remove \
         the other links"
    ))
}
