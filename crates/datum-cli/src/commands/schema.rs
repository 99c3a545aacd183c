//! `datum schema`: the JSON Schema editors check documents with.

use datum_core::json_schema;

use crate::command_error::Result;
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Print the JSON Schema (draft 2020-12) of Fleet, Host and Layer
/// documents, for editors.
///
/// Save it beside the fleet (`datum schema > datum.schema.json`) and point
/// the editor at it: a `# yaml-language-server: $schema=datum.schema.json`
/// line on top of a document, or VS Code's `yaml.schemas` setting. It is
/// generated from the resource types and fields this build of Datum reads,
/// so regenerate it after an upgrade.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ui: &mut Ui, _settings: &Settings, _args: Args) -> Result<Status> {
    ui.write_tree(&json_schema::schema(), Format::Json)?;
    ui.flush()?;
    Ok(Status::OK)
}
