//! Facts: what a host observes about itself (its OS release, its
//! architecture, what it runs in), and the labels `datum.yaml` ties to
//! them.
//!
//! Labels are declared in the repository, never supplied by the host
//! (ADR-0005). A label that describes the machine can say which fact it
//! describes:
//!
//! ```yaml
//! labels:
//!   os: {values: [debian-12, debian-13, rocky-9], fact: os}
//! ```
//!
//! and then `apply` and the agent compare the two before changing anything,
//! and `check --reports` compares them with the facts hosts last reported.
//! This module is the names of the facts a label may be tied to, and the
//! comparison, on plain data; observing the facts is `datum-apply`'s.

use std::collections::BTreeMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{Files, Span};

/// The facts a label may be tied to, with what each is.
pub const TIEABLE: &[(&str, &str)] = &[
    (
        "os",
        "the OS and its release, from os-release: ID, `-`, and the major part of VERSION_ID (`debian-12`, `rocky-9`); Ubuntu and Pop!_OS keep their whole release (`ubuntu-24.04`); a release without VERSION_ID is the ID alone (`arch`)",
    ),
    ("os_id", "os-release's ID (`debian`, `rocky`, `ubuntu`)"),
    (
        "os_version",
        "os-release's VERSION_ID, whole (`12`, `9.4`, `24.04`)",
    ),
    (
        "arch",
        "the architecture, as the kernel names it (`x86_64`, `aarch64`)",
    ),
    (
        "virtualization",
        "what the host runs in: `none`, a hypervisor (`kvm`, `vmware`, `microsoft`, ...) or a container (`docker`, `podman`, `lxc`, ...), as systemd-detect-virt names them",
    ),
];

/// Whether `name` is a fact a label may be tied to.
pub fn is_tieable(name: &str) -> bool {
    TIEABLE.iter().any(|(n, _)| *n == name)
}

/// The names of [`TIEABLE`], for hints.
pub fn tieable_names() -> impl Iterator<Item = &'static str> + Clone {
    TIEABLE.iter().map(|(n, _)| *n)
}

/// What a host observed: each fact's value, or why it could not be
/// observed (`no /etc/os-release`). A fact left out was not observed.
pub type Observed = BTreeMap<String, Result<String, String>>;

/// A label a host carries that is tied to a fact, with its places when
/// they are known (a fleet; a bundle's manifest has none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tied {
    pub key: String,
    /// The value the host declares.
    pub value: String,
    pub fact: String,
    /// The values `datum.yaml` declares for the key, when known (a
    /// bundle's manifest does not say).
    pub declared: Option<Vec<String>>,
    /// The host's label value, and the `fact:` that ties the key.
    pub places: Option<(Span, Span)>,
}

/// A tied label that disagrees with what the host observes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub tied: Tied,
    /// What the host observes, or why it cannot tell.
    pub observed: Result<String, String>,
}

/// The tied labels that disagree with `observed`, in key order.
pub fn mismatches(tied: &[Tied], observed: &Observed) -> Vec<Mismatch> {
    let mut out: Vec<Mismatch> = tied
        .iter()
        .filter_map(|t| {
            let seen = observed
                .get(&t.fact)
                .cloned()
                .unwrap_or_else(|| Err("it was not observed".to_owned()));
            match &seen {
                Ok(v) if *v == t.value => None,
                _ => Some(Mismatch {
                    tied: t.clone(),
                    observed: seen,
                }),
            }
        })
        .collect();
    out.sort_by(|a, b| a.tied.key.cmp(&b.tied.key));
    out
}

impl Mismatch {
    /// `inventory says os=debian-12; this host runs debian-13`.
    pub fn message(&self, host: &str) -> String {
        let t = &self.tied;
        let said = format!("inventory says {}={}", t.key, t.value);
        match &self.observed {
            Ok(v) => format!("{said}; {host} {}", phrase(&t.fact, v)),
            Err(why) => format!("{said}; {host}'s {} cannot be observed: {why}", t.fact),
        }
    }

    /// What to change: the host's document (`hosts/web-001.yaml`, when
    /// known), and `datum.yaml` too when the value observed is not declared.
    pub fn hint(&self, host_file: Option<&str>) -> String {
        let t = &self.tied;
        let file = host_file.unwrap_or("the host's document");
        match &self.observed {
            Ok(v) if t.declared.as_ref().is_none_or(|d| d.contains(v)) => {
                format!("update {file}: `{}: {v}`", t.key)
            }
            Ok(v) => format!(
                "update {file}: `{}: {v}`, and add `{v}` to labels.{}.values in datum.yaml",
                t.key, t.key
            ),
            Err(_) => format!(
                "make the {} fact observable on the host, or remove `fact: {}` from labels.{} in datum.yaml",
                t.fact, t.fact, t.key
            ),
        }
    }

    /// The mismatch as an error pointing at the host's label (and the
    /// tie in `datum.yaml`) when their places are known, in `files`;
    /// `whence` says where the facts came from.
    pub fn diagnostic(&self, host: &str, files: Option<&Files>, whence: &str) -> Diagnostic {
        let host_file = self
            .tied
            .places
            .zip(files)
            .map(|((label, _), files)| files.path(label.file));
        let mut d = Diagnostic::error(Code::FactMismatch, self.message(host))
            .note(whence.to_owned())
            .hint(self.hint(host_file));
        if let Some((label, tie)) = self.tied.places {
            d = d
                .at(label, "declared here")
                .also(tie, format!("tied to the fact `{}` here", self.tied.fact));
        }
        d.hosts = vec![host.to_owned()];
        d
    }
}

/// Every tied label of `host` that disagrees with `observed`, as errors
/// (see [`Mismatch::diagnostic`]).
pub fn check(
    tied: &[Tied],
    observed: &Observed,
    host: &str,
    files: Option<&Files>,
    whence: &str,
) -> Vec<Diagnostic> {
    mismatches(tied, observed)
        .iter()
        .map(|m| m.diagnostic(host, files, whence))
        .collect()
}

/// `runs debian-13`, `is aarch64`, `runs in kvm`.
fn phrase(fact: &str, value: &str) -> String {
    match fact {
        "os" | "os_id" => format!("runs {value}"),
        "os_version" => format!("runs release {value}"),
        "virtualization" if value == "none" => "runs on bare metal (virtualization none)".into(),
        "virtualization" => format!("runs in {value}"),
        _ => format!("has {fact}={value}"),
    }
}

/// The `os` fact from os-release's ID and VERSION_ID: the major release,
/// except where the whole release is the release (Ubuntu's `24.04`).
pub fn os_label(id: &str, version_id: Option<&str>) -> String {
    match version_id.filter(|v| !v.is_empty()) {
        None => id.to_owned(),
        Some(v) if matches!(id, "ubuntu" | "pop") => format!("{id}-{v}"),
        Some(v) => format!("{id}-{}", v.split('.').next().unwrap_or(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tied(key: &str, value: &str, fact: &str) -> Tied {
        Tied {
            key: key.into(),
            value: value.into(),
            fact: fact.into(),
            declared: Some(vec!["debian-12".into(), "debian-13".into()]),
            places: None,
        }
    }

    #[test]
    fn the_os_fact_is_the_major_release_but_ubuntus_whole_one() {
        assert_eq!(os_label("debian", Some("12")), "debian-12");
        assert_eq!(os_label("rocky", Some("9.4")), "rocky-9");
        assert_eq!(os_label("almalinux", Some("9.3")), "almalinux-9");
        assert_eq!(os_label("amzn", Some("2023")), "amzn-2023");
        assert_eq!(os_label("ubuntu", Some("24.04")), "ubuntu-24.04");
        assert_eq!(os_label("arch", None), "arch");
        assert_eq!(os_label("debian", Some("")), "debian");
    }

    #[test]
    fn only_labels_that_disagree_are_mismatches() {
        let mut observed = Observed::new();
        observed.insert("os".into(), Ok("debian-13".into()));
        observed.insert("arch".into(), Ok("x86_64".into()));
        observed.insert("virtualization".into(), Err("no".into()));
        let all = [
            tied("os", "debian-12", "os"),
            tied("cpu", "x86_64", "arch"),
            tied("virt", "kvm", "virtualization"),
        ];
        let found = mismatches(&all, &observed);
        let keys: Vec<&str> = found.iter().map(|m| m.tied.key.as_str()).collect();
        assert_eq!(keys, ["os", "virt"]);
        assert_eq!(
            found[0].message("web-001"),
            "inventory says os=debian-12; web-001 runs debian-13"
        );
        assert_eq!(
            found[0].hint(Some("hosts/web-001.yaml")),
            "update hosts/web-001.yaml: `os: debian-13`"
        );
        assert_eq!(
            found[1].message("web-001"),
            "inventory says virt=kvm; web-001's virtualization cannot be observed: no"
        );
        observed.insert("os".into(), Ok("debian-14".into()));
        let found = mismatches(&all[..1], &observed);
        assert_eq!(
            found[0].hint(None),
            "update the host's document: `os: debian-14`, and add `debian-14` to labels.os.values in datum.yaml"
        );
    }
}
