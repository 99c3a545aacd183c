//! `datum facts`: what this host observes about itself.

use std::io::Write;
use std::path::PathBuf;

use datum_apply::Root;
use datum_apply::facts::Facts;

use super::ReportFormat;
use super::apply::root_dir;
use crate::command_error::Result;
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Print what this host observes: its OS and release (from os-release),
/// architecture, kernel, virtualization, CPUs and memory.
///
/// These are the facts a label can be tied to in datum.yaml
/// (`os: {values: [debian-12, debian-13], fact: os}`): apply and the agent
/// refuse a host whose declared label disagrees with what it observes. The
/// fleet is not read.
///
/// With --root DIR, the OS release is the tree's (DIR/etc/os-release, else
/// DIR/usr/lib/os-release, links followed inside DIR) and the other facts
/// are the running machine's; the output says which is which.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read the OS release from DIR, as `datum apply --root DIR` does.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The output format: the facts aligned under where they come from, or
    /// one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    let root = match &args.root {
        Some(dir) => Root::at(root_dir(dir)?),
        None => Root::system(),
    };
    let facts = Facts::observe(&root);
    match args.format {
        ReportFormat::Text => {
            let mut out = ui.styled_stdout();
            facts.write(&mut out)?;
            out.flush()?;
        }
        ReportFormat::Json => ui.write_tree(&facts.document(), Format::Json)?,
    }
    ui.flush()?;
    Ok(Status::OK)
}
