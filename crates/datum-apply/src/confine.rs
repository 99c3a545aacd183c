//! Paths resolved inside a directory treated as `/`: symbolic links and `..`
//! anywhere in a path may move about inside it, never out. The kernel does
//! the resolution (`openat2` with `RESOLVE_IN_ROOT`) where it can; a walk
//! one component at a time does the same where it cannot (kernels before
//! 5.6, sandboxes that filter the call).
//!
//! A link to `/etc` planted at `ROOT/srv` leads to `ROOT/etc`, as it would
//! for a process chrooted into `ROOT`; `..` at the top stays at the top.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, readlinkat};
use nix::sys::stat::Mode;

/// The most symbolic links one resolution follows (the kernel's limit).
const MAX_LINKS: usize = 40;

/// An open directory that every path is resolved in, as if it were `/`.
#[derive(Debug)]
pub struct Confined {
    dir: File,
    path: std::path::PathBuf,
}

/// The components of an absolute manifest path, `.` and empty ones dropped.
fn components(path: &str) -> impl Iterator<Item = &OsStr> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(OsStr::new)
}

/// The directory the walk stands in (the stack always holds the root).
fn pop(mut stack: Vec<File>) -> File {
    stack.pop().expect("the root is never popped")
}

fn errno(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

impl Confined {
    /// Opens `dir` as the top of every path resolved here.
    pub fn new(dir: &Path) -> io::Result<Confined> {
        let fd = nix::fcntl::open(
            dir,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        Ok(Confined {
            dir: File::from(fd),
            path: dir.to_path_buf(),
        })
    }

    /// Opens `path` (absolute, as a manifest writes it) inside the root with
    /// `flags`. Links on the way are followed inside the root; a link as the
    /// last component is followed only when `follow_last` (otherwise
    /// `O_NOFOLLOW` decides: an error, or the link itself with `O_PATH`).
    /// `flags` must not create: create through [`Confined::parent`].
    pub fn open(&self, path: &str, flags: OFlag, follow_last: bool) -> io::Result<File> {
        let flags = flags
            | OFlag::O_CLOEXEC
            | if follow_last {
                OFlag::empty()
            } else {
                OFlag::O_NOFOLLOW
            };
        let rel: Vec<u8> = {
            let parts: Vec<&[u8]> = components(path).map(OsStr::as_bytes).collect();
            if parts.is_empty() {
                b".".to_vec()
            } else {
                parts.join(&b'/')
            }
        };
        match self.kernel_open(OsStr::from_bytes(&rel), flags) {
            Some(result) => result,
            None => self.walk_open(path, flags, follow_last),
        }
    }

    /// `openat2` with `RESOLVE_IN_ROOT`; `None` where the kernel has no
    /// such call (or a sandbox refuses it).
    #[cfg(target_os = "linux")]
    fn kernel_open(&self, rel: &OsStr, flags: OFlag) -> Option<io::Result<File>> {
        use nix::fcntl::{OpenHow, ResolveFlag, openat2};
        let how = OpenHow::new()
            .flags(flags)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        // The kernel answers EAGAIN when a rename raced the resolution and
        // it cannot be sure `..` stayed inside; asking again is the cure.
        let mut tries = 0;
        loop {
            match openat2(&self.dir, rel, how) {
                Ok(fd) => return Some(Ok(File::from(fd))),
                Err(Errno::EAGAIN) if tries < 64 => tries += 1,
                Err(Errno::ENOSYS | Errno::EPERM) => return None,
                Err(e) => return Some(Err(errno(e))),
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn kernel_open(&self, _rel: &OsStr, _flags: OFlag) -> Option<io::Result<File>> {
        None
    }

    /// What `openat2` does, one component at a time: every link is read
    /// and its target resolved from the root (absolute) or from where it
    /// was found (relative); `..` never climbs above the root.
    fn walk_open(&self, path: &str, flags: OFlag, follow_last: bool) -> io::Result<File> {
        let (dir, name) = self.walk(path, follow_last)?;
        let fd = openat(
            &dir,
            name.as_os_str(),
            flags | OFlag::O_NOFOLLOW,
            Mode::empty(),
        )
        .map_err(errno)?;
        Ok(File::from(fd))
    }

    /// The directory holding the last component of `path`, with every link
    /// before it resolved inside the root, and that component's name (`.`
    /// for the root itself). With `follow_last`, a link as the last
    /// component is resolved too, so the name is not a link (unless one is
    /// put there after this looked).
    pub(crate) fn walk(&self, path: &str, follow_last: bool) -> io::Result<(File, OsString)> {
        let mut queue: VecDeque<OsString> = components(path).map(OsStr::to_owned).collect();
        let mut stack: Vec<File> = vec![self.dir.try_clone()?];
        let mut links = 0;
        while let Some(name) = queue.pop_front() {
            if name == ".." {
                if stack.len() > 1 {
                    stack.pop();
                }
                continue;
            }
            let last = queue.is_empty();
            if last && !follow_last {
                return Ok((pop(stack), name));
            }
            let top = &stack[stack.len() - 1];
            let fd = match openat(
                top,
                name.as_os_str(),
                OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => File::from(fd),
                Err(Errno::ENOENT) if last => return Ok((pop(stack), name)),
                Err(e) => return Err(errno(e)),
            };
            let kind = fd.metadata()?.file_type();
            if kind.is_symlink() {
                links += 1;
                if links > MAX_LINKS {
                    return Err(errno(Errno::ELOOP));
                }
                let target = readlinkat(top, name.as_os_str()).map_err(errno)?;
                let bytes = target.as_bytes();
                if bytes.starts_with(b"/") {
                    stack.truncate(1);
                }
                let parts: Vec<&[u8]> = bytes
                    .split(|b| *b == b'/')
                    .filter(|c| !c.is_empty() && *c != b".")
                    .collect();
                for part in parts.into_iter().rev() {
                    queue.push_front(OsStr::from_bytes(part).to_owned());
                }
                continue;
            }
            if last {
                return Ok((pop(stack), name));
            }
            if !kind.is_dir() {
                return Err(errno(Errno::ENOTDIR));
            }
            stack.push(fd);
        }
        Ok((pop(stack), OsString::from(".")))
    }

    /// Whether `path`, resolved as any other program resolves it (links
    /// followed, the last one too, absolute ones from the real `/`), stays
    /// inside the root: what a tool given `ROOT/path` will reach. `Ok(false)`
    /// when it leads out; `Ok(true)` when it stays inside or does not exist.
    pub fn stays_inside(&self, path: &str) -> io::Result<bool> {
        let rel: Vec<&str> = components(path).filter_map(OsStr::to_str).collect();
        let rel = if rel.is_empty() {
            ".".to_owned()
        } else {
            rel.join("/")
        };
        #[cfg(target_os = "linux")]
        {
            use nix::fcntl::{OpenHow, ResolveFlag, openat2};
            let how = OpenHow::new()
                .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
                .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
            let mut tries = 0;
            loop {
                match openat2(&self.dir, rel.as_str(), how) {
                    Ok(_) => return Ok(true),
                    Err(Errno::EAGAIN) if tries < 64 => tries += 1,
                    Err(Errno::EXDEV) => return Ok(false),
                    Err(Errno::ENOENT) => return Ok(true),
                    Err(Errno::ENOSYS | Errno::EPERM) => break,
                    Err(e) => return Err(errno(e)),
                }
            }
        }
        // Without openat2: where the path leads now.
        match std::fs::canonicalize(self.path.join(&rel)) {
            Ok(real) => {
                let top = std::fs::canonicalize(&self.path)?;
                Ok(real.starts_with(top))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// The directory holding `path`, resolved inside the root and opened
    /// for reading (so it can be listed and flushed), and the name of the
    /// last component, which is not resolved: it may be anything, or
    /// nothing. The root itself has no parent.
    pub fn parent(&self, path: &str) -> io::Result<(File, OsString)> {
        let parts: Vec<&OsStr> = components(path).collect();
        let Some((name, dirs)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the root has no parent directory",
            ));
        };
        if *name == OsStr::new("..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a path ending in `..` names no entry",
            ));
        }
        let mut dir_path = String::from("/");
        for d in dirs {
            dir_path.push_str(&d.to_string_lossy());
            dir_path.push('/');
        }
        let dir = self.open(&dir_path, OFlag::O_RDONLY | OFlag::O_DIRECTORY, true)?;
        Ok((dir, name.to_os_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    /// A root with `etc/app.conf`, and beside it an `outside` directory.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("root");
        let outside = base.path().join("outside");
        fs::create_dir_all(root.join("etc")).unwrap();
        fs::create_dir_all(outside.join("etc")).unwrap();
        fs::write(root.join("etc/app.conf"), "inside").unwrap();
        fs::write(outside.join("etc/app.conf"), "outside").unwrap();
        (base, root, outside)
    }

    fn read(f: io::Result<File>) -> io::Result<String> {
        let mut s = String::new();
        f?.read_to_string(&mut s)?;
        Ok(s)
    }

    /// Both resolvers: the kernel's and the walk.
    fn both(c: &Confined, path: &str) -> [io::Result<String>; 2] {
        [
            read(c.open(path, OFlag::O_RDONLY, true)),
            read(c.walk_open(path, OFlag::O_RDONLY, true)),
        ]
    }

    fn same(results: [io::Result<String>; 2], want: Option<&str>) {
        for r in results {
            match want {
                Some(w) => assert_eq!(r.unwrap(), w),
                None => assert!(r.is_err(), "{r:?}"),
            }
        }
    }

    #[test]
    fn links_out_of_the_root_land_inside_it() {
        let (_base, root, outside) = setup();
        symlink(outside.join("etc"), root.join("abs")).unwrap();
        symlink("../../outside/etc", root.join("rel")).unwrap();
        symlink("/etc", root.join("toetc")).unwrap();
        let c = Confined::new(&root).unwrap();
        // `abs` points at a path that does not exist inside the root.
        same(both(&c, "/abs/app.conf"), None);
        same(both(&c, "/rel/app.conf"), None);
        // `..` stops at the top: `../../outside/etc` is `/outside/etc`.
        fs::create_dir_all(root.join("outside/etc")).unwrap();
        fs::write(root.join("outside/etc/app.conf"), "decoy inside").unwrap();
        same(both(&c, "/rel/app.conf"), Some("decoy inside"));
        same(both(&c, "/toetc/app.conf"), Some("inside"));
        same(both(&c, "/../../etc/app.conf"), Some("inside"));
    }

    #[test]
    fn a_last_link_is_followed_only_when_asked() {
        let (_base, root, outside) = setup();
        symlink(outside.join("etc/app.conf"), root.join("etc/abs")).unwrap();
        symlink("app.conf", root.join("etc/rel")).unwrap();
        let c = Confined::new(&root).unwrap();
        same(both(&c, "/etc/rel"), Some("inside"));
        same(both(&c, "/etc/abs"), None);
        let nofollow = [
            read(c.open("/etc/rel", OFlag::O_RDONLY, false)),
            read(c.walk_open("/etc/rel", OFlag::O_RDONLY, false)),
        ];
        for r in nofollow {
            assert_eq!(r.unwrap_err().raw_os_error(), Some(libc_eloop()));
        }
    }

    fn libc_eloop() -> i32 {
        Errno::ELOOP as i32
    }

    #[test]
    fn link_loops_end() {
        let (_base, root, _outside) = setup();
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        let c = Confined::new(&root).unwrap();
        same(both(&c, "/a/x"), None);
    }

    #[test]
    fn the_parent_of_a_path_is_resolved_inside_and_its_name_kept() {
        let (_base, root, outside) = setup();
        symlink(&outside, root.join("out")).unwrap();
        symlink("etc", root.join("etc2")).unwrap();
        let c = Confined::new(&root).unwrap();
        // `/out` is `ROOT/<outside path>`: missing.
        assert_eq!(
            c.parent("/out/etc/app.conf").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        let (dir, name) = c.parent("/etc2/app.conf").unwrap();
        assert_eq!(name, "app.conf");
        let f = openat(&dir, name.as_os_str(), OFlag::O_RDONLY, Mode::empty()).unwrap();
        assert_eq!(read(Ok(File::from(f))).unwrap(), "inside");
        assert!(c.parent("/").is_err());
        let (dir, name) = c.walk("/etc2/app.conf", false).unwrap();
        assert_eq!(name, "app.conf");
        let f = openat(&dir, name.as_os_str(), OFlag::O_RDONLY, Mode::empty()).unwrap();
        assert_eq!(read(Ok(File::from(f))).unwrap(), "inside");
    }
}
