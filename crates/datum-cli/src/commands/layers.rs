//! `datum layers`: the map of the fleet, every layer in fold order.

use std::io::Write;

use datum_core::host;
use datum_core::layers::{layers, tree};
use datum_core::present::layers as text;

use super::{ReportFormat, warn_load_errors};
use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// List every layer in fold order: precedence, path, name, matcher, how
/// many hosts it reaches and the resources it declares.
///
/// Layers fold from the lowest precedence to the highest (equal
/// precedences by path), so a later row wins a field both set. A matcher
/// key with alternatives reads `role in (web,cache)`; a layer matching
/// every host reads `(every host)`. With --host, only the layers that host
/// matches, each with the labels that made it match.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the layers this host matches, and why.
    #[arg(long, value_name = "NAME", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// The output format: an aligned table, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let (fleet, _) = root::open(ui, settings)?;
    warn_load_errors(ui, &fleet);
    let host = match &args.host {
        Some(name) => Some(host::find(&fleet, name)?),
        None => None,
    };
    let lines = layers(&fleet, host);
    match args.format {
        ReportFormat::Text => {
            let mut out = ui.styled_stdout();
            text::write(&mut out, &lines, host.is_some())?;
            out.flush()?;
        }
        ReportFormat::Json => ui.write_tree(&tree(&fleet, host, &lines), Format::Json)?,
    }
    ui.flush()?;
    Ok(Status::OK)
}
