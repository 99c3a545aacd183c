//! `datum bundle`: one file per host holding its manifest and exactly the
//! payloads it uses, signed, for agents in bundle mode.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use datum_agent::bundle::{Batch, Payloads, Stamp, Waits};
use datum_agent::sshsig::SigningKey;
use datum_core::bundle::Commit;
use datum_core::check;
use datum_core::diagnostic::{Code, Diagnostic};
use datum_core::fleet::{Fleet, HostId};
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::{DirReader, Reader};
use datum_core::report::count;
use datum_core::resolve::{FleetResolution, resolve_all};
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
/// never from the working tree, and the bundle records that commit and a
/// serial: the number of commits on the first-parent line up to it (or
/// --serial). Agents refuse a lower serial than the one they applied, and
/// the same serial with another commit. Outside git no commit is recorded,
/// and no serial unless --serial gives one. The same revision, serial and
/// key always give the same bytes.
///
/// When datum.yaml declares rollout waves, each host's bundle also records,
/// signed, when its agent may apply it: the time the bundle is made plus
/// the start of the host's wave (`datum rollout plan`). Until then the
/// agent keeps the input it runs and reports the new one as pending.
/// --immediate records no wait, for an urgent fix (a revert).
///
/// With --all, every host that resolves gets `DIR/<host>.bundle`; a host
/// with an error `datum check` reports for it (it does not resolve, or it
/// receives a secret it could not decrypt or whose file is damaged) gets
/// no file (its errors are
/// printed, and the status is 1), and other `.bundle` files in DIR are
/// removed.
///
/// With --seal, each host's manifest and payloads are encrypted to the
/// keys of its Host document (`keys`, the ones secrets are encrypted to),
/// inside the signature: a store that leaks shows who the bundles are for
/// and their serial, nothing of their contents. The agent opens them with
/// the host key (its `identity`). A host with no keys gets no bundle: its
/// error is printed and the status is 1.
///
/// In git, the working tree must hold the fleet as committed: a change not
/// yet committed would not be in the bundle, so it is refused (as `cargo
/// publish` does) unless --allow-dirty. With --rev the commit is named, and
/// the working tree is not compared.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to bundle.
    #[arg(required_unless_present = "all", conflicts_with = "all", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// Bundle every host, in parallel, one file each into --out DIR.
    #[arg(long)]
    all: bool,
    /// The bundle file to write (a directory with --all, created if
    /// missing); `-` writes one host's bundle to stdout.
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// Bundle HEAD even though the working tree differs from it.
    #[arg(long)]
    allow_dirty: bool,
    /// Sign with this OpenSSH ed25519 private key (the file without .pub,
    /// not protected by a passphrase), in the namespace `datum-bundle`.
    #[arg(long, value_name = "KEY")]
    sign_key: Option<PathBuf>,
    /// The commit to bundle, in a git repository (default: HEAD).
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
    /// The serial to record instead of the commit's first-parent depth,
    /// for a pipeline that keeps its own release counter. Agents refuse a
    /// lower serial than the one they applied, so it must only grow.
    #[arg(long, value_name = "N")]
    serial: Option<u64>,
    /// How long agents may move to these bundles: `90m`, `12h`, `7d`. After
    /// that they refuse them, and a host left on one reports itself stale,
    /// so a pipeline re-bundles at least every half of it. Counted from
    /// SOURCE_DATE_EPOCH when set (reproducible builds), else from now.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = valid_for)]
    valid_for: u64,
    /// Encrypt each bundle's manifest and payloads to its host's `keys`,
    /// so only that host can read them.
    #[arg(long)]
    seal: bool,
    /// Let every host apply these bundles at once, whatever its rollout
    /// wave: for an urgent fix, or a revert that must overtake the change
    /// it reverts.
    #[arg(long)]
    immediate: bool,
}

/// A `--valid-for` duration, in seconds: the agent configuration's syntax.
fn valid_for(text: &str) -> std::result::Result<u64, String> {
    match datum_agent::config::parse_duration(text) {
        Some(d) if d.as_secs() > 0 => Ok(d.as_secs()),
        _ => Err(format!(
            "`{text}` is not a duration: write a number and a unit, or several: `12h`, `7d`, `1d12h`"
        )),
    }
}

/// When bundles are made, what their expiry and waits count from:
/// SOURCE_DATE_EPOCH when it is set (so a rebuild gives the same bytes),
/// else now.
fn made() -> Result<i64> {
    Ok(match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<i64>().map_err(|_| {
            CommandError::usage(format!(
                "SOURCE_DATE_EPOCH is `{v}`, not a number of seconds"
            ))
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    })
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let key = match &args.sign_key {
        Some(path) => Some(SigningKey::read(path)?),
        None => None,
    };
    if args.out.as_os_str() == "-" && args.all {
        return Err(CommandError::usage(
            "--out - writes one host's bundle to stdout; --all needs a directory",
        )
        .hint("datum bundle --all --out DIR"));
    }
    let dir = root::find(settings)?;
    let (fleet, reader, revision) = load(&dir, args.rev.as_deref())?;
    if revision.is_some() && args.rev.is_none() && !args.allow_dirty {
        refuse_dirty(&dir, &fleet)?;
    }
    let commit = revision.as_ref().map(|r| Commit {
        id: r.id(),
        time: r.time(),
    });
    let serial = match (args.serial, &revision) {
        (Some(n), _) => Some(n),
        (None, Some(r)) => Some(Repo::discover(&dir)?.first_parent_depth(r)?),
        (None, None) => None,
    };
    let payloads = Payloads::read(
        reader.as_ref(),
        fleet.sources.keys().map(String::as_str),
        fleet.source_limit,
    )?;
    let mut at = match &revision {
        Some(r) => format!(" at commit {}", r.short()),
        None => String::new(),
    };
    if let Some(n) = serial {
        at.push_str(&format!(" (serial {n})"));
    }
    let made = made()?;
    let plan = datum_core::rollout::plan(&fleet);
    if !args.immediate && !plan.problems.is_empty() {
        ui.diagnostics(&fleet.files, &plan.problems);
        return Err(CommandError::failed(
            "the rollout waves in datum.yaml have errors, so no host's turn can be known",
        )
        .hint("fix them (`datum check` shows the same), or bundle with --immediate"));
    }
    let batch = Batch {
        fleet: &fleet,
        payloads: &payloads,
        stamp: Stamp {
            serial,
            expires: Some(made.saturating_add(i64::try_from(args.valid_for).unwrap_or(i64::MAX))),
            not_before: None,
            commit,
        },
        waits: (!args.immediate).then_some(Waits { made, plan: &plan }),
        key: key.as_ref(),
        seal: args.seal,
    };
    let said = Said {
        at,
        signed: format!(
            "{}{}",
            if args.seal { ", sealed" } else { "" },
            signed_by(key.as_ref())
        ),
    };
    let reader = reader.as_ref();
    match &args.host {
        Some(name) => one(ui, &batch, reader, name, &args.out, &said),
        None => every(ui, &batch, reader, &args.out, &said),
    }
}

/// What the closing line says of the bundles: the commit, the key.
struct Said {
    at: String,
    signed: String,
}

/// `datum bundle HOST`: its bundle into `out`, or to stdout for `-`.
fn one(
    ui: &mut Ui,
    batch: &Batch<'_>,
    reader: &dyn Reader,
    name: &str,
    out: &Path,
    said: &Said,
) -> Result<Status> {
    let fleet = batch.fleet;
    let resolved = resolve_host(ui, fleet, name)?;
    resolved.require_ok()?;
    let all = resolve_all(fleet);
    let (errors, withheld) = secrets_errors(fleet, &all, reader);
    if withheld.contains(&resolved.host) {
        ui.diagnostics(&fleet.files, &errors);
        return Err(CommandError::failed(format!(
            "{name} would fail on arrival: a secret it receives is damaged, or not encrypted so that it can decrypt it"
        ))
        .hint("`datum secret rekey` encrypts each secret to the hosts that receive it"));
    }
    if batch.seal && fleet.host(resolved.host).keys.is_empty() {
        ui.diagnostics(&fleet.files, &keyless(fleet, &[resolved.host]));
        return Err(CommandError::failed(format!(
            "cannot seal the bundle of {name}: it declares no `keys`"
        )));
    }
    let manifest = Manifest::new(fleet, resolved.host, &resolved.resolution);
    let bytes = batch.make(&manifest)?;
    let Said { at, signed } = said;
    if out.as_os_str() == "-" {
        ui.stdout().write_all(&bytes)?;
        ui.flush()?;
        ui.status(&format!("bundled {name}{at}{signed}"));
        return Ok(Status::OK);
    }
    datum_fs::write_atomic(out, &bytes, Attrs::mode(output_mode()))
        .map_err(FileError::of("write", out))?;
    writeln!(
        ui.stdout(),
        "bundled {name}{at} into {}{signed}",
        out.display()
    )?;
    Ok(Status::OK)
}

/// `datum bundle --all`: a bundle per host that would not fail on arrival.
fn every(
    ui: &mut Ui,
    batch: &Batch<'_>,
    reader: &dyn Reader,
    out: &Path,
    said: &Said,
) -> Result<Status> {
    let fleet = batch.fleet;
    let all = resolve_all(fleet);
    // A host check reports a secrets error for would fail on arrival: it
    // gets no bundle, as a host that does not resolve.
    let (secrets, mut withheld) = secrets_errors(fleet, &all, reader);
    // A host with no keys cannot be sealed for: it gets no bundle either.
    let unsealable: Vec<HostId> = if batch.seal {
        (0..fleet.hosts.len() as u32)
            .map(HostId)
            .filter(|&h| fleet.host(h).keys.is_empty() && !withheld.contains(&h))
            .filter(|&h| all.of(h).is_some_and(|r| r.is_ok()))
            .collect()
    } else {
        Vec::new()
    };
    withheld.extend(&unsealable);
    let written = batch.write_all(&all, out, &withheld)?;
    let mut errors = check::errors(fleet, &all);
    errors.extend(secrets);
    errors.extend(keyless(fleet, &unsealable));
    ui.diagnostics(&fleet.files, &errors);
    let Said { at, signed } = said;
    writeln!(
        ui.stdout(),
        "bundled {written} of {}{at} into {}{signed}",
        count(fleet.hosts.len(), "host"),
        out.display(),
    )?;
    let failed = fleet.hosts.len() - written;
    if failed > 0 {
        let keyless = if unsealable.is_empty() {
            ""
        } else {
            ", or declare no `keys` to seal to"
        };
        return Err(CommandError::failed(format!(
            "{} got no bundle: {} would not resolve or could not decrypt {} secrets{keyless}",
            count(failed, "host"),
            if failed == 1 { "it" } else { "they" },
            if failed == 1 { "its" } else { "their" },
        )));
    }
    Ok(Status::OK)
}

/// One error per host that declares no `keys` and so cannot be sealed for,
/// at its name.
fn keyless(fleet: &Fleet, hosts: &[HostId]) -> Vec<datum_core::diagnostic::Diagnostic> {
    hosts
        .iter()
        .map(|&h| {
            let host = fleet.host(h);
            Diagnostic::error(
                Code::SecretNoKey,
                format!(
                    "{} declares no `keys`, so its bundle cannot be sealed",
                    host.name
                ),
            )
            .at(host.name_span, "this host")
            .hint("add the host's public key to its Host document (`keys: [\"ssh-ed25519 AAAA...\"]`, from /etc/ssh/ssh_host_ed25519_key.pub), or bundle without --seal")
        })
        .collect()
}

/// The errors `check` reports about secrets (bad keys, hosts that could
/// not decrypt what they receive, a ciphertext whose header does not
/// read), and the hosts they reach: those would fail on arrival.
fn secrets_errors(
    fleet: &Fleet,
    all: &FleetResolution,
    reader: &dyn Reader,
) -> (Vec<datum_core::diagnostic::Diagnostic>, BTreeSet<HostId>) {
    let plan = datum_secrets::Plan::new(fleet, all);
    let mut withheld = plan.hosts_in_error(fleet);
    let mut errors: Vec<_> = plan
        .diagnostics(fleet)
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    let (damaged, reached) = plan.ciphertext_errors(fleet, |path| {
        reader.read_source(path, fleet.source_limit).ok()
    });
    errors.extend(damaged);
    withheld.extend(reached);
    (errors, withheld)
}

/// Refuses when the fleet in the working tree differs from the commit
/// being bundled: the bundle would not hold what the operator sees.
fn refuse_dirty(dir: &Path, committed: &Fleet) -> Result<()> {
    let reader = DirReader::new(dir)?;
    let on_disk = loader::load(&reader)?;
    let differ = committed.inputs_differ(&on_disk);
    if differ.is_empty() {
        return Ok(());
    }
    const SHOWN: usize = 5;
    let mut list = differ[..differ.len().min(SHOWN)].join(", ");
    if differ.len() > SHOWN {
        list.push_str(&format!(" and {} more", differ.len() - SHOWN));
    }
    Err(CommandError::failed(format!(
        "the working tree differs from the commit being bundled: {list}"
    ))
    .hint("commit the change first (a bundle holds the fleet as committed), or pass --allow-dirty to bundle the commit as it is"))
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
