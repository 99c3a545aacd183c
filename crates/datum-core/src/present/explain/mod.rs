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
//! to be aligned together. Each first line is a heading, each section's
//! title is tagged as such, and a value that displaced others is tagged
//! the winner, with what it displaced.

use std::io;

mod absent;

use super::{Styled, Tag, Text, line, table_with};
use crate::explain::{Answer, Explanation, Role, State};
use crate::fleet::{Contrib, LayerId, VarContrib};
use crate::printable::display_text;
use crate::report::{align, display_setting, display_var};
use crate::resolve::{ResolvedField, ResolvedResource, ResolvedVar};
use crate::schema::Field;
use crate::template::Rendered;

/// Draws an answer, each line ending with a newline.
pub fn write(w: &mut dyn Styled, ex: &Explanation<'_>, answer: &Answer<'_>) -> io::Result<()> {
    let out = &mut Out { w };
    match answer {
        Answer::Host => host(ex, out),
        Answer::Resource(r) => resource(ex, r, out),
        Answer::Field(r, f) => field(ex, r, f, out),
        Answer::Absent(a) => absent::absent(ex, a, out),
        Answer::Var(v) => var(ex, v, out),
        Answer::Rendered(r, x) => rendered(ex, r, x, out),
        Answer::VarAbsent(a) => absent::var_absent(ex, a, out),
    }
}

/// [`write()`] into a `String`, without tags, for tests and tools that keep
/// the text.
pub fn render(ex: &Explanation<'_>, answer: &Answer<'_>) -> String {
    super::to_string(|out| write(out, ex, answer))
}

/// A row, and the lines printed under it (the sides of a conflict).
type Row = (Vec<Text>, Vec<String>);

pub(super) struct Out<'w> {
    w: &'w mut dyn Styled,
}

impl Out<'_> {
    /// One line, escaped: what the fleet wrote is shown, never obeyed.
    pub(super) fn line(&mut self, text: &str) -> io::Result<()> {
        line(self.w, "", text)
    }

    /// The first line of an answer.
    pub(super) fn heading(&mut self, text: &str) -> io::Result<()> {
        line(self.w, "", Text::tagged(Tag::Heading, text))
    }

    /// A titled section; nothing when it has no rows.
    fn section(&mut self, title: &str, rows: Vec<Vec<String>>) -> io::Result<()> {
        self.section_with(
            title,
            rows.into_iter()
                .map(|r| (r.into_iter().map(Text::from).collect(), Vec::new()))
                .collect(),
        )
    }

    fn section_with(&mut self, title: &str, rows: Vec<Row>) -> io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        write!(self.w, "  ")?;
        self.w.tagged(Tag::Section, title)?;
        writeln!(self.w)?;
        let (cells, under): (Vec<Vec<Text>>, Vec<Vec<String>>) = rows.into_iter().unzip();
        table_with(self.w, "    ", &cells, |w, i| {
            for l in &under[i] {
                writeln!(w, "      {l}")?;
            }
            Ok(())
        })
    }
}

fn host(ex: &Explanation<'_>, out: &mut Out<'_>) -> io::Result<()> {
    let fleet = ex.fleet;
    out.heading(&format!("host {}", ex.host_name()))?;
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
    out.section_with(
        "vars",
        ex.resolution
            .vars
            .vars
            .iter()
            .map(|v| (var_row(ex, v), Vec::new()))
            .collect(),
    )?;
    for r in ex.resolution.resources.iter() {
        out.line("")?;
        resource(ex, r, out)?;
    }
    Ok(())
}

/// `dns  1.1.1.1  sites/london  overrides 8.8.8.8 from base`.
fn var_row(ex: &Explanation<'_>, v: &ResolvedVar) -> Vec<Text> {
    let fleet = ex.fleet;
    let winner = v.winner();
    let layer = |c: VarContrib| fleet.layer(c.layer).display.clone();
    if v.state == State::Conflict {
        return vec![
            Text::from(v.name.to_string()),
            Text::from("conflict"),
            Text::from(format!(
                "at precedence {}",
                fleet.layer(winner.layer).precedence
            )),
        ];
    }
    let value = if v.state == State::Unset {
        "(unset)".to_owned()
    } else {
        display_var(fleet, winner)
    };
    let agreed: Vec<String> = v.agreeing().map(layer).collect();
    let displaced: Vec<String> = v
        .displaced()
        .map(|c| format!("{} from {}", display_var(fleet, c), layer(c)))
        .collect();
    let below = v.has_conflict().then(|| "conflict below".to_owned());
    winner_row(
        v.name.to_string(),
        value,
        layer(winner),
        &agreed,
        &displaced,
        below,
    )
}

/// `name  value  layer  agreed by ...; overrides ...; conflict ...`: when
/// the value displaced others, it and its layer are the winner's, and the
/// `overrides` part what it displaced.
fn winner_row(
    name: String,
    value: String,
    layer: String,
    agreed: &[String],
    displaced: &[String],
    conflict: Option<String>,
) -> Vec<Text> {
    let won = if displaced.is_empty() {
        None
    } else {
        Some(Tag::Winner)
    };
    let cell = |text: String| match won {
        Some(tag) => Text::tagged(tag, text),
        None => Text::from(text),
    };
    let mut row = vec![Text::from(name), cell(value), cell(layer)];
    let mut tail: Vec<Text> = Vec::new();
    if !agreed.is_empty() {
        tail.push(Text::from(format!("agreed by {}", agreed.join(", "))));
    }
    if !displaced.is_empty() {
        tail.push(Text::tagged(
            Tag::Displaced,
            format!("overrides {}", displaced.join(", ")),
        ));
    }
    tail.extend(conflict.map(Text::from));
    if let Some((first, rest)) = tail.split_first() {
        row.push(
            rest.iter()
                .fold(first.clone(), |t, part| t.then("; ", part)),
        );
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
    out.heading(&format!("vars.{} {value}", v.name))?;
    out.section_with(
        "contributions",
        v.played
            .iter()
            .map(|&(c, role)| {
                let row = played_row(
                    fleet.layer(c.layer).display.clone(),
                    fleet.layer(c.layer).precedence,
                    display_var(fleet, c),
                    role,
                    matched(ex, c.layer),
                    fleet.files.location(fleet.var(c).span),
                );
                (row, Vec::new())
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
    out.heading(&format!("{}.content {value}", fleet.resources.text(r.id)))?;
    out.line(&format!(
        "  rendered from {} for {}: {} bytes, sha256 {}",
        x.template,
        ex.host_name(),
        x.text().len(),
        x.sha256
    ))?;
    if let Some(f) = r.field(Field::Template) {
        out.section_with(
            "template",
            r.played(f)
                .map(|(c, role)| (contribution_row(ex, r, c, role), Vec::new()))
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
        Some(s) => out.heading(&format!("{id} {}", display_text(s)))?,
        None => out.heading(id)?,
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
                Text::from("content"),
                Text::from(value),
                Text::from(format!("rendered from {}", x.template)),
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
    let name = f.field.name().to_owned();
    let row = match f.state {
        State::Conflict => vec![
            Text::from(name),
            Text::from("conflict"),
            Text::from(format!("at precedence {}", fleet.precedence(winner))),
        ],
        state => {
            let value = if state == State::Unset {
                "(unset)".to_owned()
            } else {
                shown(ex, r, winner)
            };
            let agreed: Vec<String> = r.agreeing(f).iter().map(|&c| layer_name(ex, c)).collect();
            let displaced: Vec<String> = r
                .displaced(f)
                .map(|c| format!("{} from {}", shown(ex, r, c), layer_name(ex, c)))
                .collect();
            // A conflict below the winner still fails the host.
            let below = (!conflicts.is_empty()).then(|| {
                let precs: Vec<String> = conflicts
                    .iter()
                    .filter_map(|sides| sides.first())
                    .map(|&c| fleet.precedence(c).to_string())
                    .collect();
                format!("conflict at precedence {}", precs.join(", "))
            });
            winner_row(
                name,
                value,
                layer_name(ex, winner),
                &agreed,
                &displaced,
                below,
            )
        }
    };
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
    out.heading(&format!(
        "{}.{} {value}",
        fleet.resources.text(r.id),
        f.field
    ))?;
    if f.field.is_set() {
        out.section("entries", entry_rows(ex, r, f))?;
    }
    out.section_with(
        "contributions",
        r.played(f)
            .map(|(c, role)| (contribution_row(ex, r, c, role), Vec::new()))
            .collect(),
    )
}

/// `roles/web  precedence 30  0640  overridden  matched role=web  roles/web/layer.yaml:15:11`.
fn contribution_row(
    ex: &Explanation<'_>,
    r: &ResolvedResource,
    c: Contrib,
    role: Role,
) -> Vec<Text> {
    let fleet = ex.fleet;
    played_row(
        layer_name(ex, c),
        fleet.precedence(c),
        shown(ex, r, c),
        role,
        matched(ex, c.layer),
        fleet.files.location(fleet.setting(c).span),
    )
}

/// One contribution's row: the value and its role are the winner's when
/// it is set, the displaced when overridden.
fn played_row(
    layer: String,
    precedence: i32,
    value: String,
    role: Role,
    matched: String,
    place: String,
) -> Vec<Text> {
    let cell = |text: String| match role {
        Role::Set => Text::tagged(Tag::Winner, text),
        Role::Overridden => Text::tagged(Tag::Displaced, text),
        _ => Text::from(text),
    };
    vec![
        Text::from(layer),
        Text::from(format!("precedence {precedence}")),
        cell(value),
        cell(role.word().to_owned()),
        Text::from(matched),
        Text::from(place),
    ]
}
