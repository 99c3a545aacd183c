//! Health checks: after a run that changed something, each `Health` of
//! the manifest is asked whether the host still works. A command runs
//! through the Exec provider's runner (so under `--root` it is confined
//! exactly as an Exec is, by [`crate::spawn`]); an HTTP GET goes to the
//! host itself (loopback only) and expects a status.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::exec::{Execs, Invocation, shown};
pub use crate::report::Checked;
use crate::report::Summary;
use crate::spec::{Desired, HealthSpec, Item, Probe};

/// How much of a reply or an output a failed check keeps.
pub const KEPT: usize = 4096;

/// After a run that changed something: every Health of `items`, in id
/// order, counted in `summary` and handed to `report`. A run that changed
/// nothing has nothing new to blame, and `noop` changes nothing: then
/// nothing is asked.
pub fn ask(
    items: &[Item],
    execs: &Execs,
    noop: bool,
    summary: &mut Summary,
    report: &mut dyn FnMut(&Checked),
) {
    if noop || summary.changed == 0 {
        return;
    }
    for item in items {
        let Desired::Health(spec) = &item.desired else {
            continue;
        };
        let checked = match &item.problem {
            Some(why) => Checked {
                id: item.id.to_string(),
                what: item.summary.clone(),
                passed: false,
                detail: format!("cannot be checked: {why}"),
                output: String::new(),
            },
            None => check(&item.id.to_string(), spec, execs),
        };
        summary.count_health(checked.passed);
        report(&checked);
    }
}

/// Runs one check.
pub fn check(id: &str, spec: &HealthSpec, execs: &Execs) -> Checked {
    match &spec.probe {
        Probe::Command {
            argv,
            user,
            environment,
        } => {
            let inv = Invocation {
                argv: argv.clone(),
                user: user.clone(),
                cwd: None,
                environment: environment.clone(),
                timeout: spec.timeout,
            };
            let what = shown(argv);
            match execs.run_invocation(&inv) {
                Ok(ran) => Checked {
                    id: id.to_owned(),
                    what,
                    passed: ran.exit.success(),
                    detail: ran.exit.to_string(),
                    output: ran.output,
                },
                Err(f) => Checked {
                    id: id.to_owned(),
                    what,
                    passed: false,
                    detail: f.to_string(),
                    output: String::new(),
                },
            }
        }
        Probe::Http { url, status } => {
            let (passed, detail, output) = match get(url, spec.timeout) {
                Ok((got, reply)) if got == *status => (true, format!("answered {got}"), reply),
                Ok((got, reply)) => (false, format!("answered {got}, expected {status}"), reply),
                Err(why) => (false, why, String::new()),
            };
            Checked {
                id: id.to_owned(),
                what: format!("GET {url}"),
                passed,
                detail,
                output,
            }
        }
    }
}

/// `http://HOST[:PORT][/PATH]` on the host itself, as the schema's rule
/// admits it: the address to connect to, the Host header and the path.
fn target(url: &str) -> Result<(SocketAddr, String, String), String> {
    let bad = || format!("`{url}` is not an http:// URL on the host itself");
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let (ip, port) = if let Some(p) = authority.strip_prefix("[::1]") {
        ("::1", p)
    } else if let Some(p) = authority.strip_prefix("127.0.0.1") {
        ("127.0.0.1", p)
    } else if let Some(p) = authority.strip_prefix("localhost") {
        ("127.0.0.1", p)
    } else {
        return Err(bad());
    };
    let port: u16 = match port.strip_prefix(':') {
        Some(p) => p.parse().map_err(|_| bad())?,
        None if port.is_empty() => 80,
        None => return Err(bad()),
    };
    let ip: std::net::IpAddr = ip.parse().map_err(|_| bad())?;
    Ok((
        SocketAddr::new(ip, port),
        authority.to_owned(),
        path.to_owned(),
    ))
}

/// One GET, within `timeout` in all: the status and the start of the
/// reply (its status line and body, up to [`KEPT`] bytes).
fn get(url: &str, timeout: Duration) -> Result<(u16, String), String> {
    let (addr, host, path) = target(url)?;
    let deadline = Instant::now() + timeout;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("timed out after {}s", timeout.as_secs()))
    };
    let mut stream = TcpStream::connect_timeout(&addr, left()?)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    stream
        .set_write_timeout(Some(left()?))
        .and_then(|()| {
            write!(
                stream,
                "GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: datum-health\r\nConnection: close\r\n\r\n"
            )
        })
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        stream
            .set_read_timeout(Some(left()?))
            .map_err(|e| e.to_string())?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                reply.extend_from_slice(&buf[..n]);
                // The status line is all a check needs; the rest is kept
                // for the report, up to a bound.
                if reply.len() >= KEPT {
                    reply.truncate(KEPT);
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if reply.windows(2).any(|w| w == b"\r\n") {
                    break;
                }
                return Err(format!("timed out after {}s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("cannot read the reply: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&reply).into_owned();
    let status = text
        .lines()
        .next()
        .and_then(|l| {
            let mut words = l.split(' ');
            let version = words.next()?;
            let code = words.next()?;
            (version.starts_with("HTTP/") && code.len() == 3)
                .then(|| code.parse::<u16>().ok())
                .flatten()
        })
        .ok_or_else(|| "the reply is not HTTP".to_owned())?;
    Ok((status, text))
}

#[cfg(test)]
mod tests {
    use super::target;

    #[test]
    fn only_urls_on_the_host_itself_are_asked() {
        let (addr, host, path) = target("http://127.0.0.1:8080/healthz").unwrap();
        assert_eq!(
            (addr.to_string(), host.as_str(), path.as_str()),
            ("127.0.0.1:8080".into(), "127.0.0.1:8080", "/healthz")
        );
        assert_eq!(
            target("http://localhost").unwrap().0.to_string(),
            "127.0.0.1:80"
        );
        assert_eq!(
            target("http://[::1]:81/x").unwrap().0.to_string(),
            "[::1]:81"
        );
        for bad in [
            "https://127.0.0.1/",
            "http://example.com/",
            "http://127.0.0.1:x/",
            "http://127.0.0.1.example.com/",
            "http://localhost:99999/",
        ] {
            assert!(target(bad).is_err(), "{bad}");
        }
    }
}
