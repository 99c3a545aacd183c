//! `datum secret`: encrypt a secret to the hosts that receive it (and the
//! admins), edit one in place, and re-encrypt when who receives it changes.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use datum_core::fleet::Fleet;
use datum_core::resolve::{FleetResolution, resolve_all};
use datum_secrets::fleet::Plan;
use datum_secrets::{
    Holder, Identity, Plaintext, PublicKey, Recipients, RecipientsChange, Stored, decrypt, encrypt,
    recipients_path,
};

use datum_core::loader;
use datum_core::reader::{DirReader, ReadError, Reader, SourceError};

use crate::GlobalArgs;
use crate::command_error::{CommandError, Result};
use crate::editor::Edited;
use crate::exit::Status;
use crate::root;
use crate::ui::Ui;

/// The largest plaintext `encrypt` and `edit` take: secrets are small.
const MAX_PLAINTEXT: usize = 64 << 20;

/// Encrypt secrets to exactly the hosts that receive them, and the admins.
///
/// A secret is a file of the fleet repository holding age ciphertext, which
/// a File takes with `secret: PATH`. Its recipients are the keys of every
/// host whose manifest references it (a Host's `keys`) plus the fleet's
/// `admins`; beside it, PATH.recipients records who they are.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    Encrypt(Encrypt),
    Edit(Edit),
    Rekey(Rekey),
}

/// Encrypt the plaintext on stdin into PATH, to its recipients, and write
/// PATH.recipients.
#[derive(Debug, clap::Args)]
struct Encrypt {
    /// The secret's file, inside the fleet repository (such as
    /// secrets/db-password.age).
    path: PathBuf,
}

/// Decrypt PATH, open it in $VISUAL or $EDITOR, and encrypt what is saved
/// to its current recipients.
#[derive(Debug, clap::Args)]
struct Edit {
    /// The secret's file, inside the fleet repository.
    path: PathBuf,
    #[command(flatten)]
    identity: IdentityArg,
}

/// Re-encrypt secrets whose recipients changed (every secret when no PATH
/// is given).
#[derive(Debug, clap::Args)]
struct Rekey {
    /// Secrets to rekey, inside the fleet repository; all when none given.
    paths: Vec<PathBuf>,
    /// Change nothing; exit 1 when any secret needs a rekey.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    identity: IdentityArg,
}

#[derive(Debug, clap::Args)]
struct IdentityArg {
    /// The private key to decrypt with: an OpenSSH private key (such as
    /// ~/.ssh/id_ed25519) or an age identity file, of one of the admins. A
    /// passphrase that protects it is asked for on the terminal.
    #[arg(long, env = "DATUM_IDENTITY", value_name = "FILE")]
    identity: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: Args) -> Result<Status> {
    no_core_dumps();
    let root = root::locate(ui, global)?;
    let reader = DirReader::new(&root)?;
    // A secret being created may already be named by a layer: it counts as
    // present, so its hosts resolve and become its recipients.
    let creating = match &args.command {
        Sub::Encrypt(a) => Some(relative(&root, &a.path)?),
        _ => None,
    };
    let fleet = loader::load(&Creating {
        inner: &reader,
        path: creating,
    })?;
    let all = resolve_all(&fleet);
    let cx = Cx::new(ui, &fleet, &all, root)?;
    match args.command {
        Sub::Encrypt(a) => cx.encrypt(ui, &a.path),
        Sub::Edit(a) => cx.edit(ui, &a.path, &a.identity),
        Sub::Rekey(a) => cx.rekey(ui, &a.paths, a.check, &a.identity),
    }
}

/// The fleet's reader, with the secret `encrypt` is about to write
/// present (and empty) if it does not exist yet.
struct Creating<'a> {
    inner: &'a DirReader,
    path: Option<String>,
}

impl Reader for Creating<'_> {
    fn discover(&self) -> std::result::Result<Vec<String>, ReadError> {
        self.inner.discover()
    }
    fn read(&self, path: &str, limit: u64) -> std::result::Result<Vec<u8>, ReadError> {
        self.inner.read(path, limit)
    }
    fn list_payloads(&self, dir: &str) -> std::result::Result<Vec<String>, ReadError> {
        self.inner.list_payloads(dir)
    }
    fn is_ignored(&self, path: &str) -> bool {
        self.inner.is_ignored(path)
    }
    fn read_source(&self, path: &str, limit: u64) -> std::result::Result<Vec<u8>, SourceError> {
        match self.inner.read_source(path, limit) {
            Err(SourceError::Missing) if self.path.as_deref() == Some(path) => Ok(Vec::new()),
            other => other,
        }
    }
}

/// What every subcommand needs: the fleet's plan of who receives what.
struct Cx<'f> {
    fleet: &'f Fleet,
    plan: Plan<'f>,
    root: PathBuf,
}

impl<'f> Cx<'f> {
    /// Refuses a fleet whose recipients cannot be known: load errors, a
    /// host that does not resolve, a key that does not parse.
    fn new(ui: &mut Ui, fleet: &'f Fleet, all: &FleetResolution, root: PathBuf) -> Result<Cx<'f>> {
        let unresolved: Vec<&str> = (0..fleet.hosts.len())
            .filter(|&h| {
                all.of(datum_core::fleet::HostId(h as u32))
                    .is_none_or(|r| !r.is_ok())
            })
            .map(|h| &*fleet.hosts[h].name)
            .collect();
        if fleet.has_errors() || !unresolved.is_empty() {
            ui.diagnostics(&fleet.files, &datum_core::check::errors(fleet, all));
            return Err(CommandError::failed(
                "the fleet has errors, so who receives each secret is not known",
            )
            .hint("fix what `datum check` reports, then run this again"));
        }
        let plan = Plan::new(fleet, all);
        if !plan.key_errors.is_empty() {
            ui.diagnostics(&fleet.files, &plan.key_errors);
            return Err(CommandError::failed("some public keys cannot be used")
                .hint("fix the keys shown above, then run this again"));
        }
        let root = root.canonicalize().map_err(|e| {
            CommandError::failed(format!("cannot resolve {}: {e}", root.display())).with_source(e)
        })?;
        Ok(Cx { fleet, plan, root })
    }

    fn encrypt(&self, ui: &mut Ui, given: &Path) -> Result<Status> {
        let rel = self.relative(given)?;
        let plaintext = Plaintext::read_from(std::io::stdin().lock(), MAX_PLAINTEXT)
            .map_err(|e| CommandError::failed(format!("cannot read stdin: {e}")).with_source(e))?
            .ok_or_else(|| {
                CommandError::failed(format!(
                    "the plaintext on stdin is larger than {} MiB",
                    MAX_PLAINTEXT >> 20
                ))
            })?;
        self.seal(ui, &rel, &plaintext)?;
        Ok(Status::OK)
    }

    fn edit(&self, ui: &mut Ui, given: &Path, identity: &IdentityArg) -> Result<Status> {
        let rel = self.relative(given)?;
        let identities = identities(identity)?;
        let old = self.open(&rel, &identities)?;
        // Owner only: tempfile leaves a directory's mode to the umask.
        let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
        let dir = tempfile::Builder::new()
            .prefix("datum-secret-")
            .permissions(private)
            .tempdir_in(scratch_dir())
            .map_err(|e| {
                CommandError::failed(format!("cannot make a private temporary directory: {e}"))
            })?;
        let name = Path::new(&rel).file_name().map_or_else(
            || "secret".into(),
            |n| n.to_string_lossy().trim_end_matches(".age").to_owned(),
        );
        let file = dir.path().join(name);
        let result = self.edit_in(ui, &rel, &file, &old);
        wipe(&file);
        drop(dir);
        result
    }

    fn edit_in(&self, ui: &mut Ui, rel: &str, file: &Path, old: &Plaintext) -> Result<Status> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let io = |what: &str, e: std::io::Error| {
            CommandError::failed(format!("cannot {what} {}: {e}", file.display()))
        };
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)
            .map_err(|e| io("create", e))?;
        out.write_all(old.as_bytes()).map_err(|e| io("write", e))?;
        drop(out);
        let (editor, edited) = crate::editor::edit(file).map_err(|(editor, e)| {
            CommandError::failed(format!("cannot run the editor `{editor}`: {e}"))
        })?;
        match edited {
            Edited::Stopped(signal) => {
                return Err(CommandError::failed(format!(
                    "stopped by {signal} while the editor `{editor}` ran; {rel} is unchanged and the scratch copy is wiped"
                )));
            }
            Edited::Exited(status) if !status.success() => {
                return Err(CommandError::failed(format!(
                    "the editor `{editor}` exited with {status}; {rel} is unchanged"
                )));
            }
            Edited::Exited(_) => {}
        }
        let new = Plaintext::read_from(
            std::fs::File::open(file).map_err(|e| io("read", e))?,
            MAX_PLAINTEXT,
        )
        .map_err(|e| io("read", e))?
        .ok_or_else(|| CommandError::failed("the edited secret is too large"))?;
        if new.as_bytes() == old.as_bytes() && !self.needs_rekey(rel) {
            ui.status(&format!("{rel} is unchanged"));
            return Ok(Status::OK);
        }
        self.seal(ui, rel, &new)?;
        Ok(Status::OK)
    }

    fn rekey(
        &self,
        ui: &mut Ui,
        given: &[PathBuf],
        check: bool,
        identity: &IdentityArg,
    ) -> Result<Status> {
        let paths: Vec<String> = if given.is_empty() {
            self.plan
                .secrets
                .iter()
                .map(|s| s.path.to_owned())
                .collect()
        } else {
            given
                .iter()
                .map(|p| self.relative(p))
                .collect::<Result<_>>()?
        };
        let stale: Vec<&String> = paths.iter().filter(|p| self.needs_rekey(p)).collect();
        if check {
            for p in &stale {
                let out = ui.stdout();
                writeln!(out, "{p}: needs a rekey ({})", self.why(p))?;
            }
            ui.flush()?;
            return Ok(if stale.is_empty() {
                Status::OK
            } else {
                Status::FAILED
            });
        }
        if stale.is_empty() {
            ui.status("every secret is encrypted to its recipients");
            return Ok(Status::OK);
        }
        let identities = identities(identity)?;
        for p in stale {
            let plaintext = self.open(p, &identities)?;
            self.seal(ui, p, &plaintext)?;
        }
        Ok(Status::OK)
    }

    /// Encrypts `plaintext` to the recipients `rel` should have and writes
    /// it and its recipients file.
    fn seal(&self, ui: &mut Ui, rel: &str, plaintext: &Plaintext) -> Result<()> {
        let (wanted, keys) = self.wanted(rel);
        if keys.is_empty() {
            return Err(CommandError::failed(format!(
                "{rel} has no recipients: no host receives it and the fleet has no admins"
            ))
            .hint("add your public key to `admins` in datum.yaml, or give the secret to a host with `secret:` in a layer"));
        }
        let sealed = encrypt(plaintext.as_bytes(), &keys).map_err(|e| {
            CommandError::failed(format!("cannot encrypt {rel}: {e}")).with_source(e)
        })?;
        let path = self.root.join(rel);
        write_atomic(&path, &sealed)?;
        write_atomic(&recipients_path(&path), wanted.to_text().as_bytes())?;
        match self.plan.get(rel) {
            Some(plan) => {
                for host in &plan.keyless {
                    ui.warning(&format!(
                        "{} receives {rel} but declares no key: it cannot decrypt it",
                        self.fleet.host(*host).name
                    ));
                }
            }
            None => ui.warning(&format!(
                "no layer gives {rel} to a host yet: it is encrypted to the admins only; run `datum secret rekey {rel}` once a File takes it"
            )),
        }
        let out = ui.stdout();
        writeln!(out, "{rel}: encrypted to {}", who(&wanted))?;
        ui.flush()?;
        Ok(())
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

    fn needs_rekey(&self, rel: &str) -> bool {
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
    fn why(&self, rel: &str) -> String {
        let Some(plan) = self.plan.get(rel) else {
            return "no layer gives it to a host".to_owned();
        };
        match &plan.stored {
            Stored::Missing => "it has no .recipients file".to_owned(),
            Stored::Damaged(e) => format!("its .recipients file is damaged: {e}"),
            Stored::Read(stored) => change_text(&stored.compare(&plan.wanted)),
        }
    }

    /// Decrypts the secret at `rel`.
    fn open(&self, rel: &str, identities: &[Identity]) -> Result<Plaintext> {
        let path = self.root.join(rel);
        let sealed = std::fs::read(&path)
            .map_err(|e| CommandError::failed(format!("cannot read {rel}: {e}")).with_source(e))?;
        decrypt(&sealed, identities).map_err(|e| {
            let hint = match &e {
                datum_secrets::DecryptError::NotRecipient { .. } => {
                    "give the key of an admin this secret was encrypted to (see its .recipients file)"
                }
                _ => "restore the file from git",
            };
            CommandError::failed(format!("cannot decrypt {rel}: {e}"))
                .with_source(e)
                .hint(hint)
        })
    }

    fn relative(&self, given: &Path) -> Result<String> {
        relative(&self.root, given)
    }
}

/// A path given on the command line, relative to the fleet root with `/`
/// between parts; refused when it leaves the root.
fn relative(root: &Path, given: &Path) -> Result<String> {
    let root = root.canonicalize().map_err(|e| {
        CommandError::failed(format!("cannot resolve {}: {e}", root.display())).with_source(e)
    })?;
    {
        let outside = || {
            CommandError::usage(format!(
                "{} is not inside the fleet repository {}",
                given.display(),
                root.display()
            ))
            .hint("secrets live in the fleet repository, such as secrets/db-password.age")
        };
        // Relative to the current directory inside the fleet; from
        // elsewhere (`--fleet DIR`), relative to the fleet root.
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|d| d.canonicalize().ok());
        let absolute = match cwd {
            Some(cwd) if given.is_relative() && !cwd.starts_with(&root) => root.join(given),
            _ => std::path::absolute(given).map_err(|_| outside())?,
        };
        let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
            return Err(outside());
        };
        let parent = parent.canonicalize().map_err(|e| {
            CommandError::usage(format!("cannot use {}: {e}", given.display()))
                .hint("the directory holding the secret must exist")
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
}

fn identities(arg: &IdentityArg) -> Result<Vec<Identity>> {
    let Some(path) = &arg.identity else {
        return Err(
            CommandError::usage("decrypting a secret needs a private key").hint(
                "pass --identity FILE (or set DATUM_IDENTITY) with the key of one of the admins",
            ),
        );
    };
    crate::passphrase::open_identities(path)
}

/// Where `edit` makes its private directory: `TMPDIR` when set, else the
/// user's runtime directory (`XDG_RUNTIME_DIR`, a memory file system, so
/// the plaintext never reaches a disk), else the system's.
fn scratch_dir() -> PathBuf {
    let set = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if set("TMPDIR").is_none()
        && let Some(runtime) = set("XDG_RUNTIME_DIR").map(PathBuf::from)
        && private_to_us(&runtime)
    {
        return runtime;
    }
    std::env::temp_dir()
}

/// Plaintext and passphrases pass through this process's memory: no core
/// file may keep them (Ctrl-\, a crash), and no other process of the same
/// user may read that memory (ptrace). Best effort: a failure leaves the
/// system's settings.
fn no_core_dumps() {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    let _ = nix::sys::prctl::set_dumpable(false);
}

/// A directory this user owns and nobody else may enter: a runtime
/// directory inherited from another user (`su`, `sudo -E`) is not one, and
/// its owner could swap the scratch directory made in it.
fn private_to_us(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(dir).is_ok_and(|m| {
        m.is_dir() && m.uid() == nix::unistd::geteuid().as_raw() && m.mode() & 0o077 == 0
    })
}

/// Overwrites the file with zeros in place (no truncation, which would
/// free the blocks holding the plaintext instead) and flushes the zeros to
/// the disk before the file is removed.
fn wipe(file: &Path) {
    let Ok(mut out) = std::fs::OpenOptions::new().write(true).open(file) else {
        return;
    };
    let Ok(len) = out.metadata().map(|m| m.len()) else {
        return;
    };
    let zeros = [0u8; 4096];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        if out.write_all(&zeros[..n]).is_err() {
            return;
        }
        left -= n as u64;
    }
    let _ = out.sync_all();
}

/// `admin (2 keys), db-01, web-01`.
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
    let side = |list: &[datum_secrets::Recipient]| {
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
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    datum_fs::write_atomic(path, bytes, datum_fs::Attrs::mode(0o600)).map_err(|e| {
        CommandError::failed(format!("cannot write {}: {e}", path.display())).with_source(e)
    })
}
