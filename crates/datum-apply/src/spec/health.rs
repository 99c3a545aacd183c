//! The spec of a Health check: a command, or an HTTP GET on the host,
//! run after an apply that changed something (never ordered among the
//! resources, never run under `--noop`).

use std::time::Duration;

use datum_core::names::Rule;
use datum_core::schema::{Field, Value};

use super::Fields;

/// How long a health check may take when the manifest does not say.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(30);

/// What a Health checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A command, as an Exec runs one: the program and its arguments, or
    /// one script with `shell`.
    Command {
        argv: Vec<String>,
        user: Option<String>,
        environment: Vec<(String, String)>,
    },
    /// An HTTP GET of a URL on the host itself, expecting `status`.
    Http { url: String, status: u16 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthSpec {
    pub probe: Probe,
    pub timeout: Duration,
}

impl Fields<'_> {
    /// A Health: exactly one of `command` and `http`, the fields of the
    /// other kind left out.
    pub(super) fn health(&mut self) -> HealthSpec {
        let r = self.r;
        let timeout = match r.value(Field::Timeout) {
            Some(Value::Int(s)) if *s > 0 => Duration::from_secs(*s as u64),
            _ => HEALTH_TIMEOUT,
        };
        let command = self.list(Field::Command);
        let http = self.text(Field::Http);
        let probe = match (command, http) {
            (Some(line), None) => {
                let shell = self.flag(Field::Shell);
                if line.first().is_none_or(String::is_empty) {
                    self.problems.push("its command is empty".into());
                }
                if shell && line.len() != 1 {
                    self.problems
                        .push("with `shell: true`, a command is one script".into());
                }
                let argv = if shell {
                    let mut argv = vec!["/bin/sh".to_owned(), "-c".to_owned()];
                    argv.extend(line);
                    argv
                } else {
                    line
                };
                Probe::Command {
                    argv,
                    user: self.text(Field::User),
                    environment: self.environment(),
                }
            }
            (None, Some(url)) => {
                if let Some(why) = Rule::HealthUrl.check(&url) {
                    self.problems
                        .push(format!("`{url}` is not {}: {why}", Rule::HealthUrl.what()));
                }
                for f in [Field::Shell, Field::User, Field::Environment] {
                    if r.value(f).is_some() {
                        self.problems
                            .push(format!("`{f}` is for a command, and this check is `http`"));
                    }
                }
                let status = match r.value(Field::Status) {
                    Some(Value::Int(s)) => u16::try_from(*s).unwrap_or(0),
                    _ => 200,
                };
                Probe::Http { url, status }
            }
            (Some(_), Some(_)) => {
                self.problems
                    .push("it has both `command` and `http`: a check is one of them".into());
                Probe::Http {
                    url: String::new(),
                    status: 200,
                }
            }
            (None, None) => {
                self.problems
                    .push("it has neither `command` nor `http`".into());
                Probe::Http {
                    url: String::new(),
                    status: 200,
                }
            }
        };
        if matches!(probe, Probe::Command { .. }) && r.value(Field::Status).is_some() {
            self.problems.push("`status` is for an `http` check".into());
        }
        HealthSpec { probe, timeout }
    }
}
