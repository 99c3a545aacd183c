//! The schema of a field whose value is a name apply hands to the system,
//! or a line it writes into a system file ([`crate::names`]).

use crate::emit::Tree;
use crate::names::Rule;
use crate::schema::Ty;

use super::{described, list_schema, types};

/// A name apply hands to the system ([`crate::names`]): text, or a list of
/// texts, that follows the rule. A number is not taken as a name here,
/// although the loader reads an unquoted `1.5` as the text `1.5`; a
/// version is the exception, where `version: 15` is common.
pub(super) fn name_schema(ty: Ty, rule: Rule) -> Tree<'static> {
    let (pattern, nots) = rule.patterns();
    let types_of = match rule {
        Rule::Version => vec!["string", "number"],
        // A value the kernel or cron reads as text: `value: 1` is `"1"`.
        Rule::OneLine => vec!["string", "number", "boolean"],
        _ => vec!["string", "boolean"],
    };
    let mut one = Tree::map()
        .with("type", Tree::strs(types_of.iter().copied()))
        .with("pattern", Tree::str(pattern));
    let mut all: Vec<Tree<'static>> = nots
        .iter()
        .map(|p| {
            Tree::map().with(
                "not",
                Tree::map()
                    .with("type", Tree::str("string"))
                    .with("pattern", Tree::str(*p)),
            )
        })
        .collect();
    if rule == Rule::Version {
        all.push(
            Tree::map().with(
                "not",
                Tree::map()
                    .with("type", Tree::str("number"))
                    .with("exclusiveMaximum", Tree::Int(0)),
            ),
        );
    }
    if rule == Rule::Unit {
        // systemctl adds `.service` to a name without a suffix.
        all.push(Tree::map().with(
            "anyOf",
            Tree::List(vec![
                Tree::map()
                    .with("pattern", Tree::str(r"\."))
                    .with("maxLength", Tree::Int(crate::names::UNIT_MAX as i64)),
                Tree::map()
                    .with("not", Tree::map().with("pattern", Tree::str(r"\.")))
                    .with(
                        "maxLength",
                        Tree::Int((crate::names::UNIT_MAX - ".service".len()) as i64),
                    ),
            ]),
        ));
    }
    if !all.is_empty() {
        one.push("allOf", Tree::List(all));
    }
    match ty {
        // NAME=value entries, each also held to the rule.
        Ty::Env => {
            let mut env = list_schema(Ty::Env);
            if let Tree::Map(entries) = &mut env
                && let Some((_, Tree::Map(items))) = entries.iter_mut().find(|(k, _)| k == "items")
            {
                items.push((
                    "allOf".into(),
                    Tree::List(vec![Tree::map().with("pattern", Tree::str(pattern))]),
                ));
            }
            env
        }
        Ty::List => described(format!(
            "A list of {}s, replaced whole by a higher layer.",
            rule.what().trim_start_matches("a ")
        ))
        .with("type", types(&["array", "null"]))
        .with("items", one),
        _ => described(format!("{} (or null).", capitalised(rule.what()))).with(
            "anyOf",
            Tree::List(vec![Tree::map().with("type", Tree::str("null")), one]),
        ),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
