//! The agent's configuration, `/etc/datum/agent.yaml`: where the host's
//! configuration comes from (git or a bundle URL), whom to trust, when to
//! run and where to report. Read with the core's YAML reader, so every
//! mistake is reported with its `path:line:column`, all of them at once.
//!
//! ```yaml
//! git:
//!   remotes: [https://git.example.net/infra/fleet.git, /srv/fleet.git]
//!   branch: main
//!   fleet: fleet
//! allowed_signers: /etc/datum/allowed_signers
//! interval: 30m
//! ```

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use datum_core::diagnostic::{Code, Diagnostic};
use datum_core::hint::Hinted;
use datum_core::schema::{normalise_abs_path, suggest};
use datum_core::settings::{self, Node, Value};
use datum_core::source::{Files, Span};

use crate::fetch::GitSource;
use crate::schedule::Schedule;
use crate::{file, http, metrics};

mod source;

/// Where the agent looks for its configuration (under `--root`).
pub const DEFAULT_PATH: &str = "/etc/datum/agent.yaml";
/// A configuration file is a few lines; anything much bigger is a mistake.
const MAX_SIZE: u64 = 1 << 20;

/// What the agent is told to do.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: Source,
    /// Git mode: the allowed-signers file the tip commit must be signed by one of.
    pub allowed_signers: Option<PathBuf>,
    /// Bundle mode: the allowed-signers file a bundle must be signed by one of.
    pub public_keys: Option<PathBuf>,
    pub schedule: Schedule,
    /// Where each run's report is POSTed, best effort.
    pub report_url: Option<String>,
    /// The Prometheus textfile-collector file.
    pub metrics: PathBuf,
    /// The private key secrets are decrypted with (`identity`); `None` is
    /// the SSH host key, /etc/ssh/ssh_host_ed25519_key.
    pub identity: Option<PathBuf>,
    /// The PEM file of the CAs trusted for `https://` bundle URLs and
    /// `report_url` instead of the platform's roots (`ca_file`).
    pub ca_file: Option<PathBuf>,
    /// Apply input that no signature vouches for (`insecure_allow_unsigned:
    /// true`). Without it, an agent with no signers configured refuses
    /// every input.
    pub insecure_allow_unsigned: bool,
    /// Bundle mode: the only fleet whose bundles are applied (`fleet_name`);
    /// without it, the fleet of the first bundle applied.
    pub fleet_name: Option<String>,
}

/// Where the host's configuration comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A branch of a git repository, from the first remote that answers;
    /// the fleet lives at `fleet` inside it (`""` for the top). With
    /// `max_age`, a newest commit older than that is refused as stale.
    Git {
        source: GitSource,
        fleet: String,
        max_age: Option<Duration>,
    },
    /// A bundle URL (`https://`, `http://`, `file://` or a path) in which
    /// `{host}` stands for the host's name.
    Bundle { url: String },
}

/// The configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read the agent configuration {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file has mistakes; each diagnostic says where and what.
    #[error("{} is not a valid agent configuration ({})", path.display(), datum_core::report::count(diagnostics.len(), "error"))]
    Invalid {
        path: PathBuf,
        /// The file, for drawing the diagnostics.
        files: Files,
        diagnostics: Vec<Diagnostic>,
    },
}

/// What would fix it.
impl Hinted for ConfigError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            ConfigError::Read { .. } => {
                "write /etc/datum/agent.yaml (see docs/agent.md), or name another file with --config"
            }
            ConfigError::Invalid { .. } => "fix each error above; docs/agent.md lists every key",
        }))
    }
}

impl ConfigError {
    /// The diagnostics and the file they point into, for an invalid file.
    pub fn diagnostics(&self) -> Option<(&Files, &[Diagnostic])> {
        match self {
            ConfigError::Invalid {
                files, diagnostics, ..
            } => Some((files, diagnostics)),
            ConfigError::Read { .. } => None,
        }
    }
}

/// Reads and checks the configuration file at `path`.
/// The configuration at `abs` inside `root` ([`DEFAULT_PATH`] unless
/// `--config` names another): the directories on the way resolved inside
/// the root, the file read only as a regular file, never through a link at
/// its name, so no file outside the root is ever shown in a diagnostic.
pub fn read_inside(root: &datum_apply::Root, abs: &str) -> Result<Config, ConfigError> {
    let path = root.path(abs);
    let read = |source| ConfigError::Read {
        path: path.clone(),
        source,
    };
    let bytes = match root.read_small(abs, MAX_SIZE) {
        Ok(Some(bytes)) => bytes,
        // ENOENT, so the message reads as any missing file's.
        Ok(None) => {
            return Err(read(std::io::Error::from_raw_os_error(2)));
        }
        Err(datum_apply::root::Refused::Io(e)) => return Err(read(e)),
        Err(other) => return Err(read(std::io::Error::other(other.to_string()))),
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8",
        ))
    })?;
    parse(&path, text)
}

/// The configuration at `path`, as named.
pub fn read(path: &Path) -> Result<Config, ConfigError> {
    let bytes = file::read_file(path, MAX_SIZE).map_err(|e| ConfigError::Read {
        path: path.to_owned(),
        source: e.into_io(),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| ConfigError::Read {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8"),
    })?;
    parse(path, text)
}

/// Checks `text` as the configuration file `path`.
pub fn parse(path: &Path, text: String) -> Result<Config, ConfigError> {
    let mut files = Files::default();
    let file = files.add(path.display().to_string(), text);
    let result = match settings::parse(file, files.get(file).text()) {
        Err(diagnostics) => Err(diagnostics),
        Ok(doc) => {
            let mut cx = Cx {
                diags: Vec::new(),
                top: Span {
                    file,
                    start: Default::default(),
                    end: Default::default(),
                },
            };
            let config = match doc.root() {
                Some(root) => cx.config(root),
                None => {
                    cx.error(cx.top, "the agent configuration is empty", HINT_MODE);
                    None
                }
            };
            match config {
                Some(c) if cx.diags.is_empty() => Ok(c),
                _ => Err(cx.diags),
            }
        }
    };
    result.map_err(|diagnostics| ConfigError::Invalid {
        path: path.to_owned(),
        files,
        diagnostics,
    })
}

const HINT_MODE: &str = "configure one way in: `git: {remotes: [URL], branch: main, fleet: PATH}` or `bundle: {url: \"https://HOST/bundles/{host}.bundle\"}`";

const KEYS: &[&str] = &[
    "git",
    "bundle",
    "allowed_signers",
    "public_keys",
    "interval",
    "jitter",
    "report_url",
    "metrics",
    "identity",
    "ca_file",
    "insecure_allow_unsigned",
    "fleet_name",
];

/// The top-level keys as read, each with where it was written when
/// another key's check needs it.
#[derive(Default)]
struct Keys {
    git: Option<(Span, Option<Source>)>,
    bundle: Option<(Span, Option<Source>)>,
    allowed_signers: Option<(Span, Option<PathBuf>)>,
    public_keys: Option<(Span, Option<PathBuf>)>,
    interval: Option<Duration>,
    jitter: Option<(Duration, Span)>,
    report_url: Option<String>,
    metrics: Option<PathBuf>,
    identity: Option<PathBuf>,
    ca_file: Option<(Span, Option<PathBuf>)>,
    insecure_allow_unsigned: bool,
    fleet_name: Option<String>,
}

/// Collects every mistake before giving up.
struct Cx {
    diags: Vec<Diagnostic>,
    /// The start of the file, for what is missing.
    top: Span,
}

impl Cx {
    fn error(&mut self, span: Span, message: impl Into<String>, hint: impl Into<String>) {
        self.diags.push(
            Diagnostic::error(Code::AgentConfig, message)
                .at(span, "here")
                .hint(hint),
        );
    }

    fn config(&mut self, root: Node<'_, '_>) -> Option<Config> {
        if root.value() != Value::Map {
            let found = root.found();
            self.error(
                root.span(),
                format!("the agent configuration must be a mapping of keys, found {found}"),
                HINT_MODE,
            );
            return None;
        }
        self.top = root.span();
        let keys = self.keys(root);
        let source = self.source(&keys);
        self.ca_file_reach(&keys, source.as_ref());
        let schedule = self.schedule(keys.interval, keys.jitter);
        Some(Config {
            source: source?,
            allowed_signers: keys.allowed_signers.and_then(|(_, p)| p),
            public_keys: keys.public_keys.and_then(|(_, p)| p),
            schedule: schedule?,
            report_url: keys.report_url,
            metrics: keys
                .metrics
                .unwrap_or_else(|| PathBuf::from(metrics::DEFAULT_PATH)),
            identity: keys.identity,
            ca_file: keys.ca_file.and_then(|(_, p)| p),
            insecure_allow_unsigned: keys.insecure_allow_unsigned,
            fleet_name: keys.fleet_name,
        })
    }

    /// Each top-level key read by its own reader; unknown keys refused.
    fn keys(&mut self, root: Node<'_, '_>) -> Keys {
        let mut keys = Keys::default();
        for (key, key_span, value) in root.entries() {
            match key {
                "git" => keys.git = Some((key_span, self.git(value))),
                "bundle" => keys.bundle = Some((key_span, self.bundle(value))),
                "allowed_signers" => {
                    keys.allowed_signers = Some((key_span, self.abs_path(key, value)))
                }
                "public_keys" => keys.public_keys = Some((key_span, self.abs_path(key, value))),
                "interval" => keys.interval = self.duration(key, value),
                "jitter" => keys.jitter = self.duration(key, value).map(|d| (d, value.span())),
                "report_url" => keys.report_url = self.report_url(value),
                "metrics" => keys.metrics = self.abs_path(key, value),
                "identity" => keys.identity = self.abs_path(key, value),
                "ca_file" => keys.ca_file = Some((key_span, self.abs_path(key, value))),
                "fleet_name" => keys.fleet_name = self.text(key, value).map(str::to_owned),
                "insecure_allow_unsigned" => match value.value() {
                    Value::Bool(b) => keys.insecure_allow_unsigned = b,
                    _ => self.error(
                        value.span(),
                        format!(
                            "`insecure_allow_unsigned` must be true or false, found {}",
                            value.found()
                        ),
                        "leave it out: an agent should apply only signed input",
                    ),
                },
                _ => {
                    let hint = match suggest(key, KEYS.iter().copied()) {
                        Some(near) => format!("did you mean `{near}`?"),
                        None => format!("the keys are {}", KEYS.join(", ")),
                    };
                    self.error(key_span, format!("unknown key `{key}`"), hint);
                }
            }
        }
        keys
    }

    /// The one way in (`git` or `bundle`), and signers that belong to it.
    fn source(&mut self, keys: &Keys) -> Option<Source> {
        let (is_git, is_bundle) = (keys.git.is_some(), keys.bundle.is_some());
        let source = match (&keys.git, &keys.bundle) {
            (Some((_, git)), None) => git.clone(),
            (None, Some((_, bundle))) => bundle.clone(),
            (Some(_), Some((span, _))) => {
                self.error(
                    *span,
                    "both `git` and `bundle` are configured",
                    "an agent takes its configuration one way: keep one of them",
                );
                None
            }
            (None, None) => {
                self.error(
                    self.top,
                    "neither `git` nor `bundle` is configured",
                    HINT_MODE,
                );
                None
            }
        };
        if let (Some((span, _)), true) = (&keys.allowed_signers, is_bundle && !is_git) {
            self.error(
                *span,
                "`allowed_signers` is for git mode",
                "a bundle's signers are listed by `public_keys`",
            );
        }
        if let (Some((span, _)), true) = (&keys.public_keys, is_git && !is_bundle) {
            self.error(
                *span,
                "`public_keys` is for bundle mode",
                "the signers of git commits are listed by `allowed_signers`",
            );
        }
        source
    }

    /// The schedule from `interval` (default 30 minutes) and `jitter`.
    fn schedule(
        &mut self,
        interval: Option<Duration>,
        jitter: Option<(Duration, Span)>,
    ) -> Option<Schedule> {
        let interval = interval.unwrap_or(crate::schedule::DEFAULT_INTERVAL);
        let schedule = match Schedule::new(interval) {
            Ok(s) => s,
            Err(e) => {
                let span = self.top;
                self.error(
                    span,
                    e.to_string(),
                    "write an interval such as `30m` or `1h`",
                );
                return None;
            }
        };
        let Some((jitter, span)) = jitter else {
            return Some(schedule);
        };
        match schedule.with_jitter(jitter) {
            Ok(with) => Some(with),
            Err(e) => {
                self.error(span, e.to_string(), "a jitter of a few seconds is enough");
                Some(schedule)
            }
        }
    }

    /// The entries of a mapping, or an error when `node` is not one.
    fn mapping<'s, 'a>(
        &mut self,
        what: &str,
        node: Node<'s, 'a>,
        hint: &str,
    ) -> Option<Vec<(&'s str, Span, Node<'s, 'a>)>> {
        if node.value() != Value::Map {
            let found = node.found();
            self.error(
                node.span(),
                format!("`{what}` must be a mapping, found {found}"),
                hint,
            );
            return None;
        }
        Some(node.entries().collect())
    }

    fn unknown(&mut self, within: &str, key: &str, span: Span, keys: &[&str]) {
        let hint = match suggest(key, keys.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("`{within}` takes {}", keys.join(", ")),
        };
        self.error(span, format!("unknown key `{key}` in `{within}`"), hint);
    }

    fn text<'s>(&mut self, what: &str, node: Node<'s, '_>) -> Option<&'s str> {
        match node.value() {
            Value::Text(t) if !t.is_empty() => Some(t),
            Value::Text(_) => {
                self.error(node.span(), format!("`{what}` is empty"), "write a value");
                None
            }
            _ => {
                let found = node.found();
                self.error(
                    node.span(),
                    format!("`{what}` must be text, found {found}"),
                    "write it as text, in quotes if need be",
                );
                None
            }
        }
    }

    fn abs_path(&mut self, what: &str, node: Node<'_, '_>) -> Option<PathBuf> {
        let text = self.text(what, node)?;
        match normalise_abs_path(text) {
            Ok(p) => Some(PathBuf::from(p)),
            Err(_) => {
                self.error(
                    node.span(),
                    format!("`{what}` must be an absolute path, found `{text}`"),
                    "write the file's absolute path on this host",
                );
                None
            }
        }
    }

    fn duration(&mut self, what: &str, node: Node<'_, '_>) -> Option<Duration> {
        let parsed = match node.value() {
            Value::Text(t) => parse_duration(t),
            _ => None,
        };
        if parsed.is_none() {
            let shown = node.scalar_text().unwrap_or_default();
            self.error(
                node.span(),
                format!("`{what}` must be a duration, found `{shown}`"),
                "write a number and a unit, or several: `90s`, `30m`, `1h30m`, `1d`",
            );
        }
        parsed
    }

    fn report_url(&mut self, node: Node<'_, '_>) -> Option<String> {
        let url = self.text("report_url", node)?;
        match http::locate(url) {
            Ok(http::Location::Http(u)) => Some(u),
            _ => {
                self.error(
                    node.span(),
                    format!("`report_url` must be an http:// or https:// URL, found `{url}`"),
                    "write the collector's URL, as in `https://reports.example.net/datum`",
                );
                None
            }
        }
    }
}

/// `90s`, `30m`, `1h30m`, `2d`: whole numbers each followed by a unit.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    (digits.is_empty() && !text.is_empty()).then(|| Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Config, String> {
        parse(Path::new("/etc/datum/agent.yaml"), text.to_owned()).map_err(|e| {
            let (files, diags) = e.diagnostics().unwrap();
            let mut out = Vec::new();
            for d in diags {
                datum_core::present::diagnostic::write(d, files, &mut out).unwrap();
            }
            String::from_utf8(out).unwrap()
        })
    }

    #[test]
    fn git_mode_with_defaults() {
        let c = parse_text("git:\n  remotes: [/srv/fleet.git, https://git.example.net/f.git]\n")
            .unwrap();
        let Source::Git {
            source,
            fleet,
            max_age,
        } = &c.source
        else {
            panic!("not git")
        };
        assert_eq!(
            source.remotes(),
            ["/srv/fleet.git", "https://git.example.net/f.git"]
        );
        assert_eq!((source.branch(), fleet.as_str()), ("main", ""));
        assert_eq!(*max_age, None);
        assert_eq!(source.timeout(), crate::fetch::STALL_TIMEOUT);
        assert_eq!(crate::fetch::STALL_TIMEOUT, Duration::from_secs(60));
        let c = parse_text("git:\n  remotes: [/srv/fleet.git]\n  timeout: 5s\n").unwrap();
        assert!(matches!(
            &c.source,
            Source::Git { source, .. } if source.timeout() == Duration::from_secs(5)
        ));
        let c = parse_text("git:\n  remotes: [/srv/fleet.git]\n  max_age: 14d\n").unwrap();
        assert!(matches!(
            c.source,
            Source::Git { max_age: Some(d), .. } if d == Duration::from_secs(14 * 86_400)
        ));
        let err = parse_text("git:\n  remotes: [/srv/fleet.git]\n  max_age: soon\n").unwrap_err();
        assert!(
            err.contains("`max_age` must be a duration, found `soon`"),
            "{err}"
        );
        assert_eq!(c.schedule.interval(), Duration::from_secs(1800));
        assert_eq!(c.metrics, Path::new(metrics::DEFAULT_PATH));
        assert_eq!((c.allowed_signers, c.report_url), (None, None));
    }

    #[test]
    fn bundle_mode_with_everything() {
        let c = parse_text(
            "bundle:\n  url: https://cfg.example.net/b/{host}.bundle\npublic_keys: /etc/datum/bundle_signers\n\
             interval: 1h30m\njitter: 5s\nreport_url: https://r.example.net/in\nmetrics: /run/datum.prom\n\
             ca_file: /etc/datum/ca.pem\n",
        )
        .unwrap();
        assert!(matches!(&c.source, Source::Bundle { url } if url.ends_with("{host}.bundle")));
        assert_eq!(
            c.public_keys.as_deref(),
            Some(Path::new("/etc/datum/bundle_signers"))
        );
        assert_eq!(c.schedule.interval(), Duration::from_secs(5400));
        assert_eq!(c.schedule.jitter(), Duration::from_secs(5));
        assert_eq!(c.report_url.as_deref(), Some("https://r.example.net/in"));
        assert_eq!(c.metrics, Path::new("/run/datum.prom"));
        assert_eq!(c.ca_file.as_deref(), Some(Path::new("/etc/datum/ca.pem")));
    }

    #[test]
    fn every_mistake_is_reported_with_its_place() {
        let err = parse_text(
            "git:\n  remotes: [relative/path]\n  branch: 'a..b'\n  flet: x\ninterval: 30\nreport_url: ftp://x\npublic_keys: /k\n",
        )
        .unwrap_err();
        for expected in [
            "agent.yaml:2:13",
            "the remote `relative/path` is a relative path",
            "agent.yaml:4:3",
            "unknown key `flet` in `git`",
            "did you mean `fleet`?",
            "agent.yaml:5:11",
            "`interval` must be a duration, found `30`",
            "`report_url` must be an http:// or https:// URL",
            "`public_keys` is for bundle mode",
        ] {
            assert!(err.contains(expected), "{expected}\n{err}");
        }
        for (text, expected) in [
            ("", "the agent configuration is empty"),
            ("interval: 5m\n", "neither `git` nor `bundle` is configured"),
            (
                "git: {remotes: [/a]}\nbundle: {url: /b}\n",
                "both `git` and `bundle`",
            ),
            (
                "bundle: {url: 'https://x/{hots}'}\n",
                "unknown placeholder `{hots}`",
            ),
            ("bundle: {url: 'b/{host}'}\n", "is relative"),
            (
                "git: {remotes: [/a], fleet: ../x}\n",
                "must be a path inside the repository",
            ),
            ("git: {remotes: []}\n", "`remotes` is empty"),
            (
                "git: {remotes: [/a]}\nintervall: 1m\n",
                "did you mean `interval`?",
            ),
            (
                "git: {remotes: [/a]}\ninterval: 0s\n",
                "the interval must be between",
            ),
            ("git: {remotes: [/a]}\na: 1\na: 2\n", "duplicate key `a`"),
            (
                "git: {remotes: [/a]}\nca_file: ca.pem\n",
                "`ca_file` must be an absolute path, found `ca.pem`",
            ),
            (
                "git: {remotes: [/a]}\nca_fil: /a\n",
                "did you mean `ca_file`?",
            ),
        ] {
            let err = parse_text(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    /// git's transport does not read `ca_file`: set for nothing but an
    /// `https://` remote, it is refused at its key, naming the remote; with
    /// an `https://` `report_url`, or no `https://` remote, it is kept.
    #[test]
    fn ca_file_for_nothing_but_an_https_git_remote_is_refused() {
        let err = parse_text(
            "git:\n  remotes: [/srv/fleet.git, 'HTTPS://git.example.net/f.git']\n\
             report_url: http://r.example.net/in\nca_file: /etc/datum/ca.pem\n",
        )
        .unwrap_err();
        for expected in [
            "error: `ca_file` is not used for the git remote `HTTPS://git.example.net/f.git`\n",
            "agent.yaml:4:1",
            "which `ca_file` does not reach",
        ] {
            assert!(err.contains(expected), "{expected}\n{err}");
        }
        assert_eq!(err.matches("error:").count(), 1, "{err}");
        for text in [
            "git: {remotes: ['https://g.example.net/f.git']}\nreport_url: https://r.example.net/in\n",
            "git: {remotes: ['ssh://g.example.net/f.git', /srv/f.git]}\n",
            "bundle: {url: 'https://c.example.net/{host}.bundle'}\npublic_keys: /k\n",
        ] {
            let c = parse_text(&format!("{text}ca_file: /etc/datum/ca.pem\n")).unwrap();
            assert_eq!(c.ca_file.as_deref(), Some(Path::new("/etc/datum/ca.pem")));
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2d"), Some(Duration::from_secs(172_800)));
        for bad in ["", "30", "m", "1x", "1.5h", "-1m", "99999999999999999999s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
