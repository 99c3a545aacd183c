//! Choosing hosts by label, in the forms kubectl users know, and the
//! labels the fleet's hosts actually carry, which is what a typo is
//! measured against.
//!
//! A selector is requirements, every one of which must hold; within an
//! argument a comma or a blank separates them (`role=web,site=london`), and several
//! arguments add up the same way. A requirement is one of:
//!
//! - `k=v` (or `k==v`): the host carries `k` with value `v`;
//! - `k!=v`: it does not (a host without `k` holds);
//! - `k in (a,b)`: it carries `k` with one of the values;
//! - `k notin (a,b)`: it does not (a host without `k` holds);
//! - `k`: it carries `k`, any value; `!k`: it does not carry `k`.
//!
//! A value may be a glob: `*` any run of characters, `?` one
//! (`datum/host=web-*`). `datum/host=web-001` picks one host.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

mod parse;

pub use parse::SelectorError;

use crate::emit::Tree;
use crate::fleet::{Fleet, HostId};
use crate::hint::Hinted;
use crate::printable::quoted;
use crate::schema::nearest;

/// Requirements, every one of which must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// Sorted, without repeats.
    pub requirements: Vec<Requirement>,
}

/// One requirement on one label key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
}

/// What a requirement asks of its key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// `k=v`, `k in (a,b)`: one of the values (globs allowed), in the order
    /// given, without repeats.
    In(Vec<String>),
    /// `k!=v`, `k notin (a,b)`: none of them, or no such key.
    NotIn(Vec<String>),
    /// `k`: the key, any value.
    Exists,
    /// `!k`: not the key.
    Absent,
}

impl Op {
    /// The operator as JSON names it.
    pub fn word(&self) -> &'static str {
        match self {
            Op::In(_) => "in",
            Op::NotIn(_) => "notin",
            Op::Exists => "exists",
            Op::Absent => "absent",
        }
    }

    pub fn values(&self) -> &[String] {
        match self {
            Op::In(v) | Op::NotIn(v) => v,
            Op::Exists | Op::Absent => &[],
        }
    }
}

impl Requirement {
    /// Whether a host with these labels (sorted by key) meets it.
    pub fn holds(&self, labels: &[(&str, &str)]) -> bool {
        let value = labels
            .binary_search_by(|(k, _)| (*k).cmp(&self.key))
            .ok()
            .map(|i| labels[i].1);
        let any = |values: &[String], v: &str| values.iter().any(|p| glob(p, v));
        match (&self.op, value) {
            (Op::In(values), Some(v)) => any(values, v),
            (Op::In(_), None) => false,
            (Op::NotIn(values), Some(v)) => !any(values, v),
            (Op::NotIn(_), None) => true,
            (Op::Exists, found) => found.is_some(),
            (Op::Absent, found) => found.is_none(),
        }
    }

    /// The requirement as written back: `role in (web,cache)`.
    pub fn text(&self) -> String {
        let k = &self.key;
        match &self.op {
            Op::In(v) if v.len() == 1 => format!("{k}={}", v[0]),
            Op::In(v) => format!("{k} in ({})", v.join(",")),
            Op::NotIn(v) if v.len() == 1 => format!("{k}!={}", v[0]),
            Op::NotIn(v) => format!("{k} notin ({})", v.join(",")),
            Op::Exists => k.clone(),
            Op::Absent => format!("!{k}"),
        }
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of
/// characters and `?` for one. Linear in practice: one backtrack point.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Whether a value is a glob rather than one value.
fn is_glob(value: &str) -> bool {
    value.contains(['*', '?'])
}

impl Selector {
    /// Reads selector arguments, each one or more requirements separated
    /// by commas; all of them must hold.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Selector, SelectorError> {
        let mut requirements = Vec::with_capacity(args.len());
        for arg in args {
            let text = arg.as_ref();
            requirements.extend(parse::requirements(text)?);
        }
        requirements.sort();
        requirements.dedup();
        Ok(Selector { requirements })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The selector as written back: `role in (web,cache),site=london`.
    pub fn text(&self) -> String {
        self.requirements
            .iter()
            .map(Requirement::text)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The hosts it selects, in name order.
    pub fn hosts(&self, fleet: &Fleet) -> Vec<HostId> {
        (0..fleet.hosts.len() as u32)
            .map(HostId)
            .filter(|&h| {
                let labels = fleet.labels_of(h);
                self.requirements.iter().all(|r| r.holds(&labels))
            })
            .collect()
    }

    /// Fails on the first key or value no host of `fleet` carries.
    pub fn require_carried(&self, fleet: &Fleet) -> Result<(), NotCarried> {
        let carried = Carried::of(fleet);
        match self.uncarried(&carried).into_iter().next() {
            Some((uncarried, bare)) => {
                let mut hint = uncarried.hint(&carried);
                if bare {
                    hint.push_str(
                        "; a comma joins requirements: for either of two values write role in (web,cache)",
                    );
                }
                Err(NotCarried { hint, uncarried })
            }
            None => Ok(()),
        }
    }

    /// The keys and values no host carries, each with the nearest label
    /// that exists, and whether it was a bare key (`cache` in
    /// `role=web,cache`, which once meant either value). Every value is
    /// checked, but a glob, which may match nothing, is not a typo.
    pub fn uncarried(&self, carried: &Carried<'_>) -> Vec<(Uncarried, bool)> {
        let mut out = Vec::new();
        for r in &self.requirements {
            let values = r.op.values();
            if values.is_empty() {
                if let Some(u) = carried.explain_key(&r.key) {
                    out.push((u, r.op == Op::Exists));
                }
                continue;
            }
            for v in values {
                let found = if is_glob(v) {
                    carried.explain_key(&r.key)
                } else {
                    carried.explain(&r.key, v)
                };
                out.extend(found.map(|u| (u, false)));
            }
        }
        out.dedup();
        out
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

    /// What is wrong with `key`, when no host carries it.
    pub fn explain_key(&self, key: &str) -> Option<Uncarried> {
        (!self.keys.contains_key(key)).then(|| Uncarried::Key {
            key: key.to_owned(),
            nearest: nearest(key, self.keys.keys().copied()).map(str::to_owned),
        })
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
        .requirements
        .iter()
        .map(|r| {
            Tree::map()
                .with("key", Tree::str(r.key.clone()))
                .with("op", Tree::str(r.op.word()))
                .with(
                    "values",
                    Tree::List(r.op.values().iter().map(|v| Tree::str(v.clone())).collect()),
                )
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
        .with("selector", Tree::List(selector))
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
    use crate::hint::Fault;
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

    fn select(f: &Fleet, args: &[&str]) -> Vec<String> {
        names(f, &Selector::parse(args).unwrap().hosts(f))
    }

    #[test]
    fn every_requirement_must_hold() {
        let f = fleet();
        let s = Selector::parse(&["site=london", "role=web"]).unwrap();
        assert_eq!(s.text(), "role=web,site=london");
        assert_eq!(names(&f, &s.hosts(&f)), ["web-001"]);
        assert_eq!(select(&f, &["site=london,role=web"]), ["web-001"]);
        assert_eq!(select(&f, &[]), ["db-001", "web-001", "web-002"]);
        assert_eq!(select(&f, &["datum/host=web-002"]), ["web-002"]);
        assert_eq!(select(&f, &["datum/host==web-002"]), ["web-002"]);
        assert!(select(&f, &["role=db", "site=paris"]).is_empty());
    }

    #[test]
    fn every_form() {
        let f = fleet();
        assert_eq!(select(&f, &["role!=web"]), ["db-001"]);
        assert_eq!(
            select(&f, &["role in (web, db)"]),
            ["db-001", "web-001", "web-002"]
        );
        assert_eq!(select(&f, &["site notin (london)"]), ["web-002"]);
        assert_eq!(select(&f, &["role"]), ["db-001", "web-001", "web-002"]);
        assert_eq!(select(&f, &["tier!=x"]), ["db-001", "web-001", "web-002"]);
        assert_eq!(select(&f, &["!tier"]), ["db-001", "web-001", "web-002"]);
        assert!(select(&f, &["!role"]).is_empty());
        assert_eq!(select(&f, &["datum/host=web-*"]), ["web-001", "web-002"]);
        assert_eq!(select(&f, &["datum/host!=*-001"]), ["web-002"]);
        assert_eq!(select(&f, &["datum/host=web-00?,site=paris"]), ["web-002"]);
        let s = Selector::parse(&["role in (web,db,web)", "!tier", "site"]).unwrap();
        assert_eq!(s.text(), "role in (web,db),site,!tier");
    }

    #[test]
    fn globs() {
        assert!(glob("web-*", "web-001"));
        assert!(glob("*", ""));
        assert!(glob("*-0?1", "db-001"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("web-*", "db-001"));
        assert!(!glob("web-?", "web-10"));
        assert!(glob("exact", "exact"));
    }

    #[test]
    fn malformed_selectors_say_where() {
        let at = |text: &str| {
            let e = Selector::parse(&[text]).unwrap_err();
            (e.at, e.what)
        };
        assert_eq!(at("=web"), (1, "a label key expected, found `=`".into()));
        assert_eq!(at("role="), (6, "a value for `role` expected".into()));
        assert_eq!(at("role in (web"), (13, "`,` or `)` expected".into()));
        assert_eq!(at("role in web"), (9, "`(` expected".into()));
        assert_eq!(at("role!web"), (6, "`=` expected after `!`".into()));
        assert_eq!(at("role=web,"), (10, "a label key expected".into()));
        assert_eq!(
            at("role web"),
            (
                6,
                "`=`, `!=`, `in`, `notin` or `,` expected, found `w`".into()
            )
        );
        assert_eq!(
            at("role=web)"),
            (9, "`,` expected between requirements, found `)`".into())
        );
        let e = Selector::parse(&["role in (web"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`role in (web` is not a label selector: `,` or `)` expected at character 13"
        );
        assert_eq!(e.fault(), Fault::Usage);
    }

    #[test]
    fn a_bare_key_after_a_value_says_how_to_write_either() {
        let f = fleet();
        let e = Selector::parse(&["role=web,db"])
            .unwrap()
            .require_carried(&f)
            .unwrap_err();
        assert_eq!(e.to_string(), "no host carries label key `db`");
        assert!(
            e.hint().unwrap().ends_with(
                "a comma joins requirements: for either of two values write role in (web,cache)"
            ),
            "{:?}",
            e.hint()
        );
    }

    #[test]
    fn requiring_carried_labels_fails_on_the_first_typo() {
        let f = fleet();
        let ok = Selector::parse(&["role=web", "site=london"]).unwrap();
        assert_eq!(ok.require_carried(&f), Ok(()));
        // A glob may match nothing; it is no typo.
        let glob = Selector::parse(&["datum/host=zz-*"]).unwrap();
        assert_eq!(glob.require_carried(&f), Ok(()));
        let typo = Selector::parse(&["site=london", "role=wbe"]).unwrap();
        let e = typo.require_carried(&f).unwrap_err();
        assert_eq!(e.to_string(), "no host carries `role=wbe`");
        assert_eq!(
            e.hint().as_deref(),
            Some("did you mean `web`? hosts carry `role` with `db`, `web`")
        );
        // In a negation too: `role!=wbe` would select every host.
        let typo = Selector::parse(&["role notin (wbe)"]).unwrap();
        assert!(typo.require_carried(&f).is_err());
        let typo = Selector::parse(&["!rle"]).unwrap();
        assert_eq!(
            typo.require_carried(&f).unwrap_err().to_string(),
            "no host carries label key `rle`"
        );
    }

    #[test]
    fn uncarried_labels_name_the_nearest() {
        let f = fleet();
        let carried = Carried::of(&f);
        let s = Selector::parse(&["role=wbe", "rle=web", "site=london"]).unwrap();
        let u: Vec<Uncarried> = s.uncarried(&carried).into_iter().map(|(u, _)| u).collect();
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
