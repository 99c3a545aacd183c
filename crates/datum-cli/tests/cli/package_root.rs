//! What the package tests under `--root` share (apt, rpm, pacman): a
//! fleet of one host, `datum apply --root`, the statuses of a JSON report,
//! and a snapshot of a root's files to show `--noop` and a settled run
//! touch nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{Run, run_in};

/// `datum apply --root ROOT ARGS` in `fleet`.
pub(crate) fn apply(fleet: &Path, root: &Path, args: &[&str]) -> Run {
    let mut all = vec!["apply", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    run_in(fleet, &all)
}

/// A fleet of one host, `host`, whose one layer declares `resources`.
pub(crate) fn fleet(dir: &Path, host: &str, resources: &str) {
    fs::create_dir_all(dir.join("hosts")).unwrap();
    fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: t\n",
    )
    .unwrap();
    fs::write(
        dir.join(format!("hosts/{host}.yaml")),
        format!("datum: v1alpha1\ntype: Host\nname: {host}\n"),
    )
    .unwrap();
    fs::write(
        dir.join("layer.yaml"),
        format!(
            "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
        ),
    )
    .unwrap();
}

/// Files by path, with their size and modification time.
pub(crate) type Tree = BTreeMap<PathBuf, (u64, std::time::SystemTime)>;

/// Every file under `dir` with its size and modification time, but those
/// whose name ends with one of `skip`.
pub(crate) fn tree(dir: &Path, skip: &[&str]) -> Tree {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.path().symlink_metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if !skip.iter().any(|s| name.ends_with(s)) {
                out.insert(e.path(), (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

/// Each resource's id and status in apply's JSON report.
pub(crate) fn statuses(json: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The reason apply's JSON report gives for resource `index` (in order).
pub(crate) fn reason(json: &str, index: usize) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["resources"][index]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("resource {index} has no reason: {json}"))
        .to_owned()
}
