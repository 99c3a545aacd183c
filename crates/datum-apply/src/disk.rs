//! Filesystem operations that are durable and never follow a symbolic link
//! at the path they are given: what a crash or a planted link must not
//! break.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use nix::fcntl::OFlag;
use nix::unistd::{Gid, Uid, fchown};

/// Ownership and mode to give a file or directory.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

/// Opens an existing file or directory without following a symbolic link at
/// `path` (`O_NOFOLLOW`): a link there is an error, not a detour.
pub fn open_nofollow(path: &Path) -> io::Result<File> {
    let flags = OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
}

/// Sets ownership, then mode (a chown clears set-id bits, so mode goes last),
/// on an open file.
pub fn set_attrs(file: &File, attrs: Attrs) -> io::Result<()> {
    if attrs.uid.is_some() || attrs.gid.is_some() {
        fchown(
            file,
            attrs.uid.map(Uid::from_raw),
            attrs.gid.map(Gid::from_raw),
        )
        .map_err(io::Error::from)?;
    }
    if let Some(mode) = attrs.mode {
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Makes a directory's entries (a rename, a new or removed name) durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The directory holding `path`.
fn parent(path: &Path) -> io::Result<&Path> {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| io::Error::other(format!("{} has no parent directory", path.display())))
}

/// The prefix of the temporary names used beside `path`:
/// `.NAME.datum-` followed by random characters.
pub fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.datum-")
}

/// Replaces `path` with `bytes` all at once: a temporary file in the same
/// directory is written, given its attributes, flushed to disk and renamed
/// over `path`, then the directory is flushed. A reader, or a machine that
/// loses power, sees the old file or the new one, never a mix. A symbolic
/// link at `path` is replaced, never followed.
pub fn write_atomic(path: &Path, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    let dir = parent(path)?;
    remove_stale_temps(path)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .tempfile_in(dir)?;
    tmp.as_file_mut().write_all(bytes)?;
    set_attrs(tmp.as_file(), attrs)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)
}

/// Points a symbolic link at `target`, replacing whatever link is at `path`
/// in one rename.
pub fn symlink_atomic(target: &str, path: &Path) -> io::Result<()> {
    let dir = parent(path)?;
    let tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .make_in(dir, |p| std::os::unix::fs::symlink(target, p))?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)
}

/// Removes what a run killed while writing `path` left beside it (regular
/// files named by [`temp_prefix`]).
fn remove_stale_temps(path: &Path) -> io::Result<()> {
    let dir = parent(path)?;
    let prefix = temp_prefix(path);
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let stale = entry.file_name().to_string_lossy().starts_with(&prefix)
            && entry.file_type()?.is_file();
        if stale {
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn an_atomic_write_replaces_a_planted_link_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, "keep me").unwrap();
        let path = dir.path().join("conf");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        write_atomic(
            &path,
            b"new",
            Attrs {
                mode: Some(0o600),
                ..Attrs::default()
            },
        )
        .unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"keep me");
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.mode() & 0o7777, 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"new");
        // Nothing is left beside it.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn a_write_clears_temporaries_an_earlier_killed_run_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("conf");
        fs::write(dir.path().join(".conf.datum-abc123"), "half").unwrap();
        fs::write(dir.path().join(".other.datum-abc123"), "not mine").unwrap();
        write_atomic(&path, b"whole", Attrs::default()).unwrap();
        assert!(!dir.path().join(".conf.datum-abc123").exists());
        assert!(dir.path().join(".other.datum-abc123").exists());
    }

    #[test]
    fn opening_refuses_a_symbolic_link() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("t"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("t"), dir.path().join("l")).unwrap();
        assert!(open_nofollow(&dir.path().join("l")).is_err());
        assert!(open_nofollow(&dir.path().join("t")).is_ok());
    }

    #[test]
    fn a_link_is_repointed_in_one_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("current");
        symlink_atomic("/srv/a", &path).unwrap();
        symlink_atomic("/srv/b", &path).unwrap();
        assert_eq!(fs::read_link(&path).unwrap(), Path::new("/srv/b"));
    }
}
