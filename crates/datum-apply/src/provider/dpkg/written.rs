//! What dpkg and apt open to write in the root under `--root`, checked
//! before they run: they open it by its path on this machine, as root,
//! following links (dpkg appends to its log, apt changes its term log's
//! owner and mode by name, both take lock files and write the database).
//! So none of it may be a symbolic link, nor anything but a regular file
//! (or a directory holding such files); the directories on the way may
//! not lead out of the root.

use crate::provider::Failure;
use crate::provider::local_repo::stays_inside;
use crate::root::Root;

/// The largest number of entries looked at under one directory.
const TREE_LIMIT: usize = 1 << 20;

/// Who opens the files [`check`] checks, as messages say.
pub const DPKG_APT: &str = "dpkg and apt";

/// dpkg's log, the one file it writes outside its database.
pub const DPKG_LOG: &str = "/var/log/dpkg.log";

/// Directories dpkg writes in (its database, with its lock files), where
/// nothing may be a link.
const DPKG_TREES: [&str; 1] = ["/var/lib/dpkg"];
/// Directories apt writes in as well, where nothing may be a link: its
/// logs (`term.log` is given its owner and mode by name).
const APT_TREES: [&str; 1] = ["/var/log/apt"];
/// Directories apt writes in that hold links of its own: its lists (a
/// `file:` repository's index is linked, by its path on this machine, and
/// so into the root) and its caches. A link there must lead inside the
/// root; the files apt writes by name there may not be links at all.
const APT_LINKED_TREES: [&str; 2] = ["/var/lib/apt", "/var/cache/apt"];
const APT_FILES: [&str; 5] = [
    "/var/lib/apt/lists/lock",
    "/var/lib/apt/extended_states",
    "/var/cache/apt/archives/lock",
    "/var/cache/apt/pkgcache.bin",
    "/var/cache/apt/srcpkgcache.bin",
];

/// Refuses the root when a file dpkg (and, with `apt`, apt) writes is a
/// link (or, where apt makes links, one leading out of the root or
/// nowhere), is not a regular file, or is reached through a directory
/// that leads out of the root.
pub fn check(root: &Root, apt: bool) -> Result<(), Failure> {
    let none: &[&str] = &[];
    let (trees, linked, files) = if apt {
        (
            DPKG_TREES.iter().chain(&APT_TREES),
            &APT_LINKED_TREES[..],
            &APT_FILES[..],
        )
    } else {
        (DPKG_TREES.iter().chain(none), none, none)
    };
    // The files written by name first: a link there is refused as such.
    for abs in files.iter().chain([&DPKG_LOG]) {
        file(root, abs, DPKG_APT)?;
    }
    for (abs, links_inside) in trees
        .map(|t| (t, false))
        .chain(linked.iter().map(|t| (t, true)))
    {
        stays_inside(root, abs).map_err(Failure::new)?;
        tree(root, abs, links_inside, DPKG_APT)?;
    }
    Ok(())
}

/// Refuses `abs` when it is anything but missing or a regular file, or
/// when its directory leads out of the root; `tools` open it.
pub fn file(root: &Root, abs: &str, tools: &str) -> Result<(), Failure> {
    let parent = abs.rsplit_once('/').map_or("/", |(p, _)| p);
    stays_inside(root, parent).map_err(Failure::new)?;
    match root.lstat(abs) {
        Ok(None) => Ok(()),
        Ok(Some(m)) if m.is_file() => Ok(()),
        Ok(Some(m)) => Err(refused(root, abs, datum_fs::kind_of(&m), tools)),
        Err(e) => Err(Failure::new(format!("{}: {e}", root.path(abs).display()))),
    }
}

/// Refuses anything under the directory `abs` (when it exists) that is
/// neither a regular file nor a directory, nor (with `links_inside`) a
/// link that this machine resolves inside the root; `tools` write there.
pub fn tree(root: &Root, abs: &str, links_inside: bool, tools: &str) -> Result<(), Failure> {
    let io =
        |path: &str, e: std::io::Error| Failure::new(format!("{}: {e}", root.path(path).display()));
    match root.lstat(abs) {
        Ok(None) => return Ok(()),
        Ok(Some(m)) if m.file_type().is_symlink() || m.is_dir() => {}
        Ok(Some(m)) => return Err(refused(root, abs, datum_fs::kind_of(&m), tools)),
        Err(e) => return Err(io(abs, e)),
    }
    let mut stack = vec![abs.to_owned()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        for name in root.list(&dir).map_err(|e| io(&dir, e))? {
            seen += 1;
            if seen > TREE_LIMIT {
                return Err(Failure::new(format!(
                    "{} holds more than {TREE_LIMIT} entries, more than Datum checks",
                    root.path(abs).display()
                )));
            }
            let path = format!("{dir}/{}", name.to_string_lossy());
            match root.lstat(&path) {
                Ok(Some(m)) if m.is_dir() => stack.push(path),
                Ok(Some(m)) if m.is_file() => {}
                Ok(Some(m)) if links_inside && m.file_type().is_symlink() => {
                    stays_inside(root, &path).map_err(Failure::new)?;
                }
                Ok(Some(m)) => return Err(refused(root, &path, datum_fs::kind_of(&m), tools)),
                Ok(None) => {}
                Err(e) => return Err(io(&path, e)),
            }
        }
    }
    Ok(())
}

fn refused(root: &Root, abs: &str, kind: &str, tools: &str) -> Failure {
    Failure::new(format!(
        "{} is {kind}: under --root, {tools} open it by its path on this machine, as root, and would follow or block on it; make it a regular file (or remove it)",
        root.path(abs).display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn refusal(root: &Root, apt: bool) -> Option<String> {
        check(root, apt).err().map(|f| f.0)
    }

    #[test]
    fn links_and_other_files_where_dpkg_and_apt_write_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        for d in ["var/lib/dpkg/info", "var/lib/apt/lists", "var/log/apt"] {
            fs::create_dir_all(dir.join(d)).unwrap();
        }
        fs::write(dir.join("var/lib/dpkg/status"), "").unwrap();
        fs::write(dir.join("srv"), "an index\n").unwrap();
        let root = Root::at(&dir);
        // apt's own link to a file: repository's index, in the root.
        symlink(dir.join("srv"), dir.join("var/lib/apt/lists/x_Packages")).unwrap();
        assert_eq!(refusal(&root, true), None);

        let outside = tmp.path().join("host");
        fs::write(&outside, "").unwrap();
        for (at, apt) in [
            ("var/lib/dpkg/info/x.list", false),
            ("var/log/dpkg.log", false),
            ("var/log/apt/history.log", true),
            ("var/cache/apt/pkgcache.bin", true),
            ("var/lib/apt/lists/y_Packages", true),
        ] {
            let link = dir.join(at);
            fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(&outside, &link).unwrap();
            let why = refusal(&root, apt).unwrap_or_default();
            assert!(
                why.starts_with(&format!("{} is a symbolic link", link.display())),
                "{at}: {why}"
            );
            if !apt {
                assert!(refusal(&root, true).is_some(), "{at}");
            }
            fs::remove_file(&link).unwrap();
        }
        // A link nowhere, where apt makes links of its own.
        let dangling = dir.join("var/lib/apt/lists/z_Packages");
        symlink(dir.join("missing"), &dangling).unwrap();
        assert!(refusal(&root, true).is_some());
        fs::remove_file(&dangling).unwrap();

        // A FIFO stands where dpkg reads its database.
        let fifo = dir.join("var/lib/dpkg/status-old");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let why = refusal(&root, false).unwrap_or_default();
        assert!(
            why.starts_with(&format!("{} is a", fifo.display())),
            "{why}"
        );
        fs::remove_file(&fifo).unwrap();
        assert_eq!(refusal(&root, true), None);
    }

    #[test]
    fn a_tree_reached_through_a_link_inside_the_root_is_walked() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        fs::create_dir_all(dir.join("usr/lib/sysimage/rpm")).unwrap();
        fs::create_dir_all(dir.join("var/lib")).unwrap();
        fs::write(dir.join("usr/lib/sysimage/rpm/rpmdb.sqlite"), "").unwrap();
        symlink("../../usr/lib/sysimage/rpm", dir.join("var/lib/rpm")).unwrap();
        let root = Root::at(&dir);
        assert_eq!(
            tree(&root, "/var/lib/rpm", true, "rpm").map_err(|f| f.0),
            Ok(())
        );
        let db = dir.join("usr/lib/sysimage/rpm/rpmdb.sqlite");
        fs::remove_file(&db).unwrap();
        symlink(tmp.path(), &db).unwrap();
        let why = tree(&root, "/var/lib/rpm", true, "rpm").unwrap_err().0;
        assert!(
            why.contains("is a symbolic link that leads out of the root"),
            "{why}"
        );
    }
}
