//! `datum layers` as text: one row per layer in fold order.
//!
//! ```text
//! precedence  layer      name      matches       hosts  resources
//! 0           base       base      (every host)  5      File[motd], Package[curl]
//! 30          roles/web  role-web  role=web      3      File[nginx-config]
//! ```
//!
//! With a host, `matched` says which of its labels made each match.

use std::io;

use super::{Styled, Tag, Text, table};
use crate::layers::{LayerLine, matcher_text};

pub fn write(out: &mut dyn Styled, lines: &[LayerLine<'_>], one_host: bool) -> io::Result<()> {
    let last = if one_host { "matched" } else { "hosts" };
    let mut rows = vec![
        ["precedence", "layer", "name", "matches", last, "resources"]
            .map(|h| Text::tagged(Tag::Section, h))
            .to_vec(),
    ];
    for l in lines {
        let reach = if one_host {
            if l.matched.is_empty() {
                "(every host)".to_owned()
            } else {
                l.matched
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            }
        } else {
            l.hosts.len().to_string()
        };
        rows.push(vec![
            Text::from(l.layer.precedence.to_string()),
            Text::from(l.layer.display.clone()),
            Text::from(l.layer.name.to_string()),
            Text::from(matcher_text(&l.matcher)),
            Text::tagged(Tag::Hosts, reach),
            Text::from(l.resources.join(", ")),
        ]);
    }
    table(out, "", &rows)
}
