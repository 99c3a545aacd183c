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
/// A host matches when it carries every KEY=VALUE given, as a layer's
/// matcher does; `datum/host=NAME` names one host. Without a selector,
/// every host. A key or value that no host carries is an error that names
/// the nearest one hosts do carry, since it can only be a typo.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Labels every listed host must carry: `role=web site=london`.
    #[arg(value_name = "KEY=VALUE")]
    selector: Vec<String>,
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
            hosts::write(&mut out, &fleet, &hosts)?;
            out.flush()?;
        }
        ReportFormat::Json => {
            ui.write_tree(&hosts_tree(&fleet, &selector, &hosts), Format::Json)?
        }
    }
    ui.flush()?;
    Ok(Status::OK)
}
