//! Explain as text, in the shape of SPEC §6: a header line, then sections
//! indented by two spaces whose rows (indented by four) are aligned per
//! section.
//!
//! Values print on one line, as `check` prints them: text as written when
//! plain, quoted and cut short otherwise (multi-line `content` included).
//! The `content` of a resource some layer marks `sensitive: true` prints as
//! `(sensitive)`, wherever it appears.
//!
//! Lines go to the writer as they are made; only a section's rows wait,
//! to be aligned together.

use std::io::{self, Write};

use super::{Absence, Answer, Explanation, Miss, Role, State, VarAbsence, WhyNot};
use crate::fleet::LayerId;
use crate::printable::write_line;
use crate::report::{align, display_setting, display_text, display_var};
use crate::resolve::{Contrib, ResolvedField, ResolvedResource, ResolvedVar, VarContrib};
use crate::schema::Field;
use crate::template::Rendered;

/// Draws an answer, each line ending with a newline.
pub fn write(w: &mut dyn Write, ex: &Explanation<'_>, answer: &Answer<'_>) -> io::Result<()> {
    let out = &mut Out { w };
    match answer {
        Answer::Host => host(ex, out),
        Answer::Resource(r) => resource(ex, r, out),
        Answer::Field(r, f) => field(ex, r, f, out),
        Answer::Absent(a) => absent(ex, a, out),
        Answer::Var(v) => var(ex, v, out),
        Answer::Rendered(r, x) => rendered(ex, r, x, out),
        Answer::VarAbsent(a) => var_absent(ex, a, out),
    }
}

/// [`write`] into a `String`, for tests and tools that keep the text.
pub fn render(ex: &Explanation<'_>, answer: &Answer<'_>) -> String {
    let mut buf = Vec::new();
    write(&mut buf, ex, answer).expect("writing to memory does not fail");
    String::from_utf8(buf).expect("explain writes UTF-8")
}

/// A row, and the lines printed under it (the sides of a conflict).
type Row = (Vec<String>, Vec<String>);

struct Out<'w> {
    w: &'w mut dyn Write,
}

impl Out<'_> {
    /// One line, escaped: what the fleet wrote is shown, never obeyed.
    fn line(&mut self, line: &str) -> io::Result<()> {
        write_line(self.w, line)
    }

    /// A titled section; nothing when it has no rows.
    fn section(&mut self, title: &str, rows: Vec<Vec<String>>) -> io::Result<()> {
        self.section_with(title, rows.into_iter().map(|r| (r, Vec::new())).collect())
    }

    fn section_with(&mut self, title: &str, rows: Vec<Row>) -> io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        writeln!(self.w, "  {title}")?;
        let cells: Vec<Vec<String>> = rows.iter().map(|(r, _)| r.clone()).collect();
        for (line, (_, under)) in align(&cells).into_iter().zip(rows) {
            writeln!(self.w, "    {line}")?;
            for l in under {
                writeln!(self.w, "      {l}")?;
            }
        }
        Ok(())
    }
}

fn host(ex: &Explanation<'_>, out: &mut Out<'_>) -> io::Result<()> {
    let fleet = ex.fleet;
    out.line(&format!("host {}", ex.host_name()))?;
    out.section(
        "labels",
        fleet
            .labels_of(ex.host)
            .into_iter()
            .map(|(k, v)| vec![k.to_owned(), v.to_owned()])
            .collect(),
    )?;
    out.section(
        "layers",
        ex.resolution
            .layers
            .iter()
            .map(|&l| layer_row(ex, l))
            .collect(),
    )?;
    out.section(
        "vars",
        ex.resolution
            .vars
            .vars
            .iter()
            .map(|v| var_row(ex, v))
            .collect(),
    )?;
    for r in ex.resolution.resources.iter() {
        out.line("")?;
        resource(ex, r, out)?;
    }
    Ok(())
}

/// `dns  1.1.1.1  sites/london  overrides 8.8.8.8 from base`.
fn var_row(ex: &Explanation<'_>, v: &ResolvedVar) -> Vec<String> {
    let fleet = ex.fleet;
    let winner = v.winner();
    let layer = |c: VarContrib| fleet.layer(c.layer).display.clone();
    let mut row = vec![v.name.to_string()];
    if v.state == State::Conflict {
        row.push("conflict".to_owned());
        row.push(format!(
            "at precedence {}",
            fleet.layer(winner.layer).precedence
        ));
        return row;
    }
    row.push(if v.state == State::Unset {
        "(unset)".to_owned()
    } else {
        display_var(fleet, winner)
    });
    row.push(layer(winner));
    let mut tail = Vec::new();
    let agreed: Vec<String> = v.agreeing().map(layer).collect();
    if !agreed.is_empty() {
        tail.push(format!("agreed by {}", agreed.join(", ")));
    }
    let displaced: Vec<String> = v
        .displaced()
        .map(|c| format!("{} from {}", display_var(fleet, c), layer(c)))
        .collect();
    if !displaced.is_empty() {
        tail.push(format!("overrides {}", displaced.join(", ")));
    }
    if v.has_conflict() {
        tail.push("conflict below".to_owned());
    }
    if !tail.is_empty() {
        row.push(tail.join("; "));
    }
    row
}

/// One var with its whole chain, in the shape of a field's.
fn var(ex: &Explanation<'_>, v: &ResolvedVar, out: &mut Out<'_>) -> io::Result<()> {
    let fleet = ex.fleet;
    let value = match v.state {
        State::Conflict => "conflict".to_owned(),
        State::Set => display_var(fleet, v.winner()),
        _ => "(unset)".to_owned(),
    };
    out.line(&format!("vars.{} {value}", v.name))?;
    out.section(
        "contributions",
        v.played
            .iter()
            .map(|&(c, role)| {
                vec![
                    fleet.layer(c.layer).display.clone(),
                    format!("precedence {}", fleet.layer(c.layer).precedence),
                    display_var(fleet, c),
                    role.word().to_owned(),
                    matched(ex, c.layer),
                    fleet.files.location(fleet.var(c).span),
                ]
            })
            .collect(),
    )
}

/// A File's content rendered from a template: the template and the layer
/// that chose it, then every var and label the rendering read.
fn rendered(
    ex: &Explanation<'_>,
    r: &ResolvedResource,
    x: &Rendered,
    out: &mut Out<'_>,
) -> io::Result<()> {
    let fleet = ex.fleet;
    let value = if ex.sensitive(r) {
        "(sensitive)".to_owned()
    } else {
        display_text(x.text())
    };
    out.line(&format!("{}.content {value}", fleet.resources.text(r.id)))?;
    out.line(&format!(
        "  rendered from {} for {}: {} bytes, sha256 {}",
        x.template,
        ex.host_name(),
        x.text().len(),
        x.sha256
    ))?;
    if let Some(f) = r.field(Field::Template) {
        out.section(
            "template",
            r.played(f)
                .map(|(c, role)| contribution_row(ex, r, c, role))
                .collect(),
        )?;
    }
    let vars = &ex.resolution.vars;
    out.section(
        "vars read",
        x.vars_read
            .iter()
            .map(|name| match vars.get(name) {
                None => vec![
                    format!("vars.{name}"),
                    "(not set)".to_owned(),
                    "no layer of this host sets it".to_owned(),
                ],
                Some(v) => {
                    let c = v.winner();
                    let shown = match v.state {
                        State::Set => display_var(fleet, c),
                        _ => "(unset)".to_owned(),
                    };
                    vec![
                        format!("vars.{name}"),
                        shown,
                        fleet.layer(c.layer).display.clone(),
                        fleet.files.location(fleet.var(c).span),
                    ]
                }
            })
            .collect(),
    )?;
    let labels = fleet.labels_of(ex.host);
    out.section(
        "labels read",
        x.labels_read
            .iter()
            .map(|key| {
                let value = labels
                    .iter()
                    .find(|(k, _)| *k == &**key)
                    .map_or("(no such label)", |(_, v)| v);
                vec![format!("labels.{key}"), value.to_owned()]
            })
            .collect(),
    )
}

fn var_absent(ex: &Explanation<'_>, a: &VarAbsence, out: &mut Out<'_>) -> io::Result<()> {
    let host = ex.host_name();
    out.line(&format!("{host} has no vars.{}", a.name))?;
    if a.misses.is_empty() {
        let mut line = format!("  no layer sets vars.{}", a.name);
        if let Some(near) = &a.nearest {
            line.push_str(&format!("; the nearest var is vars.{near}"));
        }
        return out.line(&line);
    }
    out.line(&format!("  set by layers that do not match {host}"))?;
    for m in &a.misses {
        out.line(&format!("    {}", miss(ex, m)))?;
    }
    Ok(())
}

/// `roles/web  precedence 30  matched role=web`.
fn layer_row(ex: &Explanation<'_>, l: LayerId) -> Vec<String> {
    let layer = ex.fleet.layer(l);
    vec![
        layer.display.clone(),
        format!("precedence {}", layer.precedence),
        matched(ex, l),
    ]
}

fn matched(ex: &Explanation<'_>, l: LayerId) -> String {
    let labels = ex.matcher(l);
    if labels.is_empty() {
        return "matched every host".to_owned();
    }
    let pairs: Vec<String> = labels
        .iter()
        .map(|m| format!("{}={}", ex.fleet.sym(m.key), ex.fleet.sym(m.value)))
        .collect();
    format!("matched {}", pairs.join(", "))
}

fn resource(ex: &Explanation<'_>, r: &ResolvedResource, out: &mut Out<'_>) -> io::Result<()> {
    let fleet = ex.fleet;
    let id = fleet.resources.text(r.id);
    match r.summary(fleet) {
        Some(s) => out.line(&format!("{id} {}", display_text(s)))?,
        None => out.line(id)?,
    }
    out.section(
        "contributed by",
        r.declared_by
            .iter()
            .map(|&(l, _)| layer_row(ex, l))
            .collect(),
    )?;
    let mut rows: Vec<Row> = Vec::new();
    for f in r.fields.iter().filter(|f| !f.field.is_set()) {
        rows.push(field_row(ex, r, f));
        // What the template rendered is the content, right after it.
        if f.field == Field::Template
            && let Some(x) = ex.resolution.rendered(r.id)
        {
            let value = if ex.sensitive(r) {
                "(sensitive)".to_owned()
            } else {
                display_text(x.text())
            };
            let row = vec![
                "content".to_owned(),
                value,
                format!("rendered from {}", x.template),
            ];
            rows.push((row, Vec::new()));
        }
    }
    out.section_with("fields", rows)?;
    // `restart_on` and `requires` are sets: entry by entry, in schema order.
    for f in r.fields.iter().filter(|f| f.field.is_set()) {
        out.section(f.field.name(), entry_rows(ex, r, f))?;
    }
    if let Some(path) = crate::secret::secret_of(fleet, r) {
        let rows = match crate::secret::recorded_recipients(fleet, path) {
            Some(rows) => rows.into_iter().map(|(who, fp)| vec![who, fp]).collect(),
            None => vec![vec![format!(
                "none recorded: {path}.recipients is missing (`datum secret rekey {path}`)"
            )]],
        };
        out.section(&format!("recipients of {path}"), rows)?;
    }
    Ok(())
}

/// A contribution's value on one line, hidden when sensitive.
fn shown(ex: &Explanation<'_>, r: &ResolvedResource, c: Contrib) -> String {
    if ex.redacted(r, c) {
        "(sensitive)".to_owned()
    } else {
        display_setting(ex.fleet, c)
    }
}

fn layer_name(ex: &Explanation<'_>, c: Contrib) -> String {
    ex.fleet.layer(c.layer).display.clone()
}

/// `mode  0600  hosts/web-001  overrides 0640 from roles/web`, with the
/// sides of any conflict on the lines under it.
fn field_row(ex: &Explanation<'_>, r: &ResolvedResource, f: &ResolvedField) -> Row {
    let fleet = ex.fleet;
    let conflicts: Vec<&[Contrib]> = r.conflicts(f).collect();
    let winner = f.winner();
    let mut row = vec![f.field.name().to_owned()];
    match f.state {
        State::Conflict => {
            row.push("conflict".to_owned());
            row.push(format!("at precedence {}", fleet.precedence(winner)));
        }
        state => {
            row.push(if state == State::Unset {
                "(unset)".to_owned()
            } else {
                shown(ex, r, winner)
            });
            row.push(layer_name(ex, winner));
            let mut tail = Vec::new();
            let agreed: Vec<String> = r.agreeing(f).iter().map(|&c| layer_name(ex, c)).collect();
            if !agreed.is_empty() {
                tail.push(format!("agreed by {}", agreed.join(", ")));
            }
            let displaced: Vec<String> = r
                .displaced(f)
                .map(|c| format!("{} from {}", shown(ex, r, c), layer_name(ex, c)))
                .collect();
            if !displaced.is_empty() {
                tail.push(format!("overrides {}", displaced.join(", ")));
            }
            // A conflict below the winner still fails the host.
            if !conflicts.is_empty() {
                let precs: Vec<String> = conflicts
                    .iter()
                    .filter_map(|sides| sides.first())
                    .map(|&c| fleet.precedence(c).to_string())
                    .collect();
                tail.push(format!("conflict at precedence {}", precs.join(", ")));
            }
            if !tail.is_empty() {
                row.push(tail.join("; "));
            }
        }
    }
    // The sides in the shape of the conflict report: value, layer, precedence.
    let sides: Vec<Vec<String>> = conflicts
        .iter()
        .flat_map(|sides| sides.iter())
        .map(|&c| {
            vec![
                shown(ex, r, c),
                layer_name(ex, c),
                format!("precedence {}", fleet.precedence(c)),
            ]
        })
        .collect();
    (row, align(&sides))
}

/// `Package[nginx]  roles/web`: each entry kept, with the layers that listed
/// it; then each entry a `null` dropped.
fn entry_rows(ex: &Explanation<'_>, r: &ResolvedResource, f: &ResolvedField) -> Vec<Vec<String>> {
    let fleet = ex.fleet;
    let layers = |by: &[Contrib]| {
        let mut names: Vec<String> = by.iter().map(|&c| layer_name(ex, c)).collect();
        names.dedup();
        names.join(", ")
    };
    let mut rows: Vec<Vec<String>> = f
        .entries()
        .iter()
        .map(|e| {
            let mut row = vec![fleet.resources.text(e.id).to_owned(), layers(&e.by)];
            if ex.resolution.resource(fleet, e.id).is_none() {
                row.push(format!(
                    "{} has no {}",
                    ex.host_name(),
                    fleet.resources.text(e.id)
                ));
            }
            row
        })
        .collect();
    let unset_by = r.unset_by(f);
    for d in f.dropped() {
        let mut row = vec![fleet.resources.text(d.id).to_owned(), layers(&d.by)];
        if let Some(c) = unset_by {
            row.push(format!("dropped by null from {}", layer_name(ex, c)));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        rows.push(match unset_by {
            Some(c) => vec!["(unset)".to_owned(), layer_name(ex, c)],
            None => vec!["(empty)".to_owned(), layer_name(ex, f.winner())],
        });
    }
    rows
}

/// One field with its whole chain.
fn field(
    ex: &Explanation<'_>,
    r: &ResolvedResource,
    f: &ResolvedField,
    out: &mut Out<'_>,
) -> io::Result<()> {
    let fleet = ex.fleet;
    let value = match f.state {
        State::Conflict => "conflict".to_owned(),
        State::Unset => "(unset)".to_owned(),
        State::Empty => "(empty)".to_owned(),
        State::Set if f.field.is_set() => f
            .entries()
            .iter()
            .map(|e| fleet.resources.text(e.id))
            .collect::<Vec<_>>()
            .join(", "),
        State::Set => shown(ex, r, f.winner()),
    };
    out.line(&format!(
        "{}.{} {value}",
        fleet.resources.text(r.id),
        f.field
    ))?;
    if f.field.is_set() {
        out.section("entries", entry_rows(ex, r, f))?;
    }
    out.section(
        "contributions",
        r.played(f)
            .map(|(c, role)| contribution_row(ex, r, c, role))
            .collect(),
    )
}

/// `roles/web  precedence 30  0640  overridden  matched role=web  roles/web/layer.yaml:15:11`.
fn contribution_row(
    ex: &Explanation<'_>,
    r: &ResolvedResource,
    c: Contrib,
    role: Role,
) -> Vec<String> {
    let fleet = ex.fleet;
    vec![
        layer_name(ex, c),
        format!("precedence {}", fleet.precedence(c)),
        shown(ex, r, c),
        role.word().to_owned(),
        matched(ex, c.layer),
        fleet.files.location(fleet.setting(c).span),
    ]
}

fn absent(ex: &Explanation<'_>, a: &Absence, out: &mut Out<'_>) -> io::Result<()> {
    let host = ex.host_name();
    let what = match a.field {
        Some(f) => format!("{}.{f}", a.resource),
        None => a.resource.to_string(),
    };
    out.line(&format!("{host} has no {what}"))?;
    match &a.why {
        WhyNot::Unmatched(misses) => {
            let title = if a.field.is_some() && a.has_resource {
                format!("set by layers that do not match {host}")
            } else {
                format!("declared by layers that do not match {host}")
            };
            out.line(&format!("  {title}"))?;
            for m in misses {
                out.line(&format!("    {}", miss(ex, m)))?;
            }
            Ok(())
        }
        WhyNot::Undeclared { nearest } => {
            let mut line = format!("  no layer declares {}", a.resource);
            if let Some(near) = nearest {
                line.push_str(&format!(
                    "; the nearest resource id is {}",
                    ex.fleet.resources.text(*near)
                ));
            }
            out.line(&line)
        }
        WhyNot::FieldUnset => out.line(&format!("  no layer sets {what}, for any host")),
    }
}

/// `roles/db needs role=db; web-001 has role=web`; alternatives read
/// `roles/edge needs role in {web, cache}; web-001 has role=db`.
fn miss(ex: &Explanation<'_>, m: &Miss) -> String {
    let fleet = ex.fleet;
    let needs: Vec<String> = m
        .failed
        .iter()
        .map(|c| match &c.wanted[..] {
            [one] => format!("{}={}", fleet.sym(c.key), fleet.sym(*one)),
            any => {
                let values: Vec<&str> = any.iter().map(|&v| fleet.sym(v)).collect();
                format!("{} in {{{}}}", fleet.sym(c.key), values.join(", "))
            }
        })
        .collect();
    let has: Vec<String> = m
        .failed
        .iter()
        .map(|c| match c.found {
            Some(v) => format!("{}={}", fleet.sym(c.key), fleet.sym(v)),
            None => format!("no label {}", fleet.sym(c.key)),
        })
        .collect();
    format!(
        "{} needs {}; {} has {}",
        fleet.layer(m.layer).display,
        and_list(&needs),
        ex.host_name(),
        and_list(&has)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
