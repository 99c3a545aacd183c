//! `datum init [DIR]`: a minimal fleet that checks clean, to start from.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use datum_core::emit;
use datum_core::hint::{Fault, Hinted};
use datum_core::json_schema;

use crate::command_error::{FileError, Result, from_hinted};
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::Ui;

/// Create a minimal fleet: datum.yaml declaring labels, a base layer, a
/// role layer and one host, each with the modeline that points editors at
/// the schema, which is written beside them (datum.schema.json).
///
/// The fleet passes `datum check --deny-warnings` as written. DIR (by
/// default the current directory) is created when missing; a directory
/// holding anything but `.git` is refused unless --force, and no existing
/// file is ever overwritten.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to create the fleet.
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Write into a directory that already holds files (existing files are
    /// still never overwritten).
    #[arg(long)]
    force: bool,
}

/// The schema file every starter document's modeline names.
pub const SCHEMA_FILE: &str = "datum.schema.json";

/// The starter files: path relative to the fleet root, and text (each
/// document gets its modeline on top when written).
const FILES: &[(&str, &str)] = &[
    (
        "datum.yaml",
        "# The fleet root: datum finds the fleet by this file.
datum: v1alpha1
type: Fleet
name: my-fleet
# Declared labels: a typo in a host or a matcher is an error, not a layer
# that silently matches nothing.
labels:
  role: [web]
",
    ),
    (
        "base/layer.yaml",
        "# What every host gets. Higher precedence wins: base 0, environment 10,
# site 20, role 30, host 100 by convention.
datum: v1alpha1
type: Layer
name: base
precedence: 0
match: {}
resources:
  File[motd]:
    path: /etc/motd
    owner: root
    group: root
    mode: \"0644\"
    content: |
      This host is managed by Datum; local changes are overwritten.
",
    ),
    (
        "roles/web/layer.yaml",
        "# What hosts labelled role=web get, on top of base.
datum: v1alpha1
type: Layer
name: role-web
precedence: 30
match:
  labels:
    role: web
resources:
  Package[nginx]:
    ensure: installed
  Service[nginx]:
    ensure: running
    enabled: true
    requires: Package[nginx]
",
    ),
    (
        "hosts/web-001.yaml",
        "# A host: its name and labels. Layers match hosts by these labels.
datum: v1alpha1
type: Host
name: web-001
labels:
  role: web
",
    ),
];

/// A starter file's text with the modeline naming the schema file at the
/// fleet root, relative to the file (as the YAML language server reads it).
fn with_modeline(path: &str, text: &str) -> String {
    let up = "../".repeat(path.matches('/').count());
    format!("# yaml-language-server: $schema={up}{SCHEMA_FILE}\n{text}")
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    let dir = &args.dir;
    if dir.exists() && !dir.is_dir() {
        return Err(InitError::NotADirectory(dir.clone()).into());
    }
    let occupied = occupied(dir).map_err(FileError::of("read", dir))?;
    if !occupied.is_empty() && !args.force {
        return Err(InitError::NotEmpty {
            dir: dir.clone(),
            holds: names(&occupied),
        }
        .into());
    }
    let clashes: Vec<String> = FILES
        .iter()
        .map(|(path, _)| path.to_string())
        .chain([SCHEMA_FILE.to_owned()])
        .filter(|path| dir.join(path).symlink_metadata().is_ok())
        .collect();
    if !clashes.is_empty() {
        return Err(InitError::Clash {
            dir: dir.clone(),
            holds: names(&clashes),
        }
        .into());
    }
    for (path, text) in FILES {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(FileError::of("create", parent))?;
        }
        fs::write(&target, with_modeline(path, text)).map_err(FileError::of("write", &target))?;
        ui.detail(&format!("wrote {}", target.display()));
    }
    let mut schema = Vec::new();
    emit::write_json(&mut schema, &json_schema::schema())?;
    let target = dir.join(SCHEMA_FILE);
    fs::write(&target, schema).map_err(FileError::of("write", &target))?;
    ui.detail(&format!("wrote {}", target.display()));
    let here = dir.as_os_str() == ".";
    let (shown, fleet) = if here {
        ("the current directory".to_owned(), String::new())
    } else {
        let d = dir.display().to_string();
        (d.clone(), format!(" --fleet {d}"))
    };
    ui.status(&format!(
        "created a fleet in {shown}: {}",
        FILES
            .iter()
            .map(|(p, _)| *p)
            .chain([SCHEMA_FILE])
            .collect::<Vec<_>>()
            .join(", ")
    ));
    ui.status(&format!(
        "next: `datum check{fleet}`, then `datum render web-001{fleet}`"
    ));
    Ok(Status::OK)
}

/// The names in `dir` other than `.git` (a repository made first is no
/// reason to refuse), sorted; none when `dir` does not exist.
fn occupied(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other?,
    };
    let mut names = Vec::new();
    for entry in entries {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name != ".git" {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// `a`, `b` and 3 more.
fn names(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut out = items
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        out.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    out
}

/// Why no fleet was created. Nothing is written before any of these.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{} is not empty (it holds {holds})", dir.display())]
    NotEmpty { dir: PathBuf, holds: String },
    #[error("{} already holds {holds}; nothing was written", dir.display())]
    Clash { dir: PathBuf, holds: String },
}

from_hinted!(InitError);

impl Hinted for InitError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self {
            InitError::NotADirectory(_) => return None,
            InitError::NotEmpty { .. } => {
                "pass --force to add the fleet's files beside what is there, or name a new directory: datum init DIR"
            }
            InitError::Clash { .. } => {
                "datum init never overwrites a file: move those away, or start in a new directory"
            }
        };
        Some(hint.into())
    }

    fn fault(&self) -> Fault {
        match self {
            InitError::NotADirectory(_) => Fault::Usage,
            _ => Fault::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modeline_names_the_schema_relative_to_each_file() {
        assert!(
            with_modeline("datum.yaml", "x")
                .starts_with("# yaml-language-server: $schema=datum.schema.json\n")
        );
        assert!(
            with_modeline("roles/web/layer.yaml", "x")
                .starts_with("# yaml-language-server: $schema=../../datum.schema.json\n")
        );
    }

    #[test]
    fn long_lists_of_names_are_cut() {
        let items: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(names(&items), "`a`, `b`, `c` and 2 more");
        assert_eq!(names(&items[..1]), "`a`");
    }
}
