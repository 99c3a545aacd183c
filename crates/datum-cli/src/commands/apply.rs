//! `datum apply`: converge this machine (or a directory) to its manifest.

use std::path::{Path, PathBuf};

use datum_apply::engine::{ApplyError, Options};
use std::time::{SystemTime, UNIX_EPOCH};

use datum_agent::bundle::{self, OpenError};
use datum_agent::http::{self, FetchOptions};
use datum_agent::sshsig::AllowedSigners;
use datum_apply::root::{Identity, Root, host_name};
use datum_apply::spec::{Item, items};
use datum_apply::{HumanReporter, JsonReporter, Providers, Summary};
use datum_core::host::HostError;
use datum_core::manifest::Manifest;

use super::{ReportFormat, resolve_host};
use crate::GlobalArgs;
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::paint::Scheme;
use crate::root;
use crate::ui::Ui;

/// Converge this machine to its manifest: observe each resource, change only
/// what differs, and print every change.
///
/// Resources run in dependency order; a failed resource skips the ones that
/// come after it, and the others go on. Nothing is applied when the host
/// does not resolve, or its resources wait on each other in a cycle.
///
/// Exit status: 0 nothing changed, 2 changes made (or pending, with --noop),
/// 4 failures, 6 changes and failures, 1 nothing was applied (the host did
/// not resolve, a bundle was refused, a dependency cycle, another run holds
/// the lock).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to apply as. By default the content of /etc/datum/host
    /// (under --root), else the system hostname. Labels always come from
    /// the fleet repository.
    #[arg(long, value_name = "NAME", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// Examine every resource and print what would change, changing
    /// nothing at all.
    #[arg(long)]
    noop: bool,
    /// Treat DIR as /: every path, /etc/passwd, /etc/datum/host, the dpkg
    /// database and the state in /var/lib/datum are taken inside it.
    /// Packages come only from DIR/var/cache/apt/archives; services are
    /// enabled or disabled in DIR but never started, stopped or restarted.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The output format: changes as they happen and a summary, or one JSON
    /// report at the end.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Apply this bundle (made by `datum bundle`) instead of a fleet: its
    /// manifest, with its payloads. No fleet repository is read. The bundle
    /// must be this host's.
    #[arg(long, value_name = "FILE")]
    bundle: Option<PathBuf>,
    /// With --bundle: refuse it unless it is signed by a key this file lists
    /// (allowed-signers format, as `ssh-keygen -Y verify -f` reads it).
    #[arg(long, value_name = "FILE", requires = "bundle", alias = "public-key")]
    public_keys: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: Args) -> Result<Status> {
    let machine = match &args.root {
        Some(dir) => Root::at(root_dir(dir)?),
        None => Root::system(),
    };
    let identity = host_name(args.host.as_deref(), &machine)?;
    if let Some(file) = &args.bundle {
        let items = bundle_items(file, args.public_keys.as_deref(), &identity)?;
        return converge(ui, &identity.name, &items, &machine, &args);
    }
    let (fleet, reader) = root::open(ui, global)?;
    let resolved = resolve_host(ui, &fleet, &identity.name).inspect_err(|e| {
        let not_found = e
            .source_as::<HostError>()
            .is_some_and(HostError::is_not_found);
        if not_found && identity.from != "--host" {
            ui.note(&format!(
                "the host name `{}` came from {}; --host NAME names another",
                identity.name, identity.from
            ));
        }
    })?;
    resolved.require_ok()?;
    let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
    let items = items(&manifest, &reader);
    converge(ui, &identity.name, &items, &machine, &args)
}

/// Applies `items` as `host` and gives the status the outcome calls for.
fn converge(
    ui: &mut Ui,
    host: &str,
    items: &[Item],
    machine: &Root,
    args: &Args,
) -> Result<Status> {
    let providers = Providers::system(machine);
    let options = Options { noop: args.noop };
    let result = match args.format {
        ReportFormat::Text => datum_apply::apply(
            host,
            items,
            &providers,
            machine,
            &options,
            &mut HumanReporter::new(ui.painted_stdout(Scheme::Apply)),
        ),
        ReportFormat::Json => datum_apply::apply(
            host,
            items,
            &providers,
            machine,
            &options,
            &mut JsonReporter::new(ui.stdout()),
        ),
    };
    match result {
        Ok(summary) => Ok(status(&summary)),
        // The run went on to the end; its status still tells what happened.
        Err(ApplyError::Report { source, summary }) => {
            if source.kind() != std::io::ErrorKind::BrokenPipe {
                ui.warning(&format!("the report was cut short: {source}"));
            }
            Ok(status(&summary))
        }
        Err(e) => Err(e.into()),
    }
}

/// The resources of a bundle file, after every check of the format, the
/// signature when keys are given, and that it is this host's.
fn bundle_items(file: &Path, keys: Option<&Path>, identity: &Identity) -> Result<Vec<Item>> {
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
        if matches!(e, OpenError::WrongHost { .. }) && identity.from != "--host" {
            err = err.hint(format!(
                "this host's name `{}` came from {}; --host NAME names another",
                identity.name, identity.from
            ));
        }
        err.with_source(e)
    };
    let opened =
        bundle::open(&bytes, signers.as_ref(), Some(&identity.name), now).map_err(refused)?;
    opened
        .items(&name)
        .map_err(|e| CommandError::failed(e.to_string()).with_source(e))
}

/// `--root DIR`, which must be a directory.
pub(super) fn root_dir(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| CommandError::usage(format!("--root {} is not a directory", dir.display())))
}

/// 0, 2, 4 or 6: changes and failures as two bits monitoring can test.
fn status(summary: &Summary) -> Status {
    match (summary.changes(), summary.failures()) {
        (false, false) => Status::OK,
        (true, false) => Status::APPLY_CHANGED,
        (false, true) => Status::APPLY_FAILED,
        (true, true) => Status::APPLY_CHANGED_AND_FAILED,
    }
}
