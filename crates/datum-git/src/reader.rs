//! [`GitReader`]: a fleet as committed at one revision.
//!
//! Loading walks the commit's tree below the fleet prefix once, recording
//! every entry (path → object id and kind) and the discovered document
//! candidates. Reads then look a path up in that map and fetch one blob
//! through a small pool of repository handles, so any number of threads can
//! read at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use datum_core::reader::{ReadError, Reader, SourceError, is_yaml_name};
use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::GitError;
use crate::repo::{Revision, first_line};

/// How many symbolic links [`GitReader::read_source`] follows before giving
/// up, as Linux does.
const MAX_LINK_HOPS: usize = 40;

/// The longest symbolic link target read (Linux's `PATH_MAX`); a link blob
/// larger than this is refused rather than loaded.
const MAX_LINK_TARGET: u64 = 4096;

/// What a tree entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
struct Entry {
    kind: Kind,
    id: ObjectId,
}

/// A fleet as committed at one revision, read straight from the object
/// database (no checkout). Cheap to share between threads: it is `Sync`,
/// and [`Reader::read`] costs one map lookup and one object read.
pub struct GitReader {
    revision: Revision,
    label: String,
    workdir: PathBuf,
    /// Every entry below the fleet root, by fleet-relative `/`-separated
    /// path; the root itself is `""`. Entries whose path is not UTF-8 are
    /// left out: no fleet path can name them.
    entries: HashMap<String, Entry>,
    /// The discovered document candidates, sorted.
    discovered: Vec<String>,
    /// Set when a candidate's path is not UTF-8 (as `DirReader` refuses it).
    discover_error: Option<ReadError>,
    pool: Pool,
}

impl std::fmt::Debug for GitReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitReader")
            .field("revision", &self.revision)
            .field("entries", &self.entries.len())
            .field("discovered", &self.discovered.len())
            .finish_non_exhaustive()
    }
}

/// Thread-local repository handles, handed out one per concurrent read.
/// `gix::Repository` is cheap to use but not `Sync`; creating one from the
/// shared repository costs more than a read, so handles are reused.
struct Pool {
    shared: gix::ThreadSafeRepository,
    idle: Mutex<Vec<gix::Repository>>,
}

impl Pool {
    fn with<R>(&self, f: impl FnOnce(&gix::Repository) -> R) -> R {
        let pooled = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let repo = pooled.unwrap_or_else(|| self.shared.to_thread_local());
        let result = f(&repo);
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(repo);
        result
    }
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
struct Loader<'a> {
    repo: &'a gix::Repository,
    workdir: &'a Path,
    label: &'a str,
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

impl GitReader {
    /// Walks the tree of `rev` below `prefix` once. See [`crate::Repo::reader`].
    pub(crate) fn load(
        shared: gix::ThreadSafeRepository,
        workdir: &Path,
        prefix: &str,
        rev: &Revision,
    ) -> Result<GitReader, GitError> {
        let label = rev.describe();
        let repo = shared.to_thread_local();
        let loader = Loader {
            repo: &repo,
            workdir,
            label: &label,
        };
        let mut tree_id = repo
            .find_commit(rev.object_id())
            .and_then(|commit| commit.tree_id().map(gix::Id::detach))
            .map_err(|e| loader.object_error("the commit", e))?;

        // Down from the top of the repository to the fleet root, collecting
        // the .gitignore files of the directories above the fleet.
        let mut ignores = IgnoreStack::default();
        let mut ignore_top: Option<usize> = None;
        let mut dir = String::new();
        for component in prefix.split('/').filter(|c| !c.is_empty()) {
            let entries = loader.tree_entries(tree_id, dir.as_bytes().as_bstr())?;
            if let Some(matcher) = loader.gitignore(&entries, &dir)? {
                ignores.nodes.push(IgnoreNode {
                    matcher,
                    parent: ignore_top,
                });
                ignore_top = Some(ignores.nodes.len() - 1);
            }
            let next = entries
                .iter()
                .find(|(name, e)| name == component && e.kind == Kind::Dir);
            let Some((_, next)) = next else {
                return Err(GitError::NoFleet {
                    rev: label,
                    path: prefix.to_owned(),
                });
            };
            tree_id = next.id;
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(component);
        }

        // The fleet itself: every entry, and the discovery candidates.
        let mut entries = HashMap::new();
        entries.insert(
            String::new(),
            Entry {
                kind: Kind::Dir,
                id: tree_id,
            },
        );
        let mut discovered = Vec::new();
        let mut discover_error = None;
        let mut pending = vec![PendingDir {
            id: tree_id,
            rel: BString::default(),
            discoverable: true,
            ignore: ignore_top,
        }];
        while let Some(here) = pending.pop() {
            let listing = loader.tree_entries(here.id, here.rel.as_bstr())?;
            let mut ignore = here.ignore;
            if here.discoverable {
                let repo_dir =
                    String::from_utf8_lossy(&join(prefix.as_bytes().as_bstr(), here.rel.as_bstr()))
                        .into_owned();
                if let Some(matcher) = loader.gitignore(&listing, &repo_dir)? {
                    ignores.nodes.push(IgnoreNode {
                        matcher,
                        parent: ignore,
                    });
                    ignore = Some(ignores.nodes.len() - 1);
                }
            }
            for (name, entry) in listing {
                let rel = join(here.rel.as_bstr(), name.as_bstr());
                let rel_str = std::str::from_utf8(&rel).ok().map(str::to_owned);
                if let Some(rel_str) = &rel_str {
                    entries.insert(rel_str.clone(), entry);
                }
                let hidden = name.first() == Some(&b'.');
                let candidate = here.discoverable
                    && !hidden
                    && match entry.kind {
                        Kind::Dir => true,
                        Kind::File => name.ends_with(b".yaml") || name.ends_with(b".yml"),
                        Kind::Link | Kind::Submodule => false,
                    };
                let discoverable = candidate
                    && match match_path(prefix, rel.as_bstr()) {
                        Some(path) => !ignores.is_ignored(ignore, &path, entry.kind == Kind::Dir),
                        None => true,
                    };
                match entry.kind {
                    Kind::Dir => pending.push(PendingDir {
                        id: entry.id,
                        rel,
                        discoverable,
                        ignore,
                    }),
                    Kind::File if discoverable => match rel_str {
                        Some(path) if is_yaml_name(&path) => discovered.push(path),
                        Some(_) => {}
                        None => {
                            discover_error.get_or_insert_with(|| ReadError::Io {
                                path: String::from_utf8_lossy(&rel).into_owned(),
                                message: "the file name is not valid UTF-8".to_owned(),
                            });
                        }
                    },
                    _ => {}
                }
            }
        }
        discovered.sort();
        Ok(GitReader {
            revision: rev.clone(),
            label,
            workdir: workdir.to_path_buf(),
            entries,
            discovered,
            discover_error,
            pool: Pool {
                shared,
                idle: Mutex::new(vec![repo]),
            },
        })
    }

    /// The revision this reader reads.
    pub fn revision(&self) -> &Revision {
        &self.revision
    }

    fn io_error(&self, path: &str, message: impl std::fmt::Display) -> ReadError {
        ReadError::Io {
            path: path.to_owned(),
            message: format!(
                "{message} (at {} in {})",
                self.label,
                self.workdir.display()
            ),
        }
    }

    /// The bytes of a blob, or its size when that is over `limit` (read from
    /// the object header, before the blob is inflated).
    fn blob_within(&self, id: ObjectId, limit: u64) -> Result<Result<Vec<u8>, u64>, String> {
        self.pool.with(|repo| {
            let header = repo
                .find_header(id)
                .map_err(|e| first_line(&e.to_string()))?;
            if header.size() > limit {
                return Ok(Err(header.size()));
            }
            let mut blob = repo.find_blob(id).map_err(|e| first_line(&e.to_string()))?;
            Ok(Ok(blob.take_data()))
        })
    }

    fn source_io_error(&self, message: impl std::fmt::Display) -> SourceError {
        SourceError::Io(format!(
            "{message} (at {} in {})",
            self.label,
            self.workdir.display()
        ))
    }
}

impl Reader for GitReader {
    fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError> {
        let prefix = format!("{dir}/");
        Ok(self
            .entries
            .iter()
            .filter(|(path, e)| {
                matches!(e.kind, Kind::File | Kind::Link)
                    && path.starts_with(&prefix)
                    && !path.split('/').any(|c| c.starts_with('.'))
            })
            .map(|(path, _)| path.clone())
            .collect())
    }

    fn discover(&self) -> Result<Vec<String>, ReadError> {
        match &self.discover_error {
            Some(e) => Err(e.clone()),
            None => Ok(self.discovered.clone()),
        }
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let entry = match self.entries.get(path) {
            Some(e) if e.kind == Kind::File => *e,
            Some(_) => return Err(self.io_error(path, "not a regular file")),
            None => return Err(self.io_error(path, "no such file")),
        };
        let too_large = |size: u64| ReadError::TooLarge {
            path: path.to_owned(),
            size,
            limit,
        };
        match self.blob_within(entry.id, limit) {
            Ok(Ok(bytes)) if bytes.len() as u64 > limit => Err(too_large(bytes.len() as u64)),
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(too_large(size)),
            Err(message) => Err(self.io_error(path, message)),
        }
    }

    fn read_source(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        // Resolve one component at a time, as the kernel does, so a link in
        // the middle of the path is followed and `..` after it climbs from
        // where the link led. Components still to visit are kept reversed.
        if path.starts_with('/') {
            return Err(SourceError::Escapes {
                target: path.to_owned(),
            });
        }
        let mut todo: Vec<String> = path.split('/').rev().map(str::to_owned).collect();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(component) = todo.pop() {
            match component.as_str() {
                "" | "." => continue,
                ".." => {
                    if done.pop().is_none() {
                        let mut rest: Vec<&str> = todo.iter().rev().map(String::as_str).collect();
                        rest.insert(0, "..");
                        return Err(SourceError::Escapes {
                            target: lexical(&rest.join("/")),
                        });
                    }
                    continue;
                }
                _ => {}
            }
            done.push(component);
            let here = done.join("/");
            let Some(entry) = self.entries.get(&here) else {
                return Err(SourceError::Missing);
            };
            let last = todo.iter().all(|c| c.is_empty() || c == ".");
            match entry.kind {
                Kind::Dir => {}
                Kind::File if last => {
                    return match self.blob_within(entry.id, limit) {
                        Ok(Ok(bytes)) if bytes.len() as u64 > limit => Err(SourceError::TooLarge {
                            size: bytes.len() as u64,
                            limit,
                        }),
                        Ok(Ok(bytes)) => Ok(bytes),
                        Ok(Err(size)) => Err(SourceError::TooLarge { size, limit }),
                        Err(message) => Err(self.source_io_error(message)),
                    };
                }
                // A path that continues below a file names nothing.
                Kind::File => return Err(SourceError::Missing),
                Kind::Submodule if last => return Err(SourceError::NotAFile),
                Kind::Submodule => return Err(SourceError::Missing),
                Kind::Link => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(SourceError::Io(format!(
                            "too many levels of symbolic links (more than {MAX_LINK_HOPS})"
                        )));
                    }
                    let target = match self.blob_within(entry.id, MAX_LINK_TARGET) {
                        Ok(Ok(target)) => String::from_utf8_lossy(&target).into_owned(),
                        Ok(Err(size)) => {
                            return Err(SourceError::Io(format!(
                                "the symbolic link {here} holds a {size}-byte target, \
                                 longer than any path"
                            )));
                        }
                        Err(message) => return Err(self.source_io_error(message)),
                    };
                    if target.is_empty() {
                        // An empty link target names nothing, as on disk.
                        return Err(SourceError::Missing);
                    }
                    if target.starts_with('/') {
                        return Err(SourceError::Escapes { target });
                    }
                    done.pop();
                    todo.extend(target.split('/').rev().map(str::to_owned));
                }
            }
        }
        // The path names the fleet root or a directory in it.
        Err(SourceError::NotAFile)
    }
}

/// Normalises a relative path lexically, keeping leading `..` components
/// (used to show where an escaping link leads, relative to the fleet root).
fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}
