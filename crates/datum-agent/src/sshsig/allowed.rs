//! Reading an allowed-signers file, the format `ssh-keygen -Y verify -f`
//! and git's `gpg.ssh.allowedSignersFile` read: one signer a line,
//!
//! ```text
//! # who      options (optional)                       key
//! ops@corp   namespaces="git,datum",valid-before="20270101Z"  ssh-ed25519 AAAA... laptop
//! ```
//!
//! Reading is strict where `ssh-keygen` is lax or ambiguous: an unknown or
//! repeated option, a time without `Z` and a window that never opens are
//! errors with the line and column, because a trust file that means less
//! than its author thinks is worse than one that does not load.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use datum_core::hint::Hinted;
use ssh_key::PublicKey;

use super::pattern;
use super::time::{self, TimeProblem};

/// The signers a host trusts, as read from one allowed-signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigners {
    pub(crate) path: PathBuf,
    pub(crate) entries: Vec<Entry>,
}

/// One line of the file.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// 1-based line number, for messages.
    pub(crate) line: usize,
    /// The principals as written (comma-separated patterns).
    pub(crate) principals: String,
    pub(crate) options: Options,
    pub(crate) key: PublicKey,
}

/// The options of one line, each absent unless written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// `cert-authority`: the key signs certificates, never data itself.
    pub(crate) cert_authority: bool,
    /// `namespaces="..."`: the patterns a signature's namespace must match.
    pub(crate) namespaces: Option<String>,
    /// `valid-after="..."`, in seconds since the epoch.
    pub(crate) valid_after: Option<i64>,
    /// `valid-before="..."`, in seconds since the epoch.
    pub(crate) valid_before: Option<i64>,
}

impl Entry {
    /// Whether `namespace` may be signed by this entry's key.
    pub(crate) fn allows_namespace(&self, namespace: &str) -> bool {
        self.options
            .namespaces
            .as_deref()
            .is_none_or(|list| pattern::matches_list(namespace, list))
    }
}

/// The allowed-signers file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AllowedSignersError {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("cannot read the allowed signers file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },

    /// A line is not an allowed-signers entry.
    #[error("{}:{line}:{column}: {problem}\n{line:>5} | {text}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column, in characters, where the problem starts.
        column: usize,
        /// The line as written.
        text: String,
        /// What is wrong (boxed: it carries the key parser's error, and a
        /// small `Result` keeps every caller cheap).
        #[source]
        problem: Box<SyntaxProblem>,
    },
}

/// What would fix it.
impl Hinted for AllowedSignersError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            Self::Read { .. } => Some(
                "the allowed signers file lives on the host, never in the fleet repository; \
                 create it with one `PRINCIPAL ssh-ed25519 KEY` line per signer"
                    .into(),
            ),
            Self::Syntax { problem, .. } => problem.hint(),
        }
    }
}

/// What is wrong with one line of an allowed-signers file.
#[derive(Debug, thiserror::Error)]
pub enum SyntaxProblem {
    /// A `"` opens a value that never closes.
    #[error("this quote is never closed")]
    UnterminatedQuote,
    /// The line ends before the key.
    #[error("the line ends before the signer's public key")]
    MissingKey,
    /// Something other than a space follows a quoted principal or option list.
    #[error("expected a space or `,` here, found `{found}`")]
    Unexpected {
        /// The character found.
        found: char,
    },
    /// The principals are an empty string (`""`).
    #[error("the principals are empty")]
    EmptyPrincipals,
    /// An option `ssh-keygen` defines for certificates or keys, not signers.
    #[error("unknown option `{name}`")]
    UnknownOption {
        /// The option as written.
        name: String,
    },
    /// The same option twice on one line.
    #[error("option `{name}` is given twice")]
    DuplicateOption {
        /// The option as written.
        name: String,
    },
    /// `namespaces`, `valid-after` or `valid-before` without `="..."`.
    #[error("option `{name}` needs a quoted value, as in {name}=\"...\"")]
    NeedsValue {
        /// The option as written.
        name: String,
    },
    /// `cert-authority` with a value.
    #[error("option `{name}` takes no value")]
    TakesNoValue {
        /// The option as written.
        name: String,
    },
    /// `namespaces=""` or an empty item in its list.
    #[error("`namespaces` has an empty entry")]
    EmptyNamespace,
    /// A `valid-after` or `valid-before` value that is not a UTC time.
    #[error("`{name}=\"{value}\"` is not a time datum reads: {}", time_problem(*.problem))]
    BadTime {
        /// The option as written.
        name: String,
        /// The value as written.
        value: String,
        /// How it is wrong.
        problem: TimeProblemKind,
    },
    /// `valid-after` is later than `valid-before`, so the key never verifies.
    #[error("`valid-after` is later than `valid-before`: this key is never valid")]
    NeverValid,
    /// The key text is not an OpenSSH public key.
    #[error("cannot read the public key: {source}")]
    BadKey {
        /// What the key parser reported.
        #[source]
        source: ssh_key::Error,
    },
}

/// How a timestamp is wrong (see [`SyntaxProblem::BadTime`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeProblemKind {
    /// Not `YYYYMMDD[HHMM[SS]]Z`.
    Shape,
    /// No trailing `Z`: `ssh-keygen` would read local time.
    Local,
    /// A field out of range (month 13, February 30th, hour 24...).
    Range,
}

fn time_problem(problem: TimeProblemKind) -> &'static str {
    match problem {
        TimeProblemKind::Shape => "expected YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS then Z",
        TimeProblemKind::Local => "it has no trailing Z, so it would depend on the time zone",
        TimeProblemKind::Range => "no such date or time",
    }
}

/// What would fix it.
impl Hinted for SyntaxProblem {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::UnterminatedQuote | Self::Unexpected { .. } => {
                "a line reads PRINCIPALS [OPTIONS] KEYTYPE KEY [COMMENT]; quote values as in namespaces=\"git\""
            }
            Self::MissingKey | Self::BadKey { .. } => {
                "write the key as in a .pub file: `ssh-ed25519 AAAA... comment`"
            }
            Self::EmptyPrincipals => "name who holds the key, as in `ops@example.net`",
            Self::UnknownOption { .. } | Self::DuplicateOption { .. } => {
                "the options are cert-authority, namespaces=\"...\", valid-after=\"...\" and valid-before=\"...\", each at most once"
            }
            Self::NeedsValue { .. } | Self::TakesNoValue { .. } | Self::EmptyNamespace => {
                "for example: namespaces=\"git,datum\",valid-before=\"20270101Z\""
            }
            Self::BadTime { .. } => "write times in UTC, as in \"20270101Z\" or \"202701011200Z\"",
            Self::NeverValid => "swap the two times, or remove the line",
        }))
    }
}

impl From<TimeProblem> for TimeProblemKind {
    fn from(problem: TimeProblem) -> Self {
        match problem {
            TimeProblem::Shape => Self::Shape,
            TimeProblem::Local => Self::Local,
            TimeProblem::Range => Self::Range,
        }
    }
}

impl AllowedSigners {
    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Self, AllowedSignersError> {
        let text = std::fs::read_to_string(path).map_err(|source| AllowedSignersError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses `text`; `path` only names the file in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, AllowedSignersError> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            match parse_line(index + 1, line) {
                Ok(Some(entry)) => entries.push(entry),
                Ok(None) => {}
                Err((offset, problem)) => {
                    return Err(AllowedSignersError::Syntax {
                        path: path.to_owned(),
                        line: index + 1,
                        column: line[..offset].chars().count() + 1,
                        text: line.to_owned(),
                        problem: Box::new(problem),
                    });
                }
            }
        }
        Ok(AllowedSigners {
            path: path.to_owned(),
            entries,
        })
    }

    /// The file the signers were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many signer lines the file has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file has no signer at all (so every signature is refused).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A problem at a byte offset in the line.
type LineError = (usize, SyntaxProblem);

/// Where the parser is in a line: the whole line and a byte offset into it.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// Takes characters up to whitespace or the end.
    fn word(&mut self) -> &'a str {
        let rest = self.rest();
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// Takes `"..."` (the cursor is on the opening quote); returns the inside.
    fn quoted(&mut self) -> Result<&'a str, LineError> {
        let start = self.at;
        let inside = &self.text[start + 1..];
        let len = inside
            .find('"')
            .ok_or((start, SyntaxProblem::UnterminatedQuote))?;
        self.at = start + 1 + len + 1;
        Ok(&inside[..len])
    }

    /// After a quoted field, the next character must be whitespace.
    fn expect_space(&self) -> Result<(), LineError> {
        match self.peek() {
            None => Err((self.at, SyntaxProblem::MissingKey)),
            Some(c) if c.is_whitespace() => Ok(()),
            Some(found) => Err((self.at, SyntaxProblem::Unexpected { found })),
        }
    }
}

const OPTIONS: [&str; 4] = [
    "cert-authority",
    "namespaces",
    "valid-after",
    "valid-before",
];

fn parse_line(number: usize, text: &str) -> Result<Option<Entry>, LineError> {
    let mut cursor = Cursor { text, at: 0 };
    cursor.skip_space();
    if cursor.rest().is_empty() || cursor.rest().starts_with('#') {
        return Ok(None);
    }
    let principals_at = cursor.at;
    let principals = if cursor.peek() == Some('"') {
        let inside = cursor.quoted()?;
        cursor.expect_space()?;
        inside
    } else {
        cursor.word()
    };
    if principals.is_empty() {
        return Err((principals_at, SyntaxProblem::EmptyPrincipals));
    }
    cursor.skip_space();
    if cursor.rest().is_empty() {
        return Err((cursor.at, SyntaxProblem::MissingKey));
    }
    let mut options = Options::default();
    if starts_with_options(cursor.rest()) {
        parse_options(&mut cursor, &mut options)?;
        cursor.skip_space();
    }
    Ok(Some(Entry {
        line: number,
        principals: principals.to_owned(),
        options,
        key: parse_key(&mut cursor)?,
    }))
}

/// Whether the next field is an option list rather than a key type: key
/// types never contain `=` or `,`, and are never an option's name.
fn starts_with_options(rest: &str) -> bool {
    let name_len = rest
        .find(|c: char| c.is_whitespace() || c == '=' || c == ',')
        .unwrap_or(rest.len());
    let name = &rest[..name_len];
    matches!(rest[name_len..].chars().next(), Some('=' | ','))
        || OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(name))
}

fn parse_options(cursor: &mut Cursor<'_>, options: &mut Options) -> Result<(), LineError> {
    let mut seen: Vec<String> = Vec::new();
    loop {
        let name_at = cursor.at;
        let rest = cursor.rest();
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == ',' || c == '"')
            .unwrap_or(rest.len());
        let name = rest[..name_len].to_ascii_lowercase();
        cursor.at += name_len;
        let value = if cursor.peek() == Some('=') {
            cursor.at += 1;
            if cursor.peek() != Some('"') {
                return Err((name_at, SyntaxProblem::NeedsValue { name }));
            }
            Some((cursor.at + 1, cursor.quoted()?))
        } else {
            None
        };
        if seen.contains(&name) {
            return Err((name_at, SyntaxProblem::DuplicateOption { name }));
        }
        apply_option(options, &name, name_at, value)?;
        seen.push(name);
        match cursor.peek() {
            Some(',') => cursor.at += 1,
            Some(c) if c.is_whitespace() => break,
            None => return Err((cursor.at, SyntaxProblem::MissingKey)),
            Some(found) => return Err((cursor.at, SyntaxProblem::Unexpected { found })),
        }
    }
    match (options.valid_after, options.valid_before) {
        (Some(after), Some(before)) if after > before => {
            Err((cursor.at, SyntaxProblem::NeverValid))
        }
        _ => Ok(()),
    }
}

fn apply_option(
    options: &mut Options,
    name: &str,
    name_at: usize,
    value: Option<(usize, &str)>,
) -> Result<(), LineError> {
    let needs_value = || {
        let name = name.to_owned();
        (name_at, SyntaxProblem::NeedsValue { name })
    };
    match name {
        "cert-authority" => match value {
            None => options.cert_authority = true,
            Some(_) => {
                let name = name.to_owned();
                return Err((name_at, SyntaxProblem::TakesNoValue { name }));
            }
        },
        "namespaces" => {
            let (value_at, list) = value.ok_or_else(needs_value)?;
            if list.split(',').any(str::is_empty) {
                return Err((value_at, SyntaxProblem::EmptyNamespace));
            }
            options.namespaces = Some(list.to_owned());
        }
        "valid-after" | "valid-before" => {
            let (value_at, text) = value.ok_or_else(needs_value)?;
            let seconds = time::parse_utc(text).map_err(|problem| {
                let problem = SyntaxProblem::BadTime {
                    name: name.to_owned(),
                    value: text.to_owned(),
                    problem: problem.into(),
                };
                (value_at, problem)
            })?;
            if name == "valid-after" {
                options.valid_after = Some(seconds);
            } else {
                options.valid_before = Some(seconds);
            }
        }
        _ => {
            let name = name.to_owned();
            return Err((name_at, SyntaxProblem::UnknownOption { name }));
        }
    }
    Ok(())
}

fn parse_key(cursor: &mut Cursor<'_>) -> Result<PublicKey, LineError> {
    let key_at = cursor.at;
    let kind = cursor.word();
    cursor.skip_space();
    let data = cursor.word();
    if kind.is_empty() || data.is_empty() {
        return Err((cursor.at, SyntaxProblem::MissingKey));
    }
    // The comment after the key is free text; the key parser is given only
    // the two fields it reads, so tabs and runs of spaces between them work.
    PublicKey::from_openssh(&format!("{kind} {data}"))
        .map_err(|source| (key_at, SyntaxProblem::BadKey { source }))
}

#[cfg(test)]
#[path = "allowed_tests.rs"]
mod tests;
