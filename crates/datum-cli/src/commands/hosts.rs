//! `datum hosts`: the hosts a label selector matches, with their labels.

use std::io::Write;

use datum_core::present::hosts;
use datum_core::selector::{Selector, hosts_tree};

use super::{ReportFormat, require_carried, warn_load_errors};
use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// List the hosts a selector matches, with their labels.
///
/// A host matches when every requirement holds: `role=web`, `role!=web`,
/// `role in (web,cache)`, `role notin (db)`, `role` (has the key), `!role`;
/// a comma or a space between requirements; values may be globs
/// (`datum/host=web-*`). Without a selector, every host. A key or value
/// that no host carries is an error that names the nearest one hosts do
/// carry, since it can only be a typo.
///
/// Exit status: 0 when some host matches; 1 when none does (with a note on
/// stderr, as grep does), or a label is not carried; 64 for a malformed
/// selector.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Requirements every listed host must meet: `role=web site!=paris`.
    #[arg(value_name = "SELECTOR", add = clap_complete::ArgValueCompleter::new(super::completions::selector_terms))]
    selector: Vec<String>,
    /// Print the host names only, one a line (for xargs).
    #[arg(long, conflicts_with = "format")]
    names: bool,
    /// The output format: one aligned line per host, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let selector = Selector::parse(&args.selector)?;
    let (fleet, _) = root::open(ui, settings)?;
    warn_load_errors(ui, &fleet);
    require_carried(&fleet, &selector)?;
    let hosts = selector.hosts(&fleet);
    match args.format {
        ReportFormat::Text => {
            // Stdout flushes at each newline; the text goes line by line.
            let mut out = ui.styled_stdout();
            if args.names {
                for &h in &hosts {
                    datum_core::printable::write_line(&mut out, &fleet.host(h).name)?;
                }
            } else {
                hosts::write(&mut out, &fleet, &hosts)?;
            }
            out.flush()?;
        }
        ReportFormat::Json => {
            ui.write_tree(&hosts_tree(&fleet, &selector, &hosts), Format::Json)?
        }
    }
    ui.flush()?;
    if hosts.is_empty() {
        ui.note(&if selector.is_empty() {
            "the fleet has no hosts".to_owned()
        } else {
            format!("no host matches `{}`", selector.text())
        });
        return Ok(Status::FAILED);
    }
    Ok(Status::OK)
}
