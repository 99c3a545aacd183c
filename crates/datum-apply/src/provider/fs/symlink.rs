//! The Symlink provider: a symbolic link and where it points, replaced
//! atomically.

use super::{Swept, check_parent, io_failure, lstat, parent, read_link, remove};
use crate::provider::{Context, Examined, Failure, Provider};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, SymlinkSpec};
use datum_fs::kind_of;

pub struct Symlinks {
    root: Root,
    swept: Swept,
}

impl Symlinks {
    pub fn new(root: Root) -> Symlinks {
        Symlinks {
            root,
            swept: Swept::default(),
        }
    }
}

impl Provider<SymlinkSpec> for Symlinks {
    fn examine(&self, s: &SymlinkSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let mut ex = Examined {
            notes: self.swept.sweep(root, &s.path, cx)?,
            ..Examined::default()
        };
        let meta = lstat(root, &s.path)?;
        let current = match &meta {
            Some(m) if m.file_type().is_symlink() => Some(read_link(root, &s.path)?),
            _ => None,
        };
        match (s.ensure, meta, current) {
            (Ensure::Absent, None, _) => {}
            (Ensure::Absent, Some(_), Some(t)) => {
                ex.changes.push(Change::new(
                    Attribute::Ensure,
                    format!("present (to {t})"),
                    "absent",
                ));
            }
            (_, Some(m), None) => {
                return Err(Failure::new(format!(
                    "{} is {}, not a symbolic link; Datum does not {} it",
                    s.path,
                    kind_of(&m),
                    if s.ensure == Ensure::Absent {
                        "remove"
                    } else {
                        "replace"
                    }
                )));
            }
            (Ensure::Present, None, _) => {
                check_parent(root, &s.path, cx)?;
                ex.changes
                    .push(Change::new(Attribute::Ensure, "absent", "present"));
                ex.changes
                    .push(Change::set(Attribute::Target, s.target.as_str()));
            }
            (Ensure::Present, Some(_), Some(t)) => {
                if t != s.target {
                    ex.changes
                        .push(Change::new(Attribute::Target, t, s.target.as_str()));
                }
            }
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &SymlinkSpec,
        _changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let root = &self.root;
        if s.ensure == Ensure::Absent {
            return remove(root, &s.path);
        }
        let (dir, name) = parent(root, &s.path)?;
        datum_fs::symlink_atomic_in(&dir, &name, &s.target)
            .map_err(|e| io_failure(&s.path, "create the symbolic link", e))
    }
}
