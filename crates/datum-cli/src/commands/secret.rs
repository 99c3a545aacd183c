//! `datum secret`: encrypt a secret to the hosts that receive it (and the
//! admins), edit one in place, and re-encrypt when who receives it changes.
//! The work is `datum_secrets::store`'s; this asks for a key's passphrase,
//! runs the editor, and prints.

use std::path::{Path, PathBuf};

use datum_core::loader;
use datum_core::printable::write_line;
use datum_core::reader::DirReader;
use datum_core::resolve::resolve_all;
use datum_secrets::Identity;
use datum_secrets::store::{self, Creating, Edited, Sealed, Store, StoreError};

use crate::command_error::{Result, from_hinted};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

from_hinted!(StoreError);

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

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    no_core_dumps();
    let root = root::locate(ui, settings)?;
    let reader = DirReader::new(&root)?;
    // A secret being created may already be named by a layer: it counts as
    // present, so its hosts resolve and become its recipients.
    let mut creating = match &args.command {
        Sub::Encrypt(a) => vec![store::relative(&root, &a.path, settings.cwd())?],
        _ => Vec::new(),
    };
    let mut fleet = loader::load(&Creating {
        inner: &reader,
        paths: creating.clone(),
    })?;
    // Other secrets the fleet names and nobody has encrypted yet do not
    // stop this one: they are taken as present too (only for encrypt,
    // which writes one of them; edit and rekey need every secret there).
    if !creating.is_empty() && !fleet.missing_secrets.is_empty() {
        creating.extend(fleet.missing_secrets.iter().cloned());
        fleet = loader::load(&Creating {
            inner: &reader,
            paths: creating,
        })?;
    }
    let all = resolve_all(&fleet);
    let store = Store::new(&fleet, &all, &root).inspect_err(|e| {
        ui.diagnostics(&fleet.files, e.diagnostics());
    })?;
    let cwd = settings.cwd();
    match args.command {
        Sub::Encrypt(a) => {
            let rel = store.relative(&a.path, cwd)?;
            let plaintext = store::read_stdin(std::io::stdin().lock())?;
            let sealed = store.seal(&rel, &plaintext)?;
            show(ui, &sealed)?;
        }
        Sub::Edit(a) => {
            let rel = store.relative(&a.path, cwd)?;
            let identities = identities(&a.identity)?;
            let editor = &settings.editor;
            let edited = store.edit(&rel, &identities, &settings.scratch, editor, |file| {
                crate::editor::edit(editor, file)
            })?;
            match edited {
                Edited::Unchanged => ui.status(&format!("{rel} is unchanged")),
                Edited::Sealed(sealed) => show(ui, &sealed)?,
            }
        }
        Sub::Rekey(a) => return rekey(ui, &store, &a, cwd),
    }
    Ok(Status::OK)
}

fn rekey(ui: &mut Ui, store: &Store<'_>, args: &Rekey, cwd: Option<&Path>) -> Result<Status> {
    let paths: Vec<String> = if args.paths.is_empty() {
        store.secrets()
    } else {
        args.paths
            .iter()
            .map(|p| store.relative(p, cwd))
            .collect::<std::result::Result<_, _>>()?
    };
    let stale: Vec<&String> = paths.iter().filter(|p| store.needs_rekey(p)).collect();
    if args.check {
        // A rekey decrypts each secret: one whose header does not read
        // would fail it, whether or not its recipients changed.
        let mut damaged = 0;
        for p in &paths {
            if let Some(why) = store.damaged(p) {
                writeln!(ui.stdout(), "{p}: cannot be rekeyed ({why})")?;
                damaged += 1;
            }
        }
        for p in &stale {
            // The path and a damaged `.recipients` line are the fleet's:
            // shown escaped, never obeyed by the terminal.
            let line = format!("{p}: needs a rekey ({})", store.why(p));
            write_line(ui.stdout(), &line)?;
        }
        ui.flush()?;
        return Ok(if stale.is_empty() && damaged == 0 {
            Status::OK
        } else {
            Status::FAILED
        });
    }
    if stale.is_empty() {
        ui.status("every secret is encrypted to its recipients");
        return Ok(Status::OK);
    }
    let identities = identities(&args.identity)?;
    for p in stale {
        let sealed = store.rekey(p, &identities)?;
        show(ui, &sealed)?;
    }
    Ok(Status::OK)
}

/// What sealing a secret calls for: its warnings, then who it is
/// encrypted to.
fn show(ui: &mut Ui, sealed: &Sealed) -> Result<()> {
    for w in &sealed.warnings {
        ui.warning(w);
    }
    write_line(ui.stdout(), &sealed.summary())?;
    ui.flush()?;
    Ok(())
}

/// The admin's key given with --identity, its passphrase asked for on the
/// terminal when it has one.
fn identities(arg: &IdentityArg) -> Result<Vec<Identity>> {
    let Some(path) = &arg.identity else {
        return Err(StoreError::NoIdentity.into());
    };
    crate::passphrase::open_identities(path)
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
