//! [`GitReader`]: a fleet as committed at one revision.
//!
//! Loading walks the commit's tree below the fleet prefix once (`walk`),
//! recording every entry (path → object id and kind) and the discovered
//! document candidates. Reads then look a path up in that map and fetch one blob
//! through a small pool of repository handles, so any number of threads can
//! read at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use datum_core::reader::{Opened, ReadError, Reader, SourceError};
use gix::ObjectId;

use crate::error::{At, BlobError, GitError, first_line};
use crate::revision::Revision;
use crate::walk::{Entry, Ignores, Kind, Loader};

/// How many symbolic links [`GitReader::read_source`] follows before giving
/// up, as Linux does.
const MAX_LINK_HOPS: usize = 40;

/// The longest symbolic link target read (Linux's `PATH_MAX`); a link blob
/// larger than this is refused rather than loaded.
const MAX_LINK_TARGET: u64 = 4096;

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
    /// Every file and link `list_payloads` offers, sorted.
    payloads: Vec<String>,
    /// Set when a candidate's path is not UTF-8 (as `DirReader` refuses it).
    discover_error: Option<ReadError>,
    ignores: Ignores,
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
        let walked = Loader {
            repo: &repo,
            workdir,
            label: &label,
        }
        .walk(rev.object_id(), prefix)?;
        Ok(GitReader {
            revision: rev.clone(),
            label,
            workdir: workdir.to_path_buf(),
            entries: walked.entries,
            discovered: walked.discovered,
            payloads: {
                let mut payloads = walked.payloads;
                payloads.sort();
                payloads
            },
            discover_error: walked.discover_error,
            ignores: walked.ignores,
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

    fn at(&self) -> At {
        At {
            rev: self.label.clone(),
            repo: self.workdir.clone(),
        }
    }

    /// The entry of a discovered file, which must be a regular file.
    fn file_entry(&self, path: &str) -> Result<Entry, ReadError> {
        match self.entries.get(path) {
            Some(e) if e.kind == Kind::File => Ok(*e),
            Some(_) => Err(ReadError::store(
                path,
                BlobError::NotAFile { at: self.at() },
            )),
            None => Err(ReadError::store(path, BlobError::Missing { at: self.at() })),
        }
    }

    fn object_error(&self, path: &str, source: gix::Error) -> ReadError {
        ReadError::store(
            path,
            BlobError::Object {
                at: self.at(),
                source,
            },
        )
    }

    /// The bytes of a blob, or its size when that is over `limit` (read from
    /// the object header, before the blob is inflated).
    fn blob_within(&self, id: ObjectId, limit: u64) -> Result<Result<Vec<u8>, u64>, gix::Error> {
        self.pool.with(|repo| {
            let header = repo.find_header(id)?;
            if header.size() > limit {
                return Ok(Err(header.size()));
            }
            Ok(Ok(repo.find_blob(id)?.take_data()))
        })
    }

    /// A payload's bytes, refused over `limit`.
    fn payload(&self, entry: Entry, limit: u64) -> Result<Vec<u8>, SourceError> {
        match self.blob_within(entry.id, limit) {
            Ok(Ok(bytes)) if bytes.len() as u64 > limit => Err(SourceError::TooLarge {
                size: bytes.len() as u64,
                limit,
            }),
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(SourceError::TooLarge { size, limit }),
            Err(e) => Err(self.source_io_error(first_line(&e.to_string()))),
        }
    }

    /// Where the symbolic link `here` leads: its target, relative to the
    /// link's directory.
    fn link_target(&self, here: &str, entry: Entry) -> Result<String, SourceError> {
        let target = match self.blob_within(entry.id, MAX_LINK_TARGET) {
            Ok(Ok(target)) => String::from_utf8_lossy(&target).into_owned(),
            Ok(Err(size)) => {
                return Err(SourceError::Io(format!(
                    "the symbolic link {here} holds a {size}-byte target, \
                     longer than any path"
                )));
            }
            Err(e) => return Err(self.source_io_error(first_line(&e.to_string()))),
        };
        if target.is_empty() {
            // An empty link target names nothing, as on disk.
            return Err(SourceError::Missing);
        }
        if target.starts_with('/') {
            return Err(SourceError::Escapes { target });
        }
        Ok(target)
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
        // `""` is the whole fleet.
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        Ok(self
            .payloads
            .iter()
            .filter(|path| path.starts_with(&prefix))
            .cloned()
            .collect())
    }

    fn is_ignored(&self, path: &str) -> bool {
        self.ignores.ignore(path)
    }

    fn discover(&self) -> Result<Vec<String>, ReadError> {
        match &self.discover_error {
            Some(e) => Err(e.clone()),
            None => Ok(self.discovered.clone()),
        }
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let entry = self.file_entry(path)?;
        let too_large = |size: u64| ReadError::TooLarge {
            path: path.to_owned(),
            size,
            limit,
        };
        match self.blob_within(entry.id, limit) {
            Ok(Ok(bytes)) if bytes.len() as u64 > limit => Err(too_large(bytes.len() as u64)),
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(too_large(size)),
            Err(e) => Err(self.object_error(path, e)),
        }
    }

    /// The blob inflated whole: objects in a pack cannot be read in part.
    fn open(&self, path: &str) -> Result<Opened<'_>, ReadError> {
        let entry = self.file_entry(path)?;
        let bytes = self
            .pool
            .with(|repo| Ok(repo.find_blob(entry.id)?.take_data()))
            .map_err(|e| self.object_error(path, e))?;
        Ok(Opened {
            size: Some(bytes.len() as u64),
            bytes: Box::new(std::io::Cursor::new(bytes)),
        })
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
        if self.ignores.ignore(path) {
            return Err(SourceError::Ignored);
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
            // Where a link leads, an ignored path is refused, committed or
            // not, as `DirReader` refuses it in a checkout.
            let ignored = hops > 0 && self.ignores.ignore(&here);
            let Some(entry) = self.entries.get(&here) else {
                return Err(if ignored {
                    SourceError::Ignored
                } else {
                    SourceError::Missing
                });
            };
            let last = todo.iter().all(|c| c.is_empty() || c == ".");
            match entry.kind {
                Kind::Dir | Kind::File if ignored && last => return Err(SourceError::Ignored),
                Kind::Dir => {}
                Kind::File if last => return self.payload(*entry, limit),
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
                    let target = self.link_target(&here, *entry)?;
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
