//! Errors and warnings as data.
//!
//! A [`Diagnostic`] is what every stage reports: a message, where it points
//! (`path:line:column`), the lines of a table where the report has one (a
//! conflict), notes and a hint. It is drawn as text by `present` and as
//! data by `emit`; nothing here draws it.

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
    /// unit name, or a path /etc/passwd cannot hold (see `names`).
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
    /// A label tied to a fact Datum does not observe (`fact:` in `Fleet.labels`).
    UnknownFact = "unknown-fact",
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
    // Facts (apply, the agent, `check --reports`).
    /// A host's label that disagrees with what the host observes.
    FactMismatch = "fact-mismatch",
    /// A run report (`check --reports`) that cannot be read.
    BadReport = "bad-report",
    // Comparing revisions (diff/).
    /// A file that failed to load holds a host back from the comparison.
    HeldBack = "held-back",
    // Rollout waves (`rollout:` in datum.yaml, rollout.rs).
    /// Two waves of one rollout with the same name.
    DuplicateWave = "duplicate-wave",
    /// A wave's `after` that is not a duration Datum takes.
    InvalidDuration = "invalid-duration",
    /// A wave's `hosts` that is not a label selector.
    InvalidSelector = "invalid-selector",
    /// A wave that takes no host.
    EmptyWave = "empty-wave",
    /// A wave after one that takes every remaining host.
    UnreachableWave = "unreachable-wave",
    /// One host named (`datum/host=`) by two waves.
    HostInTwoWaves = "host-in-two-waves",
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
    /// A secret's file is not age ciphertext hosts can decrypt: empty,
    /// damaged, a header past Datum's limits, or sealed with a passphrase.
    SecretCiphertext = "secret-ciphertext",
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

/// A line printed under a diagnostic's message: a row of a conflict's
/// table, or the hosts a problem hits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Line {
    pub text: String,
    /// Where in `text` (a byte range) the hosts it hits are named, for a
    /// terminal to set them off.
    pub hosts: Option<(usize, usize)>,
}

impl From<String> for Line {
    fn from(text: String) -> Line {
        Line { text, hosts: None }
    }
}

/// One error or warning.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable, machine-readable kind (`unknown-field`, `conflict`, ...).
    pub code: Code,
    pub message: String,
    /// Lines printed under the message as written, indented by two spaces.
    pub body: Vec<Line>,
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

    pub fn with_body(mut self, body: Vec<Line>) -> Diagnostic {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let d = Diagnostic::warning(Code::LatentConflict, "x");
        let mut json = Vec::new();
        let files = Files::default();
        crate::emit::write_json(&mut json, &crate::emit::diagnostic(&files, &d)).unwrap();
        let json = String::from_utf8(json).unwrap();
        assert!(json.contains("\"code\": \"latent-conflict\""), "{json}");
    }
}
