//! Where a fleet's bytes come from: a directory, a git revision (in the
//! `datum-git` crate) or memory (tests).
//!
//! A reader lists candidate document files and reads them; it also reads
//! `source` payloads, refusing any path that leaves the fleet root, through
//! `..` or through a symbolic link, and any payload over the fleet's size
//! limit. On disk a payload is opened once, confined to the root by the
//! kernel (`openat2` with `RESOLVE_BENEATH`), and read from that descriptor,
//! so no link swapped in between a check and a read can lead outside.

use crate::beneath::{Beneath, open_beneath};
use crate::discover::is_yaml_name;
use crate::hint::Hinted;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A problem reading the repository itself (not a problem in a document).
///
/// `Display` and `Error` are written out rather than derived: a store's
/// error is shared (`Arc`, so a `ReadError` can be cloned), and `source()`
/// must give the store's own error, not the `Arc` around it, so a caller
/// can downcast it to the store's type.
#[derive(Debug)]
pub enum ReadError {
    /// The file system refused; the `io::Error` says why.
    Fs { path: String, source: io::Error },
    /// A store that is not the file system (a git object database)
    /// refused; its own error type says why.
    Store {
        path: String,
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// A document file over the size limit.
    TooLarge { path: String, size: u64, limit: u64 },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Fs { path, source } => write!(f, "cannot read {path}: {source}"),
            ReadError::Store { path, source } => write!(f, "cannot read {path}: {source}"),
            ReadError::TooLarge { path, size, limit } => write!(
                f,
                "{path} is {size} bytes, over the limit of {limit} bytes for a document file"
            ),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Fs { source, .. } => Some(source),
            ReadError::Store { source, .. } => Some(&**source),
            ReadError::TooLarge { .. } => None,
        }
    }
}

impl ReadError {
    /// A store's refusal to read `path`.
    pub fn store(path: &str, source: impl std::error::Error + Send + Sync + 'static) -> ReadError {
        ReadError::Store {
            path: path.to_owned(),
            source: Arc::new(source),
        }
    }

    /// The path that could not be read.
    pub fn path(&self) -> &str {
        match self {
            ReadError::Fs { path, .. }
            | ReadError::Store { path, .. }
            | ReadError::TooLarge { path, .. } => path,
        }
    }
}

/// An `io::Error` cannot be cloned: a copy keeps its kind and its text.
impl Clone for ReadError {
    fn clone(&self) -> ReadError {
        match self {
            ReadError::Fs { path, source } => ReadError::Fs {
                path: path.clone(),
                source: io::Error::new(source.kind(), source.to_string()),
            },
            ReadError::Store { path, source } => ReadError::Store {
                path: path.clone(),
                source: Arc::clone(source),
            },
            ReadError::TooLarge { path, size, limit } => ReadError::TooLarge {
                path: path.clone(),
                size: *size,
                limit: *limit,
            },
        }
    }
}

/// Two errors are equal when they say the same: an `io::Error` has no
/// equality of its own, so its kind and text stand for it.
impl PartialEq for ReadError {
    fn eq(&self, other: &ReadError) -> bool {
        match (self, other) {
            (ReadError::Fs { path: a, source: x }, ReadError::Fs { path: b, source: y }) => {
                a == b && x.kind() == y.kind() && x.to_string() == y.to_string()
            }
            (ReadError::Store { path: a, source: x }, ReadError::Store { path: b, source: y }) => {
                a == b && x.to_string() == y.to_string()
            }
            (
                ReadError::TooLarge {
                    path: a,
                    size: s,
                    limit: l,
                },
                ReadError::TooLarge {
                    path: b,
                    size: t,
                    limit: m,
                },
            ) => a == b && s == t && l == m,
            _ => false,
        }
    }
}

impl Eq for ReadError {}

impl Hinted for ReadError {}

/// Why a `source` payload cannot be read.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum SourceError {
    #[error("does not exist")]
    Missing,
    #[error("is not a regular file")]
    NotAFile,
    #[error("is a symbolic link that leads out of the fleet root (to {target})")]
    Escapes { target: String },
    #[error("is {size} bytes, over the fleet's limit of {limit} bytes for a payload")]
    TooLarge { size: u64, limit: u64 },
    #[error("cannot be read: {0}")]
    Io(String),
    /// The path, or where its symbolic links lead, is one the repository's
    /// `.gitignore` rules ignore: a commit would not hold it (or would only
    /// by `git add -f`), so no reader reads it.
    #[error("is ignored by a `.gitignore` file")]
    Ignored,
}

/// The bytes of a fleet repository.
pub trait Reader: Sync {
    /// Every candidate document file: regular files named `*.yaml` or
    /// `*.yml`, skipping hidden names and what `.gitignore` files ignore,
    /// never following symbolic links. Paths are relative to the fleet root
    /// and use `/`. The order is not significant.
    fn discover(&self) -> Result<Vec<String>, ReadError>;

    /// Reads one discovered file, refusing one larger than `limit` bytes.
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError>;

    /// Opens one discovered file to read from its start, as far as the
    /// reader wants: the loader reads a payload only until it knows it is
    /// one (`loader::read_document`). By default, the file read whole.
    fn open(&self, path: &str) -> Result<Opened<'_>, ReadError> {
        let bytes = self.read(path, u64::MAX)?;
        Ok(Opened {
            size: Some(bytes.len() as u64),
            bytes: Box::new(io::Cursor::new(bytes)),
        })
    }

    /// Reads a `source` payload named by a normalised relative path, refusing
    /// one larger than `limit` bytes. Symbolic links are followed only while
    /// they stay inside the fleet root. A path [`Reader::is_ignored`], or
    /// one whose links lead to such a path, is refused as
    /// [`SourceError::Ignored`] whether or not the store holds it.
    fn read_source(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError>;

    /// Every file below the directory `dir` (a normalised relative path),
    /// for [`Reader::read_source`]: regular files and symbolic links,
    /// skipping hidden names and what `.gitignore` files ignore, by the
    /// rules of [`Reader::discover`], never descending through a link.
    /// Paths are relative to the fleet root and use `/`; none when `dir`
    /// does not exist or is itself hidden or ignored. The order is not
    /// significant.
    fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError>;

    /// Whether the repository's `.gitignore` rules ignore `path` (a
    /// normalised relative path) or a directory on its way, whether or not
    /// it exists: why [`Reader::list_payloads`] would leave it out. A store
    /// with no ignore rules (memory, a bundle) ignores nothing.
    fn is_ignored(&self, _path: &str) -> bool {
        false
    }
}

/// One discovered file, open for reading.
pub struct Opened<'a> {
    pub bytes: Box<dyn io::Read + 'a>,
    /// Its size, when the store knows it without reading it.
    pub size: Option<u64>,
}

/// The payload size limit when `datum.yaml` sets none: 64 MiB.
pub const DEFAULT_SOURCE_LIMIT: u64 = 64 << 20;

/// Reads at most `limit` bytes of an open file, refusing a larger one (also
/// one that grows past the limit while it is read).
fn read_within(file: fs::File, limit: u64) -> Result<Vec<u8>, SourceError> {
    let io = |e: std::io::Error| SourceError::Io(e.to_string());
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SourceError::NotAFile);
    }
    if meta.len() > limit {
        return Err(SourceError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(SourceError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Whether any component of a relative path is hidden.
pub fn is_hidden_path(path: &str) -> bool {
    path.split('/').any(|c| c.starts_with('.'))
}

/// A fleet in a directory on disk.
#[derive(Debug, Clone)]
pub struct DirReader {
    root: PathBuf,
}

impl DirReader {
    /// A reader for the fleet rooted at `root`, which must exist.
    pub fn new(root: &Path) -> Result<DirReader, ReadError> {
        let root = fs::canonicalize(root).map_err(|e| io_error(&root.display().to_string(), e))?;
        Ok(DirReader { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn io_error(path: &str, source: io::Error) -> ReadError {
    ReadError::Fs {
        path: path.to_owned(),
        source,
    }
}

impl DirReader {
    /// The refusal of a payload whose path leads out of the root, naming
    /// where it leads (worked out for the message only, never opened).
    fn escape(&self, path: &str) -> SourceError {
        let target = fs::canonicalize(self.root.join(path))
            .map_or_else(|_| path.to_owned(), |p| p.display().to_string());
        SourceError::Escapes { target }
    }

    /// Where `path` stops existing, resolved one component at a time as
    /// the git reader resolves it, when a symbolic link was followed on the
    /// way there: a link into an ignored path that git left out of a commit
    /// is refused alike both ways. Only for the message, never opened.
    fn missing_past_link(&self, path: &str) -> Option<String> {
        let mut todo: Vec<String> = path.split('/').rev().map(str::to_owned).collect();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(component) = todo.pop() {
            match component.as_str() {
                "" | "." => continue,
                ".." => {
                    done.pop()?;
                    continue;
                }
                _ => done.push(component),
            }
            let here = done.join("/");
            let meta = match fs::symlink_metadata(self.root.join(&here)) {
                Ok(meta) => meta,
                Err(_) => return (hops > 0).then_some(here),
            };
            if meta.is_symlink() {
                hops += 1;
                let target = fs::read_link(self.root.join(&here)).ok()?;
                let target = target.to_str().filter(|t| !t.starts_with('/'))?;
                if hops > 40 {
                    return None;
                }
                done.pop();
                todo.extend(target.split('/').rev().map(str::to_owned));
            } else if !meta.is_dir() {
                return None;
            }
        }
        None
    }

    /// Whether the file opened for `path` is, once its symbolic links are
    /// followed, at a path the `.gitignore` rules ignore.
    fn leads_to_ignored(&self, file: &fs::File, path: &str) -> bool {
        #[cfg(target_os = "linux")]
        let real = {
            use std::os::fd::AsRawFd;
            fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        };
        #[cfg(not(target_os = "linux"))]
        let real = {
            let _ = file;
            fs::canonicalize(self.root.join(path))
        };
        let Ok(real) = real else {
            return false;
        };
        match real.strip_prefix(&self.root).map(|rel| rel.to_str()) {
            Ok(Some(rel)) => {
                let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
                rel != path && self.is_ignored(&rel)
            }
            _ => false,
        }
    }
}

impl Reader for DirReader {
    fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError> {
        crate::discover::list_below(&self.root, dir)
            .map_err(|(path, e)| io_error(&path.display().to_string(), e))
    }

    fn is_ignored(&self, path: &str) -> bool {
        crate::discover::ignores(&self.root, path)
    }

    fn discover(&self) -> Result<Vec<String>, ReadError> {
        crate::discover::discover(&self.root)
            .map_err(|(path, e)| io_error(&path.display().to_string(), e))
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let full = self.root.join(path);
        let file = fs::File::open(&full).map_err(|e| io_error(path, e))?;
        let size = file.metadata().map_err(|e| io_error(path, e))?.len();
        if size > limit {
            return Err(ReadError::TooLarge {
                path: path.to_owned(),
                size,
                limit,
            });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        // A file growing while read still stops at the limit.
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, e))?;
        if bytes.len() as u64 > limit {
            return Err(ReadError::TooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                limit,
            });
        }
        Ok(bytes)
    }

    fn open(&self, path: &str) -> Result<Opened<'_>, ReadError> {
        let file = fs::File::open(self.root.join(path)).map_err(|e| io_error(path, e))?;
        let size = file.metadata().map_err(|e| io_error(path, e))?.len();
        Ok(Opened {
            bytes: Box::new(file),
            size: Some(size),
        })
    }

    fn read_source(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        if self.is_ignored(path) {
            return Err(SourceError::Ignored);
        }
        let file = match open_beneath(&self.root, path) {
            Ok(file) => file,
            Err(Beneath::Escapes) => return Err(self.escape(path)),
            // A path that continues below a file names nothing, as in a commit.
            Err(Beneath::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(match self.missing_past_link(path) {
                    Some(here) if self.is_ignored(&here) => SourceError::Ignored,
                    _ => SourceError::Missing,
                });
            }
            Err(Beneath::Io(e)) => return Err(SourceError::Io(e.to_string())),
        };
        if self.leads_to_ignored(&file, path) {
            return Err(SourceError::Ignored);
        }
        read_within(file, limit)
    }
}

/// A fleet held in memory, for tests: files, and symbolic links by path.
/// `discover` lists files in the order they were added, so tests can shuffle it.
#[derive(Debug, Clone, Default)]
pub struct MemReader {
    order: Vec<String>,
    files: BTreeMap<String, Vec<u8>>,
    links: BTreeMap<String, String>,
}

impl MemReader {
    pub fn new() -> MemReader {
        MemReader::default()
    }

    pub fn file(mut self, path: &str, text: impl Into<Vec<u8>>) -> MemReader {
        self.add(path, text);
        self
    }

    pub fn add(&mut self, path: &str, text: impl Into<Vec<u8>>) {
        if self.files.insert(path.to_owned(), text.into()).is_none() {
            self.order.push(path.to_owned());
        }
    }

    /// A symbolic link at `path` pointing at `target` (relative to the link's directory, or absolute).
    pub fn link(mut self, path: &str, target: &str) -> MemReader {
        self.links.insert(path.to_owned(), target.to_owned());
        self
    }

    /// The paths in discovery order.
    pub fn paths(&self) -> &[String] {
        &self.order
    }

    /// Sets the discovery order (a permutation of [`MemReader::paths`]).
    pub fn set_order(&mut self, order: Vec<String>) {
        self.order = order;
    }
}

impl Reader for MemReader {
    fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError> {
        // `""` is the whole fleet.
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        Ok(self
            .files
            .keys()
            .chain(self.links.keys())
            .filter(|p| p.starts_with(&prefix) && !is_hidden_path(p))
            .cloned()
            .collect())
    }

    fn discover(&self) -> Result<Vec<String>, ReadError> {
        Ok(self
            .order
            .iter()
            .filter(|p| !is_hidden_path(p) && is_yaml_name(p))
            .cloned()
            .collect())
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let bytes = self.files.get(path).ok_or_else(|| {
            io_error(
                path,
                io::Error::new(io::ErrorKind::NotFound, "no such file"),
            )
        })?;
        if bytes.len() as u64 > limit {
            return Err(ReadError::TooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                limit,
            });
        }
        Ok(bytes.clone())
    }

    fn read_source(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        let mut current = path.to_owned();
        for _ in 0..40 {
            if let Some(bytes) = self.files.get(&current) {
                if bytes.len() as u64 > limit {
                    return Err(SourceError::TooLarge {
                        size: bytes.len() as u64,
                        limit,
                    });
                }
                return Ok(bytes.clone());
            }
            let Some(target) = self.links.get(&current) else {
                let is_dir = self
                    .files
                    .keys()
                    .any(|k| k.starts_with(&format!("{current}/")));
                return Err(if is_dir {
                    SourceError::NotAFile
                } else {
                    SourceError::Missing
                });
            };
            let joined = if target.starts_with('/') {
                return Err(SourceError::Escapes {
                    target: target.clone(),
                });
            } else {
                match current.rsplit_once('/') {
                    Some((dir, _)) => format!("{dir}/{target}"),
                    None => target.clone(),
                }
            };
            current = resolve_inside(&joined).ok_or_else(|| SourceError::Escapes {
                target: joined.clone(),
            })?;
        }
        Err(SourceError::Io("too many levels of symbolic links".into()))
    }
}

/// Resolves `.` and `..` in a relative path; `None` when it climbs out.
pub fn resolve_inside(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beneath::open_checked;

    #[test]
    fn a_file_system_error_keeps_its_io_error_as_source() {
        let dir = tempfile::tempdir().unwrap();
        let r = DirReader::new(dir.path()).unwrap();
        let e = r.read("gone.yaml", 1024).unwrap_err();
        let source = std::error::Error::source(&e).expect("a source");
        let io = source.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
        assert_eq!(e.to_string(), format!("cannot read gone.yaml: {io}"));
        let copy = e.clone();
        assert_eq!(copy, e);
        assert_eq!(copy.to_string(), e.to_string());
    }

    #[test]
    fn mem_reader_follows_links_inside_only() {
        let r = MemReader::new()
            .file("files/a", "A")
            .link("files/b", "a")
            .link("files/c", "../../etc/passwd")
            .link("files/d", "/etc/passwd");
        assert_eq!(r.read_source("files/b", u64::MAX).unwrap(), b"A");
        assert!(matches!(
            r.read_source("files/c", u64::MAX),
            Err(SourceError::Escapes { .. })
        ));
        assert!(matches!(
            r.read_source("files/d", u64::MAX),
            Err(SourceError::Escapes { .. })
        ));
        assert_eq!(
            r.read_source("files/x", u64::MAX),
            Err(SourceError::Missing)
        );
    }

    #[test]
    fn dir_reader_discovers_and_guards_sources() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        fs::create_dir_all(root.join("roles/web")).unwrap();
        fs::create_dir_all(root.join(".hidden")).unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("datum.yaml"), "datum: v1alpha1\n").unwrap();
        fs::write(root.join("roles/web/layer.yaml"), "datum: v1alpha1\n").unwrap();
        fs::write(root.join("roles/web/notes.txt"), "x").unwrap();
        fs::write(root.join(".hidden/x.yaml"), "datum: v1alpha1\n").unwrap();
        fs::write(root.join("build/x.yml"), "datum: v1alpha1\n").unwrap();
        fs::write(root.join(".gitignore"), "build/\n!.hidden/\n!.z.yaml\n").unwrap();
        fs::write(root.join(".z.yaml"), "datum: v1alpha1\n").unwrap();
        fs::write(dir.path().join("secret"), "s").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("../secret", root.join("out")).unwrap();
            std::os::unix::fs::symlink("datum.yaml", root.join("link.yaml")).unwrap();
        }
        let r = DirReader::new(&root).unwrap();
        let mut found = r.discover().unwrap();
        found.sort();
        assert_eq!(found, ["datum.yaml", "roles/web/layer.yaml"]);
        assert_eq!(
            r.read_source("roles/web/notes.txt", u64::MAX).unwrap(),
            b"x"
        );
        assert_eq!(r.read_source("nope", u64::MAX), Err(SourceError::Missing));
        assert_eq!(r.read_source("roles", u64::MAX), Err(SourceError::NotAFile));
        #[cfg(unix)]
        assert!(matches!(
            r.read_source("out", u64::MAX),
            Err(SourceError::Escapes { .. })
        ));
        assert!(matches!(
            r.read("datum.yaml", 3),
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[test]
    fn sources_over_the_limit_are_refused_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let r = DirReader::new(dir.path()).unwrap();
        assert_eq!(r.read_source("big", 100,).unwrap().len(), 100);
        assert_eq!(
            r.read_source("big", 99),
            Err(SourceError::TooLarge {
                size: 100,
                limit: 99
            })
        );
        let mem = MemReader::new().file("big", vec![b'x'; 100]);
        assert!(matches!(
            mem.read_source("big", 99),
            Err(SourceError::TooLarge { size: 100, .. })
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_source_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        nix::unistd::mkfifo(&dir.path().join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let r = DirReader::new(dir.path()).unwrap();
        assert_eq!(r.read_source("pipe", u64::MAX), Err(SourceError::NotAFile));
    }

    /// A link swapped in for a payload while it is read never leads to the
    /// outside file: the open either finds the regular file or refuses.
    #[cfg(unix)]
    #[test]
    fn a_link_swapped_in_during_reads_never_leads_outside() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        fs::create_dir_all(root.join("files")).unwrap();
        fs::write(dir.path().join("outside"), "SECRET").unwrap();
        fs::write(root.join("files/a"), "inside").unwrap();
        let r = DirReader::new(&root).unwrap();
        let stop = AtomicBool::new(false);
        let results = std::thread::scope(|scope| {
            scope.spawn(|| {
                let (file, tmp) = (root.join("files/a"), root.join("files/a.tmp"));
                while !stop.load(Ordering::Relaxed) {
                    fs::write(&tmp, "inside").unwrap();
                    fs::rename(&tmp, &file).unwrap();
                    std::os::unix::fs::symlink("../../outside", &tmp).unwrap();
                    fs::rename(&tmp, &file).unwrap();
                }
            });
            // Collected first, judged after the writer stopped: a failed
            // assertion inside the scope would wait for it forever.
            // 3000 reads, and more (for at most 20 s) until one found the
            // regular file, however the two threads are scheduled.
            let start = std::time::Instant::now();
            let mut results = Vec::new();
            while results.len() < 3000
                || (!results.iter().any(Result::is_ok)
                    && start.elapsed() < std::time::Duration::from_secs(20))
            {
                results.push(r.read_source("files/a", u64::MAX));
            }
            stop.store(true, Ordering::Relaxed);
            results
        });
        let mut seen_inside = false;
        for result in results {
            match result {
                Ok(bytes) => {
                    assert_eq!(String::from_utf8_lossy(&bytes), "inside");
                    seen_inside = true;
                }
                Err(SourceError::Escapes { .. } | SourceError::Missing) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert!(seen_inside, "the reader never saw the regular file");
    }

    #[test]
    fn the_fallback_open_also_refuses_links_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        fs::create_dir_all(&root).unwrap();
        fs::write(dir.path().join("outside"), "x").unwrap();
        fs::write(root.join("inside"), "y").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("../outside", root.join("out")).unwrap();
        let root = fs::canonicalize(&root).unwrap();
        assert!(open_checked(&root, "inside").is_ok());
        #[cfg(unix)]
        assert!(matches!(open_checked(&root, "out"), Err(Beneath::Escapes)));
        assert!(matches!(
            open_checked(&root, "../outside"),
            Err(Beneath::Escapes)
        ));
    }

    fn found(root: &Path) -> Vec<String> {
        let mut found = DirReader::new(root).unwrap().discover().unwrap();
        found.sort();
        found
    }

    #[test]
    fn ignore_files_above_the_fleet_are_not_read_outside_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        fs::create_dir_all(root.join("roles")).unwrap();
        fs::write(dir.path().join(".gitignore"), "*.yaml\nfleet/\n").unwrap();
        fs::write(root.join("datum.yaml"), "x").unwrap();
        fs::write(root.join("roles/web.yaml"), "x").unwrap();
        assert_eq!(found(&root), ["datum.yaml", "roles/web.yaml"]);
    }

    #[test]
    fn ignore_files_of_the_work_tree_apply_down_to_the_fleet_and_no_higher() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let root = repo.join("infra/fleet");
        fs::create_dir_all(root.join("roles/old")).unwrap();
        fs::create_dir_all(repo.join(".git")).unwrap();
        // Above the work tree: not git's business, not read.
        fs::write(dir.path().join(".gitignore"), "*.yaml\n").unwrap();
        fs::write(repo.join(".gitignore"), "infra/fleet/roles/old/\n").unwrap();
        fs::write(repo.join("infra/.gitignore"), "*.yml\n").unwrap();
        fs::write(root.join("datum.yaml"), "x").unwrap();
        fs::write(root.join("roles/web.yaml"), "x").unwrap();
        fs::write(root.join("roles/db.yml"), "x").unwrap();
        fs::write(root.join("roles/old/gone.yaml"), "x").unwrap();
        assert_eq!(found(&root), ["datum.yaml", "roles/web.yaml"]);
        // A fleet in an ignored directory is still read (it was named), as
        // the git reader reads it.
        fs::write(repo.join(".gitignore"), "infra/\n").unwrap();
        assert_eq!(
            found(&root),
            ["datum.yaml", "roles/old/gone.yaml", "roles/web.yaml"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_ignore_file_that_is_a_link_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        fs::create_dir_all(&root).unwrap();
        fs::write(dir.path().join("rules"), "*.yaml\n").unwrap();
        std::os::unix::fs::symlink("../rules", root.join(".gitignore")).unwrap();
        fs::write(root.join("datum.yaml"), "x").unwrap();
        assert_eq!(found(&root), ["datum.yaml"]);
    }
}
