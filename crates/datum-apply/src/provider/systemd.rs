//! Services, through `systemctl`.
//!
//! `enabled` is applied to unit files, which works on the running system
//! and, with `systemctl --root`, on a directory. Whether a service runs
//! (`ensure`) and restarts need a booted systemd: on the running system
//! without one they fail; under `--root` nothing runs from the directory,
//! so `ensure` is left alone with a note and a restart is not needed.

use std::path::Path;
use std::process::Command;

use super::command::{self, tool};
use super::{Context, Examined, Failure, Provider, Restarted, ServiceProvider, has};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::ServiceSpec;

pub struct Systemd {
    root: Root,
}

/// What `systemctl is-enabled` says about a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
enum UnitFile {
    /// No unit file by that name.
    Missing,
    Enabled(bool),
    Masked,
    /// Started by something else (`static`, `indirect`, `generated`, ...):
    /// enabling or disabling does not apply.
    Fixed(String),
}

impl Systemd {
    pub fn new(root: Root) -> Systemd {
        Systemd { root }
    }

    /// Whether services run here: the running system, booted with systemd.
    fn booted(&self) -> bool {
        self.root.dir().is_none() && Path::new("/run/systemd/system").is_dir()
    }

    fn systemctl(&self) -> Command {
        let mut cmd = tool("systemctl");
        if let Some(dir) = self.root.dir() {
            cmd.arg(format!("--root={}", dir.display()));
        }
        cmd
    }

    fn unit_file(&self, name: &str) -> Result<UnitFile, Failure> {
        let mut cmd = self.systemctl();
        cmd.args(["is-enabled", "--"]).arg(name);
        let out = command::output(&mut cmd)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let word = stdout.lines().next().unwrap_or("").trim();
        Ok(match word {
            "enabled" | "enabled-runtime" | "alias" | "linked" | "linked-runtime" => {
                UnitFile::Enabled(true)
            }
            "disabled" => UnitFile::Enabled(false),
            "masked" | "masked-runtime" => UnitFile::Masked,
            "" | "not-found" => {
                if String::from_utf8_lossy(&out.stderr).contains("No such file")
                    || word == "not-found"
                {
                    UnitFile::Missing
                } else {
                    return Err(command::failed(&cmd, &out));
                }
            }
            other => UnitFile::Fixed(other.to_owned()),
        })
    }

    fn active(&self, name: &str) -> Result<bool, Failure> {
        let out = command::output(self.systemctl().args(["is-active", "--"]).arg(name))?;
        let word = String::from_utf8_lossy(&out.stdout);
        Ok(matches!(word.trim(), "active" | "activating" | "reloading"))
    }

    /// Why running state cannot be managed here, or `None` when it can.
    fn no_runtime(&self, name: &str) -> Option<Result<String, Failure>> {
        if self.booted() {
            return None;
        }
        Some(match self.root.dir() {
            Some(dir) => Ok(format!(
                "not started or stopped: nothing runs from {} (`enabled` decides whether {name} starts when it boots)",
                dir.display()
            )),
            None => Err(Failure::new(format!(
                "systemd is not running on this machine (no /run/systemd/system): cannot make {name} run or stop"
            ))),
        })
    }
}

fn word(running: bool) -> &'static str {
    if running { "running" } else { "stopped" }
}

impl Provider<ServiceSpec> for Systemd {
    fn examine(&self, s: &ServiceSpec, _cx: &Context<'_>) -> Result<Examined, Failure> {
        let mut ex = Examined::default();
        if let Some(want) = s.enabled {
            match self.unit_file(&s.name)? {
                // No unit file cannot start at boot: `enabled: false` holds.
                UnitFile::Missing if !want => {}
                UnitFile::Missing => ex.changes.push(Change::new(
                    Attribute::Enabled,
                    "(no unit file)",
                    want.to_string(),
                )),
                UnitFile::Enabled(have) if have != want => {
                    ex.changes.push(Change::new(
                        Attribute::Enabled,
                        have.to_string(),
                        want.to_string(),
                    ));
                }
                UnitFile::Enabled(_) => {}
                UnitFile::Masked if want => {
                    return Err(Failure::new(format!(
                        "{} is masked; Datum does not unmask it",
                        s.name
                    )));
                }
                UnitFile::Masked => {}
                UnitFile::Fixed(state) => ex.notes.push(format!(
                    "{} is {state}: it cannot be enabled or disabled, so `enabled` is left alone",
                    s.name
                )),
            }
        }
        if let Some(want) = s.running {
            match self.no_runtime(&s.name) {
                Some(Ok(note)) => ex.notes.push(note),
                Some(Err(f)) => return Err(f),
                None => {
                    let have = self.active(&s.name)?;
                    if have != want {
                        ex.changes
                            .push(Change::new(Attribute::Ensure, word(have), word(want)));
                    }
                }
            }
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &ServiceSpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        if let (Some(want), true) = (s.enabled, has(changes, Attribute::Enabled)) {
            let verb = if want { "enable" } else { "disable" };
            command::run(self.systemctl().args([verb, "--"]).arg(&s.name))?;
        }
        if let (Some(want), true) = (s.running, has(changes, Attribute::Ensure)) {
            let verb = if want { "start" } else { "stop" };
            command::run(self.systemctl().args([verb, "--"]).arg(&s.name))?;
        }
        Ok(())
    }
}

impl ServiceProvider for Systemd {
    fn restart(&self, s: &ServiceSpec) -> Result<Restarted, Failure> {
        match self.no_runtime(&s.name) {
            Some(Ok(_)) => Ok(Restarted::NotRunning(format!(
                "nothing runs from {}",
                self.root
                    .dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            ))),
            Some(Err(f)) => Err(f),
            None => {
                // Where the manifest does not say the service runs, a stopped
                // one stays stopped: `try-restart` only restarts a running one.
                let verb = if s.running == Some(true) {
                    "restart"
                } else {
                    "try-restart"
                };
                command::run(self.systemctl().args([verb, "--"]).arg(&s.name))
                    .map(|_| Restarted::Yes)
            }
        }
    }
}
