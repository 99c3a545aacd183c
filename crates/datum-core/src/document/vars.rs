//! A layer's `vars:`: names a template reads as `vars.NAME`, each with a
//! value of any shape (text, number, boolean, list, mapping), or `null` to
//! unset what a lower layer set.

use crate::diagnostic::{Code, Diagnostic};
use crate::vars::{VarSetting, VarValue, valid_var_name};
use crate::yaml::{Plain, Style, classify_plain};

use super::VarDecl;
use super::cx::{Cx, Scalar};

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    /// `vars:`, sorted by name; every bad name and value is reported.
    pub(super) fn vars(&mut self, v: u32) -> Vec<VarDecl> {
        if self.is_null(v) {
            return Vec::new();
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`vars`",
                "a mapping of names to values",
                "write `vars: {ntp_server: ntp.example.org}`, for example",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (name, k, val) in self.entries(v) {
            if !valid_var_name(name) {
                self.err(
                    Diagnostic::error(
                        Code::InvalidVarName,
                        format!("`{name}` is not a var name"),
                    )
                    .at(self.span(k), "invalid var name")
                    .hint("a var name is letters, digits and `_`, not starting with a digit (templates read it as `vars.NAME`): write `ntp_server`, not `ntp-server`"),
                );
                continue;
            }
            let setting = if self.is_null(val) {
                VarSetting::Unset
            } else {
                match self.var_value(val, name) {
                    Some(value) => VarSetting::Value(value),
                    None => continue,
                }
            };
            out.push(VarDecl {
                name: name.into(),
                name_span: self.span(k),
                span: self.span(val),
                setting,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// One value, whatever its shape; `null` only unsets a whole var.
    fn var_value(&mut self, v: u32, name: &str) -> Option<VarValue> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                Plain::Null => {
                    self.err(
                        Diagnostic::error(
                            Code::WrongType,
                            format!("`vars.{name}` holds a null inside it"),
                        )
                        .at(self.span(v), "null")
                        .hint("`null` unsets a whole var (`name: null`); inside a list or mapping, write a value or leave the entry out"),
                    );
                    None
                }
                Plain::Bool(b) => Some(VarValue::Bool(b)),
                Plain::Int(i) => Some(VarValue::Int(i)),
                Plain::Float => Some(VarValue::float(t)),
                // An integer too large for 64 bits is not text in
                // disguise: it would render as one number yet compare as
                // a string.
                Plain::BigInt => {
                    self.err(
                        Diagnostic::error(
                            Code::OutOfRange,
                            format!("`vars.{name}` holds an integer that does not fit in 64 bits"),
                        )
                        .at(self.span(v), "out of range")
                        .hint("an integer is from -9223372036854775808 to 9223372036854775807; quote it to keep it as text"),
                    );
                    None
                }
                Plain::Str => Some(VarValue::Str(t.into())),
            },
            Scalar::Text(t, _) => Some(VarValue::Str(t.into())),
            Scalar::Seq => {
                let items: Vec<u32> = self.doc.children(v).collect();
                let mut out = Vec::with_capacity(items.len());
                let mut ok = true;
                for item in items {
                    match self.var_value(item, name) {
                        Some(x) => out.push(x),
                        None => ok = false,
                    }
                }
                ok.then(|| VarValue::List(out.into_boxed_slice()))
            }
            Scalar::Map => {
                let mut out: Vec<(Box<str>, VarValue)> = Vec::new();
                let mut ok = true;
                for (key, _, val) in self.entries(v) {
                    match self.var_value(val, name) {
                        Some(x) => out.push((key.into(), x)),
                        None => ok = false,
                    }
                }
                out.sort_by(|a, b| a.0.cmp(&b.0));
                ok.then(|| VarValue::Map(out.into_boxed_slice()))
            }
        }
    }
}
