//! The Directory provider: a directory, its mode and ownership; removed
//! only when empty.

use nix::errno::Errno;
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use super::owned::ids;
use super::{NEW_DIR_MODE, change_attrs, check_parent, io_failure, lstat, parent, sync_parent};
use crate::provider::{Context, Examined, Failure, Provider, has};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{DirectorySpec, Ensure};
use datum_fs::Attrs;
use datum_fs::kind_of;

pub struct Directories {
    root: Root,
}

impl Directories {
    pub fn new(root: Root) -> Directories {
        Directories { root }
    }
}

impl Provider<DirectorySpec> for Directories {
    fn examine(&self, s: &DirectorySpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let mut ex = Examined::default();
        match (s.ensure, lstat(root, &s.path)?) {
            (Ensure::Absent, None) => {}
            (Ensure::Absent, Some(m)) => {
                if !m.is_dir() {
                    return Err(Failure::new(format!(
                        "{} is {}, not a directory; Datum does not remove it",
                        s.path,
                        kind_of(&m)
                    )));
                }
                ex.changes
                    .push(Change::new(Attribute::Ensure, "present", "absent"));
            }
            (Ensure::Present, None) => {
                check_parent(root, &s.path, cx)?;
                ex.changes
                    .push(Change::new(Attribute::Ensure, "absent", "present"));
                ex.changes
                    .extend(s.owned().for_new(root, cx, NEW_DIR_MODE)?);
            }
            (Ensure::Present, Some(m)) => {
                if !m.is_dir() {
                    return Err(Failure::new(format!(
                        "{} is {}, not a directory; Datum does not replace it",
                        s.path,
                        kind_of(&m)
                    )));
                }
                ex.changes.extend(s.owned().differences(root, cx, &m)?);
            }
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &DirectorySpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let root = &self.root;
        if s.ensure == Ensure::Absent {
            let (dir, name) = parent(root, &s.path)?;
            return match unlinkat(&dir, name.as_os_str(), UnlinkatFlags::RemoveDir) {
                Ok(()) => sync_parent(root, &s.path),
                Err(Errno::ENOTEMPTY | Errno::EEXIST) => Err(Failure::new(format!(
                    "{} is not empty; Datum removes only empty directories",
                    s.path
                ))),
                Err(Errno::ENOENT) => Ok(()),
                Err(e) => Err(io_failure(&s.path, "remove", e.into())),
            };
        }
        if has(changes, Attribute::Ensure) {
            let owned = ids(root, s.owner.as_deref(), s.group.as_deref())?;
            let (dir, name) = parent(root, &s.path)?;
            // Made closed, then given its mode: never more open than wanted.
            mkdirat(&dir, name.as_os_str(), Mode::from_bits_truncate(0o700))
                .map_err(|e| io_failure(&s.path, "create", e.into()))?;
            let attrs = Attrs {
                mode: Some(s.mode.unwrap_or(NEW_DIR_MODE)),
                ..owned
            };
            change_attrs(root, &s.path, true, attrs)?;
            return sync_parent(root, &s.path);
        }
        s.owned().set_changed(root, &s.path, true, changes)
    }
}
