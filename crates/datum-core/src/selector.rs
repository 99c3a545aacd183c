//! Choosing hosts by label (`role=web site=london`), and the labels the
//! fleet's hosts actually carry, which is what a typo is measured against.
//!
//! A selector holds when a host carries every key with one of the values
//! given for it, the way a layer's matcher does: `role=web,cache` is either
//! value (a comma separates alternatives); `datum/host=web-001` picks one
//! host.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::emit::Tree;
use crate::fleet::{Fleet, Host, HostId};
use crate::hint::{Fault, Hinted};
use crate::intern::Sym;
use crate::printable::quoted;
use crate::schema::nearest;

/// `KEY=VALUE` pairs, every one of which must hold; a pair's value may be
/// alternatives (`role=web,cache`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// Each key with its values (one, or alternatives in the order given,
    /// without repeats); sorted, without repeats.
    pub labels: Vec<(String, Vec<String>)>,
}

/// Why a `KEY=VALUE` argument is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a label selector")]
pub struct SelectorError {
    pub text: String,
}

/// What a selector looks like; a malformed one is bad usage.
impl Hinted for SelectorError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(
            "write KEY=VALUE, such as role=web, role=web,cache (either value) or datum/host=web-001"
                .into(),
        )
    }

    fn fault(&self) -> Fault {
        Fault::Usage
    }
}

impl Selector {
    /// Reads `KEY=VALUE` arguments (`KEY=A,B` for alternatives); neither
    /// side, nor any alternative, may be empty.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Selector, SelectorError> {
        let mut labels = Vec::with_capacity(args.len());
        for arg in args {
            let text = arg.as_ref();
            let bad = || SelectorError {
                text: text.to_owned(),
            };
            let (key, value) = text.split_once('=').ok_or_else(bad)?;
            let key = key.trim();
            if key.is_empty() {
                return Err(bad());
            }
            let mut values: Vec<String> = Vec::new();
            for v in value.split(',').map(str::trim) {
                if v.is_empty() {
                    return Err(bad());
                }
                if !values.iter().any(|seen| seen == v) {
                    values.push(v.to_owned());
                }
            }
            labels.push((key.to_owned(), values));
        }
        labels.sort();
        labels.dedup();
        Ok(Selector { labels })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The selector as written back: `role=web,cache site=london`.
    pub fn text(&self) -> String {
        self.labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.join(",")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The hosts it selects, in name order.
    pub fn hosts(&self, fleet: &Fleet) -> Vec<HostId> {
        // A key none of whose values the fleet interned is carried by no host.
        let mut wanted: Vec<Vec<(Sym, Sym)>> = Vec::with_capacity(self.labels.len());
        for (k, values) in &self.labels {
            let pairs: Vec<(Sym, Sym)> = values
                .iter()
                .filter_map(|v| fleet.label_pair(k, v))
                .collect();
            if pairs.is_empty() {
                return Vec::new();
            }
            wanted.push(pairs);
        }
        let holds = |h: &Host| {
            wanted
                .iter()
                .all(|pairs| pairs.iter().any(|&(k, v)| h.label(k) == Some(v)))
        };
        (0..fleet.hosts.len() as u32)
            .map(HostId)
            .filter(|&h| holds(fleet.host(h)))
            .collect()
    }

    /// Fails on the first pair no host of `fleet` carries.
    pub fn require_carried(&self, fleet: &Fleet) -> Result<(), NotCarried> {
        let carried = Carried::of(fleet);
        match self.uncarried(&carried).into_iter().next() {
            Some(uncarried) => Err(NotCarried {
                hint: uncarried.hint(&carried),
                uncarried,
            }),
            None => Ok(()),
        }
    }

    /// The pairs no host carries, each with the nearest label that exists;
    /// every alternative is checked.
    pub fn uncarried(&self, carried: &Carried<'_>) -> Vec<Uncarried> {
        self.labels
            .iter()
            .flat_map(|(k, values)| values.iter().filter_map(|v| carried.explain(k, v)))
            .collect()
    }
}

/// A label no host carries, and the nearest one that exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Uncarried {
    /// No host has the key at all.
    Key {
        key: String,
        nearest: Option<String>,
    },
    /// Hosts have the key, none with this value.
    Value {
        key: String,
        value: String,
        nearest: Option<String>,
    },
}

impl Uncarried {
    /// `no host carries label key `rle``, or `no host carries `role=wbe``.
    pub fn message(&self) -> String {
        match self {
            Uncarried::Key { key, .. } => format!("no host carries label key {}", quoted(key)),
            Uncarried::Value { key, value, .. } => {
                format!("no host carries {}", quoted(&format!("{key}={value}")))
            }
        }
    }

    /// `did you mean `role`?`, or what to do when nothing is near.
    pub fn hint(&self, carried: &Carried<'_>) -> String {
        match self {
            Uncarried::Key {
                nearest: Some(n), ..
            } => format!(
                "did you mean {}? hosts carry {}",
                quoted(n),
                carried.key_list()
            ),
            Uncarried::Key { nearest: None, .. } => "no host carries any label yet".to_owned(),
            Uncarried::Value {
                key,
                nearest: Some(n),
                ..
            } => format!(
                "did you mean {}? hosts carry `{key}` with {}",
                quoted(n),
                carried.value_list(key)
            ),
            // Nothing near enough (or too long to compare): say what there is.
            Uncarried::Value {
                key, nearest: None, ..
            } if carried.carries_key(key) => {
                format!("hosts carry `{key}` with {}", carried.value_list(key))
            }
            Uncarried::Value {
                key, nearest: None, ..
            } => format!("no host carries `{key}` with any value"),
        }
    }
}

/// A selector label no host carries, as an error: it can only be a typo,
/// and an empty answer would hide it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .uncarried.message())]
pub struct NotCarried {
    pub uncarried: Uncarried,
    /// The nearest label, and what the hosts carry.
    hint: String,
}

/// The nearest label, and what the hosts carry.
impl Hinted for NotCarried {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(self.hint.clone().into())
    }
}

/// How many values a hint lists before `and N more`.
const VALUES_SHOWN: usize = 5;

/// Every label key the fleet's hosts carry, with the values they carry it
/// with, `datum/host` (the host names) included.
#[derive(Debug, Default)]
pub struct Carried<'f> {
    keys: BTreeMap<&'f str, BTreeSet<&'f str>>,
}

impl<'f> Carried<'f> {
    pub fn of(fleet: &'f Fleet) -> Carried<'f> {
        let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for host in &fleet.hosts {
            for l in &host.labels {
                keys.entry(fleet.sym(l.key))
                    .or_default()
                    .insert(fleet.sym(l.value));
            }
        }
        Carried { keys }
    }

    /// What is wrong with `key=value`, when no host carries it.
    pub fn explain(&self, key: &str, value: &str) -> Option<Uncarried> {
        self.explain_searching(key, value, true)
    }

    /// [`Carried::explain`], looking for the nearest label that exists only
    /// when `search` says so: each search compares the label with every
    /// key, or every value of its key, that hosts carry.
    pub fn explain_searching(&self, key: &str, value: &str, search: bool) -> Option<Uncarried> {
        match self.keys.get(key) {
            None => Some(Uncarried::Key {
                key: key.to_owned(),
                nearest: search
                    .then(|| nearest(key, self.keys.keys().copied()))
                    .flatten()
                    .map(str::to_owned),
            }),
            Some(values) if !values.contains(value) => Some(Uncarried::Value {
                key: key.to_owned(),
                value: value.to_owned(),
                nearest: search
                    .then(|| nearest(value, values.iter().copied()))
                    .flatten()
                    .map(str::to_owned),
            }),
            Some(_) => None,
        }
    }

    /// Whether some host carries the key.
    pub fn carries_key(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// `` `environment`, `role`, `site` ``: the keys, the first few of them.
    pub fn key_list(&self) -> String {
        quoted_list(self.keys.keys().copied(), self.keys.len())
    }

    /// `` `db`, `web` ``: the values of a key, the first few of them.
    pub fn value_list(&self, key: &str) -> String {
        let values = self.keys.get(key);
        quoted_list(
            values.into_iter().flatten().copied(),
            values.map_or(0, BTreeSet::len),
        )
    }
}

/// The hosts as data: each name with every label, `datum/host` included.
pub fn hosts_tree<'f>(fleet: &'f Fleet, selector: &Selector, hosts: &[HostId]) -> Tree<'f> {
    let selector = selector
        .labels
        .iter()
        .map(|(k, v)| {
            let value = match &v[..] {
                [one] => Tree::str(one.clone()),
                many => Tree::List(many.iter().map(|v| Tree::str(v.clone())).collect()),
            };
            (Cow::Owned(k.clone()), value)
        })
        .collect();
    let list = hosts
        .iter()
        .map(|&h| {
            let labels = fleet
                .labels_of(h)
                .into_iter()
                .map(|(k, v)| (Cow::Borrowed(k), Tree::str(v)))
                .collect();
            Tree::map()
                .with("host", Tree::str(&*fleet.host(h).name))
                .with("labels", Tree::Map(labels))
        })
        .collect();
    Tree::document("Hosts")
        .with("selector", Tree::Map(selector))
        .with("count", Tree::Int(hosts.len() as i64))
        .with("hosts", Tree::List(list))
}

fn quoted_list<'a>(items: impl Iterator<Item = &'a str>, len: usize) -> String {
    let mut s = items
        .take(VALUES_SHOWN)
        .map(quoted)
        .collect::<Vec<_>>()
        .join(", ");
    if len > VALUES_SHOWN {
        s.push_str(&format!(" and {} more", len - VALUES_SHOWN));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load;
    use crate::reader::MemReader;

    fn fleet() -> Fleet {
        let hosts = "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {role: web, site: london}\n---\n\
                     datum: v1alpha1\ntype: Host\nname: web-002\nlabels: {role: web, site: paris}\n---\n\
                     datum: v1alpha1\ntype: Host\nname: db-001\nlabels: {role: db, site: london}\n";
        let r = MemReader::new()
            .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
            .file("hosts.yaml", hosts);
        load(&r).unwrap()
    }

    fn names(fleet: &Fleet, hosts: &[HostId]) -> Vec<String> {
        hosts
            .iter()
            .map(|&h| fleet.host(h).name.to_string())
            .collect()
    }

    #[test]
    fn every_pair_must_hold() {
        let f = fleet();
        let s = Selector::parse(&["site=london", "role=web"]).unwrap();
        assert_eq!(s.text(), "role=web site=london");
        assert_eq!(names(&f, &s.hosts(&f)), ["web-001"]);
        let all = Selector::parse::<&str>(&[]).unwrap();
        assert_eq!(names(&f, &all.hosts(&f)), ["db-001", "web-001", "web-002"]);
        let one = Selector::parse(&["datum/host=web-002"]).unwrap();
        assert_eq!(names(&f, &one.hosts(&f)), ["web-002"]);
        let none = Selector::parse(&["role=db", "site=paris"]).unwrap();
        assert!(none.hosts(&f).is_empty());
    }

    #[test]
    fn malformed_pairs_are_refused() {
        for bad in ["role", "=web", "role=", " = "] {
            assert_eq!(
                Selector::parse(&[bad]),
                Err(SelectorError { text: bad.into() })
            );
        }
        // Only the first `=` splits: values may hold one.
        let s = Selector::parse(&["k=a=b"]).unwrap();
        assert_eq!(s.labels, [("k".to_owned(), vec!["a=b".to_owned()])]);
        for bad in ["role=web,", "role=,web", "role=web,,db"] {
            assert_eq!(
                Selector::parse(&[bad]),
                Err(SelectorError { text: bad.into() })
            );
        }
    }

    #[test]
    fn a_comma_separates_alternatives() {
        let f = fleet();
        let s = Selector::parse(&["role=web,db", "site=london"]).unwrap();
        assert_eq!(s.text(), "role=web,db site=london");
        assert_eq!(names(&f, &s.hosts(&f)), ["db-001", "web-001"]);
        let s = Selector::parse(&["site=paris,london,paris"]).unwrap();
        assert_eq!(s.text(), "site=paris,london");
        assert_eq!(names(&f, &s.hosts(&f)), ["db-001", "web-001", "web-002"]);
        // An alternative no host carries takes nothing away from the others,
        // and is reported, each one.
        let s = Selector::parse(&["role=web,wbe,dbb"]).unwrap();
        assert_eq!(names(&f, &s.hosts(&f)), ["web-001", "web-002"]);
        let u = s.uncarried(&Carried::of(&f));
        let messages: Vec<String> = u.iter().map(Uncarried::message).collect();
        assert_eq!(
            messages,
            ["no host carries `role=wbe`", "no host carries `role=dbb`"]
        );
    }

    #[test]
    fn requiring_carried_labels_fails_on_the_first_typo() {
        let f = fleet();
        let ok = Selector::parse(&["role=web", "site=london"]).unwrap();
        assert_eq!(ok.require_carried(&f), Ok(()));
        let typo = Selector::parse(&["site=london", "role=wbe"]).unwrap();
        let e = typo.require_carried(&f).unwrap_err();
        assert_eq!(e.to_string(), "no host carries `role=wbe`");
        assert_eq!(
            e.hint().as_deref(),
            Some("did you mean `web`? hosts carry `role` with `db`, `web`")
        );
    }

    #[test]
    fn uncarried_labels_name_the_nearest() {
        let f = fleet();
        let carried = Carried::of(&f);
        let s = Selector::parse(&["role=wbe", "rle=web", "site=london"]).unwrap();
        let u = s.uncarried(&carried);
        assert_eq!(
            u,
            [
                Uncarried::Key {
                    key: "rle".into(),
                    nearest: Some("role".into())
                },
                Uncarried::Value {
                    key: "role".into(),
                    value: "wbe".into(),
                    nearest: Some("web".into())
                },
            ]
        );
        assert_eq!(u[1].message(), "no host carries `role=wbe`");
        assert_eq!(
            u[1].hint(&carried),
            "did you mean `web`? hosts carry `role` with `db`, `web`"
        );
        assert_eq!(
            u[0].hint(&carried),
            "did you mean `role`? hosts carry `datum/host`, `role`, `site`"
        );
    }
}
