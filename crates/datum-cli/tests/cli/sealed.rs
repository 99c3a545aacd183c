//! Sealed bundles (`datum bundle --seal`): each host's manifest and
//! payloads encrypted to its Host `keys`, inside the signature. A leaked
//! store shows whose bundles they are and nothing of what they hold; the
//! host opens its own with its key, and no other key opens it.

use std::fs;
use std::path::Path;

use datum_testkit::metrics::labels as label;

use crate::agent::Host;
use crate::common::{Run, datum};
use crate::delivery::Key;
use crate::secret_fleet::contains;
use crate::trust::{Setup, refused};

/// The delivery fleet's hosts, web-001 with `keys` and db-001 without.
fn hosts(web_key: &Key) -> String {
    format!(
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\nkeys: [\"{}\"]\n---\n\
         datum: v1alpha1\ntype: Host\nname: db-001\nlabels:\n  role: db\n",
        web_key.public
    )
}

/// A setup whose web-001 declares `host_key` and holds its private half
/// at `/etc/datum/host_key`, which the agent's `identity` names.
fn sealed_setup() -> (Setup, Key) {
    let mut s = Setup::new();
    let host_key = Key::new(s.tmp.path(), "web-001-host");
    s.repo.write("hosts.yaml", &hosts(&host_key));
    s.repo.commit("web-001 declares its host key", None);
    install_key(&s.host, "/etc/datum/host_key", &host_key);
    s.host
        .config(&format!("{}identity: /etc/datum/host_key\n", s.config));
    (s, host_key)
}

fn install_key(host: &Host, at: &str, key: &Key) {
    host.write(at, &fs::read_to_string(&key.private).unwrap());
}

/// What the delivery fleet's manifest and payloads of web-001 hold.
const CONTENTS: &[&str] = &[
    "type: Manifest",
    "release 1",
    "listen 80;",
    "/srv/app/site.conf",
    "files/site.conf",
    "File[motd]",
    "Directory[srv]",
];

#[test]
fn a_sealed_bundle_shows_nothing_and_opens_only_with_its_host_key() {
    let (s, _) = sealed_setup();
    let sealed = fs::read(s.bundle("sealed.bundle", &["--seal"])).unwrap();
    let clear = fs::read(s.bundle("clear.bundle", &[])).unwrap();
    // The same release unsealed shows what the sealed one hides.
    for text in CONTENTS {
        assert!(contains(&clear, text.as_bytes()), "{text} not in clear");
        assert!(!contains(&sealed, text.as_bytes()), "{text} in sealed");
    }
    // The header stays readable: whose bundle, which fleet.
    assert!(contains(&sealed, b"web-001") && contains(&sealed, b"delivery"));
    // Sealing the same release again draws a fresh key.
    let again = fs::read(s.bundle("again.bundle", &["--seal"])).unwrap();
    assert_ne!(sealed, again);

    s.serve(&s.tmp.path().join("sealed.bundle"));
    let run = s.run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(s.host.read("/srv/app/site.conf"), "listen 80;\n");
    // The copy kept to fall back on stays sealed.
    let cached = fs::read(s.host.path("/var/lib/datum/agent/verified.bundle")).unwrap();
    assert_eq!(cached, sealed);
    // The same release sealed again is the same input.
    s.serve(&s.tmp.path().join("again.bundle"));
    let run = s.run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // Another machine named web-001, with another host key: refused.
    let other = Host::new();
    let stranger = Key::new(s.tmp.path(), "stranger");
    install_key(&other, "/etc/ssh/ssh_host_ed25519_key", &stranger);
    other.write(
        "/etc/datum/bundle_signers",
        &s.ci.signer_line("ci@example.net"),
    );
    fs::copy(
        s.tmp.path().join("sealed.bundle"),
        other.path("/srv/web-001.bundle"),
    )
    .unwrap();
    other.config("bundle:\n  url: /srv/web-001.bundle\npublic_keys: /etc/datum/bundle_signers\n");
    let run = other.agent(&[]);
    refused(
        &run,
        "refusing /srv/web-001.bundle: the bundle is sealed to other keys than this host's",
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert!(!other.path("/srv/app").exists());
    let m = other.metrics();
    assert_eq!(
        m["datum_input_refusals_total"].samples[&label(&[("reason", "sealed")])],
        1.0
    );
    // And one with no host key at all says it cannot read one.
    fs::remove_file(other.path("/etc/ssh/ssh_host_ed25519_key")).unwrap();
    refused(
        &other.agent(&[]),
        "the bundle is sealed, and this host's key cannot be read",
    );
}

#[test]
fn apply_opens_a_sealed_bundle_with_its_identity() {
    let (s, host_key) = sealed_setup();
    let file = s.bundle("sealed.bundle", &["--seal"]);
    let signers = s.tmp.path().join("signers");
    fs::write(&signers, s.ci.signer_line("ci@example.net")).unwrap();
    let apply = |identity: &str| {
        Run::from(
            datum()
                .args(["apply", "--bundle"])
                .arg(&file)
                .arg("--public-keys")
                .arg(&signers)
                .arg("--root")
                .arg(s.host.path("/"))
                .args(["--identity", identity])
                .output()
                .unwrap(),
        )
    };
    let stranger = Key::new(s.tmp.path(), "stranger");
    install_key(&s.host, "/etc/datum/stranger", &stranger);
    let run = apply("/etc/datum/stranger");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("the bundle is sealed to other keys than this host's"),
        "{}",
        run.stderr
    );
    assert!(!s.host.path("/srv/app").exists());
    install_key(&s.host, "/etc/datum/host_key", &host_key);
    let run = apply("/etc/datum/host_key");
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.host.read("/srv/app/site.conf"), "listen 80;\n");
}

#[test]
fn a_host_without_keys_gets_no_sealed_bundle_and_is_named() {
    let (s, _) = sealed_setup();
    let dir = s.tmp.path().join("out");
    let bundle = |args: &[&str]| {
        Run::from(
            datum()
                .arg("bundle")
                .args(args)
                .arg("--fleet")
                .arg(s.repo.fleet())
                .arg("--sign-key")
                .arg(&s.ci.private)
                .arg("--seal")
                .output()
                .unwrap(),
        )
    };
    let run = bundle(&["--all", "--out", dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("db-001 declares no `keys`, so its bundle cannot be sealed"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hosts.yaml:"), "{}", run.stderr);
    assert!(
        run.stdout.contains("bundled 1 of 2 hosts"),
        "{}",
        run.stdout
    );
    assert!(dir.join("web-001.bundle").exists());
    assert!(!dir.join("db-001.bundle").exists());
    let run = bundle(&["db-001", "--out", dir.join("db.bundle").to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("cannot seal the bundle of db-001: it declares no `keys`"),
        "{}",
        run.stderr
    );
    assert!(!Path::new(&dir.join("db.bundle")).exists());
}
