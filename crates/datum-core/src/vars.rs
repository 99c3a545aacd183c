//! Values a layer declares under `vars:` for templates: their shapes
//! (text, numbers, booleans, lists, mappings), how they compare and print,
//! and which names a var may take.
//!
//! A var folds like a resource field (see `resolve`): it is one value,
//! replaced and compared whole, whatever its shape.

use std::borrow::Cow;
use std::fmt;

use crate::emit::Tree;

/// A var's value as written, after reading under the YAML 1.2 core schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VarValue {
    Str(Box<str>),
    Int(i64),
    /// A float, kept as the shortest text that reads back as the same
    /// number (`1.50` is `1.5`), so equal numbers compare equal.
    Float(Box<str>),
    Bool(bool),
    List(Box<[VarValue]>),
    /// Entries sorted by key.
    Map(Box<[(Box<str>, VarValue)]>),
}

/// What one layer says of one var.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VarSetting {
    Value(VarValue),
    /// `null`: unsets what lower layers set.
    Unset,
}

impl VarValue {
    /// A float written in YAML (`1.5`, `1e3`, `.inf`), in its shortest form.
    pub fn float(written: &str) -> VarValue {
        let lower = written.to_ascii_lowercase();
        let f: f64 = match lower.trim_start_matches('+') {
            ".inf" => f64::INFINITY,
            "-.inf" => f64::NEG_INFINITY,
            ".nan" => f64::NAN,
            other => other.parse().unwrap_or(f64::NAN),
        };
        VarValue::Float(format_float(f).into())
    }

    /// The float a [`VarValue::Float`] holds.
    pub fn as_f64(text: &str) -> f64 {
        match text {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            t => t.parse().unwrap_or(f64::NAN),
        }
    }
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else if f == f.trunc() && f.abs() < 1e16 {
        // Keep the point: `1.0` is a float, `1` an integer.
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

impl VarValue {
    /// The value as data for YAML and JSON output; a float as its text.
    pub fn tree(&self) -> Tree<'_> {
        match self {
            VarValue::Str(s) | VarValue::Float(s) => Tree::str(&**s),
            VarValue::Int(i) => Tree::Int(*i),
            VarValue::Bool(b) => Tree::Bool(*b),
            VarValue::List(items) => Tree::List(items.iter().map(VarValue::tree).collect()),
            VarValue::Map(entries) => Tree::Map(
                entries
                    .iter()
                    .map(|(k, v)| (Cow::Borrowed(&**k), v.tree()))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for VarValue {
    /// Flow style on one line: `[1.1.1.1, 8.8.8.8]`, `{a: 1, b: x}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarValue::Str(s) => f.write_str(s),
            VarValue::Int(i) => write!(f, "{i}"),
            VarValue::Float(t) => f.write_str(t),
            VarValue::Bool(b) => write!(f, "{b}"),
            VarValue::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            VarValue::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`, at most 128 characters: a name a template
/// reads as `vars.NAME` and the command line names as `vars.NAME`.
pub fn valid_var_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_compare_by_value_and_keep_their_point() {
        assert_eq!(VarValue::float("1.50"), VarValue::float("1.5"));
        assert_eq!(VarValue::float("1e3"), VarValue::Float("1000.0".into()));
        assert_eq!(VarValue::float("-.INF"), VarValue::Float("-inf".into()));
        assert_eq!(VarValue::float(".nan"), VarValue::Float("NaN".into()));
        assert_eq!(VarValue::as_f64("1000.0"), 1000.0);
    }

    #[test]
    fn values_print_in_flow_style() {
        let v = VarValue::Map(
            vec![
                ("a".into(), VarValue::Int(1)),
                (
                    "b".into(),
                    VarValue::List(vec![VarValue::Str("x".into()), VarValue::Bool(true)].into()),
                ),
            ]
            .into(),
        );
        assert_eq!(v.to_string(), "{a: 1, b: [x, true]}");
    }

    #[test]
    fn names() {
        for ok in ["dns", "_x", "ntp_servers", "a1"] {
            assert!(valid_var_name(ok), "{ok}");
        }
        for bad in ["", "1a", "a.b", "a-b", "ä", &"x".repeat(129)] {
            assert!(!valid_var_name(bad), "{bad}");
        }
    }
}
