//! The mode, owner and group a File or Directory manages: names looked up
//! in the machine's user and group databases, compared and set.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use super::{change_attrs, mode_text};
use crate::provider::{Context, Failure, has};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{DirectorySpec, FileSpec};
use datum_fs::Attrs;

/// Where names are looked up, for messages.
fn db_place(root: &Root, file: &str) -> String {
    match root.dir() {
        Some(_) => format!("in {}", root.path(file).display()),
        None => "on this system".into(),
    }
}

fn lookup_uid(root: &Root, name: &str) -> Result<Option<u32>, Failure> {
    root.uid(name)
        .map_err(|e| Failure::new(format!("cannot look up user {name}: {e}")))
}

fn lookup_gid(root: &Root, name: &str) -> Result<Option<u32>, Failure> {
    root.gid(name)
        .map_err(|e| Failure::new(format!("cannot look up group {name}: {e}")))
}

/// The uid and gid to give, for the owner and group the manifest names.
pub(super) fn ids(root: &Root, owner: Option<&str>, group: Option<&str>) -> Result<Attrs, Failure> {
    let uid = match owner {
        Some(name) => Some(lookup_uid(root, name)?.ok_or_else(|| {
            Failure::new(format!(
                "no user named {name} {}",
                db_place(root, "/etc/passwd")
            ))
        })?),
        None => None,
    };
    let gid = match group {
        Some(name) => Some(lookup_gid(root, name)?.ok_or_else(|| {
            Failure::new(format!(
                "no group named {name} {}",
                db_place(root, "/etc/group")
            ))
        })?),
        None => None,
    };
    Ok(Attrs {
        mode: None,
        uid,
        gid,
    })
}

/// The owner and group changes for something that exists (`current` is its
/// uid and gid) or is about to be created (`None`). A name that does not
/// exist fails, unless an earlier resource of a noop run would add it.
fn ownership_changes(
    root: &Root,
    cx: &Context<'_>,
    owner: Option<&str>,
    group: Option<&str>,
    current: Option<(u32, u32)>,
) -> Result<Vec<Change>, Failure> {
    let mut out = Vec::new();
    if let Some(name) = owner {
        let want = lookup_uid(root, name)?;
        if want.is_none() && !(cx.noop && cx.pending.users.contains(name)) {
            return Err(Failure::new(format!(
                "no user named {name} {}",
                db_place(root, "/etc/passwd")
            )));
        }
        match current {
            None => out.push(Change::set(Attribute::Owner, name)),
            Some((uid, _)) if want != Some(uid) => {
                out.push(Change::new(Attribute::Owner, root.user_name(uid), name));
            }
            Some(_) => {}
        }
    }
    if let Some(name) = group {
        let want = lookup_gid(root, name)?;
        if want.is_none() && !(cx.noop && cx.pending.groups.contains(name)) {
            return Err(Failure::new(format!(
                "no group named {name} {}",
                db_place(root, "/etc/group")
            )));
        }
        match current {
            None => out.push(Change::set(Attribute::Group, name)),
            Some((_, gid)) if want != Some(gid) => {
                out.push(Change::new(Attribute::Group, root.group_name(gid), name));
            }
            Some(_) => {}
        }
    }
    Ok(out)
}

/// The mode and ownership a File or Directory manages.
pub(super) struct Owned<'a> {
    mode: Option<u32>,
    owner: Option<&'a str>,
    group: Option<&'a str>,
}

impl Owned<'_> {
    /// What something about to be created gets: the mode (or `default`),
    /// and the owner and group when named.
    pub(super) fn for_new(
        &self,
        root: &Root,
        cx: &Context<'_>,
        default: u32,
    ) -> Result<Vec<Change>, Failure> {
        let mut out = vec![Change::set(
            Attribute::Mode,
            mode_text(self.mode.unwrap_or(default)),
        )];
        out.extend(ownership_changes(root, cx, self.owner, self.group, None)?);
        Ok(out)
    }

    /// How something that exists differs.
    pub(super) fn differences(
        &self,
        root: &Root,
        cx: &Context<'_>,
        m: &Metadata,
    ) -> Result<Vec<Change>, Failure> {
        let mut out = Vec::new();
        if let Some(mode) = self.mode
            && m.mode() & 0o7777 != mode
        {
            out.push(Change::new(
                Attribute::Mode,
                mode_text(m.mode()),
                mode_text(mode),
            ));
        }
        out.extend(ownership_changes(
            root,
            cx,
            self.owner,
            self.group,
            Some((m.uid(), m.gid())),
        )?);
        Ok(out)
    }

    /// Sets the attributes among `changes` on something that exists.
    pub(super) fn set_changed(
        &self,
        root: &Root,
        path: &str,
        want_dir: bool,
        changes: &[Change],
    ) -> Result<(), Failure> {
        let resolved = ids(
            root,
            self.owner.filter(|_| has(changes, Attribute::Owner)),
            self.group.filter(|_| has(changes, Attribute::Group)),
        )?;
        let attrs = Attrs {
            mode: self.mode.filter(|_| has(changes, Attribute::Mode)),
            ..resolved
        };
        change_attrs(root, path, want_dir, attrs)
    }
}

impl FileSpec {
    pub(super) fn owned(&self) -> Owned<'_> {
        Owned {
            mode: self.mode,
            owner: self.owner.as_deref(),
            group: self.group.as_deref(),
        }
    }
}

impl DirectorySpec {
    pub(super) fn owned(&self) -> Owned<'_> {
        Owned {
            mode: self.mode,
            owner: self.owner.as_deref(),
            group: self.group.as_deref(),
        }
    }
}
