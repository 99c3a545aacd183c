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
//! control character cannot add lines or act on the terminal. What a
//! change adds, takes away or changes is tagged so, as is each section's
//! heading by what it says of its hosts.

use std::io::{self, Write};

use super::diagnostic::draw;
use super::{Styled, Tag, Text, line, table};
use crate::diagnostic::Diagnostic;
use crate::diff::{
    FieldDiff, FieldSide, FleetDiff, Group, Kind, LabelChange, ManifestDiff, Presence,
    ResourceDiff, Shown, Side, failures,
};
use crate::fleet::{Fleet, HostId};
use crate::printable::escape;
use crate::report::{display_value, host_list};

/// How many hex digits of a payload digest are shown.
const DIGEST_SHOWN: usize = 12;

/// Draws the diff, each line ending with a newline. `old` and `new` say
/// what each side is (`HEAD (3f2a9c1)`, `working tree`).
pub fn write(w: &mut dyn Styled, d: &FleetDiff<'_>, old: &str, new: &str) -> io::Result<()> {
    line(w, "", format!("old: {old}"))?;
    line(w, "", format!("new: {new}"))?;
    line(w, "", d.summary())?;
    if let Some(side) = d.new
        && !d.added.is_empty()
    {
        writeln!(w)?;
        line(w, "", Text::tagged(Tag::Added, "added"))?;
        added(w, side, &d.added)?;
    }
    if let Some(side) = d.old
        && !d.removed.is_empty()
    {
        writeln!(w)?;
        line(w, "", Text::tagged(Tag::Removed, "removed"))?;
        for &h in &d.removed {
            line(w, "  ", &*side.fleet.host(h).name)?;
        }
    }
    for g in &d.groups {
        writeln!(w)?;
        group(w, d, g)?;
    }
    Ok(())
}

/// [`write()`] into a `String`, without tags, for tests and tools that keep
/// the text.
pub fn render(d: &FleetDiff<'_>, old: &str, new: &str) -> String {
    super::to_string(|out| write(out, d, old, new))
}

fn added(w: &mut dyn Styled, side: Side<'_>, hosts: &[HostId]) -> io::Result<()> {
    let fleet = side.fleet;
    for (text, &h) in super::hosts::lines(fleet, hosts).into_iter().zip(hosts) {
        line(w, "  ", text)?;
        let failures = failures(side, h);
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

/// The words a section starts with, and what they say of its hosts.
fn heading(d: &FleetDiff<'_>, g: &Group<'_>) -> (&'static str, Tag) {
    let o = &d.outcomes[g.outcome];
    match d.group_kind(g) {
        Kind::Breaks if o.old_fails => ("fails with new errors", Tag::Failure),
        Kind::Breaks => ("fails to resolve now", Tag::Failure),
        Kind::Changes => ("changed", Tag::Changed),
        Kind::Fixes if o.new_fails => ("fails with fewer errors", Tag::Failure),
        Kind::Fixes => ("resolves now", Tag::Good),
        Kind::StillFails => ("still fails", Tag::Failure),
    }
}

fn group(w: &mut dyn Styled, d: &FleetDiff<'_>, g: &Group<'_>) -> io::Result<()> {
    let (words, tag) = heading(d, g);
    let head = if g.hosts.len() == 1 {
        Text::tagged(tag, words).and(": ")
    } else {
        Text::tagged(tag, format!("{words} ({} hosts)", g.hosts.len())).and(": ")
    };
    line(w, "", head.and_tagged(Tag::Hosts, host_list(&g.hosts)))?;
    labels(w, &g.labels)?;
    let o = &d.outcomes[g.outcome];
    if let Some(new) = d.new {
        for f in &o.introduced {
            failure_lines(w, new.fleet, &f.diagnostic(new.fleet, &g.hosts), 2)?;
        }
        for f in &o.persisting {
            let message = f.diagnostic(new.fleet, &g.hosts).message;
            line(
                w,
                "  ",
                Text::tagged(Tag::Failure, "still:").and(format!(" {message}")),
            )?;
        }
    }
    if let Some(old) = d.old {
        for f in &o.fixed {
            let message = f.diagnostic(old.fleet, &g.hosts).message;
            line(
                w,
                "  ",
                Text::tagged(Tag::Good, "fixed:").and(format!(" {message}")),
            )?;
        }
    }
    manifest(w, &o.manifest)
}

/// `old → new`, the old side tagged removed and the new added.
fn change(old: String, new: String) -> Text {
    Text::tagged(Tag::Removed, old)
        .and(" → ")
        .and_tagged(Tag::Added, new)
}

fn labels(w: &mut dyn Styled, changes: &[LabelChange]) -> io::Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    writeln!(w, "  labels")?;
    let rows: Vec<Vec<Text>> = changes
        .iter()
        .map(|c| {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
            vec![
                Text::from(c.key.clone()),
                change(side(&c.old), side(&c.new)),
            ]
        })
        .collect();
    table(w, "    ", &rows)
}

fn manifest(w: &mut dyn Styled, m: &ManifestDiff) -> io::Result<()> {
    if !m.layers_added.is_empty() || !m.layers_removed.is_empty() || m.layers_order.is_some() {
        writeln!(w, "  layers")?;
        for l in &m.layers_added {
            line(w, "    ", Text::tagged(Tag::Added, format!("+ {l}")))?;
        }
        for l in &m.layers_removed {
            line(w, "    ", Text::tagged(Tag::Removed, format!("- {l}")))?;
        }
        if let Some(order) = &m.layers_order {
            let order = change(order.old.join(", "), order.new.join(", "));
            line(w, "    ", Text::from("order  ").then("", &order))?;
        }
    }
    for r in &m.resources {
        resource(w, r)?;
    }
    Ok(())
}

fn resource(w: &mut dyn Styled, r: &ResourceDiff) -> io::Result<()> {
    let mut head = vec![r.id.clone()];
    head.extend(r.summary.clone());
    if !r.layers.is_empty() {
        head.push(format!("from {}", r.layers.join(", ")));
    }
    let head = head.join("  ");
    let text = match r.presence {
        Presence::Added => Text::tagged(Tag::Added, format!("+ {head}")),
        Presence::Removed => Text::tagged(Tag::Removed, format!("- {head}")),
        Presence::Changed => Text::tagged(Tag::Changed, "~").and(format!(" {head}")),
    };
    line(w, "  ", text)?;
    let rows: Vec<Vec<Text>> = r.fields.iter().map(|f| field_row(f, r.presence)).collect();
    table(w, "      ", &rows)
}

fn field_row(f: &FieldDiff, presence: Presence) -> Vec<Text> {
    let field = Text::from(f.field.to_owned());
    match (&f.old.value, &f.new.value) {
        (Shown::Absent, Shown::Entry(id)) => {
            vec![
                field,
                Text::from(format!("+ {id}")),
                f.new.layers.join(", ").into(),
            ]
        }
        (Shown::Entry(id), Shown::Absent) => {
            vec![
                field,
                Text::from(format!("- {id}")),
                f.old.layers.join(", ").into(),
            ]
        }
        _ if presence == Presence::Added => {
            vec![
                field,
                shown(&f.new.value).into(),
                f.new.layers.join(", ").into(),
            ]
        }
        (Shown::Sensitive, Shown::Sensitive) => {
            vec![
                field,
                Text::from("(sensitive) changed"),
                layers(&f.old, &f.new).into(),
            ]
        }
        (a, b) => vec![
            field,
            change(shown(a), shown(b)),
            layers(&f.old, &f.new).into(),
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
    w: &mut dyn Styled,
    fleet: &Fleet,
    d: &Diagnostic,
    indent: usize,
) -> io::Result<()> {
    let mut out = Indented {
        inner: w,
        pad: " ".repeat(indent),
        line: Vec::new(),
    };
    draw(d, &fleet.files, &mut out)?;
    if out.line.is_empty() {
        return Ok(());
    }
    out.end_line()?;
    out.inner.write_all(b"\n")
}

/// A writer putting `pad` before every line it is given, each line's
/// trailing blanks left out, and everything escaped once more: a drawing
/// embedded in another report. It shows no tags of its own making, so a
/// snippet is drawn plain, its severity tagged.
struct Indented<'w> {
    inner: &'w mut dyn Styled,
    pad: String,
    /// The pieces of the line being written.
    line: Vec<(Option<Tag>, String)>,
}

impl Indented<'_> {
    fn push(&mut self, tag: Option<Tag>, text: &str) -> io::Result<()> {
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            self.line.push((tag, rest[..end].to_owned()));
            self.end_line()?;
            self.inner.write_all(b"\n")?;
            rest = &rest[end + 1..];
        }
        if !rest.is_empty() {
            self.line.push((tag, rest.to_owned()));
        }
        Ok(())
    }

    /// Writes the line so far (without its line end), if it has any text.
    fn end_line(&mut self) -> io::Result<()> {
        let pieces = std::mem::take(&mut self.line);
        let whole: String = pieces.iter().map(|(_, t)| t.as_str()).collect();
        let mut left = whole.trim_end().len();
        if left == 0 {
            return Ok(());
        }
        self.inner.write_all(self.pad.as_bytes())?;
        for (tag, text) in pieces {
            let text = &text[..text.len().min(left)];
            left -= text.len();
            self.inner.part(tag, &escape(text))?;
        }
        Ok(())
    }
}

impl Write for Indented<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.push(None, &String::from_utf8_lossy(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Styled for Indented<'_> {
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        self.push(Some(tag), text)
    }
}
