//! Finding the fleet: `--fleet DIR` or `DATUM_FLEET`, else the nearest
//! directory holding datum.yaml, from the current directory up.

use std::path::{Path, PathBuf};
use std::time::Instant;

use datum_core::report::count;

use datum_core::fleet::Fleet;
use datum_core::loader;
use datum_core::reader::DirReader;

use crate::GlobalArgs;
use crate::command_error::{CommandError, Result};
use crate::ui::Ui;

/// The fleet root to use.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        if !dir.is_dir() {
            return Err(
                CommandError::usage(format!("{} is not a directory", dir.display()))
                    .hint("--fleet (or DATUM_FLEET) names the directory holding datum.yaml"),
            );
        }
        if !dir.join("datum.yaml").is_file() {
            return Err(
                CommandError::usage(format!("{} holds no datum.yaml", dir.display()))
                    .hint("--fleet (or DATUM_FLEET) names the directory holding datum.yaml; `datum init DIR` creates a fleet"),
            );
        }
        return Ok(dir.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| {
        CommandError::usage(format!("cannot read the current directory: {e}")).with_source(e)
    })?;
    let mut dir: &Path = &cwd;
    loop {
        if dir.join("datum.yaml").is_file() {
            return Ok(dir.to_path_buf());
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => {
                return Err(
                    CommandError::usage("no datum.yaml in this directory or any parent")
                        .hint("run datum inside a fleet repository, or pass --fleet DIR")
                        .hint("to start a fleet here, run `datum init`"),
                );
            }
        }
    }
}

/// The fleet root, said under `-v`.
pub fn locate(ui: &mut Ui, global: &GlobalArgs) -> Result<PathBuf> {
    let root = find(global.fleet.as_deref())?;
    let shown = root.canonicalize().unwrap_or_else(|_| root.clone());
    ui.detail(&format!("fleet root: {}", shown.display()));
    Ok(root)
}

/// Loads the fleet for a command; under `-v`, says where it was found and
/// what was loaded, how fast.
pub fn open(ui: &mut Ui, global: &GlobalArgs) -> Result<(Fleet, DirReader)> {
    let root = locate(ui, global)?;
    let started = Instant::now();
    let reader = DirReader::new(&root)?;
    let fleet = loader::load(&reader)?;
    ui.detail(&format!(
        "loaded {} document files: {}, {}, {} in {} ms",
        fleet.files.len(),
        count(fleet.hosts.len(), "host"),
        count(fleet.layers.len(), "layer"),
        count(
            fleet.diagnostics.iter().filter(|d| d.is_error()).count(),
            "error"
        ),
        started.elapsed().as_millis()
    ));
    Ok((fleet, reader))
}

/// Loads the fleet at the root `find` gives.
pub fn load(explicit: Option<&Path>) -> Result<(Fleet, DirReader)> {
    let root = find(explicit)?;
    let reader = DirReader::new(&root)?;
    let fleet = loader::load(&reader)?;
    Ok((fleet, reader))
}
