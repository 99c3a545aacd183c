//! The names apply hands to the system: a fleet that passes `check` never
//! fails in apply because of one.
//!
//! - Account names (a User's or Group's `name`, a User's `group` and
//!   `groups`, a File's or Directory's `owner` and `group`): the POSIX
//!   portable filename characters (`A-Z a-z 0-9 . _ -`), not starting with
//!   `-`, not all digits (it would read as an id), at most 32 characters
//!   (what `useradd` and `groupadd` accept). `evil:x:0:0::/:/bin/sh` and
//!   `wheel,root` are refused: `:` and `,` separate fields in
//!   `/etc/passwd` and `/etc/group`.
//! - Package names, what dpkg, rpm and pacman all take as one word: letters,
//!   digits, `+ - . _ @`, starting with a letter, digit or `_` (Debian's
//!   lowercase-only rule is the apt provider's to hold; rpm names such as
//!   `NetworkManager` or `R` are valid). `-rf` is refused.
//! - Package versions, the three systems' `[epoch:]version[-release]`:
//!   letters, digits and `. + ~ ^ _ - :`, starting with a letter or digit
//!   after the epoch, holding a digit (`latest` is refused).
//! - Service names, systemd's unit name rules: letters, digits and
//!   `: - _ . \`, with at most one `@` (a template instance), starting with
//!   neither `-` nor `.`, at most 255 characters with the `.service`
//!   systemctl adds to a name without a suffix.
//! - A User's `home` and `shell`: absolute paths without `..` or NUL, as
//!   every path is, and without `:` or a line break, which `/etc/passwd`
//!   cannot hold.
//! - A Cron's title names its file, `/etc/cron.d/datum-TITLE`: letters,
//!   digits, `_` and `-` only, as `run-parts` and cron require (a file
//!   whose name holds a `.` is ignored by Debian's cron).
//! - A Cron's `command`: one line, where a `%` is written `\%` (cron turns
//!   a bare `%` into a line break and feeds what follows to the command).
//! - Text written into a line of a system file (a Cron's `environment`, a
//!   Sysctl's `value`): no line break or other control character.
//! - A Sysctl's key (its `name`, else the title): `.` or `/` separated
//!   components of letters, digits and `_ - : @ +`, with no empty
//!   component and no `..`, so that it names a file below `/proc/sys`.
//! - A Repository's name (its files' names, the repository's id for
//!   dnf, pacman and zypper): letters, digits, `_ . -`; its `url` a
//!   `scheme://address` without spaces; its `suites` and `components`
//!   single words.
//! - A Mount's `device` (not starting with `#`, no control characters),
//!   `fstype` (`ext4`, `fuse.sshfs`) and `options` (comma-separated, no
//!   spaces): what one `/etc/fstab` line holds.
//!
//! A name written as a field value is checked where it is written; a name
//! that defaults to the resource's title is checked once the host's
//! manifest is folded (another layer may set `name:`), at the title.

use crate::schema::{Field, Kind};

/// A rule a name must follow.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    Account,
    Package,
    Version,
    Unit,
    PasswdPath,
    CronName,
    CronCommand,
    OneLine,
    SysctlKey,
    FstabDevice,
    Fstype,
    MountOptions,
    HealthUrl,
    RepoName,
    Url,
    Word,
}

/// The rule for a field of a kind, if its value is a name apply uses.
pub fn rule(kind: Kind, field: Field) -> Option<Rule> {
    match (kind, field) {
        (Kind::User | Kind::Group, Field::Name) => Some(Rule::Account),
        (Kind::User, Field::Group | Field::Groups) => Some(Rule::Account),
        (Kind::File | Kind::Directory, Field::Owner | Field::Group) => Some(Rule::Account),
        (Kind::Exec | Kind::Health, Field::User) => Some(Rule::Account),
        (Kind::Health, Field::Http) => Some(Rule::HealthUrl),
        (Kind::Health, Field::Environment) => Some(Rule::OneLine),
        (Kind::Package, Field::Name) => Some(Rule::Package),
        (Kind::Package, Field::Version) => Some(Rule::Version),
        (Kind::Service, Field::Name) => Some(Rule::Unit),
        (Kind::User, Field::Home | Field::Shell) => Some(Rule::PasswdPath),
        (Kind::Cron, Field::User) => Some(Rule::Account),
        (Kind::Cron, Field::Command) => Some(Rule::CronCommand),
        (Kind::Cron, Field::Environment) | (Kind::Sysctl, Field::Value) => Some(Rule::OneLine),
        (Kind::Sysctl, Field::Name) => Some(Rule::SysctlKey),
        (Kind::Mount, Field::Device) => Some(Rule::FstabDevice),
        (Kind::Mount, Field::Fstype) => Some(Rule::Fstype),
        (Kind::Mount, Field::Options) => Some(Rule::MountOptions),
        (Kind::Repository, Field::Name) => Some(Rule::RepoName),
        (Kind::Repository, Field::Url) => Some(Rule::Url),
        (Kind::Repository, Field::Suites | Field::Components) => Some(Rule::Word),
        _ => None,
    }
}

/// The rule a kind's title must follow when it is the name (no `name:`).
pub fn title_rule(kind: Kind) -> Option<Rule> {
    rule(kind, Field::Name)
}

/// The longest account name `useradd` and `groupadd` accept.
pub const ACCOUNT_MAX: usize = 32;
/// The longest unit name systemd accepts.
pub const UNIT_MAX: usize = 255;

impl Rule {
    /// The rule as JSON Schema (ECMA-262) patterns, for `datum schema`: a
    /// pattern to match and patterns not to. With [`UNIT_MAX`] for units,
    /// they say what [`Rule::check`] says of a string.
    pub fn patterns(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Rule::Account => (
                r"^[A-Za-z0-9._][A-Za-z0-9._-]{0,31}$",
                &[r"^[0-9]+$", r"^\.\.?$"],
            ),
            Rule::Package => (r"^[A-Za-z0-9_][A-Za-z0-9_+.@-]*$", &[]),
            Rule::Version => (
                r"^([0-9]+:[A-Za-z0-9][A-Za-z0-9.+~^_:-]*|[A-Za-z0-9][A-Za-z0-9.+~^_-]*)$",
                &[r"-$", r"^[^0-9]*$"],
            ),
            Rule::Unit => (
                r"^[A-Za-z0-9:_\\][A-Za-z0-9:_.\\-]*(@[A-Za-z0-9:_.\\-]*)?$",
                &[],
            ),
            Rule::PasswdPath => (r"^/[^:\u0000-\u001f\u007f-\u009f]*$", &[r"(^|/)\.\.(/|$)"]),
            Rule::CronName => (r"^[A-Za-z0-9_-]+$", &[]),
            Rule::CronCommand => (
                r"^([^%\\\u0000-\u001f\u007f]|\\[^\u0000-\u001f\u007f])+$",
                &[],
            ),
            Rule::OneLine => (r"^[^\u0000-\u001f\u007f]*$", &[]),
            Rule::SysctlKey => (
                r"^[A-Za-z0-9_][A-Za-z0-9_.:@+/-]*$",
                &[r"\.\.", r"//", r"/\.", r"\./", r"[./]$"],
            ),
            Rule::FstabDevice => (r"^[^#\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$", &[]),
            Rule::Fstype => (r"^[a-z0-9][a-z0-9._+-]*$", &[]),
            Rule::MountOptions => (
                r"^[^, \u0000-\u001f\u007f]+(,[^, \u0000-\u001f\u007f]+)*$",
                &[],
            ),
            Rule::HealthUrl => (
                r"^http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?(/[!-~]*)?$",
                &[],
            ),
            Rule::RepoName => (r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", &[]),
            Rule::Url => (
                r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s\u0000-\u001f\u007f]+$",
                &[],
            ),
            Rule::Word => (r"^[^\s\u0000-\u001f\u007f]+$", &[]),
        }
    }

    /// What such a name is, for messages: `a user or group name`.
    pub fn what(self) -> &'static str {
        match self {
            Rule::Account => "a user or group name",
            Rule::Package => "a package name",
            Rule::Version => "a package version",
            Rule::Unit => "a systemd unit name",
            Rule::PasswdPath => "a path /etc/passwd can hold",
            Rule::CronName => "a name cron reads in /etc/cron.d",
            Rule::CronCommand => "a command line for cron",
            Rule::OneLine => "text on one line",
            Rule::SysctlKey => "a kernel parameter (sysctl) key",
            Rule::FstabDevice => "a device /etc/fstab can hold",
            Rule::Fstype => "a filesystem type",
            Rule::MountOptions => "a list of mount options",
            Rule::HealthUrl => "an http:// URL on the host itself",
            Rule::RepoName => "a repository name",
            Rule::Url => "a repository address",
            Rule::Word => "one word",
        }
    }

    /// Why `s` breaks the rule, or `None` when it follows it.
    pub fn check(self, s: &str) -> Option<String> {
        match self {
            Rule::Account => account(s),
            Rule::Package => package(s),
            Rule::Version => version(s),
            Rule::Unit => unit(s),
            Rule::PasswdPath => passwd_path(s),
            Rule::CronName => first_bad(s, |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                .or_else(|| s.is_empty().then(|| "it is empty".into())),
            Rule::CronCommand => cron_command(s),
            Rule::OneLine => first_bad(s, |c| !c.is_ascii_control()),
            Rule::SysctlKey => sysctl_key(s),
            Rule::FstabDevice => first_bad(s, |c| !c.is_ascii_control()).or_else(|| {
                s.starts_with('#')
                    .then(|| "it starts with `#`, which makes the line a comment".into())
            }),
            Rule::Fstype => fstype(s),
            Rule::MountOptions => mount_options(s),
            Rule::HealthUrl => health_url(s),
            Rule::RepoName => first_bad(s, |c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
            })
            .or_else(|| {
                (!s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
                    .then(|| "it does not start with a letter, digit or `_`".into())
            }),
            Rule::Url => url(s),
            Rule::Word => first_bad(s, |c| !c.is_ascii_control() && !c.is_whitespace())
                .or_else(|| s.is_empty().then(|| "it is empty".into())),
        }
    }

    /// What a valid name looks like.
    pub fn hint(self) -> &'static str {
        match self {
            Rule::Account => {
                "a user or group name is 1 to 32 of A-Z a-z 0-9 . _ -, not starting with `-` and not all digits, such as `www-data`"
            }
            Rule::Package => {
                "a package name is letters, digits, `+ - . _ @`, starting with a letter, digit or `_`, such as `nginx` or `NetworkManager`"
            }
            Rule::Version => {
                "a package version is [epoch:]version[-release] from letters, digits and `. + ~ ^ _ - :`, starting with a letter or digit and holding a digit, such as `1.18.0-6` or `2:1.20.1-1.el9`"
            }
            Rule::Unit => {
                "a unit name is letters, digits and `: - _ . \\`, with at most one `@`, not starting with `-` or `.`, such as `nginx` or `getty@tty1.service`"
            }
            Rule::PasswdPath => {
                "write an absolute path without `:` or line breaks, such as `/bin/sh`"
            }
            Rule::CronName => {
                "the title names the file /etc/cron.d/datum-TITLE: use letters, digits, `_` and `-`, such as `Cron[logrotate-hourly]`"
            }
            Rule::CronCommand => {
                "write the command on one line, and `%` as `\\%` (cron turns a bare `%` into a line break), such as `date +\\%F >> /var/log/stamp`"
            }
            Rule::OneLine => "write it on one line, without control characters",
            Rule::SysctlKey => {
                "a key is what `sysctl -a` lists, such as `net.ipv4.ip_forward` or `net/ipv4/conf/eth0.100/rp_filter`"
            }
            Rule::FstabDevice => {
                "write a device path, `UUID=...`, `LABEL=...`, `server:/export` or a pseudo device such as `tmpfs`"
            }
            Rule::Fstype => {
                "write a filesystem type as mount -t takes it, such as `ext4`, `xfs`, `nfs` or `tmpfs`"
            }
            Rule::MountOptions => {
                "write mount options separated by commas without spaces, such as `defaults,noatime`"
            }
            Rule::HealthUrl => {
                "a health check asks the host itself: write `http://127.0.0.1:PORT/PATH`, `http://localhost/PATH` or `http://[::1]/PATH`"
            }
            Rule::RepoName => {
                "a repository name is letters, digits, `_ . -`, starting with a letter, digit or `_`, such as `docker-ce`; it names the repository's files"
            }
            Rule::Url => {
                "a repository address is `scheme://address` without spaces, such as `https://download.docker.com/linux/debian` or `file:///srv/repo`"
            }
            Rule::Word => "write one word, without spaces, such as `bookworm` or `main`",
        }
    }
}

/// The first character of `s` that `ok` refuses, described.
fn first_bad(s: &str, ok: impl Fn(char) -> bool) -> Option<String> {
    s.chars().find(|&c| !ok(c)).map(|c| {
        if c == ' ' {
            "it holds a space".to_owned()
        } else {
            let mut shown = String::new();
            crate::printable::push_escaped(&mut shown, c);
            format!("it holds `{shown}`")
        }
    })
}

fn account(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
    }) {
        return Some(bad);
    }
    if s.starts_with('-') {
        return Some("it starts with `-`".into());
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return Some("it is all digits, which reads as an id".into());
    }
    if s == "." || s == ".." {
        return Some(format!("`{s}` names a directory"));
    }
    if s.len() > ACCOUNT_MAX {
        return Some(format!(
            "it is {} characters long, more than {ACCOUNT_MAX}",
            s.len()
        ));
    }
    None
}

/// `scheme://rest`, on one line, without spaces.
fn url(s: &str) -> Option<String> {
    if let Some(bad) = first_bad(s, |c| !c.is_ascii_control() && !c.is_whitespace()) {
        return Some(bad);
    }
    let Some((scheme, rest)) = s.split_once("://") else {
        return Some("it has no `scheme://`".into());
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
    if !scheme_ok || rest.is_empty() {
        return Some("it is not `scheme://address`".into());
    }
    None
}

fn package(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | '_' | '@')
    }) {
        return Some(bad);
    }
    if !s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return Some("it does not start with a letter, digit or `_`".into());
    }
    None
}

fn version(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '~' | '^' | '_' | '-' | ':')
    }) {
        return Some(bad);
    }
    // After the epoch, if any: everything before the first `:`. Only a
    // version with an epoch may have `:` after it.
    let upstream = match s.split_once(':') {
        Some((epoch, rest)) => {
            if epoch.is_empty() || !epoch.bytes().all(|b| b.is_ascii_digit()) {
                return Some("its epoch (before `:`) is not a number".into());
            }
            rest
        }
        None => s,
    };
    if !upstream.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some("it does not start with a letter or digit".into());
    }
    if upstream.ends_with('-') {
        return Some("it ends with `-`, an empty revision".into());
    }
    if !s.contains(|c: char| c.is_ascii_digit()) {
        return Some("it holds no digit".into());
    }
    None
}

fn unit(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_' | '.' | '\\' | '@')
    }) {
        return Some(bad);
    }
    if s.starts_with('-') || s.starts_with('.') {
        return Some(format!("it starts with `{}`", &s[..1]));
    }
    match s.matches('@').count() {
        0 => {}
        1 if !s.starts_with('@') => {}
        1 => return Some("nothing comes before its `@`".into()),
        _ => return Some("it holds more than one `@`".into()),
    }
    // systemctl adds `.service` to a name without a suffix.
    let full = if s.contains('.') {
        s.len()
    } else {
        s.len() + ".service".len()
    };
    if full > UNIT_MAX {
        return Some(format!(
            "it is {full} characters long as a unit, more than {UNIT_MAX}"
        ));
    }
    None
}

fn cron_command(s: &str) -> Option<String> {
    if let Some(bad) = first_bad(s, |c| !c.is_ascii_control()) {
        return Some(bad);
    }
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => return Some("it holds a bare `%`, which cron turns into a line break".into()),
            '\\' if chars.next().is_none() => return Some("it ends with a lone `\\`".into()),
            _ => {}
        }
    }
    None
}

fn sysctl_key(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '@' | '+' | '/' | '-')
    }) {
        return Some(bad);
    }
    if !s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return Some(format!("it starts with `{}`", &s[..1]));
    }
    if s.contains("..") || s.contains("//") || s.contains("/.") || s.contains("./") {
        return Some("it holds an empty component or `..`".into());
    }
    if s.ends_with(['.', '/']) {
        return Some(format!("it ends with `{}`", &s[s.len() - 1..]));
    }
    None
}

fn fstype(s: &str) -> Option<String> {
    if let Some(bad) = first_bad(s, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '+' | '-')
    }) {
        return Some(bad);
    }
    if !s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        return Some("it does not start with a letter or digit".into());
    }
    None
}

fn mount_options(s: &str) -> Option<String> {
    if let Some(bad) = first_bad(s, |c| !c.is_ascii_control() && c != ' ') {
        return Some(bad);
    }
    s.split(',')
        .any(str::is_empty)
        .then(|| "it holds an empty option (`,,` or a comma at either end)".into())
}

fn passwd_path(s: &str) -> Option<String> {
    if !s.starts_with('/') {
        return Some("it is not an absolute path".into());
    }
    if s.split('/').any(|p| p == "..") {
        return Some("it holds `..`".into());
    }
    first_bad(s, |c| c != ':' && !c.is_control())
}

/// An `http://` URL on the host itself (loopback), an optional port from 1
/// to 65535, and a path of visible ASCII: what a health check may GET.
fn health_url(s: &str) -> Option<String> {
    let Some(rest) = s.strip_prefix("http://") else {
        return Some("it does not start with `http://`".into());
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (host, port) = match authority.strip_prefix("[::1]") {
        Some(port) => ("[::1]", port),
        None => match authority.split_once(':') {
            Some((h, p)) => (h, &authority[h.len()..][..p.len() + 1]),
            None => (authority, ""),
        },
    };
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return Some(format!("`{host}` is not the host itself"));
    }
    if let Some(p) = port.strip_prefix(':') {
        let ok = !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
        if !ok || !(1..=65535).contains(&p.parse::<u32>().unwrap_or(0)) {
            return Some(format!("`{p}` is not a port"));
        }
    } else if !port.is_empty() {
        return Some(format!("`{port}` follows the host"));
    }
    first_bad(path, |c| c.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_names() {
        for ok in [
            "root",
            "www-data",
            "_apt",
            "Debian-exim",
            "a.b",
            "x1",
            &"a".repeat(32),
        ] {
            assert_eq!(Rule::Account.check(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("evil:x:0:0::/:/bin/sh", "it holds `:`"),
            ("wheel,root", "it holds `,`"),
            ("-rf", "it starts with `-`"),
            ("1000", "it is all digits, which reads as an id"),
            ("", "it is empty"),
            ("a b", "it holds a space"),
            ("a\nb", "it holds `\\n`"),
            ("..", "`..` names a directory"),
            ("é", "it holds `é`"),
        ] {
            assert_eq!(Rule::Account.check(bad).as_deref(), Some(why), "{bad:?}");
        }
        assert_eq!(
            Rule::Account.check(&"a".repeat(33)).as_deref(),
            Some("it is 33 characters long, more than 32")
        );
    }

    #[test]
    fn package_names_and_versions() {
        for ok in [
            "nginx",
            "g++",
            "libc6",
            "python3.11",
            "0ad",
            "NetworkManager",
            "R",
            "perl-Text_Diff",
            "_x",
            "lib32-gcc-libs@x",
        ] {
            assert_eq!(Rule::Package.check(ok), None, "{ok}");
        }
        for bad in ["-rf", ".x", "nginx;rm", "ng inx", "+x", "", "a/b", "a:b"] {
            assert!(Rule::Package.check(bad).is_some(), "{bad:?}");
        }
        for ok in [
            "15",
            "1.18.0-6",
            "1:2.3~rc1+dfsg-1ubuntu2",
            "2.0-1-1",
            "2:1.20.1-1.el9_2",
            "1.0^20230101git1-1",
            "r123.abc-1",
        ] {
            assert_eq!(Rule::Version.check(ok), None, "{ok}");
        }
        for bad in [
            "", "~1", "1.0 beta", "a:1", "1-", "--force", "1;2", "1:-2", "1/2", "latest",
        ] {
            assert!(Rule::Version.check(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn repository_names_addresses_and_words() {
        for ok in ["docker-ce", "epel_9", "a.b"] {
            assert_eq!(Rule::RepoName.check(ok), None, "{ok}");
        }
        for bad in ["", "-x", ".x", "a/b", "a b", "[x]"] {
            assert!(Rule::RepoName.check(bad).is_some(), "{bad:?}");
        }
        for ok in [
            "https://example.org/x",
            "file:///srv/repo",
            "mirror+http://m/x",
        ] {
            assert_eq!(Rule::Url.check(ok), None, "{ok}");
        }
        for bad in [
            "",
            "/srv/repo",
            "https://",
            "http://a b",
            "1x://y",
            "http://a\nb",
        ] {
            assert!(Rule::Url.check(bad).is_some(), "{bad:?}");
        }
        assert_eq!(Rule::Word.check("bookworm"), None);
        for bad in ["", "a b", "a\tb"] {
            assert!(Rule::Word.check(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn unit_names() {
        for ok in [
            "nginx",
            "getty@tty1.service",
            "dev-sda1.swap",
            "x\\x2d.mount",
            "a:b",
        ] {
            assert_eq!(Rule::Unit.check(ok), None, "{ok}");
        }
        for bad in ["-rf", ".hidden", "a b", "a@b@c", "@x", "a/b", "x;y", ""] {
            assert!(Rule::Unit.check(bad).is_some(), "{bad:?}");
        }
        assert!(Rule::Unit.check(&"a".repeat(247)).is_none());
        assert!(Rule::Unit.check(&"a".repeat(248)).is_some());
    }

    #[test]
    fn passwd_paths() {
        assert_eq!(Rule::PasswdPath.check("/bin/sh"), None);
        assert_eq!(
            Rule::PasswdPath.check("/home/a:b").as_deref(),
            Some("it holds `:`")
        );
        assert!(Rule::PasswdPath.check("/a\nb").is_some());
        assert!(Rule::PasswdPath.check("/a/../b").is_some());
        assert!(Rule::PasswdPath.check("sh").is_some());
    }

    #[test]
    fn what_cron_sysctl_and_fstab_lines_hold() {
        assert_eq!(Rule::CronName.check("logrotate-hourly_2"), None);
        assert_eq!(Rule::CronName.check("a.b").as_deref(), Some("it holds `.`"));
        assert_eq!(Rule::CronCommand.check("date +\\%F > /tmp/x"), None);
        assert_eq!(
            Rule::CronCommand.check("date +%F").as_deref(),
            Some("it holds a bare `%`, which cron turns into a line break")
        );
        assert!(Rule::CronCommand.check("a\nb").is_some());
        assert!(Rule::CronCommand.check("echo \\").is_some());
        assert_eq!(Rule::OneLine.check("32768 60999"), None);
        assert!(Rule::OneLine.check("1\n2").is_some());
        for ok in [
            "net.ipv4.ip_forward",
            "net/ipv4/conf/eth0.100/rp_filter",
            "kernel.core_pattern",
            "vm.swappiness",
        ] {
            assert_eq!(Rule::SysctlKey.check(ok), None, "{ok}");
        }
        for bad in [
            "", "-net.x", "net..x", "net/../x", "/net/x", "net.x.", "net x", "net/./x", "net.*",
        ] {
            assert!(Rule::SysctlKey.check(bad).is_some(), "{bad:?}");
        }
        assert_eq!(Rule::FstabDevice.check("LABEL=my disk"), None);
        assert!(Rule::FstabDevice.check("#x").is_some());
        assert!(Rule::FstabDevice.check("a\tb").is_some());
        assert_eq!(Rule::Fstype.check("fuse.sshfs"), None);
        assert!(Rule::Fstype.check("Ext4").is_some());
        assert_eq!(Rule::MountOptions.check("defaults,noatime"), None);
        for bad in ["a, b", "a,,b", ",a", "a,"] {
            assert!(Rule::MountOptions.check(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn which_fields_are_names() {
        assert_eq!(rule(Kind::User, Field::Groups), Some(Rule::Account));
        assert_eq!(rule(Kind::File, Field::Owner), Some(Rule::Account));
        assert_eq!(rule(Kind::Package, Field::Name), Some(Rule::Package));
        assert_eq!(rule(Kind::Service, Field::Name), Some(Rule::Unit));
        assert_eq!(rule(Kind::Symlink, Field::Target), None);
        assert_eq!(title_rule(Kind::File), None);
    }
}
