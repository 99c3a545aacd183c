//! One walk of a commit's tree: down from the top of the repository to the
//! fleet root (gathering the `.gitignore` files on the way), then every
//! entry below it, recording each path's object and kind and the document
//! candidates discovery finds by git's ignore rules.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use datum_core::reader::ReadError;
use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::{BlobError, GitError, first_line};

/// What a tree entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A blob, executable or not.
    File,
    /// A symbolic link; its blob holds the target.
    Link,
    /// A tree.
    Dir,
    /// A submodule (a commit of another repository).
    Submodule,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) kind: Kind,
    pub(crate) id: ObjectId,
}

/// The `.gitignore` matchers in force in one directory: its own file's
/// patterns and a link to its parent directory's node.
struct IgnoreNode {
    matcher: Gitignore,
    parent: Option<usize>,
}

/// The gitignore matchers of the directories being walked, innermost last.
#[derive(Default)]
struct IgnoreStack {
    nodes: Vec<IgnoreNode>,
}

impl IgnoreStack {
    /// Adds a directory's matcher below `parent`; its index.
    fn push(&mut self, matcher: Gitignore, parent: Option<usize>) -> usize {
        self.nodes.push(IgnoreNode { matcher, parent });
        self.nodes.len() - 1
    }

    /// Whether the innermost `.gitignore` with an opinion on `path` ignores
    /// it. `path` is `/` followed by the repository-relative path, the form
    /// the matchers were built with.
    fn is_ignored(&self, mut node: Option<usize>, path: &Path, is_dir: bool) -> bool {
        while let Some(i) = node {
            let Some(n) = self.nodes.get(i) else {
                return false;
            };
            match n.matcher.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => node = n.parent,
            }
        }
        false
    }
}

/// A directory waiting to be walked.
struct PendingDir {
    id: ObjectId,
    /// Fleet-relative path, empty for the root.
    rel: BString,
    /// Whether discovery looks inside it (it is neither hidden nor ignored).
    discoverable: bool,
    /// The innermost gitignore node in force for its entries' parent.
    ignore: Option<usize>,
}

fn join(dir: &BStr, name: &BStr) -> BString {
    if dir.is_empty() {
        name.to_owned()
    } else {
        let mut out = dir.to_owned();
        out.push(b'/');
        out.extend_from_slice(name);
        out
    }
}

/// The path a gitignore matcher sees: `/` + repository-relative path.
fn match_path(repo_prefix: &str, rel: &BStr) -> Option<PathBuf> {
    let mut full = BString::from("/");
    full.extend_from_slice(repo_prefix.as_bytes());
    if !repo_prefix.is_empty() && !rel.is_empty() {
        full.push(b'/');
    }
    full.extend_from_slice(rel);
    gix::path::from_bstring(full).ok()
}

fn kind_of(kind: EntryKind) -> Kind {
    match kind {
        EntryKind::Tree => Kind::Dir,
        EntryKind::Blob | EntryKind::BlobExecutable => Kind::File,
        EntryKind::Link => Kind::Link,
        EntryKind::Commit => Kind::Submodule,
    }
}

/// Reading objects while loading: each failure names the revision and what
/// was being read.
pub(crate) struct Loader<'a> {
    pub(crate) repo: &'a gix::Repository,
    pub(crate) workdir: &'a Path,
    pub(crate) label: &'a str,
}

impl Loader<'_> {
    fn object_error(&self, what: impl Into<String>, e: impl std::fmt::Display) -> GitError {
        GitError::Object {
            what: format!("{} at {}", what.into(), self.label),
            repo: self.workdir.to_path_buf(),
            message: first_line(&e.to_string()),
        }
    }

    /// The entries of the tree `id`, which is the directory `what`.
    fn tree_entries(&self, id: ObjectId, what: &BStr) -> Result<Vec<(BString, Entry)>, GitError> {
        let describe = || {
            if what.is_empty() {
                "the top directory".to_owned()
            } else {
                format!("the directory {what}")
            }
        };
        let tree = self
            .repo
            .find_tree(id)
            .map_err(|e| self.object_error(describe(), e))?;
        let decoded = tree
            .decode()
            .map_err(|e| self.object_error(describe(), e))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| {
                (
                    e.filename.to_owned(),
                    Entry {
                        kind: kind_of(e.mode.kind()),
                        id: e.oid.to_owned(),
                    },
                )
            })
            .collect())
    }

    /// A matcher for the `.gitignore` blob among `entries`, in the directory
    /// `dir` (repository-relative), if there is one. As git does, a
    /// `.gitignore` that is a symbolic link or a directory is not read.
    fn gitignore(
        &self,
        entries: &[(BString, Entry)],
        dir: &str,
    ) -> Result<Option<Gitignore>, GitError> {
        let Some((_, entry)) = entries
            .iter()
            .find(|(name, e)| name == ".gitignore" && e.kind == Kind::File)
        else {
            return Ok(None);
        };
        let what = if dir.is_empty() {
            ".gitignore".to_owned()
        } else {
            format!("{dir}/.gitignore")
        };
        let blob = self
            .repo
            .find_blob(entry.id)
            .map_err(|e| self.object_error(what.clone(), e))?;
        Ok(Some(build_gitignore(dir, &blob.data, &what)))
    }
}

/// Compiles a `.gitignore` file's bytes for the directory `dir`
/// (repository-relative), line by line as `ignore` reads one from disk: a
/// leading byte-order mark is dropped, lines that are not UTF-8 and patterns
/// that do not compile are skipped (git skips bad patterns too).
fn build_gitignore(dir: &str, bytes: &[u8], origin: &str) -> Gitignore {
    let root = format!("/{dir}");
    let mut builder = GitignoreBuilder::new(&root);
    let from = PathBuf::from(origin);
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(mut line) = std::str::from_utf8(line) else {
            continue;
        };
        if i == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        // An invalid pattern is skipped; the rest of the file still counts.
        let _ = builder.add_line(Some(from.clone()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// What one walk finds below the fleet root.
pub(crate) struct Walked {
    /// Every entry by fleet-relative `/`-separated path; the root is `""`.
    /// Entries whose path is not UTF-8 are left out: no fleet path can name them.
    pub(crate) entries: HashMap<String, Entry>,
    /// The discovered document candidates, sorted.
    pub(crate) discovered: Vec<String>,
    /// Every file and link neither hidden nor ignored, nor below a hidden
    /// or ignored directory: what `list_payloads` offers. Unsorted.
    pub(crate) payloads: Vec<String>,
    /// Set when a candidate's path is not UTF-8 (as `DirReader` refuses it).
    pub(crate) discover_error: Option<ReadError>,
    /// The `.gitignore` rules met, to ask about a path later.
    pub(crate) ignores: Ignores,
}

/// The `.gitignore` rules of a walked tree, by directory.
pub(crate) struct Ignores {
    stack: IgnoreStack,
    /// The node in force for the entries of each visible directory, by
    /// fleet-relative path.
    dirs: HashMap<String, Option<usize>>,
    /// The fleet's path in the repository.
    prefix: String,
}

impl Ignores {
    /// Whether the rules ignore `path` (fleet-relative, `/`-separated) or a
    /// directory on its way, whether or not it exists, as `DirReader`
    /// answers for a checkout: the rules of a directory count only when it
    /// exists and is visible.
    pub(crate) fn ignore(&self, path: &str) -> bool {
        let parts: Vec<&str> = path
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let mut node = self.dirs.get("").copied().flatten();
        let mut here = String::new();
        for (i, part) in parts.iter().enumerate() {
            if !here.is_empty() {
                here.push('/');
            }
            here.push_str(part);
            let is_dir = i + 1 < parts.len();
            let ignored = match_path(&self.prefix, here.as_bytes().as_bstr())
                .is_some_and(|p| self.stack.is_ignored(node, &p, is_dir));
            if ignored {
                return true;
            }
            if let Some(inner) = self.dirs.get(&here) {
                node = *inner;
            }
        }
        false
    }
}

impl Loader<'_> {
    /// Walks the tree of `commit` below `prefix`.
    pub(crate) fn walk(&self, commit: ObjectId, prefix: &str) -> Result<Walked, GitError> {
        let tree_id = self
            .repo
            .find_commit(commit)
            .and_then(|commit| commit.tree_id().map(gix::Id::detach))
            .map_err(|e| self.object_error("the commit", e))?;
        let mut ignores = IgnoreStack::default();
        let (fleet_tree, ignore_top) = self.descend(tree_id, prefix, &mut ignores)?;
        let mut walked = Walked {
            entries: HashMap::from([(
                String::new(),
                Entry {
                    kind: Kind::Dir,
                    id: fleet_tree,
                },
            )]),
            discovered: Vec::new(),
            payloads: Vec::new(),
            discover_error: None,
            ignores: Ignores {
                stack: IgnoreStack::default(),
                dirs: HashMap::new(),
                prefix: prefix.to_owned(),
            },
        };
        let mut pending = vec![PendingDir {
            id: fleet_tree,
            rel: BString::default(),
            discoverable: true,
            ignore: ignore_top,
        }];
        while let Some(here) = pending.pop() {
            self.visit_dir(here, prefix, &mut ignores, &mut pending, &mut walked)?;
        }
        walked.ignores.stack = ignores;
        walked.discovered.sort();
        Ok(walked)
    }

    /// Down from the top of the repository to the fleet root, collecting
    /// the `.gitignore` files of the directories above the fleet: the fleet
    /// root's tree and the innermost ignore node in force there.
    fn descend(
        &self,
        mut tree_id: ObjectId,
        prefix: &str,
        ignores: &mut IgnoreStack,
    ) -> Result<(ObjectId, Option<usize>), GitError> {
        let mut ignore_top: Option<usize> = None;
        let mut dir = String::new();
        for component in prefix.split('/').filter(|c| !c.is_empty()) {
            let entries = self.tree_entries(tree_id, dir.as_bytes().as_bstr())?;
            if let Some(matcher) = self.gitignore(&entries, &dir)? {
                ignore_top = Some(ignores.push(matcher, ignore_top));
            }
            let next = entries
                .iter()
                .find(|(name, e)| name == component && e.kind == Kind::Dir);
            let Some((_, next)) = next else {
                return Err(GitError::NoFleet {
                    rev: self.label.to_owned(),
                    path: prefix.to_owned(),
                });
            };
            tree_id = next.id;
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(component);
        }
        Ok((tree_id, ignore_top))
    }

    /// Records one directory's entries, queueing its subdirectories.
    fn visit_dir(
        &self,
        here: PendingDir,
        prefix: &str,
        ignores: &mut IgnoreStack,
        pending: &mut Vec<PendingDir>,
        walked: &mut Walked,
    ) -> Result<(), GitError> {
        let listing = self.tree_entries(here.id, here.rel.as_bstr())?;
        let mut ignore = here.ignore;
        if here.discoverable {
            let repo_dir =
                String::from_utf8_lossy(&join(prefix.as_bytes().as_bstr(), here.rel.as_bstr()))
                    .into_owned();
            if let Some(matcher) = self.gitignore(&listing, &repo_dir)? {
                ignore = Some(ignores.push(matcher, ignore));
            }
            if let Ok(rel) = std::str::from_utf8(&here.rel) {
                walked.ignores.dirs.insert(rel.to_owned(), ignore);
            }
        }
        for (name, entry) in listing {
            let rel = join(here.rel.as_bstr(), name.as_bstr());
            let rel_str = std::str::from_utf8(&rel).ok().map(str::to_owned);
            if let Some(rel_str) = &rel_str {
                walked.entries.insert(rel_str.clone(), entry);
            }
            // Neither hidden nor ignored, in a directory that is neither.
            let visible = here.discoverable
                && name.first() != Some(&b'.')
                && entry.kind != Kind::Submodule
                && match match_path(prefix, rel.as_bstr()) {
                    Some(path) => !ignores.is_ignored(ignore, &path, entry.kind == Kind::Dir),
                    None => true,
                };
            if entry.kind == Kind::Dir {
                pending.push(PendingDir {
                    id: entry.id,
                    rel,
                    discoverable: visible,
                    ignore,
                });
                continue;
            }
            if !visible {
                continue;
            }
            if let Some(path) = &rel_str {
                walked.payloads.push(path.clone());
            }
            let yaml = name.ends_with(b".yaml") || name.ends_with(b".yml");
            if entry.kind != Kind::File || !yaml {
                continue;
            }
            match rel_str {
                Some(path) => walked.discovered.push(path),
                None => {
                    walked.discover_error.get_or_insert_with(|| {
                        ReadError::store(&String::from_utf8_lossy(&rel), BlobError::NameNotUtf8)
                    });
                }
            }
        }
        Ok(())
    }
}
