//! A package repository served from a directory of the root, as dnf and
//! apt are given it under `--root`: they open it by its path on this
//! machine and follow links as they go, so no part of the path, nor
//! anything in the directory, may be a link.

use crate::root::Root;

/// The largest number of entries looked at in one repository's directory.
const TREE_LIMIT: usize = 1 << 20;

/// Refuses a path that is not absolute, climbs with `..`, or uses URL
/// syntax a downloader would decode (`%`, `?`, `#`, `\`).
pub fn checked(path: &str, as_written: &str) -> Result<(), String> {
    if !path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err(format!(
            "`{as_written}` is not an absolute path without `..` (a file:// address has three slashes: file:///srv/repo)"
        ));
    }
    if path.contains(['%', '?', '#', '\\']) {
        return Err(format!(
            "`{as_written}` holds `%`, `?`, `#` or `\\`, which the downloader would decode: name the path as it is"
        ));
    }
    Ok(())
}

/// Refuses `abs` when this machine, following links as a package tool
/// does, would resolve it (or the part of it that exists) out of the
/// root: a directory the tool opens by its path on this machine. A link
/// on the way that leads inside the root is followed (EL's
/// `/etc/yum/vars -> ../dnf/vars`, Fedora's `/var/lib/rpm ->
/// ../../usr/lib/sysimage/rpm`); one that leads out, or nowhere, is refused.
pub fn stays_inside(root: &Root, abs: &str) -> Result<(), String> {
    let Some(dir) = root.dir() else {
        return Ok(());
    };
    let real_root = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut prefix = String::new();
    for c in abs.split('/').filter(|c| !c.is_empty()) {
        prefix.push('/');
        prefix.push_str(c);
        match root.lstat(&prefix) {
            Ok(None) => return Ok(()),
            Ok(Some(m)) if m.file_type().is_symlink() => {
                let shown = root.path(&prefix);
                let inside = shown
                    .canonicalize()
                    .is_ok_and(|real| real.starts_with(&real_root));
                if !inside {
                    return Err(format!(
                        "{} is a symbolic link that leads out of the root (or nowhere): under --root the package tools open it by its path on this machine and would follow it; make it a directory, or a link inside the root",
                        shown.display()
                    ));
                }
            }
            Ok(Some(_)) => {}
            Err(e) => return Err(format!("{}: {e}", root.path(&prefix).display())),
        }
    }
    Ok(())
}

/// Refuses a repository directory `path` (checked by [`checked`]) when any
/// part of it is a link or not a directory, or when anything in it is a
/// link. A directory that does not exist (yet) holds nothing to refuse.
pub fn repository_dir(root: &Root, path: &str) -> Result<(), String> {
    let mut abs = String::new();
    for c in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
        abs.push('/');
        abs.push_str(c);
        match root.lstat(&abs) {
            Ok(None) => return Ok(()),
            Ok(Some(m)) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link: the package tool would follow it out of the root's view, so a repository's path is refused when any part of it is a link (name the directory it leads to)",
                    root.path(&abs).display()
                ));
            }
            Ok(Some(m)) if !m.is_dir() => {
                return Err(format!("{} is not a directory", root.path(&abs).display()));
            }
            Ok(Some(_)) => {}
            Err(e) => return Err(format!("{}: {e}", root.path(&abs).display())),
        }
    }
    if abs.is_empty() {
        abs.push('/');
    }
    no_links_under(root, &abs)
}

/// Refuses a symbolic link anywhere in the repository's directory (its
/// metadata and packages are read by the tool, following links).
fn no_links_under(root: &Root, abs: &str) -> Result<(), String> {
    let mut stack = vec![abs.to_owned()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let names = root
            .list(&dir)
            .map_err(|e| format!("{}: {e}", root.path(&dir).display()))?;
        for name in names {
            seen += 1;
            if seen > TREE_LIMIT {
                return Err(format!(
                    "{} holds more than {TREE_LIMIT} entries, more than Datum checks",
                    root.path(abs).display()
                ));
            }
            let path = format!("{}/{}", dir.trim_end_matches('/'), name.to_string_lossy());
            match root.lstat(&path) {
                Ok(Some(m)) if m.file_type().is_symlink() => {
                    return Err(format!(
                        "{} is a symbolic link inside the repository: the package tool would follow it out of the root's view; replace it with the file",
                        root.path(&path).display()
                    ));
                }
                Ok(Some(m)) if m.is_dir() => stack.push(path),
                Ok(_) => {}
                Err(e) => return Err(format!("{}: {e}", root.path(&path).display())),
            }
        }
    }
    Ok(())
}

/// Follows `relative` from the directory `dir` of the root as the kernel
/// would: `..` above the root, or a symbolic link on the way (or at the
/// end), is refused.
pub fn walk(root: &Root, dir: &str, relative: &str) -> Result<(), String> {
    let mut at: Vec<&str> = Vec::new();
    let parts = dir.split('/').chain(relative.split('/'));
    for part in parts.filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            if at.pop().is_none() {
                return Err("leads out of the root".to_owned());
            }
            continue;
        }
        at.push(part);
        let abs = format!("/{}", at.join("/"));
        match root.lstat(&abs) {
            Ok(Some(m)) if m.file_type().is_symlink() => {
                return Err(format!(
                    "passes through the symbolic link {}, which the package tool would follow",
                    root.path(&abs).display()
                ));
            }
            Ok(_) => {}
            Err(e) => return Err(format!("{}: {e}", root.path(&abs).display())),
        }
    }
    Ok(())
}
