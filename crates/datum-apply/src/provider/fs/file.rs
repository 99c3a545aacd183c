//! The File provider: content, mode and ownership of one regular file.
//!
//! A file with more than one hard link is never changed in place and never
//! read: another of its names may be outside the root (or be a file the
//! manifest does not manage). With content in the manifest it is replaced
//! by a new file; without, a mode or owner that differs is a failure.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use super::content::{compare, content_change};
use super::owned::ids;
use super::{
    NEW_FILE_MODE, Swept, check_parent, hard_links, io_failure, lstat, open_nofollow, parent,
    read_link, remove,
};
use crate::provider::{Context, Examined, Failure, Provider, has};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, FileSpec};
use datum_fs::Attrs;
use datum_fs::kind_of;

pub struct Files {
    root: Root,
    swept: Swept,
}

impl Files {
    pub fn new(root: Root) -> Files {
        Files {
            root,
            swept: Swept::default(),
        }
    }
}

impl Provider<FileSpec> for Files {
    fn examine(&self, s: &FileSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let notes = self.swept.sweep(root, &s.path, cx)?;
        let meta = lstat(root, &s.path)?;
        let changes = match (s.ensure, meta) {
            (Ensure::Absent, None) => Vec::new(),
            (Ensure::Absent, Some(m)) => removal(s, &m)?,
            (Ensure::Present, Some(m)) if !m.is_file() && !m.file_type().is_symlink() => {
                return Err(Failure::new(format!(
                    "{} is {}, not a file; Datum does not replace it",
                    s.path,
                    kind_of(&m)
                )));
            }
            (Ensure::Present, Some(m)) if m.is_file() && m.nlink() > 1 => {
                hard_linked(root, s, cx, &m)?
            }
            (Ensure::Present, Some(m)) if m.is_file() => in_place(root, s, cx, &m)?,
            (Ensure::Present, m) => new_file(root, s, cx, m.is_some())?,
        };
        Ok(Examined { changes, notes })
    }

    fn converge(&self, s: &FileSpec, changes: &[Change], _cx: &Context<'_>) -> Result<(), Failure> {
        let root = &self.root;
        if s.ensure == Ensure::Absent {
            return remove(root, &s.path);
        }
        let replace = [
            Attribute::Ensure,
            Attribute::Type,
            Attribute::Content,
            Attribute::Links,
        ];
        if replace.into_iter().any(|a| has(changes, a)) {
            // Attributes the manifest leaves out are kept from the file being
            // replaced; a new file gets the defaults.
            let existing = lstat(root, &s.path)?.filter(Metadata::is_file);
            let owned = ids(root, s.owner.as_deref(), s.group.as_deref())?;
            let attrs = Attrs {
                mode: Some(
                    s.mode
                        .or(existing.as_ref().map(|m| m.mode() & 0o7777))
                        .unwrap_or(NEW_FILE_MODE),
                ),
                uid: owned.uid.or(existing.as_ref().map(MetadataExt::uid)),
                gid: owned.gid.or(existing.as_ref().map(MetadataExt::gid)),
            };
            let bytes = s.content.as_deref().unwrap_or_default();
            let (dir, name) = parent(root, &s.path)?;
            return datum_fs::write_atomic_in(&dir, &name, bytes, attrs)
                .map_err(|e| io_failure(&s.path, "write", e));
        }
        s.owned().set_changed(root, &s.path, false, changes)
    }
}

/// What removing the file changes: a directory there is a failure.
fn removal(s: &FileSpec, m: &Metadata) -> Result<Vec<Change>, Failure> {
    if m.is_dir() {
        return Err(Failure::new(format!(
            "{} is a directory; a File with ensure: absent removes only a file or a symbolic link",
            s.path
        )));
    }
    let from = if m.file_type().is_symlink() {
        "present (a symbolic link)"
    } else {
        "present"
    };
    Ok(vec![Change::new(Attribute::Ensure, from, "absent")])
}

/// A file with other names: replaced by a new file when the manifest gives
/// its content, otherwise a failure if its mode or owner differs.
fn hard_linked(
    root: &Root,
    s: &FileSpec,
    cx: &Context<'_>,
    m: &Metadata,
) -> Result<Vec<Change>, Failure> {
    let attrs = s.owned().differences(root, cx, m)?;
    match &s.content {
        Some(want) => {
            let mut changes = vec![Change::new(
                Attribute::Links,
                format!("{} hard links", m.nlink()),
                "1 (replaced by a new file)",
            )];
            // What the old file holds is not read: it may be
            // another name's, outside the root.
            changes.push(content_change(&s.path, None, want, s.sensitive));
            changes.extend(attrs);
            Ok(changes)
        }
        None if attrs.is_empty() => Ok(Vec::new()),
        None => Err(hard_links(&s.path, m.nlink())),
    }
}

/// A file with one name: its content, mode and owner compared in place.
fn in_place(
    root: &Root,
    s: &FileSpec,
    cx: &Context<'_>,
    m: &Metadata,
) -> Result<Vec<Change>, Failure> {
    let mut changes = Vec::new();
    if let Some(want) = &s.content {
        let mut have = open_nofollow(root, &s.path, "read")?;
        let differs = compare(&s.path, &mut have, m.len(), want, s.sensitive)
            .map_err(|e| io_failure(&s.path, "read", e))?;
        changes.extend(differs);
    }
    changes.extend(s.owned().differences(root, cx, m)?);
    Ok(changes)
}

/// No file yet, or a symbolic link where the file belongs: a new file.
fn new_file(
    root: &Root,
    s: &FileSpec,
    cx: &Context<'_>,
    link: bool,
) -> Result<Vec<Change>, Failure> {
    let mut changes = Vec::new();
    if link {
        // A link planted where the file belongs is replaced
        // by the file; whatever it points to is not touched.
        let target = read_link(root, &s.path)?;
        changes.push(Change::new(
            Attribute::Type,
            format!("symbolic link to {target}"),
            "file",
        ));
    } else {
        check_parent(root, &s.path, cx)?;
        changes.push(Change::new(Attribute::Ensure, "absent", "present"));
    }
    if let Some(c) = &s.content {
        changes.push(content_change(&s.path, None, c, s.sensitive));
    }
    changes.extend(s.owned().for_new(root, cx, NEW_FILE_MODE)?);
    Ok(changes)
}
