//! Filesystem operations that are durable and never follow a symbolic link
//! at the path they are given: what a crash or a planted link must not
//! break.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fstatat};
use nix::unistd::{Gid, Uid, UnlinkatFlags, fchown, symlinkat, unlinkat};

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

/// The directory holding `path`, opened, and the last component's name.
fn open_parent(path: &Path) -> io::Result<(File, OsString)> {
    let dir = parent(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} names no file", path.display())))?;
    let fd = nix::fcntl::open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    Ok((File::from(fd), name.to_owned()))
}

/// The prefix of the temporary names used beside `path`:
/// `.NAME.datum-` followed by random characters.
pub fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    prefix_of(OsStr::new(&name))
}

fn prefix_of(name: &OsStr) -> String {
    format!(".{}.datum-", name.to_string_lossy())
}

/// How many random characters end a temporary name.
const TEMP_RANDOM: usize = 6;

/// Whether `entry` is a temporary name this module makes (for `name`, when
/// given): `.NAME.datum-` and six letters or digits.
pub fn is_temp_name(entry: &OsStr, name: Option<&OsStr>) -> bool {
    let entry = entry.as_bytes();
    let Some(rest) = entry.len().checked_sub(TEMP_RANDOM + ".datum-".len()) else {
        return false;
    };
    let (head, tail) = entry.split_at(rest);
    let random_ok = tail[".datum-".len()..]
        .iter()
        .all(u8::is_ascii_alphanumeric);
    let head_ok = match name {
        Some(n) => head.len() == n.len() + 1 && head[0] == b'.' && &head[1..] == n.as_bytes(),
        None => head.len() > 1 && head[0] == b'.',
    };
    tail.starts_with(b".datum-") && random_ok && head_ok
}

/// A fresh temporary name for `name`: `.NAME.datum-` and six random
/// letters or digits.
fn temp_name(name: &OsStr) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut h = std::hash::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    let mut n = h.finish();
    let mut bytes = Vec::with_capacity(name.len() + 14);
    bytes.push(b'.');
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(b".datum-");
    for _ in 0..TEMP_RANDOM {
        bytes.push(CHARS[(n % CHARS.len() as u64) as usize]);
        n /= CHARS.len() as u64;
    }
    OsString::from_vec(bytes)
}

/// Creates a temporary file for `name` in `dir`, new and not a link.
fn create_temp(dir: &File) -> impl FnMut(&OsStr) -> io::Result<(File, OsString)> + '_ {
    move |name| {
        for _ in 0..100 {
            let tmp = temp_name(name);
            match openat(
                dir,
                tmp.as_os_str(),
                OFlag::O_WRONLY
                    | OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o600),
            ) {
                Ok(fd) => return Ok((File::from(fd), tmp)),
                Err(Errno::EEXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::other("no free temporary name"))
    }
}

/// Replaces `path` with `bytes` all at once: a temporary file in the same
/// directory is written, given its attributes, flushed to disk and renamed
/// over `path`, then the directory is flushed. A reader, or a machine that
/// loses power, sees the old file or the new one, never a mix. A symbolic
/// link at `path` is replaced, never followed.
pub fn write_atomic(path: &Path, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    write_atomic_in(&dir, &name, bytes, attrs)
}

/// [`write_atomic`] for the entry `name` of the open directory `dir`.
pub fn write_atomic_in(dir: &File, name: &OsStr, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    remove_stale_temps(dir, Some(name))?;
    let (mut file, tmp) = create_temp(dir)(name)?;
    let written = (|| {
        file.write_all(bytes)?;
        set_attrs(&file, attrs)?;
        file.sync_all()?;
        renameat(dir, tmp.as_os_str(), dir, name).map_err(io::Error::from)
    })();
    if let Err(e) = written {
        let _ = unlinkat(dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        return Err(e);
    }
    dir.sync_all()
}

/// Points a symbolic link at `target`, replacing whatever link is at `path`
/// in one rename.
pub fn symlink_atomic(target: &str, path: &Path) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    symlink_atomic_in(&dir, &name, target)
}

/// [`symlink_atomic`] for the entry `name` of the open directory `dir`.
pub fn symlink_atomic_in(dir: &File, name: &OsStr, target: &str) -> io::Result<()> {
    remove_stale_temps(dir, Some(name))?;
    let mut made = None;
    for _ in 0..100 {
        let tmp = temp_name(name);
        match symlinkat(target, dir, tmp.as_os_str()) {
            Ok(()) => {
                made = Some(tmp);
                break;
            }
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    let tmp = made.ok_or_else(|| io::Error::other("no free temporary name"))?;
    if let Err(e) = renameat(dir, tmp.as_os_str(), dir, name) {
        let _ = unlinkat(dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        return Err(e.into());
    }
    dir.sync_all()
}

/// Removes what a run killed while writing left in `dir`: regular files
/// and symbolic links with a temporary name (of `name`, when given; of any
/// name otherwise). Gives the names removed.
pub fn remove_stale_temps(dir: &File, name: Option<&OsStr>) -> io::Result<Vec<OsString>> {
    let stale = stale_temps(dir, name)?;
    for n in &stale {
        match unlinkat(dir, n.as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(stale)
}

/// The temporary files [`remove_stale_temps`] would remove, sorted.
pub fn stale_temps(dir: &File, name: Option<&OsStr>) -> io::Result<Vec<OsString>> {
    let listing = Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let mut stale = Vec::new();
    for entry in listing.into_iter() {
        let entry = entry.map_err(io::Error::from)?;
        let entry_name = OsStr::from_bytes(entry.file_name().to_bytes());
        if !is_temp_name(entry_name, name) {
            continue;
        }
        let st = match fstatat(dir, entry_name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFREG || kind == SFlag::S_IFLNK {
            stale.push(entry_name.to_owned());
        }
    }
    stale.sort();
    Ok(stale)
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
