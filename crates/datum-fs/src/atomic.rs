//! A file replaced all at once, never through a symbolic link: a new
//! temporary file with a random name in the same directory (created
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600 until renamed), written, given its
//! attributes, flushed to disk, renamed over the target, and the directory
//! flushed. A reader, or a machine that loses power, sees the old file or
//! the new one, never a mix; a link planted at the target or at any name
//! the write could pick is replaced or refused, never written through.
//!
//! Every file Datum writes goes through [`replace`]: apply's Files and
//! state, the agent's reports, `render --all`, `bundle`, `man --out` and
//! `datum secret`.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fstatat};
use nix::unistd::{Gid, Uid, UnlinkatFlags, fchown, symlinkat, unlinkat};

/// Ownership and mode to give a file or directory; `None` leaves what a
/// new temporary file has (the writer's ids, mode 0600).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

impl Attrs {
    /// Just a mode.
    pub fn mode(mode: u32) -> Attrs {
        Attrs {
            mode: Some(mode),
            ..Attrs::default()
        }
    }
}

/// The mode a plain `create` would give a new file: 0666 less the process's
/// umask (read from `/proc/self/status`; 022 when it cannot be). What a
/// command writes for its user to read (manifests, bundles, manual pages)
/// gets it, as it did when those were opened with `create`.
pub fn output_mode() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    let umask = *UMASK.get_or_init(|| {
        fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    });
    0o666 & !umask
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

/// The directory holding `path`, opened, and the last component's name.
pub(crate) fn open_parent(path: &Path) -> io::Result<(File, OsString)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} names no file", path.display())))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((open_dir(dir)?, name.to_owned()))
}

/// Opens a directory to write in.
pub(crate) fn open_dir(dir: &Path) -> io::Result<File> {
    let fd = nix::fcntl::open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    Ok(File::from(fd))
}

/// What follows `.NAME` in a temporary name, before the random characters.
const TEMP_MARK: &[u8] = b".datum-";
/// How many random characters end a temporary name.
const TEMP_RANDOM: usize = 6;

/// The name a temporary file stands in for: `NAME` for `.NAME.datum-`
/// followed by six letters or digits; `None` for any other name.
pub fn temp_base(entry: &OsStr) -> Option<&OsStr> {
    let b = entry.as_bytes();
    let head_len = b.len().checked_sub(TEMP_RANDOM + TEMP_MARK.len())?;
    let (head, tail) = b.split_at(head_len);
    let random_ok = tail[TEMP_MARK.len()..]
        .iter()
        .all(u8::is_ascii_alphanumeric);
    (tail.starts_with(TEMP_MARK) && random_ok && head.len() > 1 && head[0] == b'.')
        .then(|| OsStr::from_bytes(&head[1..]))
}

/// Whether `entry` is a temporary name of this module (for `name`, when given).
pub fn is_temp_name(entry: &OsStr, name: Option<&OsStr>) -> bool {
    match (temp_base(entry), name) {
        (Some(base), Some(name)) => base == name,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A fresh temporary name for `name`: `.NAME.datum-` and six random
/// letters or digits.
fn temp_name(name: &OsStr) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    // std's hasher keys are random per process; the counter makes each
    // name of a process different.
    let mut h = std::hash::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    let mut n = h.finish();
    let mut bytes = Vec::with_capacity(name.len() + 1 + TEMP_MARK.len() + TEMP_RANDOM);
    bytes.push(b'.');
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(TEMP_MARK);
    for _ in 0..TEMP_RANDOM {
        bytes.push(CHARS[(n % CHARS.len() as u64) as usize]);
        n /= CHARS.len() as u64;
    }
    OsString::from_vec(bytes)
}

/// Makes something new at a fresh temporary name for `name` in `dir`,
/// trying another name while one is taken (by anything, a link included).
fn at_temp_name<T>(
    name: &OsStr,
    mut make: impl FnMut(&OsStr) -> nix::Result<T>,
) -> io::Result<(T, OsString)> {
    for _ in 0..100 {
        let tmp = temp_name(name);
        match make(&tmp) {
            Ok(made) => return Ok((made, tmp)),
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other("no free temporary name"))
}

/// Creates a temporary file for `name` in `dir`: new (never an existing
/// file, never through a link), readable by its owner only.
pub(crate) fn create_temp(dir: &File, name: &OsStr) -> io::Result<(File, OsString)> {
    at_temp_name(name, |tmp| {
        openat(dir, tmp, TEMP_FLAGS, Mode::from_bits_truncate(0o600)).map(File::from)
    })
}

/// How a temporary file is opened: created, and only if nothing (not even
/// a dangling link) has its name.
const TEMP_FLAGS: OFlag = OFlag::O_WRONLY
    .union(OFlag::O_CREAT)
    .union(OFlag::O_EXCL)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// The atomic write itself: the entry `name` of `dir` replaced by a file
/// holding `bytes` with `attrs`, through a temporary file flushed to disk
/// before the rename. The directory is not flushed: [`write_atomic_in`]
/// does that. (Many files at once go through [`crate::OutDir`], which
/// flushes once for all of them.)
pub(crate) fn replace(dir: &File, name: &OsStr, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    let (mut file, tmp) = create_temp(dir, name)?;
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
    Ok(())
}

/// Replaces `path` with `bytes` all at once (see the module's comment),
/// clearing first what an earlier, killed write of it left. A symbolic
/// link at `path` is replaced, never followed.
pub fn write_atomic(path: &Path, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    write_atomic_in(&dir, &name, bytes, attrs)
}

/// [`write_atomic`] for the entry `name` of the open directory `dir`.
pub fn write_atomic_in(dir: &File, name: &OsStr, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
    remove_stale_temps(dir, Some(name))?;
    replace(dir, name, bytes, attrs)?;
    dir.sync_all()
}

/// Points a symbolic link `name` of `dir` at `target`, replacing whatever
/// link is there in one rename.
pub fn symlink_atomic_in(dir: &File, name: &OsStr, target: &str) -> io::Result<()> {
    remove_stale_temps(dir, Some(name))?;
    let ((), tmp) = at_temp_name(name, |tmp| symlinkat(target, dir, tmp))?;
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
    let mut stale = Vec::new();
    for entry_name in list(dir)? {
        if !is_temp_name(&entry_name, name) {
            continue;
        }
        let st = match fstatat(dir, entry_name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFREG || kind == SFlag::S_IFLNK {
            stale.push(entry_name);
        }
    }
    stale.sort();
    Ok(stale)
}

/// The names in an open directory, `.` and `..` left out, unsorted.
pub(crate) fn list(dir: &File) -> io::Result<Vec<OsString>> {
    let listing = Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let mut names = Vec::new();
    for entry in listing.into_iter() {
        let entry = entry.map_err(io::Error::from)?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, symlink};

    fn names(dir: &Path) -> Vec<OsString> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_atomic_write_replaces_a_planted_link_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, "keep me").unwrap();
        let path = dir.path().join("conf");
        symlink(&target, &path).unwrap();
        write_atomic(&path, b"new", Attrs::mode(0o640)).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"keep me");
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.mode() & 0o7777, 0o640);
        assert_eq!(fs::read(&path).unwrap(), b"new");
        // Nothing is left beside it.
        assert_eq!(names(dir.path()), ["conf", "precious"]);
    }

    #[test]
    fn a_temporary_file_is_new_private_and_never_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let d = open_dir(dir.path()).unwrap();
        let (file, tmp) = create_temp(&d, OsStr::new("conf")).unwrap();
        assert_eq!(temp_base(&tmp), Some(OsStr::new("conf")));
        assert_eq!(file.metadata().unwrap().mode() & 0o7777, 0o600);
        // A link at a name the write picks (dangling, or to a file) is
        // taken, never opened: the write picks another name.
        let taken = dir.path().join(&tmp);
        fs::remove_file(&taken).unwrap();
        let target = dir.path().join("elsewhere");
        for target_exists in [false, true] {
            if target_exists {
                fs::write(&target, "keep").unwrap();
            }
            let _ = fs::remove_file(&taken);
            symlink(&target, &taken).unwrap();
            let opened = openat(
                &d,
                tmp.as_os_str(),
                TEMP_FLAGS,
                Mode::from_bits_truncate(0o600),
            );
            assert_eq!(opened.err(), Some(Errno::EEXIST));
        }
        assert_eq!(fs::read(&target).unwrap(), b"keep");
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
    fn temporary_names_are_recognised_exactly() {
        let base = |s: &str| temp_base(OsStr::new(s)).map(|b| b.to_str().unwrap().to_owned());
        assert_eq!(base(".conf.datum-Ab12Cd").as_deref(), Some("conf"));
        assert_eq!(base(".a.b.datum-000000").as_deref(), Some("a.b"));
        for not in [
            "conf.datum-Ab12Cd",
            "..datum-Ab12Cd",
            ".conf.datum-Ab12C",
            ".conf.datum-Ab12Cd7",
            ".conf.datum-Ab-2Cd",
            ".conf.tmp",
        ] {
            assert_eq!(base(not), None, "{not}");
        }
    }

    #[test]
    fn a_link_is_repointed_in_one_step() {
        let dir = tempfile::tempdir().unwrap();
        let d = open_dir(dir.path()).unwrap();
        symlink_atomic_in(&d, OsStr::new("current"), "/srv/a").unwrap();
        symlink_atomic_in(&d, OsStr::new("current"), "/srv/b").unwrap();
        assert_eq!(
            fs::read_link(dir.path().join("current")).unwrap(),
            Path::new("/srv/b")
        );
        assert_eq!(names(dir.path()), ["current"]);
    }

    #[test]
    fn outputs_get_the_mode_a_plain_create_gives() {
        let mode = output_mode();
        assert_eq!(mode & !0o666, 0);
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }
}
