//! Users and groups, through the shadow tools (`useradd`, `usermod`,
//! `userdel`, `groupadd`, `groupmod`, `groupdel`).
//!
//! State is read from `/etc/passwd` and `/etc/group` (the local accounts
//! these tools manage). Under `--root` the tools run with `--prefix ROOT`,
//! so they edit `ROOT/etc/*` with the running system's binaries and never
//! chroot. A home directory is never created, moved or removed: declare a
//! Directory for it.
//!
//! The tools resolve `ROOT/etc/...` as any program does, so a link planted
//! there could lead them out of the root. Before one runs under a root,
//! every file they read, write, back up or lock is checked: it must stay
//! inside the root when its links are followed, and a file they rewrite
//! must have no other hard link ([`check_confined`]).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use nix::fcntl::OFlag;
use nix::sys::stat::{Mode, SFlag};

use super::command::{self, tool};
use super::{Context, Examined, Failure, Provider, has};
use crate::report::{Attribute, Change};
use crate::root::{GroupEntry, PasswdEntry, Root};
use crate::spec::{Ensure, GroupSpec, UserSpec};

pub struct Users {
    root: Root,
}

pub struct Groups {
    root: Root,
}

impl Users {
    pub fn new(root: Root) -> Users {
        Users { root }
    }
}

impl Groups {
    pub fn new(root: Root) -> Groups {
        Groups { root }
    }
}

/// The names in `/etc` that the shadow tools read, write, back up (`-`),
/// write beside (`+`) or lock (`.lock`, `.PID`): every entry starting
/// with one of these is checked.
const ACCOUNT_FILES: &[&str] = &[
    "passwd",
    "group",
    "shadow",
    "gshadow",
    "subuid",
    "subgid",
    ".pwd.lock",
    "login.defs",
];

/// Other paths the tools may follow under the root: their defaults, and
/// where `useradd` makes a mail spool when the root's defaults ask for one.
const TOOL_PATHS: &[&str] = &[
    "/etc",
    "/etc/default",
    "/etc/default/useradd",
    "/var",
    "/var/mail",
    "/var/spool",
    "/var/spool/mail",
];

/// Refuses to run the shadow tools under `root` when a file they touch
/// leads out of it: a symbolic link (relative or absolute) that resolves
/// outside, or a file they rewrite that has another hard link (which may
/// be outside). What is planted while they run is beyond this check.
pub fn check_confined(root: &Root) -> Result<(), Failure> {
    let Some(dir) = root.dir() else {
        return Ok(());
    };
    let refuse = |path: &str, why: &str| {
        Failure::new(format!(
            "refusing to run the shadow tools: {}{path} {why}, so they would reach outside {}",
            dir.display(),
            dir.display()
        ))
    };
    let io = |path: &str, e: std::io::Error| {
        Failure::new(format!("cannot inspect {}{path}: {e}", dir.display()))
    };
    let confined = root.confined().map_err(|e| io("", e))?;
    let mut paths: Vec<String> = TOOL_PATHS.iter().map(|p| (*p).to_owned()).collect();
    // A link at /etc that leads out is refused below; a missing /etc fails
    // the tool on its own.
    if let Ok(etc) = confined.open("/etc", OFlag::O_RDONLY | OFlag::O_DIRECTORY, true) {
        let listing = nix::dir::Dir::openat(
            &etc,
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io("/etc", e.into()))?;
        for entry in listing.into_iter() {
            let entry = entry.map_err(|e| io("/etc", e.into()))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            let ours = ACCOUNT_FILES
                .iter()
                .any(|p| name.as_bytes().starts_with(p.as_bytes()));
            if ours {
                paths.push(format!("/etc/{}", name.to_string_lossy()));
            }
        }
    }
    for path in &paths {
        if !confined.stays_inside(path).map_err(|e| io(path, e))? {
            return Err(refuse(path, "is a symbolic link, or passes through one"));
        }
        if path == "/etc" || !path.starts_with("/etc/") || path.starts_with("/etc/default") {
            continue;
        }
        let st = match root.lstat(path).map_err(|e| io(path, e))? {
            Some(m) => m,
            None => continue,
        };
        use std::os::unix::fs::MetadataExt;
        let kind = SFlag::from_bits_truncate(st.mode()) & SFlag::S_IFMT;
        if kind == SFlag::S_IFREG && st.nlink() > 1 {
            return Err(refuse(
                path,
                &format!("has {} hard links (the tools rewrite it)", st.nlink()),
            ));
        }
        if kind != SFlag::S_IFREG && kind != SFlag::S_IFLNK && kind != SFlag::S_IFDIR {
            return Err(refuse(path, "is not a regular file"));
        }
    }
    Ok(())
}

fn shadow_tool(root: &Root, program: &str) -> Result<Command, Failure> {
    check_confined(root)?;
    let mut cmd = tool(program);
    if let Some(dir) = root.dir() {
        cmd.arg("--prefix").arg(dir);
    }
    Ok(cmd)
}

fn read_failure(root: &Root, file: &str, e: std::io::Error) -> Failure {
    Failure::new(format!("cannot read {}: {e}", root.path(file).display()))
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(",")
    }
}

impl Provider<GroupSpec> for Groups {
    fn examine(&self, s: &GroupSpec, _cx: &Context<'_>) -> Result<Examined, Failure> {
        let groups = self
            .root
            .groups()
            .map_err(|e| read_failure(&self.root, "/etc/group", e))?;
        let entry = groups.into_iter().find(|g| g.name == s.name);
        let mut ex = Examined::default();
        match (s.ensure, entry) {
            (Ensure::Present, None) => {
                ex.changes
                    .push(Change::new(Attribute::Ensure, "absent", "present"));
                if let Some(gid) = s.gid {
                    ex.changes
                        .push(Change::set(Attribute::Gid, gid.to_string()));
                }
            }
            (Ensure::Present, Some(e)) => {
                if let Some(gid) = s.gid
                    && gid != e.gid
                {
                    ex.changes.push(Change::new(
                        Attribute::Gid,
                        e.gid.to_string(),
                        gid.to_string(),
                    ));
                }
            }
            (Ensure::Absent, Some(_)) => {
                ex.changes
                    .push(Change::new(Attribute::Ensure, "present", "absent"))
            }
            (Ensure::Absent, None) => {}
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &GroupSpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let root = &self.root;
        let mut cmd;
        if s.ensure == Ensure::Absent {
            cmd = shadow_tool(root, "groupdel")?;
        } else if has(changes, Attribute::Ensure) {
            cmd = shadow_tool(root, "groupadd")?;
            if let Some(gid) = s.gid {
                cmd.arg("-g").arg(gid.to_string());
            }
            if s.system {
                cmd.arg("-r");
            }
        } else {
            cmd = shadow_tool(root, "groupmod")?;
            if let Some(gid) = s.gid {
                cmd.arg("-g").arg(gid.to_string());
            }
        }
        command::run(cmd.arg("--").arg(&s.name)).map(drop)
    }
}

impl Users {
    /// The group names a user's `group` and `groups` name must exist (or,
    /// in a noop run, be about to).
    fn check_groups(&self, s: &UserSpec, cx: &Context<'_>) -> Result<(), Failure> {
        let groups = self
            .root
            .groups()
            .map_err(|e| read_failure(&self.root, "/etc/group", e))?;
        for name in s.group.iter().chain(s.groups.iter().flatten()) {
            let known = groups.iter().any(|g| &g.name == name)
                || (cx.noop && cx.pending.groups.contains(name));
            if !known {
                return Err(Failure::new(format!(
                    "{} names the group {name}, which does not exist in {}",
                    s.name,
                    self.root.path("/etc/group").display()
                )));
            }
        }
        Ok(())
    }
}

/// What a user about to be created gets, beyond existing.
fn new_user(s: &UserSpec) -> Vec<Change> {
    let mut out = Vec::new();
    if let Some(uid) = s.uid {
        out.push(Change::set(Attribute::Uid, uid.to_string()));
    }
    if let Some(g) = &s.group {
        out.push(Change::set(Attribute::Group, g.as_str()));
    }
    if let Some(gs) = &s.groups {
        out.push(Change::set(Attribute::Groups, list(gs)));
    }
    if let Some(h) = &s.home {
        out.push(Change::set(Attribute::Home, h.as_str()));
    }
    if let Some(sh) = &s.shell {
        out.push(Change::set(Attribute::Shell, sh.as_str()));
    }
    out
}

/// How the user `e` (as `/etc/passwd` has it; `groups` is `/etc/group`)
/// differs from what the manifest wants.
fn user_differences(s: &UserSpec, e: &PasswdEntry, groups: &[GroupEntry]) -> Vec<Change> {
    let mut out = Vec::new();
    if let Some(uid) = s.uid
        && uid != e.uid
    {
        out.push(Change::new(
            Attribute::Uid,
            e.uid.to_string(),
            uid.to_string(),
        ));
    }
    if let Some(want) = &s.group {
        let have = groups
            .iter()
            .find(|g| g.gid == e.gid)
            .map(|g| g.name.clone());
        if have.as_ref() != Some(want) {
            out.push(Change::new(
                Attribute::Group,
                have.unwrap_or_else(|| e.gid.to_string()),
                want.as_str(),
            ));
        }
    }
    if let Some(want) = &s.groups {
        let mut have: Vec<String> = groups
            .iter()
            .filter(|g| g.members.contains(&s.name))
            .map(|g| g.name.clone())
            .collect();
        have.sort();
        have.dedup();
        if &have != want {
            out.push(Change::new(Attribute::Groups, list(&have), list(want)));
        }
    }
    if let Some(h) = &s.home
        && h != &e.home
    {
        out.push(Change::new(Attribute::Home, e.home.as_str(), h.as_str()));
    }
    if let Some(sh) = &s.shell
        && sh != &e.shell
    {
        out.push(Change::new(Attribute::Shell, e.shell.as_str(), sh.as_str()));
    }
    out
}

impl Provider<UserSpec> for Users {
    fn examine(&self, s: &UserSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let root = &self.root;
        let passwd = root
            .passwd()
            .map_err(|e| read_failure(root, "/etc/passwd", e))?;
        let entry = passwd.into_iter().find(|u| u.name == s.name);
        let mut ex = Examined::default();
        if s.ensure == Ensure::Absent {
            if entry.is_some() {
                ex.changes
                    .push(Change::new(Attribute::Ensure, "present", "absent"));
            }
            return Ok(ex);
        }
        self.check_groups(s, cx)?;
        let Some(e) = entry else {
            ex.changes
                .push(Change::new(Attribute::Ensure, "absent", "present"));
            ex.changes.extend(new_user(s));
            return Ok(ex);
        };
        let groups = root
            .groups()
            .map_err(|err| read_failure(root, "/etc/group", err))?;
        ex.changes.extend(user_differences(s, &e, &groups));
        Ok(ex)
    }

    fn converge(&self, s: &UserSpec, changes: &[Change], _cx: &Context<'_>) -> Result<(), Failure> {
        let root = &self.root;
        if s.ensure == Ensure::Absent {
            return command::run(shadow_tool(root, "userdel")?.arg("--").arg(&s.name)).map(drop);
        }
        let create = has(changes, Attribute::Ensure);
        let mut cmd = shadow_tool(root, if create { "useradd" } else { "usermod" })?;
        let wanted = |attr: Attribute| create || has(changes, attr);
        if let Some(uid) = s.uid.filter(|_| wanted(Attribute::Uid)) {
            cmd.arg("-u").arg(uid.to_string());
        }
        if let Some(g) = s.group.as_ref().filter(|_| wanted(Attribute::Group)) {
            cmd.arg("-g").arg(g);
        }
        // `-G ""` clears the supplementary groups; a new account has none anyway.
        if let Some(gs) = s
            .groups
            .as_ref()
            .filter(|gs| wanted(Attribute::Groups) && !(create && gs.is_empty()))
        {
            cmd.arg("-G").arg(gs.join(","));
        }
        if let Some(h) = s.home.as_ref().filter(|_| wanted(Attribute::Home)) {
            cmd.arg("-d").arg(h);
        }
        if let Some(sh) = s.shell.as_ref().filter(|_| wanted(Attribute::Shell)) {
            cmd.arg("-s").arg(sh);
        }
        if create {
            cmd.arg("-M");
            if s.system {
                cmd.arg("-r");
            }
        }
        command::run(cmd.arg("--").arg(&s.name)).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// A root laid out as Debian lays it out, beside an `outside` directory.
    fn debian() -> (tempfile::TempDir, std::path::PathBuf) {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("root");
        for d in ["etc/default", "var/mail", "var/spool"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::create_dir_all(base.path().join("outside")).unwrap();
        for f in ["passwd", "group", "shadow", "gshadow", "passwd-"] {
            fs::write(root.join("etc").join(f), "root:x:0:0::/root:/bin/sh\n").unwrap();
        }
        // Debian's own relative link, which stays inside.
        symlink("../mail", root.join("var/spool/mail")).unwrap();
        (base, root)
    }

    #[test]
    fn links_that_stay_inside_are_fine_and_links_out_are_refused() {
        let (base, root) = debian();
        let r = Root::at(&root);
        assert_eq!(check_confined(&r), Ok(()));
        // A relative link inside the root, even among the account files.
        fs::remove_file(root.join("etc/passwd-")).unwrap();
        symlink("passwd", root.join("etc/passwd-")).unwrap();
        assert_eq!(check_confined(&r), Ok(()));
        // Absolute, or climbing out: refused, naming the file.
        for (name, target) in [
            ("etc/shadow-", base.path().join("outside/shadow")),
            ("etc/group.lock", "../../outside/lock".into()),
            ("etc/default/useradd", base.path().join("outside/useradd")),
        ] {
            let (_base2, root2) = debian();
            symlink(&target, root2.join(name)).unwrap();
            let err = check_confined(&Root::at(&root2)).unwrap_err().0;
            assert!(
                err.contains(&format!(
                    "/{name} is a symbolic link, or passes through one"
                )),
                "{err}"
            );
        }
        // The mail spool directory useradd may write in, linked out.
        let (_b, root3) = debian();
        fs::remove_file(root3.join("var/spool/mail")).unwrap();
        symlink("/var/mail", root3.join("var/spool/mail")).unwrap();
        assert!(check_confined(&Root::at(&root3)).is_err());
        // The system root is not checked: its links are the system's own.
        assert_eq!(check_confined(&Root::system()), Ok(()));
    }

    #[test]
    fn an_account_file_with_another_hard_link_is_refused() {
        let (base, root) = debian();
        fs::write(base.path().join("outside/passwd"), "x\n").unwrap();
        fs::hard_link(base.path().join("outside/passwd"), root.join("etc/passwd+")).unwrap();
        let err = check_confined(&Root::at(&root)).unwrap_err().0;
        assert!(
            err.contains("/etc/passwd+ has 2 hard links (the tools rewrite it)"),
            "{err}"
        );
    }
}
