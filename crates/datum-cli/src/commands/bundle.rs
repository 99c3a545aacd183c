//! `datum bundle`: one file per host holding its manifest and exactly the
//! payloads it uses, signed, for agents in bundle mode.

use std::path::{Path, PathBuf};

use datum_agent::bundle::{Batch, Payloads};
use datum_agent::sshsig::SigningKey;
use datum_core::bundle::Commit;
use datum_core::check;
use datum_core::fleet::Fleet;
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::{DirReader, Reader};
use datum_core::report::count;
use datum_core::resolve::resolve_all;
use datum_fs::{Attrs, output_mode};
use datum_git::{GitError, Repo, Revision};

use super::resolve_host;
use crate::command_error::{CommandError, FileError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

/// Write a host's bundle: its manifest, exactly the payload files the
/// manifest uses (nothing of any other host), the fleet's name, the commit
/// it was made from, and a signature.
///
/// In a git repository the fleet is read as committed at HEAD (or --rev),
/// never from the working tree, and the bundle records that commit and its
/// time, which agents use to refuse going back. Outside git no commit is
/// recorded. The same revision and key always give the same bytes.
///
/// With --all, every host that resolves gets `DIR/<host>.bundle`; a host
/// that does not resolve gets no file (its errors are printed, and the
/// status is 1), and other `.bundle` files in DIR are removed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to bundle.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    host: Option<String>,
    /// Bundle every host, in parallel, one file each into --out DIR.
    #[arg(long)]
    all: bool,
    /// The bundle file to write (a directory with --all, created if missing).
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// Sign with this OpenSSH ed25519 private key (the file without .pub,
    /// not protected by a passphrase), in the namespace `datum-bundle`.
    #[arg(long, value_name = "KEY")]
    sign_key: Option<PathBuf>,
    /// The commit to bundle, in a git repository (default: HEAD).
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let key = match &args.sign_key {
        Some(path) => Some(SigningKey::read(path)?),
        None => None,
    };
    let dir = root::find(settings)?;
    let (fleet, reader, revision) = load(&dir, args.rev.as_deref())?;
    let commit = revision.as_ref().map(|r| Commit {
        id: r.id(),
        time: r.time(),
    });
    let payloads = Payloads::read(
        reader.as_ref(),
        fleet.sources.keys().map(String::as_str),
        fleet.source_limit,
    )?;
    let at = match &revision {
        Some(r) => format!(" at commit {}", r.short()),
        None => String::new(),
    };
    let batch = Batch {
        fleet: &fleet,
        payloads: &payloads,
        commit,
        key: key.as_ref(),
    };
    match &args.host {
        Some(name) => {
            let resolved = resolve_host(ui, &fleet, name)?;
            resolved.require_ok()?;
            let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
            let bytes = batch.make(&manifest)?;
            datum_fs::write_atomic(&args.out, &bytes, Attrs::mode(output_mode()))
                .map_err(FileError::of("write", &args.out))?;
            writeln!(
                ui.stdout(),
                "bundled {name}{at} into {}{}",
                args.out.display(),
                signed_by(key.as_ref())
            )?;
            Ok(Status::OK)
        }
        None => {
            let all = resolve_all(&fleet);
            let written = batch.write_all(&all, &args.out)?;
            ui.diagnostics(&fleet.files, &check::errors(&fleet, &all));
            writeln!(
                ui.stdout(),
                "bundled {written} of {}{at} into {}{}",
                count(fleet.hosts.len(), "host"),
                args.out.display(),
                signed_by(key.as_ref())
            )?;
            let failed = fleet.hosts.len() - written;
            if failed > 0 {
                return Err(CommandError::failed(format!(
                    "{} did not resolve and got no bundle",
                    count(failed, "host")
                )));
            }
            Ok(Status::OK)
        }
    }
}

fn signed_by(key: Option<&SigningKey>) -> String {
    match key {
        Some(k) => format!(", signed by {}", k.fingerprint()),
        None => ", unsigned".to_owned(),
    }
}

/// The fleet as committed (in git) or as on disk (outside git).
fn load(dir: &Path, rev: Option<&str>) -> Result<(Fleet, Box<dyn Reader>, Option<Revision>)> {
    match Repo::discover(dir) {
        Ok(repo) => {
            let revision = repo.resolve(rev.unwrap_or("HEAD")).map_err(|e| {
                CommandError::from(e)
                    .hint("a bundle records the commit it was made from: commit the fleet first")
            })?;
            let reader = repo.reader(&revision)?;
            let fleet = loader::load(&reader)?;
            Ok((fleet, Box::new(reader), Some(revision)))
        }
        Err(GitError::NotARepository { .. }) if rev.is_none() => {
            let reader = DirReader::new(dir)?;
            let fleet = loader::load(&reader)?;
            Ok((fleet, Box::new(reader), None))
        }
        Err(e) => Err(e.into()),
    }
}
