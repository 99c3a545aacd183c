//! Files, directories and symbolic links.
//!
//! Nothing here follows a symbolic link at a managed path: it is read with
//! `lstat` and opened with `O_NOFOLLOW`; content is replaced by renaming a
//! temporary file over the path ([`disk::write_atomic`]). A missing parent
//! directory is a failure, never created on the quiet.
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

use std::fs::{self, Metadata};
use std::io::{self, Read};

use super::{Context, Failure};
use crate::disk::{self, Attrs};
use crate::root::Root;

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
    match fs::symlink_metadata(root.path(path)) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_failure(path, "inspect", e)),
    }
}

/// What kind of thing stands at a path, for messages.
fn what_is(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a file"
    } else {
        "a special file"
    }
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
    match fs::metadata(root.path(parent)) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Failure::new(format!(
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

fn read_nofollow(root: &Root, path: &str) -> Result<Vec<u8>, Failure> {
    let mut f = disk::open_nofollow(&root.path(path)).map_err(|e| io_failure(path, "read", e))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| io_failure(path, "read", e))?;
    Ok(buf)
}

fn sync_parent(root: &Root, path: &str) -> Result<(), Failure> {
    let parent = parent_of(path);
    disk::sync_dir(&root.path(parent)).map_err(|e| io_failure(parent, "flush", e))
}

/// Removes a file or a symbolic link (never what it points to).
fn remove(root: &Root, path: &str) -> Result<(), Failure> {
    match fs::remove_file(root.path(path)) {
        Ok(()) => sync_parent(root, path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_failure(path, "remove", e)),
    }
}

/// Sets the attributes that changed on an existing file or directory,
/// opened without following a link.
fn change_attrs(root: &Root, path: &str, want_dir: bool, attrs: Attrs) -> Result<(), Failure> {
    let f = disk::open_nofollow(&root.path(path)).map_err(|e| io_failure(path, "open", e))?;
    let m = f.metadata().map_err(|e| io_failure(path, "inspect", e))?;
    if m.is_dir() != want_dir {
        return Err(Failure::new(format!(
            "{path} changed under Datum: it is now {}",
            what_is(&m)
        )));
    }
    disk::set_attrs(&f, attrs).map_err(|e| io_failure(path, "change the attributes of", e))
}
