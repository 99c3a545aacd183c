//! What each resource should be: a manifest's resources read into typed
//! specs, one per resource type.
//!
//! A field the manifest leaves out stays `None`: that attribute is not
//! managed, and no provider touches it.

use std::time::Duration;

use datum_core::manifest::{Manifest, Resource};
use datum_core::reader::Reader;
use datum_core::schema::{Field, Kind, ResourceId, Value};
use zeroize::Zeroizing;

mod health;
mod system;
pub use health::{HEALTH_TIMEOUT, HealthSpec, Probe};
pub use system::{
    CRON_DIR, CronSpec, MountSpec, MountState, PackageSystem, RepositorySpec, SysctlSpec, cron_path,
};

/// `ensure` of the filesystem types, users and groups (`installed` reads as
/// present for packages). A resource without `ensure` is present.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ensure {
    Present,
    Absent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpec {
    pub path: String,
    pub ensure: Ensure,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub mode: Option<u32>,
    /// The bytes the file holds, from `content` or `source` (or, during a
    /// real run, a decrypted `secret`); `None` leaves the content of an
    /// existing file alone (a new one is empty).
    pub content: Option<Content>,
    /// Content is never printed, nor hashed in output.
    pub sensitive: bool,
    /// The `secret` whose plaintext is the content: decrypted by the engine
    /// in a real run only (see `secret`).
    pub secret: Option<SecretSpec>,
}

/// A File's content: zeroed when dropped (a secret's plaintext passes
/// through it), and shown by its length only.
#[derive(Clone, PartialEq, Eq)]
pub struct Content(Zeroizing<Vec<u8>>);

impl std::ops::Deref for Content {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for Content {
    fn from(bytes: Vec<u8>) -> Content {
        Content(Zeroizing::new(bytes))
    }
}

impl From<Zeroizing<Vec<u8>>> for Content {
    fn from(bytes: Zeroizing<Vec<u8>>) -> Content {
        Content(bytes)
    }
}

impl PartialEq<Content> for Vec<u8> {
    fn eq(&self, other: &Content) -> bool {
        self[..] == other[..]
    }
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Content(<{} bytes>)", self.0.len())
    }
}

/// A secret File's mode when the manifest gives none.
pub const SECRET_MODE: u32 = 0o600;

/// A File's `secret`: its path in the fleet, the ciphertext and its hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretSpec {
    pub path: String,
    pub sha256: String,
    pub ciphertext: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectorySpec {
    pub path: String,
    pub ensure: Ensure,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub mode: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymlinkSpec {
    pub path: String,
    /// Kept as written, relative or absolute.
    pub target: String,
    pub ensure: Ensure,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageSpec {
    pub name: String,
    pub ensure: Ensure,
    /// An exact version, in the package system's own form (`1.18.0-6`
    /// for dpkg, `[epoch:]version[-release]` for rpm, `pkgver-pkgrel`
    /// for pacman).
    pub version: Option<String>,
    /// The package system, when the manifest names one; otherwise it is
    /// chosen from the root's os-release (by the package provider).
    pub provider: Option<PackageSystem>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSpec {
    pub name: String,
    /// `ensure: running` (true) or `stopped` (false); `None` leaves it alone.
    pub running: Option<bool>,
    pub enabled: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSpec {
    pub name: String,
    pub ensure: Ensure,
    pub uid: Option<u32>,
    /// The primary group, by name.
    pub group: Option<String>,
    /// The supplementary groups, exactly (sorted).
    pub groups: Option<Vec<String>>,
    pub home: Option<String>,
    pub shell: Option<String>,
    /// Only used when the account is created.
    pub system: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    pub name: String,
    pub ensure: Ensure,
    pub gid: Option<u32>,
    /// Only used when the group is created.
    pub system: bool,
}

/// How long a command may run when the manifest does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// A command to run, and what says whether it needs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecSpec {
    /// The program and its arguments; with `shell`, the one script.
    pub command: Vec<String>,
    /// `/bin/sh -c` reads `command`, `unless` and `onlyif`.
    pub shell: bool,
    /// Runs only while this path does not exist.
    pub creates: Option<String>,
    /// Runs only if this command fails.
    pub unless: Option<Vec<String>>,
    /// Runs only if this command succeeds.
    pub onlyif: Option<Vec<String>>,
    /// Runs only when a resource in the item's `run_on` changed.
    pub refresh_only: bool,
    pub timeout: Duration,
    /// The account it runs as; `None` is the account running Datum.
    pub user: Option<String>,
    /// The working directory; `None` is `/`.
    pub cwd: Option<String>,
    /// Set over the base environment, in the order written.
    pub environment: Vec<(String, String)>,
}

impl ExecSpec {
    /// The command line one of the three fields runs: as written, or the
    /// script handed to `/bin/sh -c`.
    pub fn argv(&self, line: &[String]) -> Vec<String> {
        if self.shell {
            let mut argv = vec!["/bin/sh".to_owned(), "-c".to_owned()];
            argv.extend(line.iter().cloned());
            argv
        } else {
            line.to_vec()
        }
    }
}

/// A resource's desired state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Desired {
    File(FileSpec),
    Directory(DirectorySpec),
    Symlink(SymlinkSpec),
    Package(PackageSpec),
    Service(ServiceSpec),
    User(UserSpec),
    Group(GroupSpec),
    Exec(ExecSpec),
    Cron(CronSpec),
    Mount(MountSpec),
    Sysctl(SysctlSpec),
    /// Run after an apply that changed something, not among the resources.
    Health(HealthSpec),
    Repository(RepositorySpec),
}

/// One resource to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub id: ResourceId,
    /// Its path or name, for output.
    pub summary: String,
    pub desired: Desired,
    /// Ids from `requires`.
    pub requires: Vec<ResourceId>,
    /// Ids from `restart_on`.
    pub restart_on: Vec<ResourceId>,
    /// Ids from `run_on` (an Exec's).
    pub run_on: Vec<ResourceId>,
    /// Why the desired state cannot be known (a `source` that cannot be read
    /// now): the resource fails, and its dependents are skipped.
    pub problem: Option<String>,
}

impl Desired {
    pub fn kind(&self) -> Kind {
        match self {
            Desired::File(_) => Kind::File,
            Desired::Directory(_) => Kind::Directory,
            Desired::Symlink(_) => Kind::Symlink,
            Desired::Package(_) => Kind::Package,
            Desired::Service(_) => Kind::Service,
            Desired::User(_) => Kind::User,
            Desired::Group(_) => Kind::Group,
            Desired::Exec(_) => Kind::Exec,
            Desired::Cron(_) => Kind::Cron,
            Desired::Mount(_) => Kind::Mount,
            Desired::Sysctl(_) => Kind::Sysctl,
            Desired::Health(_) => Kind::Health,
            Desired::Repository(_) => Kind::Repository,
        }
    }

    /// The absolute path a File, Directory or Symlink manages.
    pub fn path(&self) -> Option<&str> {
        match self {
            Desired::File(s) => Some(&s.path),
            Desired::Directory(s) => Some(&s.path),
            Desired::Symlink(s) => Some(&s.path),
            _ => None,
        }
    }

    /// The owner and group a File or Directory names.
    pub fn ownership(&self) -> (Option<&str>, Option<&str>) {
        match self {
            Desired::File(s) => (s.owner.as_deref(), s.group.as_deref()),
            Desired::Directory(s) => (s.owner.as_deref(), s.group.as_deref()),
            _ => (None, None),
        }
    }
}

/// What [`items_of`] reads of one resource: a resource of a resolved
/// manifest, or one read back from a manifest's text (a bundle's).
pub trait ResourceView {
    fn id(&self) -> &ResourceId;
    /// A field's final value, `None` when unset (`requires`, `restart_on`
    /// and `run_on` are [`ResourceView::refs`]).
    fn value(&self, field: Field) -> Option<&Value>;
    /// The ids listed in `requires`, `restart_on` or `run_on`.
    fn refs(&self, field: Field) -> Vec<ResourceId>;
    /// The name a Package, Service, User or Group manages: `name`, else the title.
    fn name(&self) -> &str;

    fn str(&self, field: Field) -> Option<&str> {
        self.value(field).and_then(Value::as_str)
    }

    fn kind(&self) -> Kind {
        self.id().kind
    }
}

impl ResourceView for Resource<'_> {
    fn id(&self) -> &ResourceId {
        Resource::id(self)
    }
    fn value(&self, field: Field) -> Option<&Value> {
        Resource::value(self, field)
    }
    fn refs(&self, field: Field) -> Vec<ResourceId> {
        Resource::refs(self, field).into_iter().cloned().collect()
    }
    fn name(&self) -> &str {
        Resource::name(self)
    }
}

/// Reads every resource of a manifest, in id order. `source` payloads are
/// read through `reader` now, so a payload that has gone missing fails its
/// resource only.
pub fn items(manifest: &Manifest<'_>, reader: &dyn Reader) -> Vec<Item> {
    items_of(manifest.resources(), reader, manifest.fleet.source_limit)
}

/// Reads every resource `resources` gives, in that order, as [`items`] does,
/// refusing payloads over `limit` bytes.
pub fn items_of<R: ResourceView>(
    resources: impl IntoIterator<Item = R>,
    reader: &dyn Reader,
    limit: u64,
) -> Vec<Item> {
    resources
        .into_iter()
        .map(|r| item(&r, reader, limit))
        .collect()
}

fn item(r: &dyn ResourceView, reader: &dyn Reader, limit: u64) -> Item {
    let mut fields = Fields {
        r,
        problems: Vec::new(),
    };
    let desired = fields.desired(reader, limit);
    let ids = |f: Field| r.refs(f);
    Item {
        id: r.id().clone(),
        summary: match r.kind() {
            k if k.is_path() || k == Kind::Mount => {
                r.str(Field::Path).unwrap_or_default().to_owned()
            }
            Kind::Cron => cron_path(&r.id().title),
            // The command is shown as the change it makes.
            Kind::Exec => String::new(),
            Kind::Health => r.str(Field::Http).map(str::to_owned).unwrap_or_default(),
            _ => r.name().to_owned(),
        },
        desired,
        requires: ids(Field::Requires),
        restart_on: ids(Field::RestartOn),
        run_on: ids(Field::RunOn),
        problem: (!fields.problems.is_empty()).then(|| fields.problems.join("; ")),
    }
}

/// One resource's fields as the providers want them, with what is wrong
/// with them (each problem keeps its resource from being applied).
struct Fields<'r> {
    r: &'r dyn ResourceView,
    problems: Vec<String>,
}

impl Fields<'_> {
    /// What the resource should be, by its type.
    fn desired(&mut self, reader: &dyn Reader, limit: u64) -> Desired {
        let r = self.r;
        let ensure = self.ensure();
        match r.kind() {
            Kind::File => {
                let mode = self.mode();
                let content = self.content(reader, limit).map(Content::from);
                let secret = self.secret(reader, limit);
                Desired::File(FileSpec {
                    path: self.text(Field::Path).unwrap_or_default(),
                    ensure,
                    owner: self.text(Field::Owner),
                    group: self.text(Field::Group),
                    // A secret's file is private unless the manifest says otherwise.
                    mode: mode.or(secret.as_ref().map(|_| SECRET_MODE)),
                    content,
                    sensitive: self.flag(Field::Sensitive) || secret.is_some(),
                    secret,
                })
            }
            Kind::Directory => Desired::Directory(DirectorySpec {
                mode: self.mode(),
                path: self.text(Field::Path).unwrap_or_default(),
                ensure,
                owner: self.text(Field::Owner),
                group: self.text(Field::Group),
            }),
            Kind::Symlink => Desired::Symlink(SymlinkSpec {
                path: self.text(Field::Path).unwrap_or_default(),
                target: self.text(Field::Target).unwrap_or_default(),
                ensure,
            }),
            Kind::Package => Desired::Package(PackageSpec {
                name: r.name().to_owned(),
                ensure,
                version: self.text(Field::Version),
                provider: r.str(Field::Provider).and_then(PackageSystem::parse),
            }),
            Kind::Service => Desired::Service(ServiceSpec {
                name: r.name().to_owned(),
                running: r.str(Field::Ensure).map(|e| e == "running"),
                enabled: match r.value(Field::Enabled) {
                    Some(Value::Bool(b)) => Some(*b),
                    _ => None,
                },
            }),
            Kind::User => Desired::User(UserSpec {
                name: r.name().to_owned(),
                ensure,
                uid: self.id_number(Field::Uid),
                group: self.text(Field::Group),
                groups: self.groups(),
                home: self.text(Field::Home),
                shell: self.text(Field::Shell),
                system: self.flag(Field::System),
            }),
            Kind::Group => Desired::Group(GroupSpec {
                name: r.name().to_owned(),
                ensure,
                gid: self.id_number(Field::Gid),
                system: self.flag(Field::System),
            }),
            Kind::Exec => Desired::Exec(self.exec()),
            Kind::Cron => Desired::Cron(self.cron()),
            Kind::Mount => Desired::Mount(self.mount()),
            Kind::Sysctl => Desired::Sysctl(self.sysctl()),
            Kind::Health => Desired::Health(self.health()),
            Kind::Repository => Desired::Repository(self.repository()),
        }
    }

    /// An Exec. Resolution holds every manifest to these rules; a bundle's
    /// manifest is checked again here, so no command runs unguarded.
    fn exec(&mut self) -> ExecSpec {
        let r = self.r;
        let spec = ExecSpec {
            command: self.list(Field::Command).unwrap_or_default(),
            shell: self.flag(Field::Shell),
            creates: self.text(Field::Creates),
            unless: self.list(Field::Unless),
            onlyif: self.list(Field::Onlyif),
            refresh_only: self.flag(Field::RefreshOnly),
            timeout: match r.value(Field::Timeout) {
                Some(Value::Int(s)) => Duration::from_secs(u64::try_from(*s).unwrap_or(0)),
                _ => DEFAULT_TIMEOUT,
            },
            user: self.text(Field::User),
            cwd: self.text(Field::Cwd),
            environment: self.environment(),
        };
        if spec.command.first().is_none_or(String::is_empty) {
            self.problems.push("it has no command".into());
        }
        for line in [
            Some(&spec.command),
            spec.unless.as_ref(),
            spec.onlyif.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if spec.shell && line.len() != 1 {
                self.problems
                    .push("with `shell: true`, a command is one script".into());
            }
        }
        let run_on = !r.refs(Field::RunOn).is_empty();
        if spec.creates.is_none()
            && spec.unless.is_none()
            && spec.onlyif.is_none()
            && !spec.refresh_only
        {
            self.problems
                .push("it has no guard (`creates`, `unless`, `onlyif` or `refresh_only`)".into());
        }
        if spec.refresh_only != run_on {
            self.problems
                .push("`refresh_only: true` and `run_on` go together".into());
        }
        if spec.timeout.is_zero() {
            self.problems
                .push("its timeout is not a positive number of seconds".into());
        }
        spec
    }

    fn text(&self, f: Field) -> Option<String> {
        self.r.str(f).map(str::to_owned)
    }

    fn flag(&self, f: Field) -> bool {
        matches!(self.r.value(f), Some(Value::Bool(true)))
    }

    fn ensure(&self) -> Ensure {
        match self.r.str(Field::Ensure) {
            Some("absent") => Ensure::Absent,
            _ => Ensure::Present,
        }
    }

    fn mode(&mut self) -> Option<u32> {
        let m = self.r.str(Field::Mode)?;
        match u32::from_str_radix(m, 8) {
            Ok(m) if m <= 0o7777 => Some(m),
            _ => {
                self.problems
                    .push(format!("mode `{m}` is not an octal mode"));
                None
            }
        }
    }

    /// A uid or gid; `u32::MAX` is the "no id" value of the system calls.
    fn id_number(&mut self, f: Field) -> Option<u32> {
        match self.r.value(f) {
            Some(Value::Int(i)) => match u32::try_from(*i) {
                Ok(v) if v != u32::MAX => Some(v),
                _ => {
                    self.problems.push(format!("{f} {i} is out of range"));
                    None
                }
            },
            _ => None,
        }
    }

    /// `content` as written, or the `source` payload read through `reader`.
    fn content(&mut self, reader: &dyn Reader, limit: u64) -> Option<Vec<u8>> {
        if let Some(c) = self.r.str(Field::Content) {
            return Some(c.as_bytes().to_vec());
        }
        let src = self.r.str(Field::Source)?;
        match reader.read_source(src, limit) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                self.problems.push(format!("source {src} {e}"));
                None
            }
        }
    }

    /// A list field as written.
    fn list(&self, f: Field) -> Option<Vec<String>> {
        match self.r.value(f) {
            Some(Value::List(items)) => Some(items.iter().map(|s| s.to_string()).collect()),
            _ => None,
        }
    }

    /// `environment`: each `NAME=VALUE` entry as a pair (a command's or a
    /// health check's), an entry without `=` an empty value.
    fn environment(&self) -> Vec<(String, String)> {
        self.list(Field::Environment)
            .unwrap_or_default()
            .into_iter()
            .map(|e| match e.split_once('=') {
                Some((n, v)) => (n.to_owned(), v.to_owned()),
                None => (e, String::new()),
            })
            .collect()
    }

    /// `secret`: the ciphertext, read through `reader` now like a source;
    /// decrypting it is the engine's, in a real run only.
    fn secret(&mut self, reader: &dyn Reader, limit: u64) -> Option<SecretSpec> {
        let path = self.r.str(Field::Secret)?;
        match reader.read_source(path, limit) {
            Ok(ciphertext) => Some(SecretSpec {
                path: path.to_owned(),
                sha256: datum_secrets::ciphertext_sha256(&ciphertext),
                ciphertext,
            }),
            Err(e) => {
                self.problems.push(format!("secret {path} {e}"));
                None
            }
        }
    }

    /// Supplementary groups, sorted and without repeats.
    fn groups(&self) -> Option<Vec<String>> {
        match self.r.value(Field::Groups) {
            Some(Value::List(items)) => {
                let mut g: Vec<String> = items.iter().map(|s| s.to_string()).collect();
                g.sort();
                g.dedup();
                Some(g)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datum_core::loader;
    use datum_core::reader::{MemReader, ReadError, SourceError};

    /// A repository whose payloads vanish after loading.
    struct Vanishing(MemReader);

    impl Reader for Vanishing {
        fn discover(&self) -> Result<Vec<String>, ReadError> {
            self.0.discover()
        }
        fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
            self.0.read(path, limit)
        }
        fn read_source(&self, _: &str, _: u64) -> Result<Vec<u8>, SourceError> {
            Err(SourceError::Missing)
        }
        fn list_payloads(&self, dir: &str) -> Result<Vec<String>, ReadError> {
            self.0.list_payloads(dir)
        }
    }

    fn items_of(resources: &str, vanish: bool) -> Vec<Item> {
        let reader = MemReader::new()
            .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
            .file("hosts.yaml", "datum: v1alpha1\ntype: Host\nname: h\n")
            .file("files/app.conf", "from source\n")
            .file(
                "layer.yaml",
                format!(
                    "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
                ),
            );
        let fleet = loader::load(&reader).unwrap();
        let host = fleet.host_id("h").unwrap();
        let res = datum_core::resolve::resolve_host(&fleet, host);
        assert!(res.is_ok(), "{:?}", res.problems);
        let m = Manifest::new(&fleet, host, &res);
        if vanish {
            items(&m, &Vanishing(reader))
        } else {
            items(&m, &reader)
        }
    }

    #[test]
    fn fields_left_out_stay_unmanaged_and_names_default_to_titles() {
        let items = items_of(
            "  File[conf]:\n    path: /etc/app.conf\n    source: files/app.conf\n    mode: \"640\"\n\
             \x20 Service[web]:\n    enabled: false\n    restart_on: File[conf]\n\
             \x20 User[ops]:\n    groups: [wheel, adm, wheel]\n    uid: 2000\n",
            false,
        );
        assert_eq!(
            items[0].desired,
            Desired::File(FileSpec {
                path: "/etc/app.conf".into(),
                ensure: Ensure::Present,
                owner: None,
                group: None,
                mode: Some(0o640),
                content: Some(b"from source\n".to_vec().into()),
                sensitive: false,
                secret: None,
            })
        );
        assert_eq!(
            items[1].desired,
            Desired::Service(ServiceSpec {
                name: "web".into(),
                running: None,
                enabled: Some(false),
            })
        );
        assert_eq!(
            items[1].restart_on,
            [ResourceId::parse("File[conf]").unwrap()]
        );
        assert_eq!(items[1].summary, "web");
        let Desired::User(u) = &items[2].desired else {
            panic!("not a user")
        };
        assert_eq!(
            (u.uid, u.groups.clone()),
            (Some(2000), Some(vec!["adm".into(), "wheel".into()]))
        );
        assert_eq!(
            (u.home.as_deref(), u.shell.as_deref(), u.group.as_deref()),
            (None, None, None)
        );
    }

    #[test]
    fn a_payload_that_cannot_be_read_now_fails_its_resource_only() {
        let items = items_of(
            "  File[conf]:\n    path: /etc/app.conf\n    source: files/app.conf\n\
             \x20 File[motd]:\n    path: /etc/motd\n    content: hi\n",
            true,
        );
        assert_eq!(
            items[0].problem.as_deref(),
            Some("source files/app.conf does not exist")
        );
        assert_eq!(items[1].problem, None);
    }
}
