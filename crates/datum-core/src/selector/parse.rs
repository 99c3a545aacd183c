//! Reading a selector argument: requirements separated by commas, each
//! error naming the character where reading stopped.

use std::borrow::Cow;

use super::{Op, Requirement};
use crate::hint::{Fault, Hinted};

/// The requirements one argument holds.
pub fn requirements(text: &str) -> Result<Vec<Requirement>, SelectorError> {
    Parser {
        text,
        chars: text.char_indices().collect(),
        pos: 0,
    }
    .all()
}

/// Why an argument is not a selector, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a label selector: {what} at character {at}")]
pub struct SelectorError {
    pub text: String,
    /// The character (from 1) where reading stopped.
    pub at: usize,
    pub what: String,
    pub hint: String,
}

/// How to write what was meant; a malformed selector is bad usage.
impl Hinted for SelectorError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(self.hint.clone().into())
    }

    fn fault(&self) -> Fault {
        Fault::Usage
    }
}

/// The forms, for hints.
const FORMS: &str = "write role=web, role!=web, role in (web,cache), role notin (db), role (has the key) or !role, a comma between requirements; values may be globs (datum/host=web-*)";

/// Reads one argument: requirements separated by commas.
struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: impl Into<String>, hint: impl Into<String>) -> SelectorError {
        SelectorError {
            text: self.text.to_owned(),
            at: self.pos + 1,
            what: what.into(),
            hint: hint.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }

    fn rest(&self) -> &'a str {
        match self.chars.get(self.pos) {
            Some(&(b, _)) => &self.text[b..],
            None => "",
        }
    }

    fn blanks(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// A key or a value: up to a blank or one of `=!,()`.
    fn word(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || "=!,()".contains(c) {
                break;
            }
            out.push(c);
            self.pos += 1;
        }
        out
    }

    fn key(&mut self) -> Result<String, SelectorError> {
        self.blanks();
        let key = self.word();
        if key.is_empty() {
            let what = match self.peek() {
                Some(c) => format!("a label key expected, found `{c}`"),
                None => "a label key expected".to_owned(),
            };
            return Err(self.error(what, FORMS));
        }
        Ok(key)
    }

    fn value(&mut self, key: &str) -> Result<String, SelectorError> {
        self.blanks();
        let value = self.word();
        if value.is_empty() {
            return Err(self.error(
                format!("a value for `{key}` expected"),
                format!("write {key}=VALUE; `{key}` alone selects hosts that carry the key"),
            ));
        }
        Ok(value)
    }

    /// `(a,b)` after `in` or `notin`.
    fn set(&mut self, key: &str) -> Result<Vec<String>, SelectorError> {
        self.blanks();
        if self.peek() != Some('(') {
            return Err(self.error(
                "`(` expected",
                format!("write {key} in (a,b) or {key} notin (a,b)"),
            ));
        }
        self.pos += 1;
        let mut values: Vec<String> = Vec::new();
        loop {
            let v = self.value(key)?;
            if !values.contains(&v) {
                values.push(v);
            }
            self.blanks();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(')') => {
                    self.pos += 1;
                    return Ok(values);
                }
                _ => {
                    return Err(self.error(
                        "`,` or `)` expected",
                        format!("close the set: {key} in (a,b)"),
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        self.blanks();
        if self.peek() == Some('!') {
            self.pos += 1;
            let key = self.key()?;
            return Ok(Requirement {
                key,
                op: Op::Absent,
            });
        }
        let key = self.key()?;
        self.blanks();
        let op = match self.peek() {
            None | Some(',') => Op::Exists,
            Some('=') => {
                self.pos += 1;
                if self.peek() == Some('=') {
                    self.pos += 1;
                }
                Op::In(vec![self.value(&key)?])
            }
            Some('!') => {
                self.pos += 1;
                if self.peek() != Some('=') {
                    return Err(self.error("`=` expected after `!`", format!("write {key}!=VALUE")));
                }
                self.pos += 1;
                Op::NotIn(vec![self.value(&key)?])
            }
            _ if self.rest().starts_with("notin") => {
                self.pos += "notin".len();
                Op::NotIn(self.set(&key)?)
            }
            _ if self.rest().starts_with("in") => {
                self.pos += "in".len();
                Op::In(self.set(&key)?)
            }
            Some(c) => {
                return Err(self.error(
                    format!("`=`, `!=`, `in`, `notin` or `,` expected, found `{c}`"),
                    FORMS,
                ));
            }
        };
        Ok(Requirement { key, op })
    }

    fn all(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut out = vec![self.requirement()?];
        loop {
            self.blanks();
            match self.peek() {
                None => return Ok(out),
                Some(',') => {
                    self.pos += 1;
                    out.push(self.requirement()?);
                }
                // A blank between requirements joins them too, as separate
                // arguments do: `role=web site=london`.
                Some(c) if !"()=".contains(c) => out.push(self.requirement()?),
                Some(c) => {
                    return Err(self.error(
                        format!("`,` expected between requirements, found `{c}`"),
                        "a comma joins requirements that must all hold: role=web,site=london",
                    ));
                }
            }
        }
    }
}
