//! Errors and warnings as data, and their drawing as text.
//!
//! A [`Diagnostic`] is what every stage reports: a message, where it points
//! (`path:line:column` plus the line itself), the lines of a table where the
//! report has one (a conflict), notes and a hint. Nothing here prints; the
//! caller passes the writer the text goes to.

use std::io;

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::emit::{self, Tree};
use crate::printable::{escape, source_line};
use crate::source::{Files, Span};

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Declares [`Code`]: each variant with the stable name JSON and tools see.
macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal,)+) => {
        /// What kind of problem a [`Diagnostic`] reports. The name of each
        /// (`as_str`) is stable: `--format json` and scripts read it.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)+];

            /// The stable name (`unknown-field`, `conflict`, ...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }
        }
    };
}

codes! {
    // YAML syntax (yaml/).
    /// A YAML alias (`*name`).
    YamlAlias = "yaml-alias",
    /// A YAML anchor (`&name`).
    YamlAnchor = "yaml-anchor",
    /// A YAML tag (`!tag`).
    YamlTag = "yaml-tag",
    /// Collections nested deeper than the parser allows.
    YamlDepth = "yaml-depth",
    /// A mapping key that is not a plain value.
    YamlKey = "yaml-key",
    /// The same key twice in one mapping.
    YamlDuplicateKey = "yaml-duplicate-key",
    /// Malformed YAML.
    YamlSyntax = "yaml-syntax",
    // Reading files (loader/).
    /// A file that could not be read.
    Unreadable = "unreadable",
    /// A file that is not valid UTF-8.
    NotUtf8 = "not-utf8",
    // Documents (document/).
    /// A document that is not a mapping.
    NotADocument = "not-a-document",
    /// A required key (`name:`, `datum:`, `type:`, ...) is missing.
    MissingKey = "missing-key",
    /// A key the document type does not have.
    UnknownKey = "unknown-key",
    /// A document `type:` Datum does not know.
    UnknownType = "unknown-type",
    /// A `datum:` version Datum does not read.
    UnsupportedVersion = "unsupported-version",
    /// A value of the wrong YAML type.
    WrongType = "wrong-type",
    /// A value that must not be empty is empty.
    EmptyValue = "empty-value",
    /// A matcher label written as an empty list of alternatives.
    EmptyAlternatives = "empty-alternatives",
    /// A number out of its range.
    OutOfRange = "out-of-range",
    /// A path that is not absolute.
    InvalidPath = "invalid-path",
    /// A `source` that is not a valid payload path, or cannot be read.
    InvalidSource = "invalid-source",
    /// A `template` that is not a path under `templates/`, or cannot be read.
    InvalidTemplate = "invalid-template",
    /// A name under `vars:` a template could not read as `vars.NAME`.
    InvalidVarName = "invalid-var-name",
    /// A `mode` written unquoted.
    UnquotedMode = "unquoted-mode",
    /// A `mode` that is not a file mode.
    InvalidMode = "invalid-mode",
    /// A value not among those the field takes.
    InvalidValue = "invalid-value",
    /// A resource id that does not parse.
    InvalidResource = "invalid-resource",
    /// A field the resource type does not have.
    UnknownField = "unknown-field",
    /// A host name that is not valid.
    InvalidHostName = "invalid-host-name",
    /// A label key or value that is not valid.
    InvalidLabel = "invalid-label",
    /// A label key Datum reserves.
    ReservedLabel = "reserved-label",
    /// A name apply could not use: a user, group, package, version or
    /// unit name, or a path /etc/passwd cannot hold (`crate::names`).
    InvalidName = "invalid-name",
    // The fleet as a whole (loader/).
    /// No Fleet document at the root.
    NoFleet = "no-fleet",
    /// A Fleet document outside datum.yaml.
    MisplacedFleet = "misplaced-fleet",
    /// More than one Fleet document.
    DuplicateFleet = "duplicate-fleet",
    /// A host declared more than once.
    DuplicateHost = "duplicate-host",
    /// Two layers with the same display name.
    DuplicateLayer = "duplicate-layer",
    /// Two layers with the same `name`.
    DuplicateLayerName = "duplicate-layer-name",
    /// A file with more than one Layer document.
    TwoLayers = "two-layers",
    /// A label key or value the Fleet document does not declare.
    UndeclaredLabel = "undeclared-label",
    // Resolution (report.rs).
    /// Two layers of one precedence set different values.
    Conflict = "conflict",
    /// A resource without a field it requires.
    MissingField = "missing-field",
    /// A File with more than one of `source`, `content` and `template`.
    SourceAndContent = "source-and-content",
    /// A template that does not render: an undefined name, a syntax
    /// error, an include outside `templates/`, too much work.
    TemplateError = "template-error",
    /// A reference to a resource the host does not have.
    UnknownReference = "unknown-reference",
    /// A dependency cycle.
    Cycle = "cycle",
    /// Two resources managing the same target.
    DuplicateTarget = "duplicate-target",
    /// An Exec with no guard: nothing says when it need not run.
    UnguardedExec = "unguarded-exec",
    /// An Exec with `refresh_only` and no `run_on`, or `run_on` alone.
    ExecTrigger = "exec-trigger",
    /// An Exec command line that reads two ways (`shell: true` with
    /// arguments, or a whole command line as one program name).
    ExecCommand = "exec-command",
    // Comparing revisions (diff/).
    /// A file that failed to load holds a host back from the comparison.
    HeldBack = "held-back",
    // Fleet-wide warnings (check/rules/).
    /// A layer that matches no host.
    UnmatchedLayer = "unmatched-layer",
    /// A label a matcher names that no host carries.
    UncarriedLabel = "uncarried-label",
    /// Layers that would conflict on a host matching both, which none does yet.
    LatentConflict = "latent-conflict",
    // Secrets (datum-secrets, for `datum check` and `datum secret`).
    /// A host's `keys` or the fleet's `admins` entry that is no usable public key.
    InvalidKey = "invalid-key",
    /// A host receives a secret but declares no key to decrypt it with.
    SecretNoKey = "secret-no-key",
    /// A host receives a secret it is not a recipient of: it cannot decrypt it.
    SecretNotRecipient = "secret-not-recipient",
    /// A secret is encrypted to a key that no longer receives it, or not
    /// to an admin: it needs re-encrypting.
    SecretExtraRecipient = "secret-extra-recipient",
    /// A secret's `.recipients` file is missing or damaged.
    SecretRecipientsFile = "secret-recipients-file",
    // Settings files that are not fleet documents (settings.rs, datum-agent).
    /// A settings file with more than one document.
    SeveralDocuments = "several-documents",
    /// A mistake in the agent's configuration file.
    AgentConfig = "agent-config",
    /// A bundle's manifest that is empty.
    EmptyManifest = "empty-manifest",
    /// A mistake in a bundle's manifest.
    BundleManifest = "bundle-manifest",
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in a file, with what to say about it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

/// One error or warning.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable, machine-readable kind (`unknown-field`, `conflict`, ...).
    pub code: Code,
    pub message: String,
    /// Lines printed under the message as written, indented by two spaces.
    pub body: Vec<String>,
    /// Where the problem is.
    pub primary: Option<Label>,
    /// Other places that explain it.
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub hint: Option<String>,
    /// The hosts a resolution problem hits, in name order (empty for a
    /// problem in a document): the text names them in a note, JSON lists
    /// them.
    pub hosts: Vec<String>,
}

/// The line a place is on, with carets under the place (to the end of the
/// line when it runs on), in a gutter `gutter` digits wide; columns are
/// counted on the screen, so wide characters keep the carets in place.
fn write_source_line(
    files: &Files,
    span: Span,
    gutter: usize,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    use unicode_width::UnicodeWidthStr as _;
    let text = files.get(span.file).line(span.start.line);
    let start = byte_at(text, span.start.col);
    let end = if span.end.line == span.start.line && span.end.col > span.start.col {
        byte_at(text, span.end.col)
    } else {
        text.len()
    };
    // Tabs shown as one space each, so the carets line up under them.
    let shown = |s: &str| source_line(s).replace('\t', " ");
    let before = shown(&text[..start]).width();
    let marked = shown(&text[start..end]).width().max(1);
    let n = span.start.line;
    writeln!(out, "  {:gutter$} |", "")?;
    writeln!(out, "  {n:>gutter$} | {}", shown(text))?;
    writeln!(
        out,
        "  {:gutter$} | {}{}",
        "",
        " ".repeat(before),
        "^".repeat(marked)
    )
}

/// The byte offset of a 1-based character column in `line`.
fn byte_at(line: &str, col: u32) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i)
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            body: Vec::new(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            hint: None,
            hosts: Vec::new(),
        }
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn at(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            text: text.into(),
        });
        self
    }

    pub fn also(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            text: text.into(),
        });
        self
    }

    /// The first place given is where the problem is; later ones explain it.
    pub fn place(self, span: Span, text: impl Into<String>) -> Diagnostic {
        if self.primary.is_none() {
            self.at(span, text)
        } else {
            self.also(span, text)
        }
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_body(mut self, body: Vec<String>) -> Diagnostic {
        self.body = body;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The order reports are printed in: by file, line and column, then text.
    pub fn sort_key<'a>(&'a self, files: &'a Files) -> impl Ord + 'a {
        let place = self
            .primary
            .as_ref()
            .map(|l| (files.path(l.span.file), l.span.start));
        (place, &self.message, &self.body)
    }

    /// The diagnostic as data for `--format json`: each place as
    /// `{path, line, column}` with its label, and the hosts it hits.
    pub fn tree<'a>(&'a self, files: &'a Files) -> Tree<'a> {
        let label = |l: &'a Label| {
            Tree::map()
                .with("location", emit::location(files, l.span))
                .with("label", Tree::str(l.text.as_str()))
        };
        let mut t = Tree::map()
            .with("severity", Tree::str(self.severity.as_str()))
            .with("code", Tree::str(self.code.as_str()))
            .with("message", Tree::str(self.message.as_str()));
        if !self.body.is_empty() {
            t.push("body", Tree::strs(self.body.iter().map(String::as_str)));
        }
        t.push("primary", self.primary.as_ref().map_or(Tree::Null, label));
        t.push(
            "secondary",
            Tree::List(self.secondary.iter().map(label).collect()),
        );
        t.push("notes", Tree::strs(self.notes.iter().map(String::as_str)));
        t.push("hosts", Tree::strs(self.hosts.iter().map(String::as_str)));
        t.push("hint", self.hint.as_deref().map_or(Tree::Null, Tree::str));
        t
    }

    /// Draws the diagnostic as text into `out`, ending with a newline.
    /// `styled` adds terminal colours. What the fleet wrote (paths, names,
    /// values, the source line) is escaped ([`crate::printable`]): text
    /// from a fleet is shown, never obeyed by the terminal.
    pub fn render(&self, files: &Files, styled: bool, out: &mut dyn io::Write) -> io::Result<()> {
        if self.body.is_empty()
            && !self.hides_lines(files)
            && let Some(primary) = &self.primary
        {
            return self.render_snippet(files, primary, styled, out);
        }
        self.render_table(files, styled, out)
    }

    /// The diagnostic drawn without colour, for tests to compare as text.
    #[cfg(test)]
    pub(crate) fn rendered(&self, files: &Files) -> String {
        let mut out = Vec::new();
        self.render(files, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Whether a place it points at is in the declaration of a sensitive
    /// resource, whose lines are never shown ([`Files::hides`]).
    fn hides_lines(&self, files: &Files) -> bool {
        self.primary
            .iter()
            .chain(&self.secondary)
            .any(|l| files.hides(l.span))
    }

    /// A report with a table (conflicts) keeps its shape exactly; the
    /// places it involves follow as `-->` lines. So does a report pointing
    /// into a sensitive resource, whose lines are not shown.
    fn render_table(&self, files: &Files, styled: bool, out: &mut dyn io::Write) -> io::Result<()> {
        let (style, reset) = if styled {
            let s = match self.severity {
                Severity::Error => "\x1b[1;31m",
                Severity::Warning => "\x1b[1;33m",
            };
            (s, "\x1b[0m")
        } else {
            ("", "")
        };
        writeln!(
            out,
            "{style}{}{reset}: {}",
            self.severity.as_str(),
            escape(&self.message)
        )?;
        for line in &self.body {
            writeln!(out, "  {}", escape(line))?;
        }
        let hidden = self.hides_lines(files);
        let places: Vec<&Label> = self.primary.iter().chain(&self.secondary).collect();
        // An error's places show their lines, as a snippet would: each side
        // of a conflict where it is written.
        let lines = self.is_error() && !hidden;
        let gutter = places
            .iter()
            .map(|l| l.span.start.line.to_string().len())
            .max()
            .unwrap_or(1);
        for label in places {
            write!(out, "  --> {}", escape(&files.location(label.span)))?;
            if label.text.is_empty() {
                writeln!(out)?;
            } else {
                writeln!(out, "  {}", escape(&label.text))?;
            }
            if lines {
                write_source_line(files, label.span, gutter, out)?;
            }
        }
        if hidden {
            writeln!(
                out,
                "  = note: lines of a resource marked `sensitive: true` are not shown"
            )?;
        }
        for note in &self.notes {
            writeln!(out, "  = note: {}", escape(note))?;
        }
        if let Some(hint) = &self.hint {
            writeln!(out, "  = hint: {}", escape(hint))?;
        }
        Ok(())
    }

    fn render_snippet(
        &self,
        files: &Files,
        primary: &Label,
        styled: bool,
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let mut title = level
            .primary_title(escape(&self.message))
            .element(one_line_snippet(files, primary, AnnotationKind::Primary));
        for label in &self.secondary {
            title = title.element(one_line_snippet(files, label, AnnotationKind::Context));
        }
        for note in &self.notes {
            title = title.element(Level::NOTE.message(escape(note)));
        }
        if let Some(hint) = &self.hint {
            title = title.element(Level::HELP.with_name("hint").message(escape(hint)));
        }
        let report: [Group<'_>; 1] = [title];
        let renderer = if styled {
            Renderer::styled()
        } else {
            Renderer::plain()
        }
        .decor_style(DecorStyle::Ascii);
        writeln!(out, "{}", renderer.render(&report))
    }
}

/// A snippet of the one line a label starts on; a span running past the end
/// of its line is cut there, an empty one marks one character.
fn one_line_snippet<'a>(
    files: &'a Files,
    label: &'a Label,
    kind: AnnotationKind,
) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let file = files.get(label.span.file);
    // One visible character for each unprintable one: the columns stay.
    let line = source_line(file.line(label.span.start.line));
    let start = char_offset(&line, label.span.start.col);
    let end = if label.span.end.line == label.span.start.line
        && label.span.end.col > label.span.start.col
    {
        char_offset(&line, label.span.end.col)
    } else if label.span.end.line > label.span.start.line {
        line.len()
    } else {
        start
    };
    let end = if end <= start {
        next_char_end(&line, start)
    } else {
        end
    };
    Snippet::source(line)
        .line_start(label.span.start.line as usize)
        .path(escape(file.path()))
        .annotation(kind.span(start..end).label(escape(&label.text)))
}

fn char_offset(line: &str, col: u32) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i)
}

fn next_char_end(line: &str, start: usize) -> usize {
    line[start..]
        .chars()
        .next()
        .map_or(start, |c| start + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Pos;

    fn files() -> (Files, Span) {
        let mut files = Files::default();
        let id = files.add(
            "roles/web/layer.yaml".into(),
            "resources:\n  File[x]:\n    mdoe: \"0640\"\n".into(),
        );
        let span = Span {
            file: id,
            start: Pos { line: 3, col: 5 },
            end: Pos { line: 3, col: 9 },
        };
        (files, span)
    }

    #[test]
    fn snippet_names_place_line_and_hint() {
        let (files, span) = files();
        let d = Diagnostic::error(Code::UnknownField, "unknown field `mdoe` for File")
            .at(span, "unknown field")
            .hint("did you mean `mode`?");
        let text = d.rendered(&files);
        assert_eq!(
            text,
            "error: unknown field `mdoe` for File\n \
             --> roles/web/layer.yaml:3:5\n  \
             |\n\
             3 |     mdoe: \"0640\"\n  \
             |     ^^^^ unknown field\n  \
             |\n  \
             = hint: did you mean `mode`?\n"
        );
    }

    #[test]
    fn table_keeps_its_shape() {
        let (files, span) = files();
        let d = Diagnostic::error(Code::Conflict, "conflicting values for File[x].mode")
            .with_body(vec![
                "0640  a  precedence 30".into(),
                "0600  b  precedence 30".into(),
            ])
            .at(span, "");
        assert_eq!(
            d.rendered(&files),
            "error: conflicting values for File[x].mode\n  0640  a  precedence 30\n  0600  b  precedence 30\n  --> roles/web/layer.yaml:3:5\n    |\n  3 |     mdoe: \"0640\"\n    |     ^^^^\n"
        );
        // A warning's table (a conflict waiting for a host) keeps to places.
        let mut w = d.clone();
        w.severity = Severity::Warning;
        assert_eq!(
            w.rendered(&files),
            "warning: conflicting values for File[x].mode\n  0640  a  precedence 30\n  0600  b  precedence 30\n  --> roles/web/layer.yaml:3:5\n"
        );
    }

    #[test]
    fn code_names_are_unique_kebab_case_and_reach_json() {
        let mut names: Vec<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert!(names.iter().all(|n| {
            !n.is_empty()
                && !n.starts_with('-')
                && !n.ends_with('-')
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        }));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
        let (files, span) = files();
        let d = Diagnostic::warning(Code::LatentConflict, "x").at(span, "");
        let mut json = Vec::new();
        crate::emit::write_json(&mut json, &d.tree(&files)).unwrap();
        let json = String::from_utf8(json).unwrap();
        assert!(json.contains("\"code\": \"latent-conflict\""), "{json}");
    }
}
