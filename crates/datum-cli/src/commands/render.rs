//! `datum render`: what a host receives, as a manifest.

use std::path::{Path, PathBuf};

use datum_core::check;
use datum_core::fleet::Fleet;
use datum_core::manifest::Manifest;
use datum_core::report::count;
use datum_core::resolve::resolve_all;
use datum_fs::manifests;

use super::{DocFormat, resolve_host};
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

/// Print the manifest a host receives: its labels, the layers it matches in
/// fold order, and every resource with its final fields.
///
/// Nothing is printed when the host does not resolve (a conflict or an
/// invalid document): the errors go to stderr and the status is 1.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to render.
    #[arg(
        required_unless_present_any = ["all", "host_opt"],
        conflicts_with = "all",
        add = clap_complete::ArgValueCompleter::new(super::completions::host_names)
    )]
    host: Option<String>,
    /// The host to render, as `explain` and `apply` take it.
    #[arg(
        long = "host",
        value_name = "NAME",
        conflicts_with_all = ["host", "all"],
        add = clap_complete::ArgValueCompleter::new(super::completions::host_names)
    )]
    host_opt: Option<String>,
    /// Render every host, in parallel, one file each into --out.
    #[arg(long, requires = "out")]
    all: bool,
    /// Where --all writes `<host>.yaml` or `<host>.json` (created if
    /// missing). Afterwards it holds exactly the resolved hosts' files:
    /// manifests it wrote earlier for other hosts or in the other format
    /// are removed; other files are left alone.
    #[arg(long, value_name = "DIR", requires = "all")]
    out: Option<PathBuf>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = DocFormat::Yaml)]
    pub format: DocFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, mut args: Args) -> Result<Status> {
    args.host = args.host.take().or(args.host_opt.take());
    // Checked before the fleet is read: an option the form does not use
    // would otherwise be silently ignored (clap's `requires` is not
    // enforced once the positional host is given).
    if args.host.is_some() && args.out.is_some() {
        return Err(CommandError::usage(
            "--out applies only to --all: `render HOST` prints to stdout",
        )
        .hint(
            "redirect stdout (datum render HOST > FILE), or use --all --out DIR for every host",
        ));
    }
    let (fleet, _) = root::open(ui, settings)?;
    match (&args.host, &args.out) {
        (Some(name), None) => {
            let resolved = resolve_host(ui, &fleet, name)?;
            resolved.require_ok()?;
            let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
            ui.write_tree(&manifest.tree(), args.format.into())?;
            ui.flush()?;
            Ok(Status::OK)
        }
        (None, Some(dir)) => render_all(ui, &fleet, dir, args.format),
        _ => Err(CommandError::usage("name a host, or pass --all --out DIR")),
    }
}

fn render_all(ui: &mut Ui, fleet: &Fleet, dir: &Path, format: DocFormat) -> Result<Status> {
    let all = resolve_all(fleet);
    let format = match format {
        DocFormat::Yaml => manifests::Format::Yaml,
        DocFormat::Json => manifests::Format::Json,
    };
    let rendered = manifests::render_all(fleet, &all, dir, format)?;
    let diagnostics = check::errors(fleet, &all);
    ui.diagnostics(&fleet.files, &diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let removed = if rendered.removed > 0 {
        format!(", removed {}", count(rendered.removed, "stale file"))
    } else {
        String::new()
    };
    writeln!(
        ui.stdout(),
        "rendered {} of {} into {}{removed}",
        rendered.written,
        count(fleet.hosts.len(), "host"),
        dir.display()
    )?;
    let failed = fleet.hosts.len() - rendered.written;
    if failed > 0 {
        return Err(CommandError::failed(format!(
            "{} did not resolve and got no file",
            count(failed, "host")
        )));
    }
    // An error in a document no host uses still fails the run: a command
    // that prints an error never exits 0.
    if errors > 0 {
        return Err(CommandError::failed(format!(
            "every host was rendered, but the fleet has {}",
            count(errors, "error")
        ))
        .hint("`datum check` lists every problem"));
    }
    Ok(Status::OK)
}
