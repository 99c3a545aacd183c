//! A directory a command fills with many files at once (`render --all`,
//! `bundle --all`, `man --out`): each file replaced as every write is
//! ([`crate::atomic`]), from any number of threads at once, but flushed
//! once for all of them. Each write goes to a new temporary file;
//! [`OutDir::commit`] flushes the whole file system once (`syncfs`), then
//! renames every temporary file into place and flushes the directory. The
//! guarantee is the one of a flush per file (no name ever leads to a file
//! whose bytes are not on disk) at the cost of one: at 100,000 hosts a
//! flush per file cost minutes on these disks.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, renameat};
use nix::sys::stat::{Mode, SFlag, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::atomic::{self, Attrs, create_temp, list, open_dir, output_mode, set_attrs};

/// An output directory, opened once: every write and removal happens in
/// the directory opened, whatever happens to its path meanwhile.
#[derive(Debug)]
pub struct OutDir {
    dir: File,
    path: PathBuf,
    /// Written, not yet in place: (temporary name, name).
    staged: Mutex<Vec<(OsString, OsString)>>,
}

/// One name in an output directory, as it stands (a link is not followed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
}

/// What an [`Entry`] is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Link,
    /// A directory, a FIFO, a device or a socket.
    Other,
}

impl Entry {
    /// The name a temporary file of an interrupted write stands in for
    /// (`NAME` for `.NAME.datum-Ab12Cd`), when this is one: a regular file
    /// or a link with such a name.
    pub fn temp_of(&self) -> Option<&OsStr> {
        match self.kind {
            EntryKind::File | EntryKind::Link => atomic::temp_base(&self.name),
            EntryKind::Other => None,
        }
    }
}

impl OutDir {
    /// `path`, created with its parents where missing (as `mkdir -p`), opened.
    pub fn create(path: &Path) -> io::Result<OutDir> {
        std::fs::create_dir_all(path)?;
        Ok(OutDir {
            dir: open_dir(path)?,
            path: path.to_owned(),
            staged: Mutex::default(),
        })
    }

    /// The directory as it was named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a file holding `bytes`, with the mode a plain `create` gives
    /// ([`output_mode`]), that [`OutDir::commit`] puts in place of the
    /// entry `name` (a link there included, never followed). Until then
    /// `name` is as it was.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let (mut file, tmp) = create_temp(&self.dir, name.as_ref())?;
        let written = file
            .write_all(bytes)
            .and_then(|()| set_attrs(&file, Attrs::mode(output_mode())));
        if let Err(e) = written {
            let _ = unlinkat(&self.dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            return Err(e);
        }
        self.staged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((tmp, name.into()));
        Ok(())
    }

    /// Puts every file written so far in place: the file system flushed
    /// once, then each temporary file renamed over its name, then the
    /// directory flushed. A write that cannot be put in place is removed;
    /// the first error is returned once every other has been tried.
    pub fn commit(&self) -> io::Result<()> {
        let staged = std::mem::take(&mut *self.staged.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = None;
        if let Err(e) = self.flush_data(&staged) {
            first = Some(e);
        }
        for (tmp, name) in &staged {
            let moved = if first.is_none() {
                renameat(&self.dir, tmp.as_os_str(), &self.dir, name.as_os_str())
                    .map_err(io::Error::from)
            } else {
                Err(io::Error::other("not put in place"))
            };
            if let Err(e) = moved {
                let _ = unlinkat(&self.dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
                first.get_or_insert(e);
            }
        }
        match first {
            Some(e) => Err(e),
            None => self.sync(),
        }
    }

    /// The bytes of every staged file on disk: one `syncfs`, or, where the
    /// system has none, a flush of each file.
    fn flush_data(&self, staged: &[(OsString, OsString)]) -> io::Result<()> {
        if staged.is_empty() {
            return Ok(());
        }
        match nix::unistd::syncfs(&self.dir) {
            Ok(()) => Ok(()),
            Err(Errno::ENOSYS | Errno::EINVAL) => {
                let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
                for (tmp, _) in staged {
                    let fd = nix::fcntl::openat(&self.dir, tmp.as_os_str(), flags, Mode::empty())?;
                    File::from(fd).sync_all()?;
                }
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the file or link `name` (never what a link points to);
    /// `false` when nothing has that name.
    pub fn remove(&self, name: &OsStr) -> io::Result<bool> {
        match unlinkat(&self.dir, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Every name in the directory, sorted.
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        for name in list(&self.dir)? {
            let st = match fstatat(&self.dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(Errno::ENOENT) => continue,
                Err(e) => return Err(e.into()),
            };
            let kind = match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
                SFlag::S_IFREG => EntryKind::File,
                SFlag::S_IFLNK => EntryKind::Link,
                _ => EntryKind::Other,
            };
            out.push(Entry { name, kind });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Whether the regular file `name` begins with `start` (read without
    /// following a link; `false` for anything but a regular file).
    pub fn begins_with(&self, name: &OsStr, start: &[u8]) -> io::Result<bool> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let file = match nix::fcntl::openat(&self.dir, name, flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(Errno::ENOENT | Errno::ELOOP) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        if !file.metadata()?.is_file() {
            return Ok(false);
        }
        let mut head = Vec::with_capacity(start.len());
        file.take(start.len() as u64).read_to_end(&mut head)?;
        Ok(head == start)
    }

    /// Makes every removal and committed write so far durable.
    pub fn sync(&self) -> io::Result<()> {
        self.dir.sync_all()
    }
}

/// Writes never committed (a command that failed half way) leave no
/// temporary file behind.
impl Drop for OutDir {
    fn drop(&mut self) {
        let staged = std::mem::take(self.staged.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (tmp, _) in staged {
            let _ = unlinkat(&self.dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{MetadataExt, symlink};

    #[test]
    fn a_write_replaces_a_link_and_a_removal_takes_the_link_not_its_target() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("precious");
        fs::write(&target, "keep").unwrap();
        let out = OutDir::create(&tmp.path().join("a/b")).unwrap();
        let dir = out.path().to_owned();
        symlink(&target, dir.join("x.yaml")).unwrap();
        symlink(&target, dir.join("y.yaml")).unwrap();
        out.write("x.yaml", b"new").unwrap();
        // Written, not yet in place: the name is as it was.
        assert!(
            fs::symlink_metadata(dir.join("x.yaml"))
                .unwrap()
                .is_symlink()
        );
        assert!(out.remove("y.yaml".as_ref()).unwrap());
        assert!(!out.remove("y.yaml".as_ref()).unwrap());
        out.commit().unwrap();
        assert_eq!(fs::read(dir.join("x.yaml")).unwrap(), b"new");
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        let meta = fs::symlink_metadata(dir.join("x.yaml")).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.mode() & 0o777, output_mode());
        assert_eq!(
            out.entries().unwrap(),
            [Entry {
                name: "x.yaml".into(),
                kind: EntryKind::File
            }]
        );
    }

    #[test]
    fn writes_never_committed_leave_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let out = OutDir::create(tmp.path()).unwrap();
            out.write("a.yaml", b"a").unwrap();
            assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
        }
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn entries_say_what_they_are_and_which_are_leftover_temporaries() {
        let tmp = tempfile::tempdir().unwrap();
        let out = OutDir::create(tmp.path()).unwrap();
        fs::write(tmp.path().join(".h.yaml.datum-Ab12Cd"), "half").unwrap();
        fs::create_dir(tmp.path().join(".d.yaml.datum-Ab12Cd")).unwrap();
        symlink("nowhere", tmp.path().join("l")).unwrap();
        let entries = out.entries().unwrap();
        let kinds: Vec<_> = entries
            .iter()
            .map(|e| (e.name.to_str().unwrap(), e.kind, e.temp_of()))
            .collect();
        assert_eq!(
            kinds,
            [
                (".d.yaml.datum-Ab12Cd", EntryKind::Other, None),
                (
                    ".h.yaml.datum-Ab12Cd",
                    EntryKind::File,
                    Some("h.yaml".as_ref())
                ),
                ("l", EntryKind::Link, None),
            ]
        );
        assert!(
            out.begins_with(".h.yaml.datum-Ab12Cd".as_ref(), b"ha")
                .unwrap()
        );
        assert!(!out.begins_with("l".as_ref(), b"").unwrap());
        assert!(!out.begins_with("none".as_ref(), b"").unwrap());
    }
}
