//! A fleet diff as text, for reading in a pull request.
//!
//! ```text
//! old: HEAD (3f2a9c1)
//! new: working tree
//! 2 hosts change, 1 added, 0 removed, 2 unchanged
//!
//! added
//!   web-004  environment=production  role=web  site=london
//!
//! changed (2 hosts): web-002, web-003
//!   ~ File[nginx-config]  /etc/nginx/nginx.conf
//!       mode  0640 → 0644  roles/web
//! ```
//!
//! Hosts that change the same way share one section. A value's layers read
//! `roles/web` when the same layer is responsible on both sides, and
//! `roles/web → hosts/web-001` when responsibility moves. Sensitive content
//! prints as `(sensitive)`. An error is drawn as `datum check` draws it,
//! each place with its line, indented under its host or section. Every
//! line is escaped ([`crate::printable`]): a name or value holding a
//! control character cannot add lines or act on the terminal.

use std::io::{self, Write};

use super::{
    FieldDiff, FieldSide, FleetDiff, Group, Kind, LabelChange, ManifestDiff, Presence,
    ResourceDiff, Shown, Side,
};
use crate::diagnostic::Diagnostic;
use crate::fleet::{Fleet, HostId};
use crate::printable::write_line;
use crate::report::{align, display_value, host_list};
use crate::selector::host_lines;

/// How many hex digits of a payload digest are shown.
const DIGEST_SHOWN: usize = 12;

/// Draws the diff, each line ending with a newline. `old` and `new` say
/// what each side is (`HEAD (3f2a9c1)`, `working tree`).
pub fn write(w: &mut dyn Write, d: &FleetDiff<'_>, old: &str, new: &str) -> io::Result<()> {
    write_line(w, &format!("old: {old}"))?;
    write_line(w, &format!("new: {new}"))?;
    write_line(w, &d.summary())?;
    if let Some(side) = d.new
        && !d.added.is_empty()
    {
        writeln!(w, "\nadded")?;
        added(w, side, &d.added)?;
    }
    if let Some(side) = d.old
        && !d.removed.is_empty()
    {
        writeln!(w, "\nremoved")?;
        for &h in &d.removed {
            write_line(w, &format!("  {}", side.fleet.host(h).name))?;
        }
    }
    for g in &d.groups {
        writeln!(w)?;
        group(w, d, g)?;
    }
    Ok(())
}

/// [`write`] into a `String`, for tests and tools that keep the text.
pub fn render(d: &FleetDiff<'_>, old: &str, new: &str) -> String {
    let mut buf = Vec::new();
    write(&mut buf, d, old, new).expect("writing to memory does not fail");
    String::from_utf8(buf).expect("diff writes UTF-8")
}

fn added(w: &mut dyn Write, side: Side<'_>, hosts: &[HostId]) -> io::Result<()> {
    let fleet = side.fleet;
    for (line, &h) in host_lines(fleet, hosts).into_iter().zip(hosts) {
        write_line(w, &format!("  {line}"))?;
        let failures = super::failures(side, h);
        if !failures.is_empty() {
            let name = [&*fleet.host(h).name];
            writeln!(w, "    does not resolve")?;
            for f in &failures {
                failure_lines(w, fleet, &f.diagnostic(fleet, &name), 6)?;
            }
        }
    }
    Ok(())
}

/// The words a section starts with.
fn heading(d: &FleetDiff<'_>, g: &Group<'_>) -> &'static str {
    let o = &d.outcomes[g.outcome];
    match d.group_kind(g) {
        Kind::Breaks if o.old_fails => "fails with new errors",
        Kind::Breaks => "fails to resolve now",
        Kind::Changes => "changed",
        Kind::Fixes if o.new_fails => "fails with fewer errors",
        Kind::Fixes => "resolves now",
        Kind::StillFails => "still fails",
    }
}

fn group(w: &mut dyn Write, d: &FleetDiff<'_>, g: &Group<'_>) -> io::Result<()> {
    let hosts = if g.hosts.len() == 1 {
        g.hosts[0].to_owned()
    } else {
        format!("({} hosts): {}", g.hosts.len(), host_list(&g.hosts))
    };
    let sep = if g.hosts.len() == 1 { ": " } else { " " };
    write_line(w, &format!("{}{sep}{hosts}", heading(d, g)))?;
    labels(w, &g.labels)?;
    let o = &d.outcomes[g.outcome];
    if let Some(new) = d.new {
        for f in &o.introduced {
            failure_lines(w, new.fleet, &f.diagnostic(new.fleet, &g.hosts), 2)?;
        }
        for f in &o.persisting {
            let message = f.diagnostic(new.fleet, &g.hosts).message;
            write_line(w, &format!("  still: {message}"))?;
        }
    }
    if let Some(old) = d.old {
        for f in &o.fixed {
            let message = f.diagnostic(old.fleet, &g.hosts).message;
            write_line(w, &format!("  fixed: {message}"))?;
        }
    }
    manifest(w, &o.manifest)
}

fn labels(w: &mut dyn Write, changes: &[LabelChange]) -> io::Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    writeln!(w, "  labels")?;
    let rows: Vec<Vec<String>> = changes
        .iter()
        .map(|c| {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
            vec![
                c.key.clone(),
                format!("{} → {}", side(&c.old), side(&c.new)),
            ]
        })
        .collect();
    for l in align(&rows) {
        write_line(w, &format!("    {l}"))?;
    }
    Ok(())
}

fn manifest(w: &mut dyn Write, m: &ManifestDiff) -> io::Result<()> {
    if !m.layers_added.is_empty() || !m.layers_removed.is_empty() || m.layers_order.is_some() {
        writeln!(w, "  layers")?;
        for l in &m.layers_added {
            write_line(w, &format!("    + {l}"))?;
        }
        for l in &m.layers_removed {
            write_line(w, &format!("    - {l}"))?;
        }
        if let Some(order) = &m.layers_order {
            write_line(
                w,
                &format!(
                    "    order  {} → {}",
                    order.old.join(", "),
                    order.new.join(", ")
                ),
            )?;
        }
    }
    for r in &m.resources {
        resource(w, r)?;
    }
    Ok(())
}

fn resource(w: &mut dyn Write, r: &ResourceDiff) -> io::Result<()> {
    let sign = match r.presence {
        Presence::Added => "+",
        Presence::Removed => "-",
        Presence::Changed => "~",
    };
    let mut head = vec![format!("  {sign} {}", r.id)];
    head.extend(r.summary.clone());
    if !r.layers.is_empty() {
        head.push(format!("from {}", r.layers.join(", ")));
    }
    write_line(w, &head.join("  "))?;
    let rows: Vec<Vec<String>> = r.fields.iter().map(|f| field_row(f, r.presence)).collect();
    for l in align(&rows) {
        write_line(w, &format!("      {l}"))?;
    }
    Ok(())
}

fn field_row(f: &FieldDiff, presence: Presence) -> Vec<String> {
    let field = f.field.to_owned();
    match (&f.old.value, &f.new.value) {
        (Shown::Absent, Shown::Entry(id)) => {
            vec![field, format!("+ {id}"), f.new.layers.join(", ")]
        }
        (Shown::Entry(id), Shown::Absent) => {
            vec![field, format!("- {id}"), f.old.layers.join(", ")]
        }
        _ if presence == Presence::Added => {
            vec![field, shown(&f.new.value), f.new.layers.join(", ")]
        }
        (Shown::Sensitive, Shown::Sensitive) => {
            vec![
                field,
                "(sensitive) changed".to_owned(),
                layers(&f.old, &f.new),
            ]
        }
        (a, b) => vec![
            field,
            format!("{} → {}", shown(a), shown(b)),
            layers(&f.old, &f.new),
        ],
    }
}

fn shown(v: &Shown) -> String {
    match v {
        Shown::Absent => "(unset)".to_owned(),
        Shown::Value(v) => display_value(v),
        Shown::Entry(id) => id.clone(),
        Shown::Digest(sha) => sha.chars().take(DIGEST_SHOWN).collect(),
        Shown::Sensitive => "(sensitive)".to_owned(),
    }
}

/// `roles/web` when one layer is responsible on both sides (or only one
/// side has a layer), `roles/web → hosts/web-001` when it moves.
fn layers(old: &FieldSide, new: &FieldSide) -> String {
    let (a, b) = (old.layers.join(", "), new.layers.join(", "));
    if a == b || a.is_empty() {
        b
    } else if b.is_empty() {
        a
    } else {
        format!("{a} → {b}")
    }
}

/// An error drawn as `check` draws it (its table, each place with the
/// line it is on, notes, hint), every line indented by `indent` to sit
/// under its host or section. `fleet` is the side the error is on: the
/// lines shown are that side's text.
fn failure_lines(
    w: &mut dyn Write,
    fleet: &Fleet,
    d: &Diagnostic,
    indent: usize,
) -> io::Result<()> {
    let mut drawn = Vec::new();
    d.render(&fleet.files, false, &mut drawn)?;
    let pad = " ".repeat(indent);
    for line in String::from_utf8_lossy(&drawn).lines() {
        write_line(w, format!("{pad}{line}").trim_end())?;
    }
    Ok(())
}
