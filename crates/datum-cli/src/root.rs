//! Finding the fleet: `--fleet DIR` or `DATUM_FLEET`, else the nearest
//! directory holding datum.yaml, from the current directory up.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use datum_core::fleet::Fleet;
use datum_core::hint::{Fault, Hinted};
use datum_core::loader;
use datum_core::reader::DirReader;
use datum_core::report::count;

use crate::command_error::{Result, from_hinted};
use crate::settings::Settings;
use crate::ui::Ui;

/// Why there is no fleet to work on. Always bad usage: the command line
/// (or where it was run) names no fleet.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{} holds no datum.yaml", .0.display())]
    NoFleetFile(PathBuf),
    #[error("cannot read the current directory: {0}")]
    NoCwd(String),
    #[error("no datum.yaml in this directory or any parent")]
    NotFound {
        /// The nearest directory on the way up holding a `datum.yml`.
        yml: Option<PathBuf>,
    },
}

from_hinted!(FindError);

impl Hinted for FindError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self {
            FindError::NotADirectory(_) => {
                "--fleet (or DATUM_FLEET) names the directory holding datum.yaml"
            }
            FindError::NoFleetFile(_) => {
                "--fleet (or DATUM_FLEET) names the directory holding datum.yaml; `datum init DIR` creates a fleet"
            }
            FindError::NoCwd(_) => return None,
            FindError::NotFound { .. } => {
                "run datum inside a fleet repository, or pass --fleet DIR"
            }
        };
        Some(hint.into())
    }

    fn more_hints(&self) -> Vec<Cow<'static, str>> {
        let yml = |dir: &Path| -> Cow<'static, str> {
            format!(
                "{} is there: the fleet file is named datum.yaml, with an `a` (rename it)",
                dir.join("datum.yml").display()
            )
            .into()
        };
        match self {
            FindError::NotFound { yml: Some(dir) } => vec![yml(dir)],
            FindError::NotFound { yml: None } => {
                vec!["to start a fleet here, run `datum init`".into()]
            }
            FindError::NoFleetFile(dir) if dir.join("datum.yml").is_file() => vec![yml(dir)],
            _ => Vec::new(),
        }
    }

    fn fault(&self) -> Fault {
        Fault::Usage
    }
}

/// The fleet root to use: `--fleet` (or `DATUM_FLEET`), else the nearest
/// directory holding datum.yaml from the current one up.
pub fn find(settings: &Settings) -> Result<PathBuf> {
    Ok(find_root(settings)?)
}

fn find_root(settings: &Settings) -> std::result::Result<PathBuf, FindError> {
    if let Some(dir) = &settings.fleet {
        if !dir.is_dir() {
            return Err(FindError::NotADirectory(dir.clone()));
        }
        if !dir.join("datum.yaml").is_file() {
            return Err(FindError::NoFleetFile(dir.clone()));
        }
        return Ok(dir.clone());
    }
    let cwd = match &settings.cwd {
        Ok(cwd) => cwd,
        Err(e) => return Err(FindError::NoCwd(e.to_string())),
    };
    let mut dir: &Path = cwd;
    let mut yml = None;
    loop {
        if dir.join("datum.yaml").is_file() {
            return Ok(dir.to_path_buf());
        }
        if yml.is_none() && dir.join("datum.yml").is_file() {
            yml = Some(dir.to_path_buf());
        }
        dir = dir
            .parent()
            .ok_or(FindError::NotFound { yml: yml.clone() })?;
    }
}

/// The fleet root, said under `-v`.
pub fn locate(ui: &mut Ui, settings: &Settings) -> Result<PathBuf> {
    let root = find(settings)?;
    let shown = root.canonicalize().unwrap_or_else(|_| root.clone());
    ui.detail(&format!("fleet root: {}", shown.display()));
    Ok(root)
}

/// Loads the fleet for a command; under `-v`, says where it was found and
/// what was loaded, how fast.
pub fn open(ui: &mut Ui, settings: &Settings) -> Result<(Fleet, DirReader)> {
    let root = locate(ui, settings)?;
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
pub fn load(settings: &Settings) -> Result<(Fleet, DirReader)> {
    let root = find(settings)?;
    let reader = DirReader::new(&root)?;
    let fleet = loader::load(&reader)?;
    Ok((fleet, reader))
}
