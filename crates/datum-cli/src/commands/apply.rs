//! `datum apply`: converge this machine (or a directory) to its manifest.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use datum_agent::local::{self, Origin};
use datum_agent::report::Mode;
use datum_apply::engine::Options;
use datum_apply::facts::Facts;
use datum_apply::root::{Root, host_name};
use datum_apply::spec::{Item, items};
use datum_apply::trust::check_fleet;
use datum_apply::{HumanReporter, JsonReporter, Providers};
use datum_core::facts::Tied;
use datum_core::host::HostError;
use datum_core::manifest::Manifest;
use datum_core::source::Files;

use super::{ReportFormat, resolve_host};
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

/// Converge this machine to its manifest: observe each resource, change only
/// what differs, and print every change.
///
/// Resources run in dependency order; a failed resource skips the ones that
/// come after it, and the others go on. Nothing is applied when the host
/// does not resolve, its resources wait on each other in a cycle, or a
/// label datum.yaml ties to a fact (`os: {values: [...], fact: os}`)
/// disagrees with what the host observes (see `datum facts`).
///
/// Exit status: 0 nothing changed, 2 changes made (or pending, with --noop),
/// 4 failures, 6 changes and failures, 1 nothing was applied (the host did
/// not resolve, a bundle was refused, a label disagreed with the host's
/// facts, a dependency cycle, another run holds the lock).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to apply as. By default the content of /etc/datum/host
    /// (under --root), else the system hostname. Labels always come from
    /// the fleet repository.
    #[arg(long, value_name = "NAME", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// The host to apply as, given as a word as `render` takes it.
    #[arg(value_name = "HOST", conflicts_with = "host", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host_word: Option<String>,
    /// Examine every resource and print what would change, changing
    /// nothing at all. An Exec's command never runs, but its unless and
    /// onlyif guards do, as in a real run, so that a converged host exits 0.
    #[arg(long)]
    noop: bool,
    /// Treat DIR as /: every path, /etc/passwd, /etc/datum/host, the dpkg
    /// database and the state in /var/lib/datum are taken inside it.
    /// Packages come only from DIR/var/cache/apt/archives; services are
    /// enabled or disabled in DIR but never started, stopped or restarted.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The private key to decrypt the manifest's secrets with, as a path
    /// on this host (under --root when given). By default the SSH host key,
    /// /etc/ssh/ssh_host_ed25519_key. --noop never decrypts.
    #[arg(long, value_name = "FILE", value_parser = absolute_on_host)]
    identity: Option<String>,
    /// The output format: changes as they happen and a summary, or one JSON
    /// report at the end.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Apply this bundle (made by `datum bundle`) instead of a fleet: its
    /// manifest, with its payloads. No fleet repository is read. The bundle
    /// must be this host's.
    #[arg(long, value_name = "FILE")]
    bundle: Option<PathBuf>,
    /// With --bundle: refuse it unless it is signed by a key this file lists
    /// (allowed-signers format, as `ssh-keygen -Y verify -f` reads it).
    #[arg(long, value_name = "FILE", requires = "bundle", alias = "public-key")]
    public_keys: Option<PathBuf>,
    /// With --bundle: apply it without checking who signed it. One of
    /// --public-keys and --allow-unsigned is required with --bundle.
    #[arg(long, requires = "bundle", conflicts_with = "public_keys")]
    allow_unsigned: bool,
    /// Record the run as the agent does: a report in /var/lib/datum/reports
    /// and the Prometheus file /var/lib/prometheus/node-exporter/datum.prom
    /// (both under --root).
    #[arg(long)]
    report: bool,
    /// Apply the fleet even when its directory is owned by a user other
    /// than root (or the one who ran sudo), or is writable by every user.
    /// A run as root without --root refuses such a fleet, since whoever can
    /// change it could run anything as root (git's safe.directory).
    #[arg(long)]
    trust_fleet: bool,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let machine = match &args.root {
        Some(dir) => Root::at(root_dir(dir)?),
        None => Root::system(),
    };
    let identity = host_name(args.host.as_deref().or(args.host_word.as_deref()), &machine)?;
    let facts = Facts::observe(&machine);
    if let Some(file) = &args.bundle {
        if args.public_keys.is_none() && !args.allow_unsigned {
            return Err(CommandError::usage(
                "--bundle needs --public-keys FILE (the keys that may sign it) or --allow-unsigned",
            )
            .hint("datum apply --bundle FILE --public-keys /etc/datum/bundle_signers"));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let at = local::BundleFile {
            file,
            keys: args.public_keys.as_deref(),
            identity: &identity,
            root: &machine,
            host_key: args.identity.as_deref(),
        };
        let (items, origin, tied) = local::open_bundle_file(&at, now)?;
        check_labels(ui, &identity.name, &tied, &Files::default(), &facts)?;
        return converge(ui, &identity.name, &items, &machine, &args, origin, &facts);
    }
    let (fleet, reader) = root::open(ui, settings)?;
    if args.root.is_none() && !args.trust_fleet {
        check_fleet(reader.root(), settings.runner)?;
    }
    let resolved = resolve_host(ui, &fleet, &identity.name).inspect_err(|e| {
        let not_found = e
            .source_as::<HostError>()
            .is_some_and(HostError::is_not_found);
        if not_found && !identity.from.is_flag() {
            ui.note(&format!(
                "the host name `{}` came from {}; --host NAME names another",
                identity.name, identity.from
            ));
        }
    })?;
    resolved.require_ok()?;
    check_labels(
        ui,
        &identity.name,
        &fleet.tied(resolved.host),
        &fleet.files,
        &facts,
    )?;
    let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
    let items = items(&manifest, &reader);
    let origin = Origin {
        mode: Mode::Local,
        source: reader.root().display().to_string(),
        commit: None,
    };
    converge(ui, &identity.name, &items, &machine, &args, origin, &facts)
}

/// Refuses, before anything changes, a host whose labels tied to a fact
/// disagree with what it observes: each label drawn as an error at its
/// place in the fleet (a bundle's manifest has no places).
fn check_labels(
    ui: &mut Ui,
    host: &str,
    tied: &[Tied],
    files: &Files,
    facts: &Facts,
) -> Result<()> {
    let placed = (!files.is_empty()).then_some(files);
    let whence = "observed by this host now (`datum facts` shows every fact)";
    let diags = datum_core::facts::check(tied, &facts.observed(), host, placed, whence);
    if diags.is_empty() {
        return Ok(());
    }
    ui.diagnostics(files, &diags);
    Err(CommandError::failed(format!(
        "refusing to apply: {} of {host}'s labels {} with what it observes; nothing was changed",
        diags.len(),
        if diags.len() == 1 {
            "disagrees"
        } else {
            "disagree"
        }
    )))
}

/// Applies `items` as `host` and gives the status the outcome calls for;
/// with --report, records the run.
fn converge(
    ui: &mut Ui,
    host: &str,
    items: &[Item],
    machine: &Root,
    args: &Args,
    origin: Origin,
    facts: &Facts,
) -> Result<Status> {
    let providers = Providers::system(machine);
    let options = Options {
        noop: args.noop,
        identity: args.identity.clone(),
    };
    let record = args.report.then_some(origin);
    let applied = match args.format {
        ReportFormat::Text => {
            // -q: only errors, as everywhere (the status says the rest).
            let quiet = ui.is_quiet();
            let reporter = HumanReporter::styled(ui.styled_stream()).quiet(quiet);
            local::apply(
                host, items, machine, &providers, &options, record, facts, reporter,
            )
        }
        ReportFormat::Json => {
            let reporter = JsonReporter::new(ui.stdout()).with_facts(facts.tree());
            local::apply(
                host, items, machine, &providers, &options, record, facts, reporter,
            )
        }
    };
    for w in &applied.warnings {
        ui.warning(w);
    }
    Ok(applied.outcome?.status().into())
}

/// `--root DIR`, which must be a directory.
pub(super) fn root_dir(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| CommandError::usage(format!("--root {} is not a directory", dir.display())))
}

/// `--identity` names a file on the host, opened inside `--root`: a
/// relative path would be read from the root's top, not from the current
/// directory, so it is refused rather than read from somewhere unexpected.
fn absolute_on_host(s: &str) -> std::result::Result<String, String> {
    if s.starts_with('/') {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{s}` is a relative path: give the key's absolute path on the host (read inside --root when given), e.g. $PWD/{s}"
        ))
    }
}
