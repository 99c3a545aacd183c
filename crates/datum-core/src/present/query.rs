//! `datum query` as text: one row per host, or one per distinct answer,
//! aligned.

use std::io;

use super::{Styled, Text, table};
use crate::fleet::LayerId;
use crate::printable::display_text;
use crate::query::{Answer, QueryResult, Shown};
use crate::report::{count, display_value};
use crate::vars::VarValue;

/// Rows of plain cells.
fn cells(rows: Vec<Vec<String>>) -> Vec<Vec<Text>> {
    rows.into_iter()
        .map(|row| row.into_iter().map(Text::from).collect())
        .collect()
}

/// An answer's value cell.
fn value_text(q: &QueryResult<'_>, answer: &Answer<'_>) -> String {
    match answer {
        Answer::Value { value, .. } => match value {
            Shown::Value(v) => display_value(v),
            Shown::Refs(ids) => ids.join(", "),
            Shown::Sensitive => "(sensitive)".to_owned(),
            Shown::Var(VarValue::Str(s)) => display_text(s),
            Shown::Var(v) => display_text(&v.to_string()),
        },
        Answer::Unset { .. } => "(unset)".to_owned(),
        Answer::NoResource => format!("(no {})", q.resource_text()),
        Answer::Fails => "(does not resolve)".to_owned(),
        Answer::HeldBack => "(held back: documents it depends on failed to load)".to_owned(),
    }
}

fn layers_text(q: &QueryResult<'_>, layers: &[LayerId]) -> String {
    layers
        .iter()
        .map(|&l| q.fleet.layer(l).display.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row per host: name, value, the layer that set it.
pub fn write(w: &mut dyn Styled, q: &QueryResult<'_>) -> io::Result<()> {
    let rows: Vec<Vec<String>> = q
        .rows
        .iter()
        .map(|(h, a)| {
            let mut row = vec![q.fleet.host(*h).name.to_string(), value_text(q, a)];
            let layers = a.layers();
            if !layers.is_empty() {
                row.push(layers_text(q, &layers));
            }
            row
        })
        .collect();
    table(w, "", &cells(rows))
}

/// One row per distinct answer: value, how many hosts, the layers.
pub fn write_summary(w: &mut dyn Styled, q: &QueryResult<'_>) -> io::Result<()> {
    let rows: Vec<Vec<String>> = q
        .summary()
        .iter()
        .map(|g| {
            let mut row = vec![value_text(q, &g.answer), count(g.hosts.len(), "host")];
            let layers = g.answer.layers();
            if !layers.is_empty() {
                row.push(layers_text(q, &layers));
            }
            row
        })
        .collect();
    table(w, "", &cells(rows))
}
