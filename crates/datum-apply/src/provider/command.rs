//! Running the system's tools (dpkg, systemctl, the shadow tools) with a
//! fixed locale and no input, and turning their failures into messages.

use std::process::{Command, Output, Stdio};

use super::Failure;

/// A command line, ready to run.
pub fn tool(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("LC_ALL", "C")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null());
    cmd
}

/// How a command is shown in messages: `dpkg --root /r -i x.deb`.
pub fn shown(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// Runs a command and gives its output whatever its status.
pub fn output(cmd: &mut Command) -> Result<Output, Failure> {
    cmd.output()
        .map_err(|e| Failure::new(format!("cannot run `{}`: {e}", shown(cmd))))
}

/// Runs a command that must succeed; gives its stdout.
pub fn run(cmd: &mut Command) -> Result<String, Failure> {
    let out = output(cmd)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(failed(cmd, &out))
}

/// `` `cmd` failed (exit 1): the last lines it printed ``.
pub fn failed(cmd: &Command, out: &Output) -> Failure {
    let status = match out.status.code() {
        Some(c) => format!("exit {c}"),
        None => "killed by a signal".into(),
    };
    let text = String::from_utf8_lossy(&out.stderr);
    let text = if text.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout)
    } else {
        text
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    if tail.is_empty() {
        Failure::new(format!("`{}` failed ({status})", shown(cmd)))
    } else {
        Failure::new(format!("`{}` failed ({status}): {tail}", shown(cmd)))
    }
}
