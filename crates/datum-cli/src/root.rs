//! Finding the fleet: `--fleet DIR` or `DATUM_FLEET`, else the nearest
//! directory holding datum.yaml, from the current directory up.

use std::path::{Path, PathBuf};

use datum_core::fleet::Fleet;
use datum_core::loader;
use datum_core::reader::DirReader;

use crate::exit::{Error, Result};

/// The fleet root to use.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        if !dir.is_dir() {
            return Err(
                Error::usage(format!("{} is not a directory", dir.display()))
                    .hint("--fleet (or DATUM_FLEET) names the directory holding datum.yaml"),
            );
        }
        if !dir.join("datum.yaml").is_file() {
            return Err(
                Error::usage(format!("{} holds no datum.yaml", dir.display()))
                    .hint("--fleet (or DATUM_FLEET) names the directory holding datum.yaml"),
            );
        }
        return Ok(dir.to_path_buf());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Error::usage(format!("cannot read the current directory: {e}")))?;
    let mut dir: &Path = &cwd;
    loop {
        if dir.join("datum.yaml").is_file() {
            return Ok(dir.to_path_buf());
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => {
                return Err(
                    Error::usage("no datum.yaml in this directory or any parent")
                        .hint("run datum inside a fleet repository, or pass --fleet DIR"),
                );
            }
        }
    }
}

/// Loads the fleet at the root `find` gives.
pub fn load(explicit: Option<&Path>) -> Result<(Fleet, DirReader)> {
    let root = find(explicit)?;
    let reader = DirReader::new(&root).map_err(|e| Error::failed(e.to_string()))?;
    let fleet = loader::load(&reader).map_err(|e| Error::failed(e.to_string()))?;
    Ok((fleet, reader))
}
