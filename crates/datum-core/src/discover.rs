//! Finding the candidate document files of a fleet on disk, and the files
//! below a directory such as `templates/`, with the `.gitignore` rules git
//! itself would apply, and only those: ignore files are read from the git
//! work tree holding the fleet down to each directory (never above the work
//! tree, nor above the fleet root outside git), and never through a symbolic
//! link, as the git reader does for a revision.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Whether a file name is a YAML file Datum looks at.
pub(crate) fn is_yaml_name(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// At most this much of one `.gitignore` is read.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// What a walk collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Regular `*.yaml`/`*.yml` files; a name that is not UTF-8 is an error.
    Documents,
    /// Regular files and symbolic links of any name; a name that is not
    /// UTF-8 is passed over, as no fleet path can name it.
    Payloads,
}

/// Every regular `*.yaml`/`*.yml` file under `root` (a canonical path),
/// relative to it with `/`, skipping hidden names and what `.gitignore`
/// files ignore, never following symbolic links. Unsorted.
pub(crate) fn discover(root: &Path) -> Result<Vec<String>, (PathBuf, io::Error)> {
    let mut stack = rules_above(root)?;
    let mut out = Vec::new();
    walk(root, root, &mut stack, Want::Documents, &mut out)?;
    Ok(out)
}

/// Every regular file and symbolic link below the directory `dir` (a
/// normalised path relative to `root`), relative to `root` with `/`, by the
/// rules of [`discover`]: nothing when `dir` is missing, is not a directory,
/// or is itself hidden or ignored. Unsorted.
pub(crate) fn list_below(root: &Path, dir: &str) -> Result<Vec<String>, (PathBuf, io::Error)> {
    let mut stack = rules_above(root)?;
    let mut here = root.to_path_buf();
    for part in dir.split('/').filter(|c| !c.is_empty() && *c != ".") {
        push_rules(&here, &mut stack)?;
        let next = here.join(part);
        let is_dir = fs::symlink_metadata(&next).is_ok_and(|m| m.is_dir());
        if !is_dir || part.starts_with('.') || is_ignored(&stack, &next, true) {
            return Ok(Vec::new());
        }
        here = next;
    }
    let mut out = Vec::new();
    walk(root, &here, &mut stack, Want::Payloads, &mut out)?;
    Ok(out)
}

/// Whether the `.gitignore` rules ignore `path` (relative to `root`, with
/// `/`) or a directory on its way, whether or not it exists. Rules are read
/// from the real, visible directories on the way only, as git would find
/// them; a rule file that cannot be read counts as none.
pub(crate) fn ignores(root: &Path, path: &str) -> bool {
    let Ok(mut stack) = rules_above(root) else {
        return false;
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let mut here = root.to_path_buf();
    let mut real = true;
    for (i, part) in parts.iter().enumerate() {
        if real && push_rules(&here, &mut stack).is_err() {
            return false;
        }
        let next = here.join(part);
        let last = i + 1 == parts.len();
        if is_ignored(&stack, &next, !last) {
            return true;
        }
        real =
            real && !part.starts_with('.') && fs::symlink_metadata(&next).is_ok_and(|m| m.is_dir());
        here = next;
    }
    false
}

/// The rules of the directories from the work tree holding `root` down to
/// (not including) `root` itself. The root is read even when they ignore
/// it, as the git reader reads the fleet it was pointed at: the operator
/// named it.
fn rules_above(root: &Path) -> Result<Vec<Gitignore>, (PathBuf, io::Error)> {
    let top = work_tree_of(root).unwrap_or_else(|| root.to_path_buf());
    let mut stack = Vec::new();
    let mut dir = top.clone();
    for part in root
        .strip_prefix(&top)
        .unwrap_or(Path::new(""))
        .components()
    {
        push_rules(&dir, &mut stack)?;
        dir.push(part);
    }
    Ok(stack)
}

/// The work tree of the git repository holding `dir`: the nearest
/// directory at or above it with a `.git` entry.
fn work_tree_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

fn walk(
    root: &Path,
    dir: &Path,
    stack: &mut Vec<Gitignore>,
    want: Want,
    out: &mut Vec<String>,
) -> Result<(), (PathBuf, io::Error)> {
    let pushed = push_rules(dir, stack)?;
    let entries = fs::read_dir(dir).map_err(|e| (dir.to_path_buf(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| (dir.to_path_buf(), e))?;
        let path = entry.path();
        // Hidden names are skipped before ignore rules are read, so a
        // negation such as `!.private.yaml` cannot bring one back.
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| (path.clone(), e))?;
        if kind.is_dir() {
            if !is_ignored(stack, &path, true) {
                walk(root, &path, stack, want, out)?;
            }
            continue;
        }
        let wanted = match want {
            Want::Documents => kind.is_file() && is_yaml_name(&name),
            Want::Payloads => kind.is_file() || kind.is_symlink(),
        };
        if !wanted || is_ignored(stack, &path, false) {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap_or(&path);
        match rel.to_str() {
            Some(rel) => out.push(rel.replace(std::path::MAIN_SEPARATOR, "/")),
            None if want == Want::Payloads => {}
            None => {
                let e = io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the file name is not valid UTF-8",
                );
                return Err((path, e));
            }
        }
    }
    if pushed {
        stack.pop();
    }
    Ok(())
}

/// Adds the rules of `dir/.gitignore` when it is a regular file; says
/// whether it did. A link or a directory by that name is not read.
fn push_rules(dir: &Path, stack: &mut Vec<Gitignore>) -> Result<bool, (PathBuf, io::Error)> {
    let file = dir.join(".gitignore");
    match fs::symlink_metadata(&file) {
        Ok(meta) if meta.is_file() => {}
        _ => return Ok(false),
    }
    let text = {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        fs::File::open(&file)
            .and_then(|f| f.take(MAX_IGNORE_FILE).read_to_end(&mut bytes))
            .map_err(|e| (file.clone(), e))?;
        bytes
    };
    let mut builder = GitignoreBuilder::new(dir);
    // Git skips a UTF-8 byte order mark at the start of the file.
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&text);
    for line in String::from_utf8_lossy(text).lines() {
        // A line git cannot use is skipped, as git skips it.
        let _ = builder.add_line(Some(file.clone()), line);
    }
    match builder.build() {
        Ok(rules) => {
            stack.push(rules);
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

/// Whether the innermost rules with an opinion on `path` ignore it.
fn is_ignored(stack: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for rules in stack.iter().rev() {
        match rules.matched(path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}
