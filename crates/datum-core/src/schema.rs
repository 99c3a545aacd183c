//! The resource types, their fields and how each field's value is read.
//!
//! The order of [`Kind::fields`] is the schema order: manifests and explain
//! print fields in it.

use std::fmt;

mod id;
mod path;
mod suggestion;
pub use id::{IdError, ResourceId};
pub use path::{PathError, normalise_abs_path, normalise_rel_path};
#[cfg(test)]
pub(crate) use suggestion::STEPS;
pub use suggestion::{COMPARED_MAX, edit_distance, nearest, suggest};

/// A resource type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Cron,
    Directory,
    Exec,
    File,
    Group,
    Health,
    Mount,
    Package,
    Repository,
    Service,
    Symlink,
    Sysctl,
    User,
}

/// A field of a resource.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Path,
    Target,
    Name,
    Ensure,
    Owner,
    Group,
    Mode,
    Source,
    Content,
    Template,
    Secret,
    Sensitive,
    Version,
    Enabled,
    Uid,
    Gid,
    Groups,
    Home,
    Shell,
    System,
    RestartOn,
    Requires,
    Command,
    Creates,
    Unless,
    Onlyif,
    RefreshOnly,
    RunOn,
    Timeout,
    User,
    Cwd,
    Environment,
    Schedule,
    Device,
    Fstype,
    Options,
    Pass,
    Value,
    Provider,
    Http,
    Status,
    Url,
    Suites,
    Components,
    Key,
}

/// How a field's value is written and checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// Any text; a plain scalar is read as written (`1.10` is `"1.10"`).
    Text,
    /// Text that may be empty (`content`).
    Content,
    /// An absolute path, normalised (`/etc//x/` is `/etc/x`).
    AbsPath,
    /// A path relative to the fleet root that must exist inside it.
    Source,
    /// A template under `templates/`, rendered for each host.
    Template,
    /// A quoted string of 3 or 4 octal digits, kept as 4.
    Mode,
    Bool,
    /// A user or group id.
    Id,
    /// One of a fixed set of words.
    Word(&'static [&'static str]),
    /// A list of text values, replaced whole.
    List,
    /// A set of resource ids, united across layers.
    Refs,
    /// A command line as a list: the program, then each argument as its own
    /// entry (an argument may be empty, the program may not).
    Argv,
    /// Environment variables as a list of `NAME=value` entries.
    Env,
    /// A whole number of seconds, from 1 to [`SECONDS_MAX`].
    Seconds,
    /// A cron schedule: five fields, or a shortcut such as `@daily`
    /// ([`crate::cron`]).
    Schedule,
    /// fsck's pass number of a Mount: 0, 1 or 2.
    Pass,
    /// An HTTP status code, from 100 to 599.
    Status,
}

/// The longest `timeout` an Exec takes: a day.
pub const SECONDS_MAX: i64 = 86_400;

/// The package systems a Package's `provider` names: apt (dpkg), dnf
/// (rpm), pacman and zypper (rpm). Without it, apply chooses from the root's os-release.
pub const PACKAGE_SYSTEMS: &[&str] = &["apt", "dnf", "pacman", "zypper"];

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::Cron,
        Kind::Directory,
        Kind::Exec,
        Kind::File,
        Kind::Group,
        Kind::Health,
        Kind::Mount,
        Kind::Package,
        Kind::Repository,
        Kind::Service,
        Kind::Symlink,
        Kind::Sysctl,
        Kind::User,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Cron => "Cron",
            Kind::Directory => "Directory",
            Kind::Exec => "Exec",
            Kind::File => "File",
            Kind::Group => "Group",
            Kind::Health => "Health",
            Kind::Mount => "Mount",
            Kind::Package => "Package",
            Kind::Repository => "Repository",
            Kind::Service => "Service",
            Kind::Symlink => "Symlink",
            Kind::Sysctl => "Sysctl",
            Kind::User => "User",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The fields this type takes, in schema order.
    pub fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            Kind::File => &[
                Path, Ensure, Owner, Group, Mode, Source, Content, Template, Secret, Sensitive,
                Requires,
            ],
            Kind::Directory => &[Path, Ensure, Owner, Group, Mode, Requires],
            Kind::Symlink => &[Path, Target, Ensure, Requires],
            Kind::Package => &[Name, Ensure, Version, Provider, Requires],
            Kind::Service => &[Name, Ensure, Enabled, RestartOn, Requires],
            Kind::User => &[
                Name, Ensure, Uid, Group, Groups, Home, Shell, System, Requires,
            ],
            Kind::Group => &[Name, Ensure, Gid, System, Requires],
            Kind::Exec => &[
                Command,
                Shell,
                Creates,
                Unless,
                Onlyif,
                RefreshOnly,
                RunOn,
                Timeout,
                User,
                Cwd,
                Environment,
                Requires,
            ],
            Kind::Cron => &[Ensure, Schedule, User, Command, Environment, Requires],
            Kind::Mount => &[Path, Ensure, Device, Fstype, Options, Pass, Requires],
            Kind::Sysctl => &[Name, Ensure, Value, Requires],
            // Asked after an apply that changed something, never ordered
            // among the resources: `requires` names what it checks.
            Kind::Health => &[
                Command,
                Shell,
                Http,
                Status,
                Timeout,
                User,
                Environment,
                Requires,
            ],
            Kind::Repository => &[
                Name, Ensure, Provider, Url, Suites, Components, Key, Requires,
            ],
        }
    }

    /// A field's position in this type's schema order.
    pub fn rank(self, field: Field) -> usize {
        self.fields()
            .iter()
            .position(|&f| f == field)
            .unwrap_or(usize::MAX)
    }

    pub fn has(self, field: Field) -> bool {
        self.fields().contains(&field)
    }

    /// The field that names what the resource manages: `path` for the
    /// filesystem types and a Mount (its mount point), `name` (defaulting
    /// to the title) for the others.
    pub fn summary_field(self) -> Field {
        match self {
            Kind::File | Kind::Directory | Kind::Symlink | Kind::Mount => Field::Path,
            _ => Field::Name,
        }
    }

    /// Fields a resolved resource must have.
    pub fn required(self) -> &'static [Field] {
        match self {
            Kind::File | Kind::Directory => &[Field::Path],
            Kind::Symlink => &[Field::Path, Field::Target],
            Kind::Exec => &[Field::Command],
            Kind::Cron => &[Field::Schedule, Field::User, Field::Command],
            Kind::Mount => &[Field::Path, Field::Device, Field::Fstype],
            Kind::Sysctl => &[Field::Value],
            Kind::Repository => &[Field::Url],
            _ => &[],
        }
    }

    /// Fields a resolved resource must have when its `ensure` is
    /// `absent`: what names the thing to remove (a Mount's mount point),
    /// no more; a Cron, a Sysctl or a Repository is named by its title or
    /// `name`.
    pub fn required_when(self, absent: bool) -> &'static [Field] {
        match self {
            Kind::Cron | Kind::Sysctl | Kind::Repository if absent => &[],
            Kind::Mount if absent => &[Field::Path],
            _ => self.required(),
        }
    }

    /// The fields that each give a resource its content: at most one of
    /// them may be set. Another kind of content is one more entry here.
    pub fn content_fields(self) -> &'static [Field] {
        match self {
            Kind::File => &[
                Field::Source,
                Field::Content,
                Field::Template,
                Field::Secret,
            ],
            // A health check is a command or an HTTP GET.
            Kind::Health => &[Field::Command, Field::Http],
            _ => &[],
        }
    }

    /// Whether this type manages a filesystem path.
    pub fn is_path(self) -> bool {
        matches!(self, Kind::File | Kind::Directory | Kind::Symlink)
    }

    /// The words `ensure` takes for this type.
    pub fn ensure_words(self) -> &'static [&'static str] {
        match self {
            Kind::Package => &["installed", "absent"],
            Kind::Service => &["running", "stopped"],
            Kind::Mount => &["mounted", "unmounted", "absent"],
            _ => &["present", "absent"],
        }
    }

    /// How a field of this type is written.
    pub fn ty(self, field: Field) -> Ty {
        match field {
            Field::Shell if matches!(self, Kind::Exec | Kind::Health) => Ty::Bool,
            // A cron entry's command is one line for the shell cron starts.
            Field::Command if self == Kind::Cron => Ty::Text,
            Field::Path | Field::Home | Field::Creates | Field::Cwd => Ty::AbsPath,
            Field::Source | Field::Secret => Ty::Source,
            Field::Template => Ty::Template,
            Field::Content => Ty::Content,
            Field::Mode => Ty::Mode,
            Field::Sensitive | Field::Enabled | Field::System | Field::RefreshOnly => Ty::Bool,
            Field::Uid | Field::Gid => Ty::Id,
            Field::Ensure => Ty::Word(self.ensure_words()),
            Field::Groups | Field::Suites | Field::Components => Ty::List,
            Field::Requires | Field::RestartOn | Field::RunOn => Ty::Refs,
            Field::Command | Field::Unless | Field::Onlyif => Ty::Argv,
            Field::Environment => Ty::Env,
            Field::Timeout => Ty::Seconds,
            Field::Schedule => Ty::Schedule,
            Field::Pass => Ty::Pass,
            Field::Provider => Ty::Word(PACKAGE_SYSTEMS),
            Field::Status => Ty::Status,
            Field::Target
            | Field::Url
            | Field::Key
            | Field::Device
            | Field::Fstype
            | Field::Options
            | Field::Value
            | Field::User
            | Field::Name
            | Field::Owner
            | Field::Group
            | Field::Version
            | Field::Shell
            | Field::Http => Ty::Text,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Field {
    pub const ALL: [Field; 45] = [
        Field::Path,
        Field::Target,
        Field::Name,
        Field::Ensure,
        Field::Owner,
        Field::Group,
        Field::Mode,
        Field::Source,
        Field::Content,
        Field::Template,
        Field::Secret,
        Field::Sensitive,
        Field::Version,
        Field::Enabled,
        Field::Uid,
        Field::Gid,
        Field::Groups,
        Field::Home,
        Field::Shell,
        Field::System,
        Field::RestartOn,
        Field::Requires,
        Field::Command,
        Field::Creates,
        Field::Unless,
        Field::Onlyif,
        Field::RefreshOnly,
        Field::RunOn,
        Field::Timeout,
        Field::User,
        Field::Cwd,
        Field::Environment,
        Field::Schedule,
        Field::Device,
        Field::Fstype,
        Field::Options,
        Field::Pass,
        Field::Value,
        Field::Provider,
        Field::Http,
        Field::Status,
        Field::Url,
        Field::Suites,
        Field::Components,
        Field::Key,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Path => "path",
            Field::Target => "target",
            Field::Name => "name",
            Field::Ensure => "ensure",
            Field::Owner => "owner",
            Field::Group => "group",
            Field::Mode => "mode",
            Field::Source => "source",
            Field::Content => "content",
            Field::Template => "template",
            Field::Secret => "secret",
            Field::Sensitive => "sensitive",
            Field::Version => "version",
            Field::Enabled => "enabled",
            Field::Uid => "uid",
            Field::Gid => "gid",
            Field::Groups => "groups",
            Field::Home => "home",
            Field::Shell => "shell",
            Field::System => "system",
            Field::RestartOn => "restart_on",
            Field::Requires => "requires",
            Field::Command => "command",
            Field::Creates => "creates",
            Field::Unless => "unless",
            Field::Onlyif => "onlyif",
            Field::RefreshOnly => "refresh_only",
            Field::RunOn => "run_on",
            Field::Timeout => "timeout",
            Field::User => "user",
            Field::Cwd => "cwd",
            Field::Environment => "environment",
            Field::Schedule => "schedule",
            Field::Device => "device",
            Field::Fstype => "fstype",
            Field::Options => "options",
            Field::Pass => "pass",
            Field::Value => "value",
            Field::Provider => "provider",
            Field::Http => "http",
            Field::Status => "status",
            Field::Url => "url",
            Field::Suites => "suites",
            Field::Components => "components",
            Field::Key => "key",
        }
    }

    pub fn parse(s: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == s)
    }

    pub fn is_set(self) -> bool {
        matches!(self, Field::Requires | Field::RestartOn | Field::RunOn)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar value of a field, after normalisation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Str(Box<str>),
    Int(i64),
    Bool(bool),
    List(Box<[Box<str>]>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => f.write_str(s),
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(item)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Normalises a mode written as text: 3 or 4 octal digits, kept as 4.
pub fn normalise_mode(s: &str) -> Option<String> {
    if !(3..=4).contains(&s.len()) || !s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    Some(format!("{s:0>4}"))
}

#[cfg(test)]
mod tests {
    use super::suggestion::distance_within;
    use super::*;
    use crate::hint::Hinted;

    #[test]
    fn ids() {
        let id = ResourceId::parse("File[nginx-config]").unwrap();
        assert_eq!(id.kind, Kind::File);
        assert_eq!(id.to_string(), "File[nginx-config]");
        let shape = ResourceId::parse("nginx").unwrap_err();
        assert_eq!(shape.to_string(), "`nginx` is not a resource id");
        assert_eq!(
            shape.hint().as_deref(),
            Some("a resource id is Type[title], such as Package[nginx] or File[motd]")
        );
        let kind = ResourceId::parse("Fiel[x]").unwrap_err();
        assert_eq!(kind.to_string(), "unknown resource type `Fiel`");
        assert!(
            kind.hint()
                .unwrap()
                .starts_with("did you mean `File`? The types are ")
        );
        assert_eq!(
            ResourceId::parse("file[x]"),
            Err(IdError::UnknownKind {
                kind: "file".into(),
                nearest: Some("File")
            })
        );
        let title = |s: &str| IdError::Title { text: s.into() };
        assert_eq!(ResourceId::parse("File[]"), Err(title("File[]")));
        assert_eq!(ResourceId::parse("File[a]b]"), Err(title("File[a]b]")));
        assert_eq!(title("File[]").to_string(), "`File[]` has an invalid title");
    }

    #[test]
    fn modes() {
        assert_eq!(normalise_mode("640").as_deref(), Some("0640"));
        assert_eq!(normalise_mode("0640").as_deref(), Some("0640"));
        assert_eq!(normalise_mode("0999"), None);
        assert_eq!(normalise_mode("12"), None);
        assert_eq!(normalise_mode("07777"), None);
    }

    #[test]
    fn paths() {
        assert_eq!(
            normalise_abs_path("/etc//nginx/./x/").unwrap(),
            "/etc/nginx/x"
        );
        assert_eq!(normalise_abs_path("/").unwrap(), "/");
        assert_eq!(normalise_abs_path("etc"), Err(PathError::NotAbsolute));
        assert_eq!(normalise_abs_path("/etc/../x"), Err(PathError::ParentDir));
        assert_eq!(normalise_rel_path("./files/x").unwrap(), "files/x");
        assert_eq!(normalise_rel_path("../x"), Err(PathError::ParentDir));
        assert_eq!(normalise_rel_path("/x"), Err(PathError::Absolute));
        assert_eq!(normalise_rel_path("."), Err(PathError::Empty));
    }

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(edit_distance("wbe", "web"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(nearest("wbe", ["db", "web", "cache"]), Some("web"));
        assert_eq!(
            suggest("mdoe", Kind::File.fields().iter().map(|f| f.name())),
            Some("mode")
        );
        assert_eq!(
            suggest("zzzzzz", Kind::File.fields().iter().map(|f| f.name())),
            None
        );
        // Ties are broken by the candidates themselves, not their order.
        assert_eq!(nearest("ab", ["ax", "xb"]), nearest("ab", ["xb", "ax"]));
    }

    #[test]
    fn a_bounded_distance_agrees_with_the_whole_table() {
        let words = [
            "", "a", "ab", "ba", "web", "wbe", "kitten", "sitting", "abcdef", "badcfe", "xyz",
        ];
        for a in words {
            for b in words {
                let (n, m) = (a.chars().count(), b.chars().count());
                let d = edit_distance(a, b);
                for max in 0..8 {
                    let within = distance_within(a, n, b, m, max);
                    assert_eq!(within, (d <= max).then_some(d), "{a:?} {b:?} {max}");
                }
            }
        }
    }

    #[test]
    fn suggestions_for_long_text_are_bounded() {
        let steps = || suggestion::STEPS.with(std::cell::Cell::get);
        let long = "w".repeat(200_000);
        let near_long = format!("{}x", "w".repeat(199_999));
        let before = steps();
        assert_eq!(nearest(&long, [near_long.as_str(), "web"]), None);
        assert_eq!(nearest("web", [near_long.as_str(), "wbe"]), Some("wbe"));
        assert_eq!(suggest(&long, [near_long.as_str()]), None);
        // Text that long is never compared: only `web` with `wbe`.
        assert_eq!(steps() - before, 9);
        let many: Vec<String> = (0..20_000)
            .map(|i| format!("{}{i}", "v".repeat(200)))
            .collect();
        let before = steps();
        assert_eq!(
            suggest(
                &format!("{}7x", "v".repeat(200)),
                many.iter().map(String::as_str)
            ),
            Some(many[7].as_str())
        );
        // At most one bounded comparison per candidate.
        let bound = (many.len() * COMPARED_MAX * COMPARED_MAX) as u64;
        assert!(steps() - before <= bound, "{}", steps() - before);
    }

    #[test]
    fn every_kind_takes_requires_and_fields_parse_back() {
        for kind in Kind::ALL {
            assert_eq!(kind.fields().last(), Some(&Field::Requires));
            assert_eq!(Kind::parse(kind.name()), Some(kind));
        }
        for field in Field::ALL {
            assert_eq!(Field::parse(field.name()), Some(field));
        }
    }
}
