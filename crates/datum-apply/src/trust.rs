//! Who may hand a run as root a fleet: git's `safe.directory` rule. A run
//! as root that applies the machine itself refuses a fleet directory that
//! someone other than root, or the user who ran sudo, could have changed.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use datum_core::hint::Hinted;

/// Who runs apply, as far as trusting a fleet directory goes: git's
/// `safe.directory` rule, with the ids passed in so it can be tested
/// without being root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runner {
    /// The effective user id.
    pub euid: u32,
    /// The user who ran `sudo` (`SUDO_UID`), when the runner is root.
    pub invoking: Option<u32>,
}

impl Runner {
    /// A process of effective uid `euid` whose environment holds
    /// `sudo_uid` (`SUDO_UID`, read by the caller): the user who ran sudo
    /// counts only when the runner is root.
    pub fn new(euid: u32, sudo_uid: Option<&str>) -> Runner {
        let invoking = sudo_uid
            .and_then(|u| u.parse::<u32>().ok())
            .filter(|_| euid == 0);
        Runner { euid, invoking }
    }
}

/// Why a run as root does not apply the fleet directory.
#[derive(Debug, thiserror::Error)]
pub enum FleetTrustError {
    #[error("cannot inspect the fleet directory {dir}: {source}")]
    Inspect {
        dir: String,
        #[source]
        source: io::Error,
    },
    #[error("refusing to apply as root: {0}")]
    Untrusted(#[source] Untrusted),
}

impl Hinted for FleetTrustError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            FleetTrustError::Inspect { .. } => None,
            FleetTrustError::Untrusted(_) => Some(
                "whoever can change the fleet can run anything as root through it; make root its owner and `chmod o-w` it".into(),
            ),
        }
    }

    fn more_hints(&self) -> Vec<Cow<'static, str>> {
        match self {
            FleetTrustError::Inspect { .. } => Vec::new(),
            FleetTrustError::Untrusted(_) => vec!["--trust-fleet applies it anyway".into()],
        }
    }
}

/// A run as root (applying the machine itself) refuses a fleet directory
/// that someone other than root, or the user who ran sudo, could have
/// changed ([`trust_fleet`] on its owner and mode); any other run trusts
/// it.
pub fn check_fleet(dir: &Path, runner: Runner) -> Result<(), FleetTrustError> {
    use std::os::unix::fs::MetadataExt as _;
    if runner.euid != 0 {
        return Ok(());
    }
    let shown = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let shown = shown.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|source| FleetTrustError::Inspect {
        dir: shown.clone(),
        source,
    })?;
    trust_fleet(&shown, meta.uid(), meta.mode(), runner).map_err(FleetTrustError::Untrusted)
}

/// Why a fleet directory is not trusted by a root run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    #[error("{dir} is owned by uid {owner}, not by root{}", invoking_text(.invoking))]
    Owner {
        dir: String,
        owner: u32,
        invoking: Option<u32>,
    },
    #[error("{dir} is writable by every user (mode {mode:04o})")]
    WorldWritable { dir: String, mode: u32 },
}

fn invoking_text(invoking: &Option<u32>) -> String {
    match invoking {
        Some(uid) => format!(" or uid {uid} (who ran sudo)"),
        None => String::new(),
    }
}

/// Whether a run as root may apply the fleet in `dir`, whose owner and
/// mode are `owner` and `mode`: the directory must be owned by root or by
/// the user who ran sudo, and not writable by every user. Anyone else who
/// can change the fleet could otherwise run anything as root through it.
pub fn trust_fleet(dir: &str, owner: u32, mode: u32, runner: Runner) -> Result<(), Untrusted> {
    if runner.euid != 0 {
        return Ok(());
    }
    if owner != 0 && Some(owner) != runner.invoking {
        return Err(Untrusted::Owner {
            dir: dir.to_owned(),
            owner,
            invoking: runner.invoking,
        });
    }
    if mode & 0o002 != 0 {
        return Err(Untrusted::WorldWritable {
            dir: dir.to_owned(),
            mode: mode & 0o7777,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn the_sudo_user_counts_only_for_a_run_as_root() {
        assert_eq!(Runner::new(0, Some("1000")).invoking, Some(1000));
        assert_eq!(Runner::new(0, Some("nobody")).invoking, None);
        assert_eq!(Runner::new(0, None).invoking, None);
        assert_eq!(Runner::new(1000, Some("1000")).invoking, None);
    }

    #[test]
    fn a_fleet_is_checked_only_for_a_run_as_root() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_fleet(dir.path(), Runner::new(1000, None)).is_ok());
        let e = check_fleet(dir.path(), Runner::new(0, None)).unwrap_err();
        assert!(
            e.to_string().starts_with("refusing to apply as root: "),
            "{e}"
        );
        assert_eq!(e.hints().len(), 2);
        let gone = dir.path().join("gone");
        let e = check_fleet(&gone, Runner::new(0, None)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot inspect the fleet directory "),
            "{e}"
        );
        assert!(e.hints().is_empty());
    }

    #[test]
    fn a_root_run_trusts_only_fleets_of_root_or_the_sudo_user_not_writable_by_all() {
        let root = Runner {
            euid: 0,
            invoking: None,
        };
        let sudo = Runner {
            euid: 0,
            invoking: Some(1000),
        };
        let user = Runner {
            euid: 1000,
            invoking: None,
        };
        assert_eq!(trust_fleet("/f", 0, 0o755, root), Ok(()));
        assert_eq!(trust_fleet("/f", 1000, 0o755, sudo), Ok(()));
        assert_eq!(trust_fleet("/f", 1000, 0o777, user), Ok(()));
        assert_eq!(
            trust_fleet("/f", 1000, 0o755, root)
                .unwrap_err()
                .to_string(),
            "/f is owned by uid 1000, not by root"
        );
        assert_eq!(
            trust_fleet("/f", 2000, 0o755, sudo)
                .unwrap_err()
                .to_string(),
            "/f is owned by uid 2000, not by root or uid 1000 (who ran sudo)"
        );
        assert_eq!(
            trust_fleet("/f", 0, 0o40777, root).unwrap_err().to_string(),
            "/f is writable by every user (mode 0777)"
        );
        // Group-writable is the owner's choice of who may change it.
        assert_eq!(trust_fleet("/f", 0, 0o775, root), Ok(()));
    }
}
