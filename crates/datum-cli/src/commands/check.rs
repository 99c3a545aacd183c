//! `datum check`: resolve every host and report every problem once.

use datum_core::check::check;
use datum_core::present;
use datum_core::resolve::resolve_all_for_check;

use super::ReportFormat;
use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Resolve every host and report every error and warning in the fleet.
///
/// Each distinct problem is reported once, naming the hosts it hits. Hosts
/// that no broken document touches are still resolved, so one run shows
/// every independent problem. Exits 1 when there are errors.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    deny_warnings: bool,
    /// The output format: diagnostics on stderr and a summary line on
    /// stdout, or one JSON document on stdout.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let (fleet, _) = root::open(ui, settings)?;
    let all = resolve_all_for_check(&fleet);
    let mut report = check(&fleet, &all);
    // Who can decrypt each secret: the recipients files against the
    // resolution (datum-secrets, which reads the keys).
    let secrets = datum_secrets::Plan::new(&fleet, &all).diagnostics(&fleet);
    report.add(&fleet.files, secrets);
    if args.deny_warnings {
        report.deny_warnings();
    }
    match args.format {
        ReportFormat::Text => {
            ui.diagnostics(&fleet.files, &report.diagnostics);
            if let Some(note) = report.held_back_note() {
                ui.note(&note);
            }
            let mut out = ui.styled_stdout();
            present::check::summary(&mut out, &report)?;
            out.flush()?;
        }
        ReportFormat::Json => ui.write_tree(&report.tree(&fleet.files), Format::Json)?,
    }
    ui.flush()?;
    let status = if report.errors() > 0 {
        Status::FAILED
    } else {
        Status::OK
    };
    // The process ends next: freeing a large fleet piece by piece would
    // only add to the run time.
    std::mem::forget((fleet, all, report));
    Ok(status)
}
