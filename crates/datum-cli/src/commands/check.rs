//! `datum check`: resolve every host and report every problem once.

use datum_core::check::check;
use std::io::Write;

use datum_core::present::{self, oneline};
use datum_core::reader::Reader as _;
use datum_core::resolve::resolve_all_for_check;

use super::{LintFormat, path_prefix};
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
///
/// With --reports DIR, also every host whose labels tied to a fact in
/// datum.yaml disagree with the facts of its last run report in DIR (the
/// JSON reports hosts keep in /var/lib/datum/reports or POST to
/// report_url): fixed in the fleet, the host will not refuse its next run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    deny_warnings: bool,
    /// The output format: diagnostics on stderr and a summary line on
    /// stdout; one JSON document on stdout; or one line per diagnostic on
    /// stdout, `path:line:column: error[code]: message` (short) or a
    /// GitHub Actions workflow command (github), the summary on stderr.
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,
    /// A directory of run reports collected from hosts, searched a few
    /// levels deep: compare each host's declared labels with the facts it
    /// last reported.
    #[arg(long, value_name = "DIR")]
    reports: Option<std::path::PathBuf>,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let (fleet, reader) = root::open(ui, settings)?;
    let all = resolve_all_for_check(&fleet);
    let mut report = check(&fleet, &all);
    // Who can decrypt each secret: the recipients files against the
    // resolution (datum-secrets, which reads the keys), and whether each
    // ciphertext's header reads at all.
    let plan = datum_secrets::Plan::new(&fleet, &all);
    let mut secrets = plan.diagnostics(&fleet);
    secrets.extend(plan.ciphertext_diagnostics(&fleet, |path| {
        reader.read_source(path, fleet.source_limit).ok()
    }));
    drop(plan);
    report.add(&fleet.files, secrets);
    if let Some(dir) = &args.reports {
        if !dir.is_dir() {
            return Err(crate::command_error::CommandError::usage(format!(
                "--reports {} is not a directory",
                dir.display()
            )));
        }
        let reported = datum_agent::reported::check_reports(&fleet, dir).map_err(|e| {
            crate::command_error::CommandError::failed(e.to_string()).with_source(e)
        })?;
        report.add(&fleet.files, reported);
    }
    if args.deny_warnings {
        report.deny_warnings();
    }
    match args.format {
        LintFormat::Text => {
            ui.diagnostics(&fleet.files, &report.diagnostics);
            if let Some(note) = report.held_back_note() {
                ui.note(&note);
            }
            let mut out = ui.styled_stdout();
            present::check::summary(&mut out, &report)?;
            out.flush()?;
        }
        LintFormat::Json => ui.write_tree(&report.tree(&fleet.files), Format::Json)?,
        LintFormat::Short | LintFormat::Github => {
            let prefix = path_prefix(reader.root());
            let out = ui.stdout();
            for d in &report.diagnostics {
                let line = if args.format == LintFormat::Short {
                    oneline::short(&fleet.files, d, &prefix)
                } else {
                    oneline::github(&fleet.files, d, &prefix)
                };
                writeln!(out, "{line}")?;
            }
            let summary = present::to_string(|w| present::check::summary(w, &report));
            ui.status(summary.trim_end());
        }
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
