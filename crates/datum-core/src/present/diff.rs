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
//! A File's content that changes (inline `content`, a `template`'s
//! rendering, a `source` payload whose text the caller supplies) is drawn
//! as a unified diff under its resource, after the other fields; a
//! secret, sensitive content, binary or very large text stays one line.
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

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::diagnostic::draw;
use super::{Styled, Tag, Text, line, table, table_with, unified};
use crate::diagnostic::Diagnostic;
use crate::diff::{
    FieldDiff, FieldSide, FleetDiff, Group, Kind, LabelChange, ManifestDiff, Presence,
    ResourceDiff, Shown, Side, affected, failures, stat,
};
use crate::fleet::{Fleet, HostId};
use crate::printable::escape;
use crate::report::{count, display_value, host_list};
use crate::schema::Value;

/// How many hex digits of a payload digest are shown.
const DIGEST_SHOWN: usize = 12;

/// The bytes of `source` payloads, by SHA-256: what lets a payload change
/// be shown as a diff. A digest not here is shown as a digest.
pub type Payloads = BTreeMap<String, Vec<u8>>;

/// What the sides are called, and the payloads at hand.
struct Names<'a> {
    old: &'a str,
    new: &'a str,
    payloads: &'a Payloads,
}

/// Draws the diff, each line ending with a newline. `old` and `new` say
/// what each side is (`HEAD (3f2a9c1)`, `working tree`). Payload changes
/// are shown as digests: see [`write_with`].
pub fn write(w: &mut dyn Styled, d: &FleetDiff<'_>, old: &str, new: &str) -> io::Result<()> {
    write_with(w, d, old, new, &Payloads::new())
}

/// [`write()`], a payload change shown as a diff when both sides' bytes
/// are in `payloads` and are text.
pub fn write_with(
    w: &mut dyn Styled,
    d: &FleetDiff<'_>,
    old: &str,
    new: &str,
    payloads: &Payloads,
) -> io::Result<()> {
    let names = Names { old, new, payloads };
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
    for (g, hosts) in shown_groups(d, &names) {
        writeln!(w)?;
        group(w, d, g, &hosts, &names)?;
    }
    Ok(())
}

/// `--stat`: each layer's part in each resource's change, on how many
/// hosts, then the summary line.
pub fn write_stat(w: &mut dyn Styled, d: &FleetDiff<'_>) -> io::Result<()> {
    let rows: Vec<Vec<Text>> = stat(d)
        .into_iter()
        .map(|r| {
            vec![
                Text::from(r.layer),
                Text::from(r.what),
                Text::tagged(Tag::Hosts, count(r.hosts, "host")),
                Text::from(r.fields.join(", ")),
            ]
        })
        .collect();
    table(w, "", &rows)?;
    line(w, "", d.summary())
}

/// `--name-only`: the hosts a change touches, one a line.
pub fn write_names(w: &mut dyn Styled, d: &FleetDiff<'_>) -> io::Result<()> {
    for h in affected(d) {
        line(w, "", h)?;
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

/// The groups as shown, each with its hosts: groups that change and whose
/// changes draw the same (a template rendered apart on each host, whose
/// diff is the same) are shown once, with all their hosts, in name order.
fn shown_groups<'d, 'f>(d: &'d FleetDiff<'f>, names: &Names) -> Vec<(&'d Group<'f>, Vec<&'f str>)> {
    let mut out: Vec<(&Group<'f>, Vec<&'f str>)> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut merged = std::collections::BTreeSet::new();
    for g in &d.groups {
        if d.group_kind(g) != Kind::Changes {
            out.push((g, g.hosts.clone()));
            continue;
        }
        let drawn = super::to_string(|w| changes(w, d, g, names));
        match seen.get(&drawn) {
            Some(&i) => {
                out[i].1.extend(g.hosts.iter().copied());
                merged.insert(i);
            }
            None => {
                seen.insert(drawn, out.len());
                out.push((g, g.hosts.clone()));
            }
        }
    }
    // Sorted once each, not at every merge (which costs the square of the
    // hosts that share a section).
    for i in merged {
        out[i].1.sort_unstable();
    }
    out
}

fn group(
    w: &mut dyn Styled,
    d: &FleetDiff<'_>,
    g: &Group<'_>,
    hosts: &[&str],
    names: &Names,
) -> io::Result<()> {
    let (words, tag) = heading(d, g);
    let head = if hosts.len() == 1 {
        Text::tagged(tag, words).and(": ")
    } else {
        Text::tagged(tag, format!("{words} ({} hosts)", hosts.len())).and(": ")
    };
    line(w, "", head.and_tagged(Tag::Hosts, host_list(hosts)))?;
    changes(w, d, g, names)
}

/// What a group's hosts go through: labels, errors, the manifest.
fn changes(w: &mut dyn Styled, d: &FleetDiff<'_>, g: &Group<'_>, names: &Names) -> io::Result<()> {
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
    manifest(w, &o.manifest, names)
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

fn manifest(w: &mut dyn Styled, m: &ManifestDiff, names: &Names) -> io::Result<()> {
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
        resource(w, r, names)?;
    }
    Ok(())
}

fn resource(w: &mut dyn Styled, r: &ResourceDiff, names: &Names) -> io::Result<()> {
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
    let diffs: Vec<Option<String>> = r.fields.iter().map(|f| content_diff(f, r, names)).collect();
    let rows: Vec<Vec<Text>> = r
        .fields
        .iter()
        .zip(&diffs)
        .map(|(f, diff)| match diff {
            Some(diff) => vec![
                Text::from(f.field.to_owned()),
                line_counts(diff),
                layers(&f.old, &f.new).into(),
            ],
            None => field_row(f, r.presence),
        })
        .collect();
    table_with(w, "      ", &rows, |w, i| match &diffs[i] {
        Some(diff) => unified::draw(w, "        ", diff),
        None => Ok(()),
    })
}

/// `+2 -1`: the lines a diff adds and removes.
fn line_counts(diff: &str) -> Text {
    let (mut added, mut removed) = (0, 0);
    for l in diff.lines() {
        match unified::tag(l) {
            Some(Tag::Added) => added += 1,
            Some(Tag::Removed) => removed += 1,
            _ => {}
        }
    }
    Text::tagged(Tag::Added, format!("+{added}"))
        .and(" ")
        .and_tagged(Tag::Removed, format!("-{removed}"))
}

/// A changed File's content (inline, rendered from a template, or a
/// payload in `names.payloads`) as a unified diff, when both sides are
/// text that may be shown.
fn content_diff(f: &FieldDiff, r: &ResourceDiff, names: &Names) -> Option<String> {
    if r.presence != Presence::Changed || !matches!(f.field, "content" | "source_sha256") {
        return None;
    }
    let side = |s: &Shown| -> Option<String> {
        match s {
            Shown::Absent => Some(String::new()),
            Shown::Value(Value::Str(text)) if f.field == "content" => {
                unified::as_text(text.as_bytes()).map(str::to_owned)
            }
            Shown::Digest(sha) if f.field == "source_sha256" => names
                .payloads
                .get(sha)
                .and_then(|b| unified::as_text(b))
                .map(str::to_owned),
            _ => None,
        }
    };
    let (old, new) = (side(&f.old.value)?, side(&f.new.value)?);
    let path = r.summary.as_deref().unwrap_or(&r.id);
    let diff = unified::text(
        &old,
        &new,
        &format!("{path} ({})", names.old),
        &format!("{path} ({})", names.new),
    );
    (!diff.is_empty()).then_some(diff)
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
