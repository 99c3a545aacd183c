//! The map of a fleet: every layer in fold order, with its precedence, its
//! matcher (alternatives shown), how many hosts it reaches and the
//! resources it declares; for one host, only the layers it matches and the
//! labels that made each match.

use std::borrow::Cow;

use crate::emit::Tree;
use crate::fleet::{Fleet, HostId, Layer};
use crate::matcher;

/// One layer as the map shows it.
#[derive(Debug)]
pub struct LayerLine<'f> {
    pub layer: &'f Layer,
    /// Each key of the matcher with the values it accepts (several are
    /// alternatives), in key order.
    pub matcher: Vec<(&'f str, Vec<&'f str>)>,
    /// The hosts it matches, in name order.
    pub hosts: Vec<HostId>,
    /// Its resources' ids, in the order written.
    pub resources: Vec<&'f str>,
    /// For one host: the labels it carries that the matcher asked for.
    pub matched: Vec<(&'f str, &'f str)>,
}

/// Every layer in fold order; with `host`, only those it matches.
pub fn layers(fleet: &Fleet, host: Option<HostId>) -> Vec<LayerLine<'_>> {
    fleet
        .layers
        .iter()
        .filter(|l| host.is_none_or(|h| matcher::holds(&l.matcher, &fleet.host(h).labels)))
        .map(|l| {
            let groups: Vec<(&str, Vec<&str>)> = matcher::groups(&l.matcher)
                .map(|g| {
                    (
                        fleet.sym(g[0].key),
                        g.iter().map(|m| fleet.sym(m.value)).collect(),
                    )
                })
                .collect();
            let mut sorted = groups.clone();
            sorted.sort();
            let hosts = (0..fleet.hosts.len() as u32)
                .map(HostId)
                .filter(|&h| matcher::holds(&l.matcher, &fleet.host(h).labels))
                .collect();
            let matched = match host {
                Some(h) => matcher::check(&l.matcher, &fleet.host(h).labels)
                    .into_iter()
                    .filter_map(|c| Some((fleet.sym(c.key), fleet.sym(c.found?))))
                    .collect::<Vec<_>>(),
                None => Vec::new(),
            };
            let mut matched = matched;
            matched.sort();
            LayerLine {
                layer: l,
                matcher: sorted,
                hosts,
                resources: l
                    .resources
                    .iter()
                    .map(|r| fleet.resources.text(r.id))
                    .collect(),
                matched,
            }
        })
        .collect()
}

/// `role in (web,cache),site=london`, or `(every host)`.
pub fn matcher_text(m: &[(&str, Vec<&str>)]) -> String {
    if m.is_empty() {
        return "(every host)".to_owned();
    }
    m.iter()
        .map(|(k, v)| match &v[..] {
            [one] => format!("{k}={one}"),
            many => format!("{k} in ({})", many.join(",")),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The map as data: `type: Layers`.
pub fn tree<'f>(fleet: &'f Fleet, host: Option<HostId>, lines: &[LayerLine<'f>]) -> Tree<'f> {
    let layers = lines
        .iter()
        .map(|l| {
            let matcher = l
                .matcher
                .iter()
                .map(|(k, v)| (Cow::Borrowed(*k), Tree::strs(v.iter().copied())))
                .collect();
            let mut t = Tree::map()
                .with("layer", Tree::str(l.layer.display.as_str()))
                .with("name", Tree::str(&*l.layer.name))
                .with("path", Tree::str(l.layer.path.as_str()))
                .with("precedence", Tree::Int(l.layer.precedence.into()))
                .with("matcher", Tree::Map(matcher))
                .with("hosts", Tree::Int(l.hosts.len() as i64))
                .with("resources", Tree::strs(l.resources.iter().copied()));
            if host.is_some() {
                let matched = l
                    .matched
                    .iter()
                    .map(|(k, v)| (Cow::Borrowed(*k), Tree::str(*v)))
                    .collect();
                t.push("matched", Tree::Map(matched));
            }
            t
        })
        .collect();
    Tree::document("Layers")
        .with(
            "host",
            host.map_or(Tree::Null, |h| Tree::str(&*fleet.host(h).name)),
        )
        .with("layers", Tree::List(layers))
}
