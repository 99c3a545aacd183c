//! A scratch copy of a secret's plaintext for an editor: a file only its
//! owner can open, in a directory only its owner can enter, overwritten
//! with zeros and flushed to the disk before both are removed.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::plaintext::Plaintext;

/// The private directory and the file in it; wiped and removed when
/// dropped.
pub struct Scratch {
    file: PathBuf,
    /// Removed (with the wiped file) when dropped, after the wipe.
    _dir: TempDir,
}

impl Scratch {
    /// A new private directory under `parent`, to hold a file `name`.
    pub fn new(parent: &Path, name: &str) -> io::Result<Scratch> {
        // Owner only: tempfile leaves a directory's mode to the umask.
        let dir = tempfile::Builder::new()
            .prefix("datum-secret-")
            .permissions(Permissions::from_mode(0o700))
            .tempdir_in(parent)?;
        Ok(Scratch {
            file: dir.path().join(name),
            _dir: dir,
        })
    }

    /// The scratch file, which the editor opens.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Creates the file, for writing: it must not exist yet, and only its
    /// owner may open it.
    pub fn create(&self) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.file)
    }

    /// What the file holds now, at most `limit` bytes (`None` past it).
    pub fn read(&self, limit: usize) -> io::Result<Option<Plaintext>> {
        Plaintext::read_from(File::open(&self.file)?, limit)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        wipe(&self.file);
    }
}

/// Overwrites the file with zeros in place (no truncation, which would
/// free the blocks holding the plaintext instead) and flushes the zeros to
/// the disk before the file is removed.
fn wipe(file: &Path) {
    let Ok(mut out) = OpenOptions::new().write(true).open(file) else {
        return;
    };
    let Ok(len) = out.metadata().map(|m| m.len()) else {
        return;
    };
    let zeros = [0u8; 4096];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        if out.write_all(&zeros[..n]).is_err() {
            return;
        }
        left -= n as u64;
    }
    let _ = out.sync_all();
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    #[test]
    fn the_copy_is_private_and_gone_once_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::new(parent.path(), "db-password").unwrap();
        scratch.create().unwrap().write_all(b"hunter2").unwrap();
        let file = scratch.file().to_path_buf();
        let dir = file.parent().unwrap().to_path_buf();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        assert_eq!(scratch.read(1024).unwrap().unwrap().as_bytes(), b"hunter2");
        assert!(scratch.read(3).unwrap().is_none());
        // Creating it again would open a file someone else put there.
        assert!(scratch.create().is_err());
        drop(scratch);
        assert!(!dir.exists());
    }

    #[test]
    fn wiping_leaves_zeros_of_the_same_length() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, b"hunter2").unwrap();
        wipe(&file);
        assert_eq!(std::fs::read(&file).unwrap(), [0u8; 7]);
    }
}
