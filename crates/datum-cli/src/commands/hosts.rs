//! `datum hosts`: the hosts a label selector matches, with their labels.

use std::io::Write;

use datum_core::emit;
use datum_core::selector::{Selector, hosts_text, hosts_tree};

use super::{ReportFormat, require_carried, selector_error, warn_load_errors};
use crate::GlobalArgs;
use crate::exit::{Result, Status};
use crate::root;

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
    format: ReportFormat,
}

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    let selector = Selector::parse(&args.selector).map_err(selector_error)?;
    let (fleet, _) = root::load(global.fleet.as_deref())?;
    warn_load_errors(&fleet);
    require_carried(&fleet, &selector)?;
    let hosts = selector.hosts(&fleet);
    let mut out = std::io::stdout().lock();
    match args.format {
        ReportFormat::Text => out.write_all(hosts_text(&fleet, &hosts).as_bytes())?,
        ReportFormat::Json => emit::write_json(&mut out, &hosts_tree(&fleet, &selector, &hosts))?,
    }
    out.flush()?;
    Ok(Status::Ok)
}
