//! The machine being converged: `/`, or a directory treated as `/`
//! (`--root`), and how user and group names become ids there.
//!
//! Under a root directory, names are looked up in `ROOT/etc/passwd` and
//! `ROOT/etc/group`, never in the running system's name service: the
//! directory's accounts are the ones its files will be owned by.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use nix::unistd::{Gid, Group, Uid, User};

/// Where `/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    dir: Option<PathBuf>,
}

/// An account in `/etc/passwd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswdEntry {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: String,
    pub shell: String,
}

/// A group in `/etc/group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

impl Root {
    /// The running system.
    pub fn system() -> Root {
        Root { dir: None }
    }

    /// A directory treated as `/`.
    pub fn at(dir: impl Into<PathBuf>) -> Root {
        Root {
            dir: Some(dir.into()),
        }
    }

    /// The directory given with `--root`, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Where an absolute path of the manifest is on this machine.
    pub fn path(&self, abs: &str) -> PathBuf {
        match &self.dir {
            Some(dir) => dir.join(abs.trim_start_matches('/')),
            None => PathBuf::from(abs),
        }
    }

    /// The accounts in `/etc/passwd`.
    pub fn passwd(&self) -> io::Result<Vec<PasswdEntry>> {
        Ok(read_db(&self.path("/etc/passwd"))?
            .iter()
            .filter_map(|f| {
                Some(PasswdEntry {
                    name: f.first()?.clone(),
                    uid: f.get(2)?.parse().ok()?,
                    gid: f.get(3)?.parse().ok()?,
                    home: f.get(5)?.clone(),
                    shell: f.get(6)?.clone(),
                })
            })
            .collect())
    }

    /// The groups in `/etc/group`.
    pub fn groups(&self) -> io::Result<Vec<GroupEntry>> {
        Ok(read_db(&self.path("/etc/group"))?
            .iter()
            .filter_map(|f| {
                Some(GroupEntry {
                    name: f.first()?.clone(),
                    gid: f.get(2)?.parse().ok()?,
                    members: f
                        .get(3)?
                        .split(',')
                        .filter(|m| !m.is_empty())
                        .map(str::to_owned)
                        .collect(),
                })
            })
            .collect())
    }

    /// The uid of a user name.
    pub fn uid(&self, name: &str) -> io::Result<Option<u32>> {
        if self.dir.is_some() {
            return Ok(self
                .passwd()?
                .into_iter()
                .find(|e| e.name == name)
                .map(|e| e.uid));
        }
        Ok(User::from_name(name)
            .map_err(io::Error::from)?
            .map(|u| u.uid.as_raw()))
    }

    /// The gid of a group name.
    pub fn gid(&self, name: &str) -> io::Result<Option<u32>> {
        if self.dir.is_some() {
            return Ok(self
                .groups()?
                .into_iter()
                .find(|e| e.name == name)
                .map(|e| e.gid));
        }
        Ok(Group::from_name(name)
            .map_err(io::Error::from)?
            .map(|g| g.gid.as_raw()))
    }

    /// A uid as a name when it has one, else the number.
    pub fn user_name(&self, uid: u32) -> String {
        let name = if self.dir.is_some() {
            self.passwd()
                .ok()
                .and_then(|all| all.into_iter().find(|e| e.uid == uid).map(|e| e.name))
        } else {
            User::from_uid(Uid::from_raw(uid))
                .ok()
                .flatten()
                .map(|u| u.name)
        };
        name.unwrap_or_else(|| uid.to_string())
    }

    /// A gid as a name when it has one, else the number.
    pub fn group_name(&self, gid: u32) -> String {
        let name = if self.dir.is_some() {
            self.groups()
                .ok()
                .and_then(|all| all.into_iter().find(|e| e.gid == gid).map(|e| e.name))
        } else {
            Group::from_gid(Gid::from_raw(gid))
                .ok()
                .flatten()
                .map(|g| g.name)
        };
        name.unwrap_or_else(|| gid.to_string())
    }
}

/// A colon-separated database; a missing file is empty.
fn read_db(path: &Path) -> io::Result<Vec<Vec<String>>> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').map(str::to_owned).collect())
        .collect())
}

/// Why this machine has no name to go by.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HostError {
    #[error("cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("{path} is empty")]
    Empty { path: String },
    #[error("cannot read the system hostname: {0}")]
    Hostname(String),
}

/// Which host a machine is, and where that came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    /// `--host`, the file it was read from, or `the system hostname`.
    pub from: String,
}

/// The host name to apply as: `explicit` (`--host`), else the content of
/// `/etc/datum/host` (under the root) with surrounding whitespace trimmed,
/// else the system hostname.
pub fn host_name(explicit: Option<&str>, root: &Root) -> Result<Identity, HostError> {
    if let Some(name) = explicit {
        return Ok(Identity {
            name: name.to_owned(),
            from: "--host".into(),
        });
    }
    let path = root.path("/etc/datum/host");
    match fs::read_to_string(&path) {
        Ok(text) => {
            let name = text.trim();
            if name.is_empty() {
                return Err(HostError::Empty {
                    path: path.display().to_string(),
                });
            }
            Ok(Identity {
                name: name.to_owned(),
                from: path.display().to_string(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => nix::unistd::gethostname()
            .map_err(|e| HostError::Hostname(e.to_string()))
            .map(|h| Identity {
                name: h.to_string_lossy().into_owned(),
                from: "the system hostname".into(),
            }),
        Err(e) => Err(HostError::Unreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_land_inside_the_root() {
        let r = Root::at("/tmp/r");
        assert_eq!(r.path("/etc/motd"), PathBuf::from("/tmp/r/etc/motd"));
        assert_eq!(r.path("/"), PathBuf::from("/tmp/r/"));
        assert_eq!(Root::system().path("/etc/motd"), PathBuf::from("/etc/motd"));
    }

    #[test]
    fn names_under_a_root_come_from_its_files_not_the_name_service() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("etc")).unwrap();
        fs::write(
            dir.path().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/bash\n# comment\nops:x:2000:2000::/home/ops:/bin/sh\n",
        )
        .unwrap();
        fs::write(
            dir.path().join("etc/group"),
            "root:x:0:\nops:x:2000:\nwheel:x:10:ops,root\n",
        )
        .unwrap();
        let r = Root::at(dir.path());
        assert_eq!(r.uid("ops").unwrap(), Some(2000));
        // The running system has a `daemon` user; this root does not.
        assert_eq!(r.uid("daemon").unwrap(), None);
        assert_eq!(r.gid("wheel").unwrap(), Some(10));
        assert_eq!(r.user_name(2000), "ops");
        assert_eq!(r.user_name(4242), "4242");
        assert_eq!(r.group_name(10), "wheel");
        assert_eq!(r.groups().unwrap()[2].members, ["ops", "root"]);
        assert_eq!(r.passwd().unwrap()[1].shell, "/bin/sh");
    }

    #[test]
    fn the_host_is_the_flag_then_the_file_under_the_root_then_the_hostname() {
        let dir = tempfile::tempdir().unwrap();
        let r = Root::at(dir.path());
        let name = |explicit| host_name(explicit, &r).unwrap().name;
        assert_eq!(name(Some("web-009")), "web-009");
        let system = nix::unistd::gethostname().unwrap();
        assert_eq!(host_name(None, &r).unwrap().from, "the system hostname");
        assert_eq!(name(None), system.to_string_lossy());
        fs::create_dir_all(dir.path().join("etc/datum")).unwrap();
        fs::write(dir.path().join("etc/datum/host"), "  web-001 \n").unwrap();
        assert_eq!(name(None), "web-001");
        assert!(
            host_name(None, &r)
                .unwrap()
                .from
                .ends_with("/etc/datum/host")
        );
        assert_eq!(name(Some("db-001")), "db-001");
        fs::write(dir.path().join("etc/datum/host"), "\n").unwrap();
        assert!(matches!(host_name(None, &r), Err(HostError::Empty { .. })));
    }
}
