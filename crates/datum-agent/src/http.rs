//! One URL or path to bytes, bounded in size and time: how the agent reads
//! a bundle (`https://`, `http://`, `file://` or a plain path) and posts a
//! report. Plain `http://` is allowed because a signed bundle does not need
//! the transport to be trusted; without a signature it is not safe.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use datum_core::hint::Hinted;
use ureq::Agent;
use ureq::tls::{RootCerts, TlsConfig};

use crate::ca::CaFile;
use crate::file::{self, FileError};

/// Limits on one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchOptions {
    /// The largest body accepted, in bytes.
    pub max_bytes: u64,
    /// The whole request, from connecting to the last byte.
    pub timeout: Duration,
    /// Whether `https_proxy`, `http_proxy`, `all_proxy` and `no_proxy` apply.
    pub env_proxy: bool,
    /// The CAs trusted for `https://` instead of the platform's (`ca_file`).
    pub ca: Option<CaFile>,
}

impl Default for FetchOptions {
    fn default() -> FetchOptions {
        FetchOptions {
            max_bytes: 256 << 20,
            timeout: Duration::from_secs(60),
            env_proxy: true,
            ca: None,
        }
    }
}

/// Where a URL points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// An `http://` or `https://` URL.
    Http(String),
    /// A `file://` URL or a plain path.
    File(PathBuf),
}

/// Why nothing was fetched. URLs in messages have any password hidden.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The URL template or URL cannot be used.
    #[error("{url}: {why}")]
    BadUrl { url: String, why: String },
    /// The host name breaks the host-name rule.
    #[error("{host:?} is not a host name, so it cannot be put in a URL")]
    BadHost { host: String },
    /// The server answered, but not with success.
    #[error("{method} {url}: the server answered {status}")]
    Status {
        method: &'static str,
        url: String,
        status: u16,
    },
    /// No connection: refused, unknown host, unreachable.
    #[error("{method} {url}: cannot connect: {why}")]
    Connect {
        method: &'static str,
        url: String,
        why: String,
    },
    /// The whole request took longer than the timeout.
    #[error("{method} {url}: no complete answer within {after:?}")]
    Timeout {
        method: &'static str,
        url: String,
        after: Duration,
    },
    /// The body, or the file, is over the size limit.
    #[error("{url} is larger than the limit of {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    /// The server announced a body over the size limit: refused before
    /// reading any of it.
    #[error("{url} announces {length} bytes (Content-Length), over the limit of {limit} bytes")]
    Announced {
        url: String,
        length: u64,
        limit: u64,
    },
    /// An `https://` request was redirected to a URL that is not.
    #[error("{url}: refusing a redirect from https:// to {to}")]
    Downgrade { url: String, to: String },
    /// TLS failed: most often, the server's certificate is not trusted.
    #[error("{method} {url}: TLS failed: {why}")]
    Tls {
        method: &'static str,
        url: String,
        why: String,
    },
    /// The connection broke, or HTTP failed.
    #[error("{method} {url}: {why}")]
    Transfer {
        method: &'static str,
        url: String,
        why: String,
    },
    /// A local file cannot be read.
    #[error("cannot read {path}")]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// What the operator can do about it.
impl Hinted for FetchError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint: Option<&'static str> = match self {
            FetchError::Status { status: 404, .. } => {
                Some("check the URL: the server has nothing for this host at that path")
            }
            FetchError::Status {
                status: 401 | 403, ..
            } => Some("the server refuses this host: check its access rules"),
            FetchError::Connect { .. } => {
                Some("is the server up, and reachable from this host (DNS, firewall, proxy)?")
            }
            FetchError::Timeout { .. } => {
                Some("the server or the network is slow: try again, or raise the timeout")
            }
            FetchError::Tls { .. } => Some(
                "if the server's certificate comes from an internal CA, name that CA's certificate in `ca_file` in the agent configuration (docs/agent.md)",
            ),
            FetchError::TooLarge { .. } | FetchError::Announced { .. } => {
                Some("check that the URL names a bundle, or raise the size limit")
            }
            FetchError::Downgrade { .. } => Some(
                "the server (or something on the way) sends an https:// request to a plain URL, where anyone on the path could read and change the answer: fix the redirect, or name the final https:// URL",
            ),
            _ => None,
        };
        hint.map(Cow::Borrowed)
    }
}

/// The URL for `host`: `{host}` in `template` replaced by the host name,
/// percent-encoded. The host name must follow the spec's rule; the
/// encoding is a second guard, so a name can never add a path segment or a
/// query. Any other `{...}` is refused, as a typo would be.
pub fn expand(template: &str, host: &str) -> Result<String, FetchError> {
    if !datum_core::document::valid_host_name(host) {
        return Err(FetchError::BadHost {
            host: host.to_owned(),
        });
    }
    let mut out = String::with_capacity(template.len() + host.len());
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let Some(tail) = after.strip_prefix("{host}") else {
            let end = after.find('}').map_or(after.len(), |e| e + 1);
            return Err(FetchError::BadUrl {
                url: redact(template),
                why: format!(
                    "unknown placeholder `{}`: the only one is `{{host}}`",
                    &after[..end]
                ),
            });
        };
        percent_encode(host, &mut out);
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

/// Keeps RFC 3986's unreserved characters, encodes every other byte.
fn percent_encode(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// What `url` names: an HTTP(S) URL, or a local file (`file://` URL or a
/// plain path).
pub fn locate(url: &str) -> Result<Location, FetchError> {
    let Some((scheme, rest)) = split_scheme(url) else {
        if url.is_empty() {
            return Err(bad(url, "it is empty"));
        }
        return Ok(Location::File(PathBuf::from(url)));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => Ok(Location::Http(url.to_owned())),
        "file" => {
            let path = rest
                .strip_prefix("localhost")
                .unwrap_or(rest)
                .strip_prefix('/')
                .ok_or_else(|| bad(url, "a file URL names a local path: file:///path"))?;
            let bytes = percent_decode(path)
                .ok_or_else(|| bad(url, "a `%` is not followed by two hex digits"))?;
            if bytes.contains(&0) {
                return Err(bad(url, "it encodes a NUL byte"));
            }
            let mut p = PathBuf::from("/");
            p.push(OsStr::from_bytes(&bytes));
            Ok(Location::File(p))
        }
        other => Err(bad(
            url,
            &format!(
                "the scheme `{other}` is not supported: use https://, http://, file:// or a path"
            ),
        )),
    }
}

fn bad(url: &str, why: &str) -> FetchError {
    FetchError::BadUrl {
        url: redact(url),
        why: why.to_owned(),
    }
}

/// `scheme` and what follows `scheme://`, when `url` starts with one.
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The URL with the password of any `user:password@` replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}{}", &rest[authority_end..])
        }
        _ => url.to_owned(),
    }
}

/// The bytes `url` names, at most `opts.max_bytes` of them.
pub fn fetch(url: &str, opts: &FetchOptions) -> Result<Vec<u8>, FetchError> {
    match locate(url)? {
        Location::File(path) => read_file(&path, opts.max_bytes),
        Location::Http(url) => get(&url, opts),
    }
}

/// The bytes of a local file, at most `max` of them ([`file::read_file`]).
pub fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, FetchError> {
    file::read_file(path, max).map_err(FetchError::from)
}

impl From<FileError> for FetchError {
    fn from(e: FileError) -> FetchError {
        match e {
            FileError::Read { path, source } => FetchError::File { path, source },
            FileError::TooLarge { path, limit } => FetchError::TooLarge {
                url: path.display().to_string(),
                limit,
            },
        }
    }
}

/// An agent for requests to `url`: one that starts on `https://` never
/// follows a redirect off it.
fn agent(url: &str, opts: &FetchOptions) -> Agent {
    let https = split_scheme(url).is_some_and(|(s, _)| s.eq_ignore_ascii_case("https"));
    let mut config = Agent::config_builder()
        .https_only(https)
        .timeout_global(Some(opts.timeout))
        .http_status_as_error(false)
        .max_redirects(5)
        .user_agent(concat!("datum-agent/", env!("CARGO_PKG_VERSION")))
        .tls_config(
            TlsConfig::builder()
                .root_certs(match &opts.ca {
                    Some(ca) => RootCerts::Specific(ca.certificates()),
                    None => RootCerts::PlatformVerifier,
                })
                .build(),
        );
    if !opts.env_proxy {
        config = config.proxy(None);
    }
    config.build().new_agent()
}

fn get(url: &str, opts: &FetchOptions) -> Result<Vec<u8>, FetchError> {
    let failed = |e| transport_error("GET", url, opts, e);
    let mut response = agent(url, opts).get(url).call().map_err(failed)?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            method: "GET",
            url: redact(url),
            status,
        });
    }
    let announced = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(length) = announced
        && length > opts.max_bytes
    {
        return Err(FetchError::Announced {
            url: redact(url),
            length,
            limit: opts.max_bytes,
        });
    }
    let mut reader = response.body_mut().with_config().reader();
    match read_bounded(&mut reader, opts.max_bytes, announced) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(FetchError::TooLarge {
            url: redact(url),
            limit: opts.max_bytes,
        }),
        Err(e) => Err(failed(ureq::Error::from(e))),
    }
}

/// Everything `r` gives, or `None` as soon as it is more than `max` bytes.
/// The buffer is reserved once: the announced length when there is one
/// (within `max`), else `max` itself, which costs address space and not
/// memory until bytes arrive, so the buffer is never copied as it grows and
/// a body near the limit costs the limit and a small constant, not twice
/// that. An announced length that turns out short grows the buffer to
/// `max` at most, once.
fn read_bounded(
    r: &mut impl io::Read,
    max: u64,
    announced: Option<u64>,
) -> io::Result<Option<Vec<u8>>> {
    const CHUNK: usize = 64 << 10;
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    out.try_reserve_exact(announced.map_or(max, |n| (n as usize).min(max)))?;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if out.len() + n > max {
            return Ok(None);
        }
        if out.capacity() - out.len() < n {
            out.try_reserve_exact(max - out.len())?;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    out.shrink_to_fit();
    Ok(Some(out))
}

/// POSTs `body` as JSON to `url`; success is any 2xx answer.
pub fn post_json(url: &str, body: &[u8], opts: &FetchOptions) -> Result<(), FetchError> {
    let Location::Http(url) = locate(url)? else {
        return Err(bad(url, "a report is posted to an http:// or https:// URL"));
    };
    let response = agent(&url, opts)
        .post(&url)
        .content_type("application/json")
        .send(body)
        .map_err(|e| transport_error("POST", &url, opts, e))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            method: "POST",
            url: redact(&url),
            status,
        });
    }
    Ok(())
}

fn transport_error(
    method: &'static str,
    url: &str,
    opts: &FetchOptions,
    e: ureq::Error,
) -> FetchError {
    let url = redact(url);
    let connect = |why: &str| FetchError::Connect {
        method,
        url: url.clone(),
        why: why.to_owned(),
    };
    match e {
        ureq::Error::StatusCode(status) => FetchError::Status {
            method,
            url,
            status,
        },
        ureq::Error::Timeout(_) => FetchError::Timeout {
            method,
            url,
            after: opts.timeout,
        },
        ureq::Error::Io(e) if e.kind() == io::ErrorKind::TimedOut => FetchError::Timeout {
            method,
            url,
            after: opts.timeout,
        },
        ureq::Error::BodyExceedsLimit(_) => FetchError::TooLarge {
            url,
            limit: opts.max_bytes,
        },
        ureq::Error::RequireHttpsOnly(to) => FetchError::Downgrade {
            url,
            to: redact(&to),
        },
        ureq::Error::HostNotFound => connect("the host name does not resolve"),
        ureq::Error::ConnectionFailed => connect("the connection failed"),
        ureq::Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            connect("connection refused")
        }
        ureq::Error::Rustls(e) => FetchError::Tls {
            method,
            url,
            why: e.to_string(),
        },
        ureq::Error::Io(e) if e.get_ref().is_some_and(|e| e.is::<rustls::Error>()) => {
            FetchError::Tls {
                method,
                url,
                why: e.to_string(),
            }
        }
        other => FetchError::Transfer {
            method,
            url,
            why: other.to_string(),
        },
    }
}
