//! `datum apply`: converge this machine (or a directory) to its manifest.

use std::path::{Path, PathBuf};

use datum_apply::engine::{ApplyError, Options};
use std::time::{SystemTime, UNIX_EPOCH};

use datum_agent::bundle::{self, OpenError};
use datum_agent::cycle::{self, Run, Tee, publish};
use datum_agent::http::{self, FetchOptions};
use datum_agent::report::{Mode, Timestamp};
use datum_agent::sshsig::AllowedSigners;
use datum_apply::facts::Facts;
use datum_apply::root::{Identity, Root, host_name};
use datum_apply::spec::{Item, items};
use datum_apply::{HumanReporter, JsonReporter, Providers, Reporter, RunStatus, Summary};
use datum_core::emit::Tree;
use datum_core::facts::Tied;
use datum_core::host::HostError;
use datum_core::manifest::Manifest;
use datum_core::source::Files;

use super::{ReportFormat, resolve_host};
use crate::GlobalArgs;
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
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
    #[arg(long, value_name = "FILE")]
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

/// Where the input of a run came from, for its report.
struct Origin {
    mode: Mode,
    source: String,
    commit: Option<String>,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: Args) -> Result<Status> {
    let machine = match &args.root {
        Some(dir) => Root::at(root_dir(dir)?),
        None => Root::system(),
    };
    let identity = host_name(args.host.as_deref(), &machine)?;
    let facts = Facts::observe(&machine);
    if let Some(file) = &args.bundle {
        let (items, commit, tied) = bundle_items(file, args.public_keys.as_deref(), &identity)?;
        check_labels(ui, &identity.name, &tied, &Files::default(), &facts)?;
        let origin = Origin {
            mode: Mode::Bundle,
            source: file.display().to_string(),
            commit,
        };
        return converge(ui, &identity.name, &items, &machine, &args, origin, &facts);
    }
    let (fleet, reader) = root::open(ui, global)?;
    if args.root.is_none() && !args.trust_fleet {
        check_fleet_owner(reader.root())?;
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
    let started = Timestamp::from(SystemTime::now());
    let providers = Providers::system(machine);
    let options = Options {
        noop: args.noop,
        identity: args.identity.clone(),
    };
    let mut json = Vec::new();
    let record = args.report.then_some(&mut json);
    let run =
        |r: &mut dyn Reporter| datum_apply::apply(host, items, &providers, machine, &options, r);
    let tree = facts.tree();
    let result = match args.format {
        ReportFormat::Text => tee(
            HumanReporter::styled(ui.styled_stream()),
            record,
            &tree,
            run,
        ),
        ReportFormat::Json => tee(
            JsonReporter::new(ui.stdout()).with_facts(tree.clone()),
            record,
            &tree,
            run,
        ),
    };
    let outcome = match result {
        Ok(summary) => Ok(summary),
        // The run went on to the end; its status still tells what happened.
        Err(ApplyError::Report { source, summary }) => {
            if source.kind() != std::io::ErrorKind::BrokenPipe {
                ui.warning(&format!("the report was cut short: {source}"));
            }
            Ok(summary)
        }
        Err(e) => Err(e),
    };
    if args.report {
        let (summary, notes, status) = match &outcome {
            Ok(summary) => (Some(summary.clone()), Vec::new(), summary.status()),
            Err(e) => (None, vec![e.to_string()], RunStatus::NotApplied),
        };
        let resources = cycle::apply_report(if summary.is_some() { &json } else { &[] });
        let run = Run {
            host: host.to_owned(),
            started,
            mode: origin.mode,
            source: Some(origin.source),
            commit: origin.commit,
            cached_input: false,
            fetch_failed: false,
            notes,
            summary,
            resources,
            status,
            facts: datum_agent::facts::json(facts),
            label_mismatches: Vec::new(),
        };
        let metrics = Path::new(datum_agent::metrics::DEFAULT_PATH);
        let (_, _, warnings) = publish(machine, run, metrics, None, None);
        for w in warnings {
            ui.warning(&w);
        }
    }
    match outcome {
        Ok(summary) => Ok(summary.status().into()),
        Err(e) => Err(e.into()),
    }
}

/// Runs `run` with `reporter`, and also collects apply's JSON report into
/// `json` when it is given.
fn tee<R: Reporter>(
    mut reporter: R,
    json: Option<&mut Vec<u8>>,
    facts: &Tree<'static>,
    run: impl FnOnce(&mut dyn Reporter) -> std::result::Result<Summary, ApplyError>,
) -> std::result::Result<Summary, ApplyError> {
    match json {
        None => run(&mut reporter),
        Some(buffer) => run(&mut Tee {
            human: reporter,
            json: JsonReporter::new(buffer).with_facts(facts.clone()),
        }),
    }
}

/// The resources of a bundle file, after every check of the format, the
/// signature when keys are given, and that it is this host's.
fn bundle_items(
    file: &Path,
    keys: Option<&Path>,
    identity: &Identity,
) -> Result<(Vec<Item>, Option<String>, Vec<Tied>)> {
    let signers = match keys {
        Some(path) => Some(AllowedSigners::read(path).map_err(|e| {
            let hint = e.hint();
            CommandError::failed(e.to_string())
                .with_source(e)
                .hint(hint)
        })?),
        None => None,
    };
    let bytes = http::read_file(file, FetchOptions::default().max_bytes)
        .map_err(|e| CommandError::failed(e.to_string()).with_source(e))?;
    let name = file.display().to_string();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let refused = |e: OpenError| {
        let mut err = CommandError::failed(format!("refusing {name}: {e}")).hint(e.hint());
        if matches!(e, OpenError::WrongHost { .. }) && !identity.from.is_flag() {
            err = err.hint(format!(
                "this host's name `{}` came from {}; --host NAME names another",
                identity.name, identity.from
            ));
        }
        err.with_source(e)
    };
    let opened =
        bundle::open(&bytes, signers.as_ref(), Some(&identity.name), now).map_err(refused)?;
    let items = opened
        .items(&name)
        .map_err(|e| CommandError::failed(e.to_string()).with_source(e))?;
    Ok((
        items,
        opened.commit().map(|c| c.id.to_owned()),
        opened.tied(),
    ))
}

/// Set, a run checks the fleet directory's owner as a run as root does,
/// whoever runs it (to try a fleet before a root run does, and to test).
const CHECK_OWNER_VAR: &str = "DATUM_CHECK_FLEET_OWNER";

/// A run as root (without --root) refuses a fleet that someone other than
/// root, or the user who ran sudo, could have changed.
fn check_fleet_owner(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut runner = datum_apply::root::Runner::current();
    if std::env::var_os(CHECK_OWNER_VAR).is_some() && runner.euid != 0 {
        runner = datum_apply::root::Runner {
            euid: 0,
            invoking: None,
        };
    }
    if runner.euid != 0 {
        return Ok(());
    }
    let shown = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let shown = shown.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|e| {
        CommandError::failed(format!("cannot inspect the fleet directory {shown}: {e}"))
            .with_source(e)
    })?;
    datum_apply::root::trust_fleet(&shown, meta.uid(), meta.mode(), runner).map_err(|e| {
        CommandError::failed(format!("refusing to apply as root: {e}"))
            .hint("whoever can change the fleet can run anything as root through it; make root its owner and `chmod o-w` it")
            .hint("--trust-fleet applies it anyway")
            .with_source(e)
    })
}

/// `--root DIR`, which must be a directory.
pub(super) fn root_dir(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| CommandError::usage(format!("--root {} is not a directory", dir.display())))
}
