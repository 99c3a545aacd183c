//! One reader per field value type: text, paths, modes, booleans, ids,
//! words from a fixed set, lists of text and resource references.

use crate::diagnostic::{Code, Diagnostic};
use crate::distinct::Distinct;
use crate::hint::Hinted;
use crate::names::{self, Rule};
use crate::printable::quoted;
use crate::schema::{
    Field, Kind, PathError, ResourceId, SECONDS_MAX, Ty, Value, normalise_abs_path, normalise_mode,
    normalise_rel_path, suggest,
};
use crate::source::Span;
use crate::yaml::{Plain, Style, classify_plain};

use super::cx::{Cx, Scalar};
use super::{FieldValue, list};

fn text(s: &str) -> FieldValue {
    FieldValue::Value(Value::Str(s.into()))
}

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    /// A field's value, read as its type asks; `null` unsets the field.
    pub(super) fn field_value(&mut self, kind: Kind, field: Field, v: u32) -> Option<FieldValue> {
        if self.is_null(v) {
            return Some(FieldValue::Unset);
        }
        let what = format!("`{field}`");
        let value = match kind.ty(field) {
            Ty::Text => self.nonempty_text(v, &what),
            Ty::Content => self.text(v, &what).map(text),
            Ty::AbsPath => self.abs_path(v, &what),
            Ty::Source => self.source(v, &what),
            Ty::Template => self.template(v, &what),
            Ty::Mode => self.mode(v, &what),
            Ty::Bool => self.bool(field, v, &what),
            Ty::Id => self.id(field, v, &what),
            Ty::Word(words) => self.word(kind, field, words, v, &what),
            Ty::List => self.text_list(field, v, &what),
            Ty::Refs => self.refs(field, v, &what),
            Ty::Argv => self.argv(field, v, &what),
            Ty::Env => self.env(field, v, &what),
            Ty::Seconds => self.seconds(field, v, &what),
            Ty::Schedule => self.schedule(v, &what),
            Ty::Pass => self.pass(field, v, &what),
        }?;
        match names::rule(kind, field) {
            Some(rule) => self.named(kind, field, rule, v, value),
            None => Some(value),
        }
    }

    /// A value that is a name apply hands to the system, checked against
    /// its rule where it is written: the text, or each entry of a list.
    fn named(
        &mut self,
        kind: Kind,
        field: Field,
        rule: Rule,
        v: u32,
        value: FieldValue,
    ) -> Option<FieldValue> {
        let items: Vec<u32> = match self.scalar(v) {
            Scalar::Seq => self.doc.children(v).collect(),
            _ => vec![v],
        };
        let mut ok = true;
        for item in items {
            let Scalar::Text(t, _) = self.scalar(item) else {
                continue;
            };
            if let Some(why) = rule.check(t) {
                ok = false;
                let entry = if item == v { "" } else { "an entry of " };
                self.err(
                    Diagnostic::error(
                        Code::InvalidName,
                        format!("{} is not {}: {why}", quoted(t), rule.what()),
                    )
                    .at(self.span(item), format!("{entry}{kind} `{field}`"))
                    .hint(rule.hint()),
                );
            }
        }
        ok.then_some(value)
    }

    fn nonempty_text(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        if t.is_empty() {
            self.err(
                Diagnostic::error(Code::EmptyValue, format!("{what} must not be empty"))
                    .at(self.span(v), "empty")
                    .hint("write a value, or `null` to unset the field"),
            );
            return None;
        }
        Some(text(t))
    }

    fn abs_path(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        match normalise_abs_path(t) {
            Ok(p) => Some(text(&p)),
            Err(e) => {
                let hint = match e {
                    PathError::NotAbsolute => {
                        format!("write an absolute path, such as `/{t}`")
                    }
                    PathError::ParentDir => "write the path without `..`".into(),
                    _ => "write an absolute path".into(),
                };
                self.err(
                    Diagnostic::error(
                        Code::InvalidPath,
                        format!("{what} must be an absolute path, found `{t}`"),
                    )
                    .at(self.span(v), "not an absolute path")
                    .hint(hint),
                );
                None
            }
        }
    }

    fn source(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        match normalise_rel_path(t) {
            Ok(p) => Some(text(&p)),
            Err(e) => {
                let (msg, hint) = match e {
                    PathError::ParentDir => (
                        format!("`source: {t}` leaves the fleet repository through `..`"),
                        "source files live inside the repository; move the file under it"
                            .to_owned(),
                    ),
                    PathError::Absolute => (
                        format!("`source: {t}` is an absolute path"),
                        "write the path relative to the fleet root, such as `files/nginx.conf`"
                            .to_owned(),
                    ),
                    _ => (
                        format!("`source: {t}` does not name a file"),
                        "write the path relative to the fleet root, such as `files/nginx.conf`"
                            .to_owned(),
                    ),
                };
                self.err(
                    Diagnostic::error(Code::InvalidSource, msg)
                        .at(self.span(v), "here")
                        .hint(hint),
                );
                None
            }
        }
    }

    /// A template: a path under `templates/`, relative to the fleet root.
    fn template(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        let dir = super::TEMPLATE_DIR;
        match normalise_rel_path(t) {
            Ok(p)
                if p.strip_prefix(dir)
                    .is_some_and(|rest| rest.starts_with('/')) =>
            {
                Some(text(&p))
            }
            _ => {
                self.err(
                    Diagnostic::error(
                        Code::InvalidTemplate,
                        format!("`template: {t}` is not a file under `{dir}/`"),
                    )
                    .at(self.span(v), "here")
                    .hint(format!("templates live in the fleet's `{dir}/` directory: write `template: {dir}/resolv.conf.j2`, for example")),
                );
                None
            }
        }
    }

    /// A quoted octal mode: unquoted, YAML would read `0640` as decimal.
    fn mode(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let span = self.span(v);
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain)
                if matches!(
                    classify_plain(t),
                    Plain::Int(_) | Plain::BigInt | Plain::Float
                ) =>
            {
                let digits = t.trim_start_matches("0o");
                let suggestion = normalise_mode(digits).unwrap_or_else(|| "0640".into());
                self.err(
                    Diagnostic::error(Code::UnquotedMode, format!("`mode: {t}` must be quoted"))
                        .at(span, "an unquoted number")
                        .hint(format!("write `mode: \"{suggestion}\"`: unquoted, YAML reads {t} as a decimal number, not octal")),
                );
                None
            }
            Scalar::Text(t, _) => match normalise_mode(t) {
                Some(m) => Some(text(&m)),
                None => {
                    self.err(
                        Diagnostic::error(Code::InvalidMode, format!("`{t}` is not a file mode"))
                            .at(span, "not an octal mode")
                            .hint("a mode is 3 or 4 octal digits (0 to 7) in quotes, such as \"0640\""),
                    );
                    None
                }
            },
            _ => {
                self.type_error(
                    v,
                    what,
                    "a quoted octal mode",
                    "write `mode: \"0640\"`, for example",
                );
                None
            }
        }
    }

    fn bool(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if let Plain::Bool(b) = classify_plain(t) => {
                Some(FieldValue::Value(Value::Bool(b)))
            }
            Scalar::Text(t, style) => {
                let hint = if style == Style::Quoted && matches!(t, "true" | "false") {
                    format!("remove the quotes: `{field}: {t}`")
                } else {
                    format!("write `{field}: true` or `{field}: false`")
                };
                self.type_error(v, what, "true or false", hint);
                None
            }
            _ => {
                self.type_error(
                    v,
                    what,
                    "true or false",
                    format!("write `{field}: true` or `{field}: false`"),
                );
                None
            }
        }
    }

    /// A user or group id: an unquoted integer below 2^32 - 1.
    fn id(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if let Plain::Int(i) = classify_plain(t) => {
                if (0..=4_294_967_294).contains(&i) {
                    Some(FieldValue::Value(Value::Int(i)))
                } else {
                    self.err(
                        Diagnostic::error(Code::OutOfRange, format!("{what} {i} is out of range"))
                            .at(self.span(v), "out of range")
                            .hint("ids run from 0 to 4294967294"),
                    );
                    None
                }
            }
            _ => {
                self.type_error(
                    v,
                    what,
                    "an integer",
                    format!("write it unquoted, such as `{field}: 1000`"),
                );
                None
            }
        }
    }

    /// One word of a fixed set, such as `ensure`.
    fn word(
        &mut self,
        kind: Kind,
        field: Field,
        words: &'static [&'static str],
        v: u32,
        what: &str,
    ) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        if words.contains(&t) {
            return Some(text(t));
        }
        let hint = match suggest(t, words.iter().copied()) {
            Some(n) => {
                format!("did you mean `{n}`? {kind} `{field}` takes {}", list(words))
            }
            None => format!("{kind} `{field}` takes {}", list(words)),
        };
        self.err(
            Diagnostic::error(
                Code::InvalidValue,
                format!("`{t}` is not a valid {what} for {kind}"),
            )
            .at(self.span(v), "invalid value")
            .hint(hint),
        );
        None
    }

    /// A list of non-empty text; every bad entry is reported.
    fn text_list(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        if !matches!(self.scalar(v), Scalar::Seq) {
            self.type_error(v, what, "a list", format!("write `{field}: [a, b]`"));
            return None;
        }
        let mut items = Vec::new();
        let before = self.ok;
        self.ok = true;
        for item in self.doc.children(v) {
            if let Some(t) = self.text(item, &format!("an entry of {what}")) {
                if t.is_empty() {
                    self.err(
                        Diagnostic::error(Code::EmptyValue, format!("an entry of {what} is empty"))
                            .at(self.span(item), "empty")
                            .hint("remove it"),
                    );
                } else {
                    items.push(Box::<str>::from(t));
                }
            }
        }
        let ok = self.ok;
        self.ok = before && ok;
        ok.then(|| FieldValue::Value(Value::List(items.into_boxed_slice())))
    }

    /// A command line: a list whose first entry, the program, is not
    /// empty; arguments may be empty. No entry may hold a NUL byte, which
    /// no argument can carry.
    fn argv(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        let example = format!(
            "write `{field}: [/usr/bin/newaliases]` or `{field}: [systemctl, daemon-reload]`"
        );
        if !matches!(self.scalar(v), Scalar::Seq) {
            self.type_error(v, what, "a list: the program, then each argument", example);
            return None;
        }
        let entries: Vec<u32> = self.doc.children(v).collect();
        if entries.is_empty() {
            self.err(
                Diagnostic::error(Code::EmptyValue, format!("{what} is an empty list"))
                    .at(self.span(v), "no program")
                    .hint(example),
            );
            return None;
        }
        let mut items = Vec::with_capacity(entries.len());
        let before = self.ok;
        self.ok = true;
        for (i, item) in entries.into_iter().enumerate() {
            let which = if i == 0 {
                "the program of"
            } else {
                "an argument of"
            };
            let Some(t) = self.text(item, &format!("{which} {what}")) else {
                continue;
            };
            if t.contains('\0') {
                self.err(
                    Diagnostic::error(
                        Code::InvalidValue,
                        format!("{which} {what} holds a NUL byte"),
                    )
                    .at(self.span(item), "NUL byte")
                    .hint("no program or argument can carry a NUL byte; remove it"),
                );
            } else if i == 0 && t.is_empty() {
                self.err(
                    Diagnostic::error(Code::EmptyValue, format!("the program of {what} is empty"))
                        .at(self.span(item), "empty")
                        .hint(example.clone()),
                );
            } else {
                items.push(Box::<str>::from(t));
            }
        }
        let ok = self.ok;
        self.ok = before && ok;
        ok.then(|| FieldValue::Value(Value::List(items.into_boxed_slice())))
    }

    /// Environment variables: `NAME=value` entries, each name once.
    fn env(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        let example = format!("write `{field}: [\"HOME=/root\", \"LC_ALL=C.UTF-8\"]`");
        if !matches!(self.scalar(v), Scalar::Seq) {
            self.type_error(v, what, "a list of NAME=value entries", example);
            return None;
        }
        let mut items: Vec<Box<str>> = Vec::new();
        let mut names = Distinct::new();
        let before = self.ok;
        self.ok = true;
        for item in self.doc.children(v) {
            let Some(t) = self.text(item, &format!("an entry of {what}")) else {
                continue;
            };
            let name = t.split_once('=').map(|(n, _)| n);
            let valid = name.is_some_and(|n| {
                let mut c = n.chars();
                c.next()
                    .is_some_and(|f| f == '_' || f.is_ascii_alphabetic())
                    && c.all(|c| c == '_' || c.is_ascii_alphanumeric())
            });
            if !valid || t.contains('\0') {
                self.err(
                    Diagnostic::error(
                        Code::InvalidValue,
                        format!("{} is not a NAME=value entry of {what}", quoted(t)),
                    )
                    .at(self.span(item), "not NAME=value")
                    .hint("a name is letters, digits and `_`, not starting with a digit, then `=` and the value (which may be empty), such as `LC_ALL=C.UTF-8`"),
                );
                continue;
            }
            let name = name.unwrap_or_default();
            if !names.first(name) {
                self.err(
                    Diagnostic::error(Code::InvalidValue, format!("{what} sets `{name}` twice"))
                        .at(self.span(item), "again")
                        .hint("keep one entry for each name"),
                );
                continue;
            }
            items.push(t.into());
        }
        let ok = self.ok;
        self.ok = before && ok;
        ok.then(|| FieldValue::Value(Value::List(items.into_boxed_slice())))
    }

    /// A whole number of seconds, unquoted, from 1 to a day.
    fn seconds(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if let Plain::Int(i) = classify_plain(t) => {
                if (1..=SECONDS_MAX).contains(&i) {
                    Some(FieldValue::Value(Value::Int(i)))
                } else {
                    self.err(
                        Diagnostic::error(Code::OutOfRange, format!("{what} {i} is out of range"))
                            .at(self.span(v), "out of range")
                            .hint(format!(
                                "{field} is a number of seconds from 1 to {SECONDS_MAX} (a day)"
                            )),
                    );
                    None
                }
            }
            _ => {
                self.type_error(
                    v,
                    what,
                    "a whole number of seconds",
                    format!("write it unquoted, such as `{field}: 600`"),
                );
                None
            }
        }
    }

    /// A cron schedule ([`crate::cron`]), kept as written but for the
    /// spaces around it.
    fn schedule(&mut self, v: u32, what: &str) -> Option<FieldValue> {
        let t = self.text(v, what)?;
        match crate::cron::check(t) {
            None => Some(text(t.trim())),
            Some(why) => {
                self.err(
                    Diagnostic::error(Code::InvalidValue, format!("`{t}` is not a cron schedule: {why}"))
                        .at(self.span(v), "not a cron schedule")
                        .hint("write five fields, minute hour day-of-month month day-of-week, such as `*/15 * * * *` or `30 2 * * mon`, or a shortcut such as `@daily`"),
                );
                None
            }
        }
    }

    /// fsck's pass of a Mount: 0 (not checked), 1 (the root) or 2.
    fn pass(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if let Plain::Int(i @ 0..=2) = classify_plain(t) => {
                Some(FieldValue::Value(Value::Int(i)))
            }
            _ => {
                self.type_error(
                    v,
                    what,
                    "0, 1 or 2",
                    format!("write `{field}: 2` for a filesystem fsck checks after the root, `{field}: 0` for none"),
                );
                None
            }
        }
    }

    /// Resource ids (`requires`, `restart_on`): one, or a list; repeats are
    /// dropped, every bad entry is reported.
    fn refs(&mut self, field: Field, v: u32, what: &str) -> Option<FieldValue> {
        let items: Vec<u32> = match self.scalar(v) {
            Scalar::Seq => self.doc.children(v).collect(),
            Scalar::Text(..) => vec![v],
            Scalar::Map => {
                self.type_error(
                    v,
                    what,
                    "a list of resource ids",
                    format!("write `{field}: [\"Package[nginx]\"]`"),
                );
                return None;
            }
        };
        let mut refs: Vec<(ResourceId, Span)> = Vec::new();
        let before = self.ok;
        self.ok = true;
        for item in items {
            self.reference(field, item, what, &mut refs);
        }
        let ok = self.ok;
        self.ok = before && ok;
        ok.then_some(FieldValue::Refs(refs))
    }

    fn reference(
        &mut self,
        field: Field,
        item: u32,
        what: &str,
        refs: &mut Vec<(ResourceId, Span)>,
    ) {
        match self.scalar(item) {
            Scalar::Text(t, _) => match ResourceId::parse(t) {
                Ok(id) => {
                    if !refs.iter().any(|(r, _)| *r == id) {
                        refs.push((id, self.span(item)));
                    }
                }
                Err(e) => {
                    let (msg, hint) = (e.to_string(), e.hint().unwrap_or_default());
                    self.err(
                        Diagnostic::error(Code::InvalidResource, msg)
                            .at(self.span(item), "here")
                            .hint(hint),
                    );
                }
            },
            Scalar::Seq => self.type_error(
                item,
                &format!("an entry of {what}"),
                "a resource id",
                format!("inside `[...]`, quote each id: `{field}: [\"Package[nginx]\"]`"),
            ),
            Scalar::Map => self.type_error(
                item,
                &format!("an entry of {what}"),
                "a resource id",
                "write ids such as Package[nginx]",
            ),
        }
    }
}
