//! The fleet's secret files as `datum secret` works on them: each one
//! encrypted to exactly the recipients the resolution gives it (the admins
//! alone for one no layer names yet), its `.recipients` file written
//! beside it, decrypted with an admin's key, edited through a private
//! scratch copy that is wiped, and rekeyed when who receives it changes.
//!
//! The caller finds the fleet, loads it through [`Creating`], asks for the
//! passphrase of a key and runs the editor; everything else is here.

use std::borrow::Cow;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};
use std::process::ExitStatus;

use datum_core::check;
use datum_core::diagnostic::Diagnostic;
use datum_core::fleet::{Fleet, HostId};
use datum_core::hint::{Fault, Hinted};
use datum_core::reader::{ReadError, Reader, SourceError};
use datum_core::resolve::FleetResolution;

use crate::ciphertext::{DecryptError, EncryptError, decrypt, encrypt};
use crate::fleet::{Plan, Stored};
use crate::identity::Identity;
use crate::key::PublicKey;
use crate::plaintext::Plaintext;
use crate::recipients::{Holder, Recipient, Recipients, RecipientsChange, recipients_path};
use crate::scratch::Scratch;

/// The largest plaintext `encrypt` and `edit` take: secrets are small.
pub const MAX_PLAINTEXT: usize = 64 << 20;

/// Why a secret could not be encrypted, decrypted, edited or rekeyed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Documents failed to load, or hosts do not resolve: who receives
    /// each secret is not known.
    #[error("the fleet has errors, so who receives each secret is not known")]
    FleetErrors { diagnostics: Vec<Diagnostic> },
    /// Keys of hosts or admins that do not parse.
    #[error("some public keys cannot be used")]
    KeyErrors { diagnostics: Vec<Diagnostic> },
    /// The fleet root cannot be resolved on disk.
    #[error("cannot resolve {}: {source}", root.display())]
    Root {
        root: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A path given on the command line that leaves the fleet root.
    #[error("{} is not inside the fleet repository {}", given.display(), root.display())]
    Outside { given: PathBuf, root: PathBuf },
    /// The directory that would hold the secret does not exist.
    #[error("cannot use {}: {source}", given.display())]
    NoDirectory {
        given: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read stdin: {0}")]
    Stdin(#[source] io::Error),
    #[error("the plaintext on stdin is larger than {} MiB", MAX_PLAINTEXT >> 20)]
    StdinTooLarge,
    /// Nobody to encrypt to.
    #[error("{rel} has no recipients: no host receives it and the fleet has no admins")]
    NoRecipients { rel: String },
    #[error("cannot encrypt {rel}: {source}")]
    Encrypt {
        rel: String,
        /// Boxed: age's error is large, and every result here carries this.
        #[source]
        source: Box<EncryptError>,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {rel}: {source}")]
    Read {
        rel: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot decrypt {rel}: {source}")]
    Decrypt {
        rel: String,
        #[source]
        source: DecryptError,
    },
    /// Decrypting was asked for without a private key.
    #[error("decrypting a secret needs a private key")]
    NoIdentity,
    #[error("cannot make a private temporary directory: {0}")]
    ScratchDir(#[source] io::Error),
    /// The scratch copy could not be written or read back.
    #[error("cannot {what} {}: {source}", file.display())]
    Scratch {
        what: &'static str,
        file: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot run the editor `{editor}`: {source}")]
    EditorNotRun {
        editor: String,
        #[source]
        source: io::Error,
    },
    /// Datum was told to stop while the editor ran: what it saved is not
    /// used.
    #[error(
        "stopped by {signal} while the editor `{editor}` ran; {rel} is unchanged and the scratch copy is wiped"
    )]
    EditorStopped {
        editor: String,
        signal: &'static str,
        rel: String,
    },
    #[error("the editor `{editor}` exited with {status}; {rel} is unchanged")]
    EditorFailed {
        editor: String,
        status: ExitStatus,
        rel: String,
    },
    #[error("the edited secret is too large")]
    EditedTooLarge,
}

impl StoreError {
    /// The diagnostics to show before the error: the fleet's errors, or
    /// the keys that do not parse.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            StoreError::FleetErrors { diagnostics } | StoreError::KeyErrors { diagnostics } => {
                diagnostics
            }
            _ => &[],
        }
    }
}

impl Hinted for StoreError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self {
            StoreError::FleetErrors { .. } => "fix what `datum check` reports, then run this again",
            StoreError::KeyErrors { .. } => "fix the keys shown above, then run this again",
            StoreError::Outside { .. } => {
                "secrets live in the fleet repository, such as secrets/db-password.age"
            }
            StoreError::NoDirectory { .. } => "the directory holding the secret must exist",
            StoreError::NoRecipients { .. } => {
                "add your public key to `admins` in datum.yaml, or give the secret to a host with `secret:` in a layer"
            }
            StoreError::Decrypt {
                source: DecryptError::NotRecipient { .. },
                ..
            } => "give the key of an admin this secret was encrypted to (see its .recipients file)",
            StoreError::Decrypt { .. } => "restore the file from git",
            StoreError::NoIdentity => {
                "pass --identity FILE (or set DATUM_IDENTITY) with the key of one of the admins"
            }
            _ => return None,
        };
        Some(hint.into())
    }

    fn fault(&self) -> Fault {
        match self {
            StoreError::Outside { .. }
            | StoreError::NoDirectory { .. }
            | StoreError::NoIdentity => Fault::Usage,
            // Recipients are checked before encrypting, and the ciphertext
            // is written to memory: neither can fail but by a bug.
            StoreError::Encrypt { source, .. }
                if matches!(**source, EncryptError::NoRecipients | EncryptError::Io(_)) =>
            {
                Fault::Internal
            }
            _ => Fault::Failed,
        }
    }
}

/// The fleet's reader, with the secrets `encrypt` may be about to write
/// present (and empty) if they do not exist yet: a layer may already name
/// one, and then its hosts resolve and become its recipients. Secrets the
/// fleet names that are still to be written are present too, so adding
/// two secrets is two `encrypt` commands, in either order.
pub struct Creating<'a, R> {
    pub inner: &'a R,
    /// The secrets taken as present, relative to the fleet root.
    pub paths: Vec<String>,
}

impl<R: Reader> Reader for Creating<'_, R> {
    fn discover(&self) -> Result<Vec<String>, ReadError> {
        self.inner.discover()
    }
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        self.inner.read(path, limit)
    }
    fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError> {
        self.inner.list_payloads(dir)
    }
    fn is_ignored(&self, path: &str) -> bool {
        self.inner.is_ignored(path)
    }
    fn read_source(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        match self.inner.read_source(path, limit) {
            Err(SourceError::Missing) if self.paths.iter().any(|p| p == path) => Ok(Vec::new()),
            other => other,
        }
    }
}

/// A secret encrypted and written, and what its caller should say of it.
#[derive(Debug)]
pub struct Sealed {
    /// The secret, relative to the fleet root.
    pub rel: String,
    /// Who it is now encrypted to.
    pub recipients: Recipients,
    /// Receiving hosts that cannot decrypt it, or no host receiving it yet.
    pub warnings: Vec<String>,
}

impl Sealed {
    /// `secrets/db.age: encrypted to admins (1 key), db-01`.
    pub fn summary(&self) -> String {
        format!("{}: encrypted to {}", self.rel, who(&self.recipients))
    }
}

/// What an edit came to.
#[derive(Debug)]
pub enum Edited {
    /// The same plaintext was saved, and the recipients are right.
    Unchanged,
    Sealed(Sealed),
}

/// How the editor ended, as the caller that ran it saw it.
#[derive(Debug)]
pub enum EditorEnd {
    /// It exited with this status.
    Exited(ExitStatus),
    /// Datum was told to stop (the signal's name) while it ran.
    Stopped(&'static str),
}

/// A fleet's secrets: who receives each, and the files in its repository.
pub struct Store<'f> {
    fleet: &'f Fleet,
    plan: Plan<'f>,
    root: PathBuf,
}

impl<'f> Store<'f> {
    /// Refuses a fleet whose recipients cannot be known: load errors, a
    /// host that does not resolve, a key that does not parse.
    pub fn new(
        fleet: &'f Fleet,
        all: &FleetResolution,
        root: &Path,
    ) -> Result<Store<'f>, StoreError> {
        let unresolved =
            (0..fleet.hosts.len()).any(|h| all.of(HostId(h as u32)).is_none_or(|r| !r.is_ok()));
        if fleet.has_errors() || unresolved {
            return Err(StoreError::FleetErrors {
                diagnostics: check::errors(fleet, all),
            });
        }
        let plan = Plan::new(fleet, all);
        if !plan.key_errors.is_empty() {
            return Err(StoreError::KeyErrors {
                diagnostics: plan.key_errors,
            });
        }
        let root = canonical_root(root)?;
        Ok(Store { fleet, plan, root })
    }

    /// A path given on the command line, relative to the fleet root.
    pub fn relative(&self, given: &Path, cwd: Option<&Path>) -> Result<String, StoreError> {
        relative(&self.root, given, cwd)
    }

    /// Every secret some layer gives a host, by path.
    pub fn secrets(&self) -> Vec<String> {
        self.plan
            .secrets
            .iter()
            .map(|s| s.path.to_owned())
            .collect()
    }

    /// Encrypts `plaintext` to the recipients `rel` should have and writes
    /// it and its recipients file.
    pub fn seal(&self, rel: &str, plaintext: &Plaintext) -> Result<Sealed, StoreError> {
        let (wanted, keys) = self.wanted(rel);
        if keys.is_empty() {
            return Err(StoreError::NoRecipients {
                rel: rel.to_owned(),
            });
        }
        let sealed =
            encrypt(plaintext.as_bytes(), &keys).map_err(|source| StoreError::Encrypt {
                rel: rel.to_owned(),
                source: Box::new(source),
            })?;
        let path = self.root.join(rel);
        write_atomic(&path, &sealed)?;
        write_atomic(&recipients_path(&path), wanted.to_text().as_bytes())?;
        let warnings = match self.plan.get(rel) {
            Some(plan) => plan
                .keyless
                .iter()
                .map(|host| {
                    format!(
                        "{} receives {rel} but declares no key: it cannot decrypt it",
                        self.fleet.host(*host).name
                    )
                })
                .collect(),
            None => vec![format!(
                "no layer gives {rel} to a host yet: it is encrypted to the admins only; run `datum secret rekey {rel}` once a File takes it"
            )],
        };
        Ok(Sealed {
            rel: rel.to_owned(),
            recipients: wanted,
            warnings,
        })
    }

    /// Decrypts the secret at `rel`.
    pub fn open(&self, rel: &str, identities: &[Identity]) -> Result<Plaintext, StoreError> {
        let sealed = std::fs::read(self.root.join(rel)).map_err(|source| StoreError::Read {
            rel: rel.to_owned(),
            source,
        })?;
        decrypt(&sealed, identities).map_err(|source| StoreError::Decrypt {
            rel: rel.to_owned(),
            source,
        })
    }

    /// What is wrong with the ciphertext at `rel`, read without a key (its
    /// header only); `None` when it reads, or cannot be read at all (which
    /// [`Store::open`] reports).
    pub fn damaged(&self, rel: &str) -> Option<String> {
        use std::io::Read as _;
        let file = std::fs::File::open(self.root.join(rel)).ok()?;
        let mut bytes = Vec::new();
        file.take(self.fleet.source_limit)
            .read_to_end(&mut bytes)
            .ok()?;
        crate::fleet::ciphertext_problem(&bytes)
    }

    /// Decrypts `rel` and encrypts it again to its recipients.
    pub fn rekey(&self, rel: &str, identities: &[Identity]) -> Result<Sealed, StoreError> {
        let plaintext = self.open(rel, identities)?;
        self.seal(rel, &plaintext)
    }

    /// Decrypts `rel` into a private scratch copy under `scratch`, has
    /// `run` edit it with `editor`, and encrypts what was saved; the copy
    /// is wiped whatever happens.
    pub fn edit(
        &self,
        rel: &str,
        identities: &[Identity],
        scratch: &Path,
        editor: &str,
        run: impl FnOnce(&Path) -> io::Result<EditorEnd>,
    ) -> Result<Edited, StoreError> {
        let old = self.open(rel, identities)?;
        let name = Path::new(rel).file_name().map_or_else(
            || "secret".into(),
            |n| n.to_string_lossy().trim_end_matches(".age").to_owned(),
        );
        let copy = Scratch::new(scratch, &name).map_err(StoreError::ScratchDir)?;
        let io = |what| {
            let file = copy.file().to_path_buf();
            move |source| StoreError::Scratch { what, file, source }
        };
        let mut out = copy.create().map_err(io("create"))?;
        out.write_all(old.as_bytes()).map_err(io("write"))?;
        drop(out);
        let failed = |end| match end {
            EditorEnd::Stopped(signal) => StoreError::EditorStopped {
                editor: editor.to_owned(),
                signal,
                rel: rel.to_owned(),
            },
            EditorEnd::Exited(status) => StoreError::EditorFailed {
                editor: editor.to_owned(),
                status,
                rel: rel.to_owned(),
            },
        };
        match run(copy.file()) {
            Err(source) => {
                return Err(StoreError::EditorNotRun {
                    editor: editor.to_owned(),
                    source,
                });
            }
            Ok(EditorEnd::Exited(status)) if status.success() => {}
            Ok(end) => return Err(failed(end)),
        }
        let new = copy
            .read(MAX_PLAINTEXT)
            .map_err(io("read"))?
            .ok_or(StoreError::EditedTooLarge)?;
        if new.as_bytes() == old.as_bytes() && !self.needs_rekey(rel) {
            return Ok(Edited::Unchanged);
        }
        self.seal(rel, &new).map(Edited::Sealed)
    }

    /// The recipients `rel` should have and their keys: the plan's, or the
    /// admins only for a secret no layer names yet.
    fn wanted(&self, rel: &str) -> (Recipients, Vec<PublicKey>) {
        match self.plan.get(rel) {
            Some(plan) => (plan.wanted.clone(), plan.keys.clone()),
            None => {
                let mut wanted = Recipients::new();
                for key in &self.plan.admins {
                    wanted.insert(Holder::Admin, key.fingerprint().clone());
                }
                (wanted, self.plan.admins.clone())
            }
        }
    }

    /// Whether `rel` is not encrypted to exactly the recipients it should
    /// have.
    pub fn needs_rekey(&self, rel: &str) -> bool {
        match self.plan.get(rel) {
            Some(plan) => plan.needs_rekey(),
            None => {
                let stored = std::fs::read_to_string(recipients_path(&self.root.join(rel)))
                    .ok()
                    .and_then(|t| Recipients::parse(&t).ok());
                stored.as_ref() != Some(&self.wanted(rel).0)
            }
        }
    }

    /// Why a secret needs a rekey, in a few words.
    pub fn why(&self, rel: &str) -> String {
        let Some(plan) = self.plan.get(rel) else {
            return "no layer gives it to a host".to_owned();
        };
        match &plan.stored {
            Stored::Missing => "it has no .recipients file".to_owned(),
            Stored::Damaged(e) => format!("its .recipients file is damaged: {e}"),
            Stored::Read(stored) => change_text(&stored.compare(&plan.wanted)),
        }
    }
}

/// The plaintext on stdin, at most [`MAX_PLAINTEXT`] bytes.
pub fn read_stdin(stdin: impl io::Read) -> Result<Plaintext, StoreError> {
    Plaintext::read_from(stdin, MAX_PLAINTEXT)
        .map_err(StoreError::Stdin)?
        .ok_or(StoreError::StdinTooLarge)
}

fn canonical_root(root: &Path) -> Result<PathBuf, StoreError> {
    root.canonicalize().map_err(|source| StoreError::Root {
        root: root.to_path_buf(),
        source,
    })
}

/// A path given on the command line, relative to the fleet root with `/`
/// between parts; refused when it leaves the root. A relative path is
/// taken from `cwd` (the current directory) when that is inside the
/// fleet, else from the fleet root (`--fleet DIR` from elsewhere).
pub fn relative(root: &Path, given: &Path, cwd: Option<&Path>) -> Result<String, StoreError> {
    let root = canonical_root(root)?;
    let outside = || StoreError::Outside {
        given: given.to_path_buf(),
        root: root.clone(),
    };
    let cwd = cwd.and_then(|d| d.canonicalize().ok());
    let absolute = match &cwd {
        _ if given.is_absolute() => given.to_path_buf(),
        Some(cwd) if !cwd.starts_with(&root) => root.join(given),
        Some(cwd) => cwd.join(given),
        None => return Err(outside()),
    };
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(outside());
    };
    let parent = parent
        .canonicalize()
        .map_err(|source| StoreError::NoDirectory {
            given: given.to_path_buf(),
            source,
        })?;
    let rel = parent.join(name);
    let rel = rel.strip_prefix(&root).map_err(|_| outside())?;
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str().ok_or_else(outside)?.to_owned()),
            _ => return Err(outside()),
        }
    }
    if parts.is_empty() {
        return Err(outside());
    }
    Ok(parts.join("/"))
}

/// `admins (2 keys), db-01, web-01`.
fn who(r: &Recipients) -> String {
    let admins = r.iter().filter(|x| x.holder == Holder::Admin).count();
    let mut parts = Vec::new();
    if admins > 0 {
        parts.push(format!(
            "admins ({admins} {})",
            if admins == 1 { "key" } else { "keys" }
        ));
    }
    let mut hosts: Vec<&str> = r
        .iter()
        .filter_map(|x| match &x.holder {
            Holder::Host(name) => Some(name.as_str()),
            Holder::Admin => None,
        })
        .collect();
    hosts.dedup();
    parts.extend(hosts.iter().map(|h| h.to_string()));
    parts.join(", ")
}

/// `adds web-02; removes web-01`.
fn change_text(change: &RecipientsChange) -> String {
    let side = |list: &[Recipient]| {
        let mut names: Vec<String> = list
            .iter()
            .map(|r| match &r.holder {
                Holder::Admin => format!("admin {}", r.fingerprint),
                Holder::Host(name) => name.clone(),
            })
            .collect();
        names.dedup();
        names.join(", ")
    };
    let mut parts = Vec::new();
    if !change.missing.is_empty() {
        parts.push(format!("adds {}", side(&change.missing)));
    }
    if !change.extra.is_empty() {
        parts.push(format!("removes {}", side(&change.extra)));
    }
    parts.join("; ")
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed
/// over it, so a reader sees the old file or the new one; readable by its
/// owner only.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    datum_fs::write_atomic(path, bytes, datum_fs::Attrs::mode(0o600)).map_err(|source| {
        StoreError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}
