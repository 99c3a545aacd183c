//! Files, directories and symbolic links.
//!
//! Nothing here follows a symbolic link at a managed path: it is read with
//! `lstat` and opened with `O_NOFOLLOW`; content is replaced by renaming a
//! temporary file over the path ([`disk::write_atomic`]). A missing parent
//! directory is a failure, never created on the quiet.

use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;

use sha2::{Digest, Sha256};
use similar::TextDiff;

use super::{Context, Examined, Failure, Provider, has};
use crate::disk::{self, Attrs};
use crate::report::Change;
use crate::root::Root;
use crate::spec::{DirectorySpec, Ensure, FileSpec, SymlinkSpec};

/// The mode a new file gets when the manifest sets none.
pub const NEW_FILE_MODE: u32 = 0o644;
/// The mode a new directory gets when the manifest sets none.
pub const NEW_DIR_MODE: u32 = 0o755;
/// Text content up to this size is shown as a diff; larger, by size and hash.
const DIFF_LIMIT: usize = 512 * 1024;

pub struct Files {
    root: Root,
}

pub struct Directories {
    root: Root,
}

pub struct Symlinks {
    root: Root,
}

impl Files {
    pub fn new(root: Root) -> Files {
        Files { root }
    }
}

impl Directories {
    pub fn new(root: Root) -> Directories {
        Directories { root }
    }
}

impl Symlinks {
    pub fn new(root: Root) -> Symlinks {
        Symlinks { root }
    }
}

/// `0644`.
pub fn mode_text(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}

fn io_failure(path: &str, what: &str, e: io::Error) -> Failure {
    Failure::new(format!("cannot {what} {path}: {e}"))
}

/// `lstat`: what is at the path itself, `None` when nothing is.
fn lstat(root: &Root, path: &str) -> Result<Option<Metadata>, Failure> {
    match fs::symlink_metadata(root.path(path)) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_failure(path, "inspect", e)),
    }
}

/// What kind of thing stands at a path, for messages.
fn what_is(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a file"
    } else {
        "a special file"
    }
}

/// The parent of an absolute path: `/etc` for `/etc/motd`.
fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// A path can only be created in a directory that exists (or, in a noop
/// run, that an earlier resource would create).
fn check_parent(root: &Root, path: &str, cx: &Context<'_>) -> Result<(), Failure> {
    let parent = parent_of(path);
    match fs::metadata(root.path(parent)) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Failure::new(format!(
            "cannot create {path}: {parent} is not a directory"
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if cx.noop && cx.pending.paths.contains(parent) {
                return Ok(());
            }
            Err(Failure::new(format!(
                "cannot create {path}: the parent directory {parent} does not exist \
                 (Datum does not create it on its own: declare a Directory resource for it)"
            )))
        }
        Err(e) => Err(io_failure(parent, "inspect", e)),
    }
}

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
fn ids(root: &Root, owner: Option<&str>, group: Option<&str>) -> Result<Attrs, Failure> {
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
            None => out.push(Change::set("owner", name)),
            Some((uid, _)) if want != Some(uid) => {
                out.push(Change::new("owner", root.user_name(uid), name));
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
            None => out.push(Change::set("group", name)),
            Some((_, gid)) if want != Some(gid) => {
                out.push(Change::new("group", root.group_name(gid), name));
            }
            Some(_) => {}
        }
    }
    Ok(out)
}

/// `12 bytes`.
fn size_text(n: usize) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

/// Content that differs: a unified diff when both sides are modest text,
/// else sizes and hashes; for sensitive content, sizes only.
pub fn content_change(path: &str, old: Option<&[u8]>, new: &[u8], sensitive: bool) -> Change {
    if sensitive {
        return Change {
            attribute: "content",
            from: old.map(|o| size_text(o.len())),
            to: Some(format!("{} (sensitive: not shown)", size_text(new.len()))),
            diff: None,
        };
    }
    let text = |b: &[u8]| {
        if b.len() > DIFF_LIMIT || b.contains(&0) {
            None
        } else {
            std::str::from_utf8(b).ok().map(str::to_owned)
        }
    };
    let digest = |b: &[u8]| {
        let hash = Sha256::digest(b);
        let hex: String = hash.iter().take(8).map(|x| format!("{x:02x}")).collect();
        format!("{}, sha256 {hex}", size_text(b.len()))
    };
    match (old.map_or(Some(String::new()), text), text(new)) {
        (Some(o), Some(n)) => {
            let diff = TextDiff::from_lines(&o, &n)
                .unified_diff()
                .context_radius(3)
                .header(&format!("{path} (on disk)"), &format!("{path} (manifest)"))
                .to_string();
            Change {
                attribute: "content",
                from: None,
                to: None,
                diff: Some(diff),
            }
        }
        _ => Change {
            attribute: "content",
            from: old.map(digest),
            to: Some(digest(new)),
            diff: None,
        },
    }
}

fn read_nofollow(root: &Root, path: &str) -> Result<Vec<u8>, Failure> {
    let mut f = disk::open_nofollow(&root.path(path)).map_err(|e| io_failure(path, "read", e))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| io_failure(path, "read", e))?;
    Ok(buf)
}

fn sync_parent(root: &Root, path: &str) -> Result<(), Failure> {
    let parent = parent_of(path);
    disk::sync_dir(&root.path(parent)).map_err(|e| io_failure(parent, "flush", e))
}

/// Removes a file or a symbolic link (never what it points to).
fn remove(root: &Root, path: &str) -> Result<(), Failure> {
    match fs::remove_file(root.path(path)) {
        Ok(()) => sync_parent(root, path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_failure(path, "remove", e)),
    }
}

/// Sets the attributes that changed on an existing file or directory,
/// opened without following a link.
fn change_attrs(root: &Root, path: &str, want_dir: bool, attrs: Attrs) -> Result<(), Failure> {
    let f = disk::open_nofollow(&root.path(path)).map_err(|e| io_failure(path, "open", e))?;
    let m = f.metadata().map_err(|e| io_failure(path, "inspect", e))?;
    if m.is_dir() != want_dir {
        return Err(Failure::new(format!(
            "{path} changed under Datum: it is now {}",
            what_is(&m)
        )));
    }
    disk::set_attrs(&f, attrs).map_err(|e| io_failure(path, "change the attributes of", e))
}

/// The mode and ownership a File or Directory manages.
struct Owned<'a> {
    mode: Option<u32>,
    owner: Option<&'a str>,
    group: Option<&'a str>,
}

impl Owned<'_> {
    /// What something about to be created gets: the mode (or `default`),
    /// and the owner and group when named.
    fn for_new(&self, root: &Root, cx: &Context<'_>, default: u32) -> Result<Vec<Change>, Failure> {
        let mut out = vec![Change::set("mode", mode_text(self.mode.unwrap_or(default)))];
        out.extend(ownership_changes(root, cx, self.owner, self.group, None)?);
        Ok(out)
    }

    /// How something that exists differs.
    fn differences(
        &self,
        root: &Root,
        cx: &Context<'_>,
        m: &Metadata,
    ) -> Result<Vec<Change>, Failure> {
        let mut out = Vec::new();
        if let Some(mode) = self.mode
            && m.mode() & 0o7777 != mode
        {
            out.push(Change::new("mode", mode_text(m.mode()), mode_text(mode)));
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
    fn set_changed(
        &self,
        root: &Root,
        path: &str,
        want_dir: bool,
        changes: &[Change],
    ) -> Result<(), Failure> {
        let resolved = ids(
            root,
            self.owner.filter(|_| has(changes, "owner")),
            self.group.filter(|_| has(changes, "group")),
        )?;
        let attrs = Attrs {
            mode: self.mode.filter(|_| has(changes, "mode")),
            ..resolved
        };
        change_attrs(root, path, want_dir, attrs)
    }
}

impl FileSpec {
    fn owned(&self) -> Owned<'_> {
        Owned {
            mode: self.mode,
            owner: self.owner.as_deref(),
            group: self.group.as_deref(),
        }
    }
}

impl DirectorySpec {
    fn owned(&self) -> Owned<'_> {
        Owned {
            mode: self.mode,
            owner: self.owner.as_deref(),
            group: self.group.as_deref(),
        }
    }
}

impl Provider<FileSpec> for Files {
    fn examine(&self, s: &FileSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let mut ex = Examined::default();
        let meta = lstat(root, &s.path)?;
        match (s.ensure, meta) {
            (Ensure::Absent, None) => {}
            (Ensure::Absent, Some(m)) => {
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
                ex.changes.push(Change::new("ensure", from, "absent"));
            }
            (Ensure::Present, Some(m)) if !m.is_file() && !m.file_type().is_symlink() => {
                return Err(Failure::new(format!(
                    "{} is {}, not a file; Datum does not replace it",
                    s.path,
                    what_is(&m)
                )));
            }
            (Ensure::Present, Some(m)) if m.is_file() => {
                if let Some(want) = &s.content {
                    let have = read_nofollow(root, &s.path)?;
                    if &have != want {
                        ex.changes
                            .push(content_change(&s.path, Some(&have), want, s.sensitive));
                    }
                }
                ex.changes.extend(s.owned().differences(root, cx, &m)?);
            }
            (Ensure::Present, m) => {
                match m {
                    None => {
                        check_parent(root, &s.path, cx)?;
                        ex.changes.push(Change::new("ensure", "absent", "present"));
                    }
                    Some(_) => {
                        // A link planted where the file belongs is replaced
                        // by the file; whatever it points to is not touched.
                        let target = fs::read_link(root.path(&s.path))
                            .map_err(|e| io_failure(&s.path, "read", e))?;
                        ex.changes.push(Change::new(
                            "type",
                            format!("symbolic link to {}", target.display()),
                            "file",
                        ));
                    }
                }
                if let Some(c) = &s.content {
                    ex.changes
                        .push(content_change(&s.path, None, c, s.sensitive));
                }
                ex.changes
                    .extend(s.owned().for_new(root, cx, NEW_FILE_MODE)?);
            }
        }
        Ok(ex)
    }

    fn converge(&self, s: &FileSpec, changes: &[Change], _cx: &Context<'_>) -> Result<(), Failure> {
        let root = &self.root;
        if s.ensure == Ensure::Absent {
            return remove(root, &s.path);
        }
        if has(changes, "ensure") || has(changes, "type") || has(changes, "content") {
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
            return disk::write_atomic(&root.path(&s.path), bytes, attrs)
                .map_err(|e| io_failure(&s.path, "write", e));
        }
        s.owned().set_changed(root, &s.path, false, changes)
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
                        what_is(&m)
                    )));
                }
                ex.changes.push(Change::new("ensure", "present", "absent"));
            }
            (Ensure::Present, None) => {
                check_parent(root, &s.path, cx)?;
                ex.changes.push(Change::new("ensure", "absent", "present"));
                ex.changes
                    .extend(s.owned().for_new(root, cx, NEW_DIR_MODE)?);
            }
            (Ensure::Present, Some(m)) => {
                if !m.is_dir() {
                    return Err(Failure::new(format!(
                        "{} is {}, not a directory; Datum does not replace it",
                        s.path,
                        what_is(&m)
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
        let path = root.path(&s.path);
        if s.ensure == Ensure::Absent {
            return match fs::remove_dir(&path) {
                Ok(()) => sync_parent(root, &s.path),
                Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => {
                    Err(Failure::new(format!(
                        "{} is not empty; Datum removes only empty directories",
                        s.path
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_failure(&s.path, "remove", e)),
            };
        }
        if has(changes, "ensure") {
            let owned = ids(root, s.owner.as_deref(), s.group.as_deref())?;
            fs::create_dir(&path).map_err(|e| io_failure(&s.path, "create", e))?;
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

impl Provider<SymlinkSpec> for Symlinks {
    fn examine(&self, s: &SymlinkSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let mut ex = Examined::default();
        let meta = lstat(root, &s.path)?;
        let current = match &meta {
            Some(m) if m.file_type().is_symlink() => Some(
                fs::read_link(root.path(&s.path))
                    .map_err(|e| io_failure(&s.path, "read", e))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            _ => None,
        };
        match (s.ensure, meta, current) {
            (Ensure::Absent, None, _) => {}
            (Ensure::Absent, Some(_), Some(t)) => {
                ex.changes
                    .push(Change::new("ensure", format!("present (to {t})"), "absent"));
            }
            (_, Some(m), None) => {
                return Err(Failure::new(format!(
                    "{} is {}, not a symbolic link; Datum does not {} it",
                    s.path,
                    what_is(&m),
                    if s.ensure == Ensure::Absent {
                        "remove"
                    } else {
                        "replace"
                    }
                )));
            }
            (Ensure::Present, None, _) => {
                check_parent(root, &s.path, cx)?;
                ex.changes.push(Change::new("ensure", "absent", "present"));
                ex.changes.push(Change::set("target", s.target.as_str()));
            }
            (Ensure::Present, Some(_), Some(t)) => {
                if t != s.target {
                    ex.changes.push(Change::new("target", t, s.target.as_str()));
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
        disk::symlink_atomic(&s.target, &root.path(&s.path))
            .map_err(|e| io_failure(&s.path, "create the symbolic link", e))
    }
}
