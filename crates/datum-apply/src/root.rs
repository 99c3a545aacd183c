//! The machine being converged: `/`, or a directory treated as `/`
//! (`--root`), and how user and group names become ids there.
//!
//! Under a root directory, names are looked up in `ROOT/etc/passwd` and
//! `ROOT/etc/group`, never in the running system's name service: the
//! directory's accounts are the ones its files will be owned by.
//!
//! Every path is resolved inside the root ([`crate::confine`]): a symbolic
//! link anywhere on the way, relative or absolute, leads somewhere inside
//! it, never out. The small files apply reads for itself (the host's name,
//! the state) are read only as regular files, never through a link, and no
//! more than a few kilobytes of them.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use datum_core::hint::Hinted;
use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{Gid, Group, Uid, User};

use crate::confine::Confined;
use datum_fs::Attrs;

/// Where `/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    dir: Option<PathBuf>,
}

/// An account in `/etc/passwd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswdEntry {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: String,
    pub shell: String,
}

/// A group in `/etc/group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

impl Root {
    /// The running system.
    pub fn system() -> Root {
        Root { dir: None }
    }

    /// A directory treated as `/`.
    pub fn at(dir: impl Into<PathBuf>) -> Root {
        Root {
            dir: Some(dir.into()),
        }
    }

    /// The directory given with `--root`, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Where an absolute path of the manifest is on this machine, for
    /// messages and for tools given the root (`dpkg --root`). Datum opens
    /// paths itself through [`Root::open`] and [`Root::parent`], which keep
    /// links inside the root; this path, opened as named, would not.
    pub fn path(&self, abs: &str) -> PathBuf {
        match &self.dir {
            Some(dir) => dir.join(abs.trim_start_matches('/')),
            None => PathBuf::from(abs),
        }
    }

    /// The root, opened: every path is resolved inside it from here.
    pub fn confined(&self) -> io::Result<Confined> {
        Confined::new(self.dir.as_deref().unwrap_or(Path::new("/")))
    }

    /// Opens `abs` inside the root (see [`Confined::open`]).
    pub fn open(&self, abs: &str, flags: OFlag, follow_last: bool) -> io::Result<File> {
        self.confined()?.open(abs, flags, follow_last)
    }

    /// The directory holding `abs`, resolved inside the root, and the name
    /// of the last component (not resolved).
    pub fn parent(&self, abs: &str) -> io::Result<(File, OsString)> {
        self.confined()?.parent(abs)
    }

    /// What is at `abs` itself (a link is not followed), `None` when
    /// nothing is, or the directory it would be in does not exist.
    pub fn lstat(&self, abs: &str) -> io::Result<Option<Metadata>> {
        let dir = match self.parent(abs) {
            Ok((dir, name)) => (dir, name),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match openat(
            &dir.0,
            dir.1.as_os_str(),
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => File::from(fd).metadata().map(Some),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The directory `abs`, created inside the root where missing (each
    /// missing one with `mode`), opened.
    pub fn create_dir_all(&self, abs: &str, mode: u32) -> io::Result<File> {
        let confined = self.confined()?;
        let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY;
        let mut walked = String::new();
        let mut last = confined.open("/", dir_flags, true)?;
        for part in abs.split('/').filter(|p| !p.is_empty() && *p != ".") {
            walked.push('/');
            walked.push_str(part);
            last = match confined.open(&walked, dir_flags, true) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let (parent, name) = confined.parent(&walked)?;
                    match mkdirat(&parent, name.as_os_str(), Mode::from_bits_truncate(mode)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    match confined.open(&walked, dir_flags, true) {
                        // Something is there yet leads nowhere: a link to
                        // what does not exist inside the root.
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            return Err(io::Error::new(
                                io::ErrorKind::NotFound,
                                format!(
                                    "{walked} is a symbolic link to nothing inside {}",
                                    self.dir().map_or("/".into(), |d| d.display().to_string())
                                ),
                            ));
                        }
                        other => other?,
                    }
                }
                Err(e) => return Err(e),
            };
        }
        Ok(last)
    }

    /// Replaces `abs` (inside the root) atomically, see [`datum_fs::write_atomic`].
    pub fn write_atomic(&self, abs: &str, bytes: &[u8], attrs: Attrs) -> io::Result<()> {
        let (dir, name) = self.parent(abs)?;
        datum_fs::write_atomic_in(&dir, &name, bytes, attrs)
    }

    /// The names in the directory `abs` (resolved inside the root), sorted;
    /// none when it does not exist.
    pub fn list(&self, abs: &str) -> io::Result<Vec<OsString>> {
        use std::os::unix::ffi::OsStrExt;
        let dir = match self.open(abs, OFlag::O_RDONLY | OFlag::O_DIRECTORY, true) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let listing = nix::dir::Dir::from_fd(dir.into()).map_err(io::Error::from)?;
        let mut names = Vec::new();
        for entry in listing.into_iter() {
            let entry = entry.map_err(io::Error::from)?;
            let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Removes the file or link `abs` (never what a link points to); a
    /// missing one is not an error.
    pub fn remove_file(&self, abs: &str) -> io::Result<()> {
        let (dir, name) = match self.parent(abs) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        match nix::unistd::unlinkat(
            &dir,
            name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        ) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// A small file apply keeps or reads for itself, `None` when missing:
    /// only a regular file, never through a link at its name, at most
    /// `limit` bytes.
    pub fn read_small(&self, abs: &str, limit: u64) -> Result<Option<Vec<u8>>, Refused> {
        let (dir, name) = match self.parent(abs) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Refused::Io(e)),
        };
        read_small_in(&dir, &name, limit)
    }

    /// The regular file `abs`, opened for reading inside the root (links
    /// on the way and at its name followed, never out of the root), `None`
    /// when missing. Anything else standing there (a FIFO, a device, a
    /// directory) is refused at once: the open does not wait for a writer.
    pub fn open_regular(&self, abs: &str) -> Result<Option<File>, Refused> {
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
        let file = match self.open(abs, flags, true) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Refused::Io(e)),
        };
        let meta = file.metadata().map_err(Refused::Io)?;
        if !meta.is_file() {
            return Err(Refused::NotRegular(datum_fs::kind_of(&meta)));
        }
        Ok(Some(file))
    }

    /// The content of the regular file `abs` ([`Root::open_regular`]), at
    /// most `limit` bytes; `None` when missing.
    pub fn read_regular(&self, abs: &str, limit: u64) -> Result<Option<Vec<u8>>, Refused> {
        match self.open_regular(abs)? {
            Some(file) => read_regular(file, limit).map(Some),
            None => Ok(None),
        }
    }

    /// The accounts in `/etc/passwd`.
    pub fn passwd(&self) -> io::Result<Vec<PasswdEntry>> {
        Ok(read_db(self, "/etc/passwd")?
            .iter()
            .filter_map(|f| {
                Some(PasswdEntry {
                    name: f.first()?.clone(),
                    uid: f.get(2)?.parse().ok()?,
                    gid: f.get(3)?.parse().ok()?,
                    home: f.get(5)?.clone(),
                    shell: f.get(6)?.clone(),
                })
            })
            .collect())
    }

    /// The groups in `/etc/group`.
    pub fn groups(&self) -> io::Result<Vec<GroupEntry>> {
        Ok(read_db(self, "/etc/group")?
            .iter()
            .filter_map(|f| {
                Some(GroupEntry {
                    name: f.first()?.clone(),
                    gid: f.get(2)?.parse().ok()?,
                    members: f
                        .get(3)?
                        .split(',')
                        .filter(|m| !m.is_empty())
                        .map(str::to_owned)
                        .collect(),
                })
            })
            .collect())
    }

    /// The uid of a user name.
    pub fn uid(&self, name: &str) -> io::Result<Option<u32>> {
        if self.dir.is_some() {
            return Ok(self
                .passwd()?
                .into_iter()
                .find(|e| e.name == name)
                .map(|e| e.uid));
        }
        Ok(User::from_name(name)
            .map_err(io::Error::from)?
            .map(|u| u.uid.as_raw()))
    }

    /// The gid of a group name.
    pub fn gid(&self, name: &str) -> io::Result<Option<u32>> {
        if self.dir.is_some() {
            return Ok(self
                .groups()?
                .into_iter()
                .find(|e| e.name == name)
                .map(|e| e.gid));
        }
        Ok(Group::from_name(name)
            .map_err(io::Error::from)?
            .map(|g| g.gid.as_raw()))
    }

    /// A uid as a name when it has one, else the number.
    pub fn user_name(&self, uid: u32) -> String {
        let name = if self.dir.is_some() {
            self.passwd()
                .ok()
                .and_then(|all| all.into_iter().find(|e| e.uid == uid).map(|e| e.name))
        } else {
            User::from_uid(Uid::from_raw(uid))
                .ok()
                .flatten()
                .map(|u| u.name)
        };
        name.unwrap_or_else(|| uid.to_string())
    }

    /// A gid as a name when it has one, else the number.
    pub fn group_name(&self, gid: u32) -> String {
        let name = if self.dir.is_some() {
            self.groups()
                .ok()
                .and_then(|all| all.into_iter().find(|e| e.gid == gid).map(|e| e.name))
        } else {
            Group::from_gid(Gid::from_raw(gid))
                .ok()
                .flatten()
                .map(|g| g.name)
        };
        name.unwrap_or_else(|| gid.to_string())
    }
}

/// Why a small file was not read.
#[derive(Debug)]
pub enum Refused {
    /// A symbolic link stands at its name.
    Link,
    /// Something other than a regular file: what.
    NotRegular(&'static str),
    /// Larger than the limit.
    TooLarge(u64),
    Io(io::Error),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Link => write!(
                f,
                "it is a symbolic link, and Datum reads this file only as a regular file"
            ),
            Refused::NotRegular(what) => write!(f, "it is {what}, not a regular file"),
            Refused::TooLarge(limit) => write!(f, "it is larger than {limit} bytes"),
            Refused::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Refused {}

/// What the system says of a path with nothing at it ("No such file or
/// directory"), for a caller told `None` by [`Root::open_regular`].
pub fn not_found() -> io::Error {
    Errno::ENOENT.into()
}

/// [`Root::read_small`] for the entry `name` of the open directory `dir`.
pub fn read_small_in(
    dir: &File,
    name: &std::ffi::OsStr,
    limit: u64,
) -> Result<Option<Vec<u8>>, Refused> {
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let file = match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(Errno::ENOENT) => return Ok(None),
        Err(Errno::ELOOP) => return Err(Refused::Link),
        Err(e) => return Err(Refused::Io(e.into())),
    };
    read_regular(file, limit).map(Some)
}

/// The content of an open file that must be regular and at most `limit` bytes.
fn read_regular(file: File, limit: u64) -> Result<Vec<u8>, Refused> {
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(datum_fs::kind_of(&meta)));
    }
    if meta.len() > limit {
        return Err(Refused::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Refused::TooLarge(limit));
    }
    Ok(bytes)
}

/// The largest account database read (`/etc/passwd`, `/etc/group`).
pub const ACCOUNTS_LIMIT: u64 = 64 << 20;

/// A colon-separated database, resolved inside the root (links on the way
/// and at its name lead inside); a missing file is empty.
fn read_db(root: &Root, abs: &str) -> io::Result<Vec<Vec<String>>> {
    let bytes = match root.read_regular(abs, ACCOUNTS_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(Vec::new()),
        Err(Refused::Io(e)) => return Err(e),
        Err(other) => return Err(io::Error::other(other.to_string())),
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').map(str::to_owned).collect())
        .collect())
}

/// Why this machine has no name to go by.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HostNameError {
    #[error("cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("{path} is empty")]
    Empty { path: String },
    /// What the file holds is not shown: it may be anything a link or a
    /// careless copy put there.
    #[error("{path} does not hold a host name: {problem}")]
    Invalid { path: String, problem: String },
    #[error("cannot read the system hostname: {0}")]
    Hostname(String),
}

impl Hinted for HostNameError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some("name the host with --host NAME".into())
    }
}

/// Which host a machine is, and where that came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub from: NameSource,
}

/// Where a machine's host name came from; shown as `--host`, the file's
/// path, or `the system hostname`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameSource {
    /// Given on the command line (`--host`).
    Flag,
    /// Read from the host file ([`HOST_FILE`]), at this path on the machine.
    File(PathBuf),
    /// The system hostname.
    Hostname,
}

impl NameSource {
    /// Whether the operator named the host: a name they gave is theirs to
    /// fix, one Datum found is worth saying where it came from.
    pub fn is_flag(&self) -> bool {
        matches!(self, NameSource::Flag)
    }
}

impl fmt::Display for NameSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameSource::Flag => f.write_str("--host"),
            NameSource::File(path) => write!(f, "{}", path.display()),
            NameSource::Hostname => f.write_str("the system hostname"),
        }
    }
}

/// Where the host's name is kept, inside the root.
pub const HOST_FILE: &str = "/etc/datum/host";

/// The largest host-name file read: a name is at most 253 characters.
pub const HOST_FILE_LIMIT: u64 = 1024;

/// The host name to apply as: `explicit` (`--host`), else the content of
/// `/etc/datum/host` (under the root) with surrounding whitespace trimmed,
/// else the system hostname. The file is read only as a regular file (not
/// through a link at its name, every directory above it resolved inside
/// the root), at most [`HOST_FILE_LIMIT`] bytes, and must hold one valid
/// host name; what it holds otherwise is never repeated.
pub fn host_name(explicit: Option<&str>, root: &Root) -> Result<Identity, HostNameError> {
    if let Some(name) = explicit {
        return Ok(Identity {
            name: name.to_owned(),
            from: NameSource::Flag,
        });
    }
    let file = root.path(HOST_FILE);
    let path = file.display().to_string();
    let bytes = match root.read_small(HOST_FILE, HOST_FILE_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return nix::unistd::gethostname()
                .map_err(|e| HostNameError::Hostname(e.to_string()))
                .map(|h| Identity {
                    name: h.to_string_lossy().into_owned(),
                    from: NameSource::Hostname,
                });
        }
        Err(e) => {
            return Err(HostNameError::Unreadable {
                path,
                message: e.to_string(),
            });
        }
    };
    let invalid = |problem: &str| HostNameError::Invalid {
        path: path.clone(),
        problem: problem.to_owned(),
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| invalid("it is not UTF-8 text"))?;
    let name = text.trim();
    if name.is_empty() {
        return Err(HostNameError::Empty { path });
    }
    if name.lines().count() > 1 || name.contains(char::is_whitespace) {
        return Err(invalid("it holds more than one word"));
    }
    if !datum_core::document::valid_host_name(name) {
        return Err(invalid(
            "a host name is lowercase letters, digits, `-` and `.`, at most 253 characters, \
             starting and ending with a letter or digit",
        ));
    }
    Ok(Identity {
        name: name.to_owned(),
        from: NameSource::File(file),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn paths_land_inside_the_root() {
        let r = Root::at("/tmp/r");
        assert_eq!(r.path("/etc/motd"), PathBuf::from("/tmp/r/etc/motd"));
        assert_eq!(r.path("/"), PathBuf::from("/tmp/r/"));
        assert_eq!(Root::system().path("/etc/motd"), PathBuf::from("/etc/motd"));
    }

    #[test]
    fn names_under_a_root_come_from_its_files_not_the_name_service() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("etc")).unwrap();
        fs::write(
            dir.path().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/bash\n# comment\nops:x:2000:2000::/home/ops:/bin/sh\n",
        )
        .unwrap();
        fs::write(
            dir.path().join("etc/group"),
            "root:x:0:\nops:x:2000:\nwheel:x:10:ops,root\n",
        )
        .unwrap();
        let r = Root::at(dir.path());
        assert_eq!(r.uid("ops").unwrap(), Some(2000));
        // The running system has a `daemon` user; this root does not.
        assert_eq!(r.uid("daemon").unwrap(), None);
        assert_eq!(r.gid("wheel").unwrap(), Some(10));
        assert_eq!(r.user_name(2000), "ops");
        assert_eq!(r.user_name(4242), "4242");
        assert_eq!(r.group_name(10), "wheel");
        assert_eq!(r.groups().unwrap()[2].members, ["ops", "root"]);
        assert_eq!(r.passwd().unwrap()[1].shell, "/bin/sh");
    }

    #[test]
    fn the_host_is_the_flag_then_the_file_under_the_root_then_the_hostname() {
        let dir = tempfile::tempdir().unwrap();
        let r = Root::at(dir.path());
        let name = |explicit| host_name(explicit, &r).unwrap().name;
        assert_eq!(name(Some("web-009")), "web-009");
        let system = nix::unistd::gethostname().unwrap();
        assert_eq!(host_name(None, &r).unwrap().from, NameSource::Hostname);
        assert_eq!(NameSource::Hostname.to_string(), "the system hostname");
        assert_eq!(host_name(Some("x"), &r).unwrap().from.to_string(), "--host");
        assert_eq!(name(None), system.to_string_lossy());
        fs::create_dir_all(dir.path().join("etc/datum")).unwrap();
        fs::write(dir.path().join("etc/datum/host"), "  web-001 \n").unwrap();
        assert_eq!(name(None), "web-001");
        let from = host_name(None, &r).unwrap().from;
        assert_eq!(from, NameSource::File(dir.path().join("etc/datum/host")));
        assert!(from.to_string().ends_with("/etc/datum/host"));
        assert_eq!(name(Some("db-001")), "db-001");
        fs::write(dir.path().join("etc/datum/host"), "\n").unwrap();
        assert!(matches!(
            host_name(None, &r),
            Err(HostNameError::Empty { .. })
        ));
    }
}
