//! The last input a host applied, kept in a small JSON file the caller
//! places (by default beside the agent's repository):
//!
//! ```json
//! {
//!   "commit": "3f2a9c1...",
//!   "commit_time": 1750000000,
//!   "mode": "git"
//! }
//! ```
//!
//! A bundle's record also holds its `serial` and `expires` when it had them,
//! and `contents_sha256`, the SHA-256 of its clear contents (manifest and
//! payloads, `datum_core::bundle::contents_sha256`): what tells two
//! bundles of one serial apart when they record no commit, and all that
//! tells two bundles made outside git (no serial, no commit) apart.
//!
//! It is replaced atomically (written beside, synced, renamed), so a crash
//! leaves the old record or the new one, never half of either. Keys datum
//! does not know are ignored, so an older agent can read a newer record.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use datum_apply::root::{Refused, Root};
use datum_core::hint::Hinted;
use datum_fs::Attrs;

use serde_json::{Value, json};

use crate::repo::ObjectId;

/// The input applied last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// A commit fetched in git mode.
    Git {
        /// The commit.
        commit: ObjectId,
        /// Its committer time, in seconds since the epoch.
        commit_time: i64,
    },
    /// A bundle.
    Bundle {
        /// The bundle's serial, when it had one: what orders bundles.
        serial: Option<u64>,
        /// When the bundle expires, seconds since the epoch, when it does.
        expires: Option<i64>,
        /// The commit the bundle was made from, when the fleet is in git.
        commit: Option<ObjectId>,
        /// That commit's time (or the bundle's), in seconds since the epoch.
        commit_time: i64,
        /// The SHA-256 of its clear contents; `None` in a record an older
        /// agent wrote.
        contents: Option<[u8; 32]>,
    },
}

impl Applied {
    /// The commit, when there is one.
    pub fn commit(&self) -> Option<ObjectId> {
        match self {
            Applied::Git { commit, .. } => Some(*commit),
            Applied::Bundle { commit, .. } => *commit,
        }
    }

    /// The commit time, in seconds since the epoch.
    pub fn commit_time(&self) -> i64 {
        match self {
            Applied::Git { commit_time, .. } | Applied::Bundle { commit_time, .. } => *commit_time,
        }
    }

    /// When the input applied last expires, when it does.
    pub fn expires(&self) -> Option<i64> {
        match self {
            Applied::Git { .. } => None,
            Applied::Bundle { expires, .. } => *expires,
        }
    }

    /// When this input stops being fresh enough to move to: a bundle's
    /// signed `expires`; a commit, with git mode's `max_age`, its commit
    /// time plus `max_age` (after which it is refused as stale), so one
    /// metric warns before either.
    pub fn stale_after(&self, max_age: Option<std::time::Duration>) -> Option<i64> {
        match (self, max_age) {
            (Applied::Bundle { expires, .. }, _) => *expires,
            (Applied::Git { commit_time, .. }, Some(max_age)) => Some(
                commit_time.saturating_add(i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX)),
            ),
            (Applied::Git { .. }, None) => None,
        }
    }

    /// The serial of the bundle applied last, when it had one.
    pub fn serial(&self) -> Option<u64> {
        match self {
            Applied::Git { .. } => None,
            Applied::Bundle { serial, .. } => *serial,
        }
    }

    /// The SHA-256 of the clear contents of the bundle applied last, when
    /// recorded.
    pub fn contents(&self) -> Option<[u8; 32]> {
        match self {
            Applied::Git { .. } => None,
            Applied::Bundle { contents, .. } => *contents,
        }
    }

    fn mode(&self) -> &'static str {
        match self {
            Applied::Git { .. } => "git",
            Applied::Bundle { .. } => "bundle",
        }
    }
}

/// Where the record of the last applied input lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    root: Root,
    /// The file, as an absolute path inside `root`.
    abs: String,
    path: PathBuf,
}

/// The record cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file exists but cannot be read.
    #[error("cannot read the record of the last applied input {}: {source}", path.display())]
    Read {
        /// The state file.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a record datum wrote.
    #[error("{} is not a record of the last applied input: {problem}", path.display())]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The record could not be written.
    #[error("cannot record the applied input in {}: {source}", path.display())]
    Write {
        /// The state file.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
}

/// What would fix it.
impl Hinted for StateError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::Read { .. } | Self::Corrupt { .. } => {
                "without this record a rollback cannot be detected; run once with --allow-rollback to accept the current input and write a fresh record"
            }
            Self::Write { .. } => "check that the state directory exists and is writable",
        }))
    }
}

/// A record is a few lines; anything much bigger is not one.
const MAX_SIZE: u64 = 64 * 1024;

impl StateFile {
    /// The record at `path` (on this machine, as it is named).
    pub fn new(path: impl Into<PathBuf>) -> StateFile {
        let path: PathBuf = path.into();
        let abs = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        StateFile::inside(&Root::system(), &abs.to_string_lossy())
    }

    /// The record at `abs` inside `root`: the directories on the way are
    /// resolved inside it, and the file is read only as a regular file,
    /// never through a link at its name.
    pub fn inside(root: &Root, abs: &str) -> StateFile {
        StateFile {
            root: root.clone(),
            abs: abs.to_owned(),
            path: root.path(abs),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input applied last, or `None` when nothing was recorded yet.
    pub fn load(&self) -> Result<Option<Applied>, StateError> {
        let read = |source| StateError::Read {
            path: self.path.clone(),
            source,
        };
        let bytes = match self.root.read_small(&self.abs, MAX_SIZE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(Refused::Io(e)) => return Err(read(e)),
            Err(other) => {
                return Err(StateError::Corrupt {
                    path: self.path.clone(),
                    problem: other.to_string(),
                });
            }
        };
        let corrupt = |problem: String| StateError::Corrupt {
            path: self.path.clone(),
            problem,
        };
        if bytes.len() as u64 > MAX_SIZE {
            return Err(corrupt(format!("it is larger than {MAX_SIZE} bytes")));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        decode(&value).map(Some).map_err(corrupt)
    }

    /// Records `applied` as the input applied last, replacing the record
    /// atomically and creating the file's directory when missing.
    pub fn record(&self, applied: &Applied) -> Result<(), StateError> {
        let mut value = json!({
            "mode": applied.mode(),
            "commit": applied.commit().map(|c| c.to_string()),
            "commit_time": applied.commit_time(),
        });
        if let Some(serial) = applied.serial() {
            value["serial"] = serial.into();
        }
        if let Some(expires) = applied.expires() {
            value["expires"] = expires.into();
        }
        if let Some(contents) = applied.contents() {
            value["contents_sha256"] = hex(&contents).into();
        }
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        let write = |source| StateError::Write {
            path: self.path.clone(),
            source,
        };
        let parent = match self.abs.rfind('/') {
            Some(0) | None => "/",
            Some(i) => &self.abs[..i],
        };
        self.root.create_dir_all(parent, 0o755).map_err(write)?;
        let attrs = Attrs {
            mode: Some(0o644),
            ..Attrs::default()
        };
        self.root
            .write_atomic(&self.abs, text.as_bytes(), attrs)
            .map_err(write)
    }
}

fn decode(value: &Value) -> Result<Applied, String> {
    let object = value.as_object().ok_or("it is not a JSON object")?;
    let commit_time = object
        .get("commit_time")
        .and_then(Value::as_i64)
        .ok_or("`commit_time` is missing or not a whole number")?;
    let commit = match object.get("commit") {
        None | Some(Value::Null) => None,
        Some(Value::String(hex)) => Some(
            ObjectId::from_hex(hex.as_bytes())
                .map_err(|_| "`commit` is not a commit id".to_owned())?,
        ),
        Some(_) => return Err("`commit` is not a string".to_owned()),
    };
    match object.get("mode").and_then(Value::as_str) {
        Some("git") => {
            let commit = commit.ok_or("a git record needs `commit`")?;
            Ok(Applied::Git {
                commit,
                commit_time,
            })
        }
        Some("bundle") => Ok(Applied::Bundle {
            serial: match object.get("serial") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().ok_or("`serial` is not a whole number")?),
            },
            expires: match object.get("expires") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_i64().ok_or("`expires` is not a whole number")?),
            },
            contents: match object.get("contents_sha256") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_str()
                        .and_then(unhex)
                        .ok_or("`contents_sha256` is not 64 hex digits")?,
                ),
            },
            commit,
            commit_time,
        }),
        Some(_) => Err("`mode` is neither \"git\" nor \"bundle\"".to_owned()),
        None => Err("`mode` is missing".to_owned()),
    }
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 || !bytes.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}
