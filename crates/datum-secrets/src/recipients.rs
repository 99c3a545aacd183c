//! The `PATH.recipients` file beside each secret: who it was encrypted to.
//!
//! Age ciphertext cannot say this itself: an SSH stanza carries only a
//! four-byte tag of its key and a native stanza nothing at all. So the
//! file is the record that `rekey --check` and `check` compare with what
//! the resolution wants.
//!
//! The format, one recipient a line, fields separated by one space:
//!
//! ```text
//! # Recipients of the secret beside this file. Written by `datum secret`; do not edit.
//! admin SHA256:4k2dxA0bOrw0PdHGqpmUAtx8OLmo0cOVSNDwyULV4Fc
//! admin age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
//! host db-01 SHA256:p6oGA4bw0bQ2E+0zQKnW5L6oFJtoVrR2D7kTYlRxGvE
//! host web-01 SHA256:Zr3j1A3iAyq/7zhGrlCY38xO7HYFsqrR4bVWdBzhgA0
//! ```
//!
//! - `admin FINGERPRINT`: a key from `datum.yaml`'s `admins`.
//! - `host NAME FINGERPRINT`: a key a Host declares. The word `host` keeps a
//!   host that is named `admin` apart from the admins.
//! - Lines starting with `#` are comments; nothing else may be blank.
//! - Entries are sorted (admins, then hosts by name, each by fingerprint)
//!   and unique, so the file is the same bytes for the same set and a diff
//!   of it shows exactly who was added or removed.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use datum_core::hint::Hinted;

use crate::key::Fingerprint;

/// The comment the writer puts first.
const HEADER: &str =
    "# Recipients of the secret beside this file. Written by `datum secret`; do not edit.\n";

/// Whose key a recipient is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Holder {
    /// One of the fleet's `admins`.
    Admin,
    /// A host, by name.
    Host(String),
}

/// One line of a recipients file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Recipient {
    pub holder: Holder,
    pub fingerprint: Fingerprint,
}

/// Everyone a secret is (or should be) encrypted to, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recipients(BTreeSet<Recipient>);

/// How a stored recipients list differs from the wanted one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecipientsChange {
    /// Wanted but not stored: these cannot decrypt the current ciphertext.
    pub missing: Vec<Recipient>,
    /// Stored but not wanted: these can decrypt what they should no longer
    /// receive.
    pub extra: Vec<Recipient>,
}

impl RecipientsChange {
    /// No difference: the secret does not need a rekey.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty()
    }
}

impl Recipients {
    pub fn new() -> Recipients {
        Recipients::default()
    }

    /// Adds a recipient; false when it was already there.
    pub fn insert(&mut self, holder: Holder, fingerprint: Fingerprint) -> bool {
        self.0.insert(Recipient {
            holder,
            fingerprint,
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Recipient> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What `wanted` has that `self` lacks, and the reverse; empty when
    /// the two are equal.
    pub fn compare(&self, wanted: &Recipients) -> RecipientsChange {
        RecipientsChange {
            missing: wanted.0.difference(&self.0).cloned().collect(),
            extra: self.0.difference(&wanted.0).cloned().collect(),
        }
    }

    /// The file's text: the header comment, then one line per recipient.
    pub fn to_text(&self) -> String {
        let mut text = String::from(HEADER);
        for recipient in &self.0 {
            text.push_str(&recipient.to_string());
            text.push('\n');
        }
        text
    }

    /// Parses a recipients file strictly: every deviation from what
    /// [`Recipients::to_text`] writes, other than comments, is an error
    /// with its line and column.
    pub fn parse(text: &str) -> Result<Recipients, RecipientsError> {
        let mut recipients = BTreeSet::new();
        let mut previous: Option<(usize, Recipient)> = None;
        let mut line_number = 0;
        for line in text.split_inclusive('\n') {
            line_number += 1;
            let content = line.strip_suffix('\n').unwrap_or(line);
            let at = |column: usize, kind| RecipientsError {
                line: line_number,
                column: column + 1,
                text: content.to_owned(),
                kind,
            };
            if content.starts_with('#') {
                continue;
            }
            let recipient = parse_line(content).map_err(|(column, kind)| at(column, kind))?;
            if let Some((first_line, earlier)) = &previous {
                if *earlier == recipient {
                    return Err(at(
                        0,
                        RecipientsErrorKind::Duplicate {
                            first_line: *first_line,
                        },
                    ));
                }
                if *earlier > recipient {
                    return Err(at(
                        0,
                        RecipientsErrorKind::OutOfOrder {
                            previous_line: *first_line,
                        },
                    ));
                }
            }
            recipients.insert(recipient.clone());
            previous = Some((line_number, recipient));
        }
        if recipients.is_empty() {
            return Err(RecipientsError {
                line: line_number.max(1),
                column: 1,
                text: String::new(),
                kind: RecipientsErrorKind::Empty,
            });
        }
        Ok(Recipients(recipients))
    }
}

impl FromIterator<Recipient> for Recipients {
    fn from_iter<I: IntoIterator<Item = Recipient>>(iter: I) -> Recipients {
        Recipients(iter.into_iter().collect())
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.holder {
            Holder::Admin => write!(f, "admin {}", self.fingerprint),
            Holder::Host(name) => write!(f, "host {name} {}", self.fingerprint),
        }
    }
}

/// The recipients file of the secret at `secret`: the same path with
/// `.recipients` added (`secrets/db.age` -> `secrets/db.age.recipients`).
pub fn recipients_path(secret: &Path) -> PathBuf {
    let mut path = secret.as_os_str().to_owned();
    path.push(".recipients");
    PathBuf::from(path)
}

/// One entry line, or the column (0-based) and kind of its first fault.
fn parse_line(line: &str) -> Result<Recipient, (usize, RecipientsErrorKind)> {
    use RecipientsErrorKind as K;
    if let Some(column) = line.find(['\r', '\t']) {
        return Err((column, K::BadWhitespace));
    }
    if line.is_empty() {
        return Err((0, K::Blank));
    }
    let mut fields = Vec::new();
    let mut start = 0;
    for field in line.split(' ') {
        if field.is_empty() {
            return Err((start, K::BadWhitespace));
        }
        fields.push((start, field));
        start += field.len() + 1;
    }
    let (holder, rest) = match fields[0].1 {
        "admin" => (Holder::Admin, &fields[1..]),
        "host" => match fields.get(1) {
            Some((_, name)) => (Holder::Host((*name).to_owned()), &fields[2..]),
            None => return Err((line.len(), K::MissingField { what: "host name" })),
        },
        other => {
            return Err((
                0,
                K::UnknownHolder {
                    found: other.chars().take(40).collect(),
                },
            ));
        }
    };
    let Some(&(column, fingerprint)) = rest.first() else {
        return Err((
            line.len(),
            K::MissingField {
                what: "fingerprint",
            },
        ));
    };
    if let Some(&(column, _)) = rest.get(1) {
        return Err((column, K::ExtraField));
    }
    let fingerprint = fingerprint
        .parse()
        .map_err(|reason| (column, K::BadFingerprint { reason }))?;
    Ok(Recipient {
        holder,
        fingerprint,
    })
}

/// A recipients file that is not as Datum writes it.
#[derive(Debug, thiserror::Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct RecipientsError {
    /// 1-based.
    pub line: usize,
    /// 1-based, in bytes.
    pub column: usize,
    /// The line as written, to show under the message.
    pub text: String,
    pub kind: RecipientsErrorKind,
}

/// What the user can do about it.
impl Hinted for RecipientsError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(
            "the file is written by `datum secret`; run `datum secret rekey` on its secret to write it again",
        ))
    }
}

/// What is wrong with a line of a recipients file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipientsErrorKind {
    /// An empty line.
    #[error("blank line")]
    Blank,
    /// A tab, a carriage return, or more than one space between fields.
    #[error("fields are separated by exactly one space, with no tabs or carriage returns")]
    BadWhitespace,
    /// The first word is neither `admin` nor `host`.
    #[error("`{found}` is neither `admin` nor `host`")]
    UnknownHolder { found: String },
    /// The line ends before a required field.
    #[error("the {what} is missing")]
    MissingField { what: &'static str },
    /// More fields than the line's kind has.
    #[error("unexpected text after the fingerprint")]
    ExtraField,
    /// The fingerprint is not one a key could have.
    #[error("not a fingerprint: {reason}")]
    BadFingerprint { reason: &'static str },
    /// The same recipient twice.
    #[error("repeats line {first_line}")]
    Duplicate { first_line: usize },
    /// An entry that sorts before the one above it.
    #[error("out of order: sorts before line {previous_line}")]
    OutOfOrder { previous_line: usize },
    /// No entries at all: no ciphertext has no recipients.
    #[error("lists no recipient")]
    Empty,
}

#[cfg(test)]
#[path = "recipients_tests.rs"]
mod tests;
