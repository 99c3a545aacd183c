//! Fleets shaped to make Datum slow or large, one per directory: each must
//! be checked in under 2 s and 200 MiB (`datum check`, release build).
//!
//! - `long-label`: a 400 KB fleet whose one host carries a 200,000-character
//!   label value and whose layer asks for one a character longer, so the
//!   "did you mean" search compares the two (quadratic, unbounded: 85 s).
//! - `overlap`: 1,500 layers of one precedence setting one field
//!   differently, each for its own label, so every pair could meet on a
//!   host (one warning per pair: 1.1 million warnings, 495 MB of text).
//! - `bad-labels`: a host with 100,000 label keys that are not label keys
//!   (one error each: 20 MB of text).
//! - `payload`: a 40 MB YAML payload no `source` names beside a small fleet
//!   (it must not count against the document size limit, nor be parsed).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// The shapes, by directory name.
pub const SHAPES: [&str; 4] = ["long-label", "overlap", "bad-labels", "payload"];

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: hostile\n";

/// Writes one shape into `dir` (created).
pub fn generate(shape: &str, dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("datum.yaml"), FLEET)?;
    match shape {
        "long-label" => long_label(dir),
        "overlap" => overlap(dir),
        "bad-labels" => bad_labels(dir),
        "payload" => payload(dir),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no shape `{other}`; the shapes are {}", SHAPES.join(", ")),
        )),
    }
}

fn long_label(dir: &Path) -> io::Result<()> {
    let value = "a".repeat(200_000);
    let mut hosts =
        format!("datum: v1alpha1\ntype: Host\nname: long\nlabels:\n  role: web\n  note: {value}\n");
    // Enough ordinary hosts to make the fleet 400 KB.
    for i in 0..2_000 {
        write!(
            hosts,
            "---\ndatum: v1alpha1\ntype: Host\nname: web-{i:04}\nlabels:\n  role: web\n  note: n{i}\n"
        )
        .unwrap();
    }
    fs::write(dir.join("hosts.yaml"), hosts)?;
    fs::write(
        dir.join("layer.yaml"),
        format!(
            "datum: v1alpha1\ntype: Layer\nname: typo\nprecedence: 10\nmatch:\n  labels:\n    note: {value}b\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: hi\n"
        ),
    )
}

fn overlap(dir: &Path) -> io::Result<()> {
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n  role: db\n",
    )?;
    fs::create_dir_all(dir.join("layers"))?;
    for i in 0..1_500 {
        fs::write(
            dir.join(format!("layers/{i:04}.yaml")),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l{i}\nprecedence: 30\nmatch:\n  labels:\n    tier{i}: x\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: \"{i}\"\n"
            ),
        )?;
    }
    Ok(())
}

fn bad_labels(dir: &Path) -> io::Result<()> {
    let mut text = String::from("datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n");
    for i in 0..100_000 {
        writeln!(text, "  \"bad key {i}\": x").unwrap();
    }
    fs::write(dir.join("hosts.yaml"), text)
}

fn payload(dir: &Path) -> io::Result<()> {
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n  role: web\n",
    )?;
    fs::create_dir_all(dir.join("files"))?;
    let mut big = String::with_capacity(41 << 20);
    let mut i = 0;
    while big.len() < 40 << 20 {
        writeln!(big, "key{i}: {}", "v".repeat(100)).unwrap();
        i += 1;
    }
    fs::write(dir.join("files/big.yaml"), big)
}
