//! `datum bundle`: one file per host, exactly its payloads, the commit it
//! came from, a signature `ssh-keygen -Y verify` accepts, the same bytes
//! for the same revision and key.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use datum_agent::sshsig::AllowedSigners;
use datum_core::bundle::{self, SIGNATURE_NAMESPACE};

use crate::common::{Run, copy_tree, example, run_in};
use crate::delivery::{Key, Repo, ok};

fn bundle_all(fleet: &Path, out: &Path, key: Option<&Key>) -> Run {
    let mut args = vec!["bundle", "--all", "--out", out.to_str().unwrap()];
    if let Some(k) = key {
        args.extend(["--sign-key", k.private.to_str().unwrap()]);
    }
    run_in(fleet, &args)
}

fn files_of(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_host_gets_its_own_file_with_only_its_payloads_and_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    let head = repo.rev("HEAD");
    let out = tmp.path().join("out");
    let run = bundle_all(&repo.fleet(), &out, None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "bundled 2 of 2 hosts at commit {} (serial 1) into {}, unsigned\n",
            &head[..7],
            out.display()
        )
    );
    assert_eq!(
        files_of(&out),
        BTreeSet::from(["db-001.bundle".into(), "web-001.bundle".into()])
    );
    let bytes = fs::read(out.join("web-001.bundle")).unwrap();
    let decoded = bundle::decode(&bytes).unwrap();
    let b = decoded.clear().unwrap();
    assert_eq!((b.header.fleet, b.header.host), ("delivery", "web-001"));
    let commit = b.header.commit.unwrap();
    assert_eq!(commit.id, head);
    assert_eq!(commit.time, 1_750_000_000);
    // The first commit of the branch: serial 1.
    assert_eq!(b.header.serial, Some(1));
    assert_eq!(
        b.payloads.keys().copied().collect::<Vec<_>>(),
        ["files/site.conf"]
    );
    assert_eq!(b.payloads["files/site.conf"], b"listen 80;\n");
    assert_eq!(decoded.signature, None);
    // The manifest is byte for byte what render writes at that commit.
    let rendered = run_in(&repo.fleet(), &["render", "web-001"]);
    assert_eq!(b.manifest, rendered.stdout.as_bytes());
    let db = fs::read(out.join("db-001.bundle")).unwrap();
    let db = bundle::decode(&db).unwrap();
    assert_eq!(
        db.clear()
            .unwrap()
            .payloads
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        ["files/db-only.conf"]
    );
}

#[test]
fn the_committed_fleet_is_bundled_not_the_working_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let mut repo = Repo::new(&tmp.path().join("repo"));
    let first = repo.rev("HEAD");
    repo.release(2, None);
    repo.write("files/site.conf", "uncommitted\n");
    let out = tmp.path().join("head.bundle");
    // A change not yet committed would not be in the bundle: refused, as
    // `cargo publish` refuses, naming what differs.
    let run = run_in(
        &repo.fleet(),
        &["bundle", "web-001", "--out", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.starts_with(
            "error: the working tree differs from the commit being bundled: files/site.conf\n  = hint: commit the change first"
        ),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
    let run = run_in(
        &repo.fleet(),
        &[
            "bundle",
            "web-001",
            "--allow-dirty",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bytes = fs::read(&out).unwrap();
    let b = bundle::decode(&bytes).unwrap().clear().unwrap().clone();
    assert_eq!(b.payloads["files/site.conf"], b"listen 80;\n");
    assert!(String::from_utf8_lossy(b.manifest).contains("release 2"));
    let old = tmp.path().join("old.bundle");
    let run = run_in(
        &repo.fleet(),
        &[
            "bundle",
            "web-001",
            "--rev",
            &first,
            "--out",
            old.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bytes = fs::read(&old).unwrap();
    let b = bundle::decode(&bytes).unwrap().clear().unwrap().clone();
    assert_eq!(b.header.commit.unwrap().id, first);
    assert!(String::from_utf8_lossy(b.manifest).contains("release 1"));
}

#[test]
fn same_revision_and_key_give_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut repo = Repo::new(&tmp.path().join("repo"));
    let key = Key::new(tmp.path(), "ci");
    let other = Key::new(tmp.path(), "other");
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    // The expiry counts from SOURCE_DATE_EPOCH, as reproducible builds set it.
    let at_epoch = |dir: &Path, k: &Key| {
        let out = crate::common::datum()
            .env("SOURCE_DATE_EPOCH", "1750000000")
            .args([
                "bundle",
                "--all",
                "--out",
                dir.to_str().unwrap(),
                "--sign-key",
            ])
            .arg(&k.private)
            .arg("--fleet")
            .arg(repo.fleet())
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_eq!(run.code, 0, "{}", run.stderr);
    };
    for (dir, k) in [(&a, &key), (&b, &key), (&c, &other)] {
        at_epoch(dir, k);
    }
    let bytes = fs::read(a.join("web-001.bundle")).unwrap();
    let d = bundle::decode(&bytes).unwrap().clear().unwrap().clone();
    assert_eq!(d.header.expires, Some(1_750_000_000 + 7 * 86_400));
    for name in ["web-001.bundle", "db-001.bundle"] {
        let (x, y, z) = (
            fs::read(a.join(name)).unwrap(),
            fs::read(b.join(name)).unwrap(),
            fs::read(c.join(name)).unwrap(),
        );
        assert_eq!(x, y, "{name} differs between two runs");
        assert_ne!(x, z, "{name} is the same under another key");
        // Only the signature differs between keys.
        let (dx, dz) = (bundle::decode(&x).unwrap(), bundle::decode(&z).unwrap());
        assert_eq!(dx.signed, dz.signed);
    }
    // A new commit changes every bundle (its commit id is in each).
    repo.release(2, None);
    let d = tmp.path().join("d");
    bundle_all(&repo.fleet(), &d, Some(&key));
    assert_ne!(
        fs::read(a.join("db-001.bundle")).unwrap(),
        fs::read(d.join("db-001.bundle")).unwrap()
    );
}

#[test]
fn the_signature_verifies_in_process_and_with_ssh_keygen() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    let key = Key::new(tmp.path(), "ci");
    let file = tmp.path().join("web-001.bundle");
    let run = run_in(
        &repo.fleet(),
        &[
            "bundle",
            "web-001",
            "--out",
            file.to_str().unwrap(),
            "--sign-key",
            key.private.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(", signed by SHA256:"), "{}", run.stdout);
    let bytes = fs::read(&file).unwrap();
    let decoded = bundle::decode(&bytes).unwrap();
    let signature = decoded.signature.unwrap();
    let signers_file = tmp.path().join("allowed_signers");
    fs::write(&signers_file, key.signer_line("ci@example.net")).unwrap();
    let signers = AllowedSigners::read(&signers_file).unwrap();
    let signer = signers
        .verify(
            SIGNATURE_NAMESPACE,
            decoded.signed,
            signature,
            1_800_000_000,
        )
        .unwrap();
    assert_eq!(signer.principals, ["ci@example.net"]);
    // OpenSSH agrees, with the namespace the docs give.
    fs::write(tmp.path().join("body"), decoded.signed).unwrap();
    fs::write(tmp.path().join("body.sig"), signature).unwrap();
    ok(Command::new("ssh-keygen")
        .current_dir(tmp.path())
        .args([
            "-Y",
            "verify",
            "-f",
            "allowed_signers",
            "-I",
            "ci@example.net",
        ])
        .args(["-n", "datum-bundle", "-s", "body.sig"])
        .stdin(fs::File::open(tmp.path().join("body")).unwrap()));
}

#[test]
fn a_host_that_does_not_resolve_gets_no_bundle_and_stale_ones_go() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = tmp.path().join("conflict");
    copy_tree(&example("conflict"), &fleet);
    let out = tmp.path().join("out");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("gone-001.bundle"), "old").unwrap();
    fs::write(out.join("notes.txt"), "kept").unwrap();
    let run = bundle_all(&fleet, &out, None);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stderr.contains("conflicting values"), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "1 host got no bundle: it would not resolve or could not decrypt its secrets"
        ),
        "{}",
        run.stderr
    );
    // Outside git, no commit is recorded.
    assert!(run.stdout.starts_with("bundled "), "{}", run.stdout);
    assert!(!run.stdout.contains("at commit"), "{}", run.stdout);
    let files = files_of(&out);
    assert!(!files.contains("gone-001.bundle"), "{files:?}");
    assert!(!files.contains("web-001.bundle"), "{files:?}");
    assert!(files.contains("notes.txt"), "{files:?}");
    for name in files.iter().filter(|n| n.ends_with(".bundle")) {
        let bytes = fs::read(out.join(name)).unwrap();
        assert_eq!(bundle::decode(&bytes).unwrap().header.commit, None);
    }
}

#[test]
fn a_key_that_cannot_sign_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    let key = Key::new(tmp.path(), "ci");
    let out = tmp.path().join("out");
    let run = run_in(
        &repo.fleet(),
        &[
            "bundle",
            "--all",
            "--out",
            out.to_str().unwrap(),
            "--sign-key",
            key.private.with_extension("pub").to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("is not an OpenSSH private key"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: give the private half"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
}

/// A machine root for the delivery fleet, named `host`.
pub fn machine(host: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("etc/datum")).unwrap();
    fs::create_dir_all(root.path().join("srv")).unwrap();
    fs::write(root.path().join("etc/datum/host"), format!("{host}\n")).unwrap();
    root
}

fn apply_bundle(root: &Path, file: &Path, extra: &[&str]) -> Run {
    let keys = extra.iter().any(|a| a.starts_with("--public-key"));
    let out = crate::common::datum()
        .args(["apply", "--root", root.to_str().unwrap(), "--bundle"])
        .arg(file)
        .args(if keys {
            &[][..]
        } else {
            &["--allow-unsigned"][..]
        })
        .args(extra)
        .output()
        .unwrap();
    let run = Run::from(out);
    assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
    run
}

/// Bundles of the delivery fleet in `dir`, signed by `key` when given.
fn bundles(tmp: &Path, dir: &str, key: Option<&Key>) -> std::path::PathBuf {
    let repo = Repo::new(&tmp.join(format!("repo-{dir}")));
    let out = tmp.join(dir);
    let run = bundle_all(&repo.fleet(), &out, key);
    assert_eq!(run.code, 0, "{}", run.stderr);
    out
}

#[test]
fn apply_bundle_converges_then_changes_nothing_without_the_fleet() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bundles(tmp.path(), "b", None);
    let root = machine("web-001");
    // Nobody said whether the bundle must be signed: a usage error, nothing applied.
    let run = Run::from(
        crate::common::datum()
            .args(["apply", "--root", root.path().to_str().unwrap(), "--bundle"])
            .arg(out.join("web-001.bundle"))
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 64, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "--bundle needs --public-keys FILE (the keys that may sign it) or --allow-unsigned"
        ),
        "{}",
        run.stderr
    );
    assert!(!root.path().join("srv/app").exists());
    let run = apply_bundle(root.path(), &out.join("web-001.bundle"), &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("changed: File[site] /srv/app/site.conf"),
        "{}",
        run.stdout
    );
    assert_eq!(
        fs::read_to_string(root.path().join("srv/app/site.conf")).unwrap(),
        "listen 80;\n"
    );
    assert_eq!(
        fs::read_to_string(root.path().join("srv/app/motd")).unwrap(),
        "release 1\n"
    );
    assert!(!root.path().join("srv/app/db.conf").exists());
    let run = apply_bundle(root.path(), &out.join("web-001.bundle"), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("3 unchanged"), "{}", run.stdout);
}

#[test]
fn apply_bundle_refuses_damage_another_host_and_untrusted_signatures() {
    let tmp = tempfile::tempdir().unwrap();
    let key = Key::new(tmp.path(), "ci");
    let stranger = Key::new(tmp.path(), "stranger");
    let signed = bundles(tmp.path(), "signed", Some(&key));
    let unsigned = bundles(tmp.path(), "unsigned", None);
    let by_stranger = bundles(tmp.path(), "by-stranger", Some(&stranger));
    let keys = tmp.path().join("bundle_signers");
    fs::write(&keys, key.signer_line("ci@example.net")).unwrap();
    let keys_arg = ["--public-keys", keys.to_str().unwrap()];
    let root = machine("web-001");

    // One flipped byte in the payload.
    let mut bytes = fs::read(unsigned.join("web-001.bundle")).unwrap();
    let at = bytes.windows(10).position(|w| w == b"listen 80;").unwrap();
    bytes[at] = b'L';
    let tampered = tmp.path().join("tampered.bundle");
    fs::write(&tampered, &bytes).unwrap();
    let run = apply_bundle(root.path(), &tampered, &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "the bundle is damaged: payload files/site.conf does not match its recorded sha256"
        ),
        "{}",
        run.stderr
    );
    // Cut short.
    let truncated = tmp.path().join("truncated.bundle");
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let run = apply_bundle(root.path(), &truncated, &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is truncated at byte"),
        "{}",
        run.stderr
    );

    let run = apply_bundle(root.path(), &unsigned.join("web-001.bundle"), &keys_arg);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("is not signed, and public keys are configured"),
        "{}",
        run.stderr
    );
    let run = apply_bundle(root.path(), &by_stranger.join("web-001.bundle"), &keys_arg);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is not in the allowed signers file"),
        "{}",
        run.stderr
    );
    // A signed bundle altered after signing (the signature still parses).
    let mut bytes = fs::read(signed.join("web-001.bundle")).unwrap();
    let at = bytes.windows(9).position(|w| w == b"release 1").unwrap();
    bytes[at + 8] = b'9';
    let altered = tmp.path().join("altered.bundle");
    fs::write(&altered, &bytes).unwrap();
    let run = apply_bundle(root.path(), &altered, &keys_arg);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("it was altered after signing"),
        "{}",
        run.stderr
    );
    let run = apply_bundle(root.path(), &signed.join("db-001.bundle"), &keys_arg);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("the bundle is for host db-001, and this host is web-001"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("came from"), "{}", run.stderr);
    // Nothing was applied by any of them.
    assert!(!root.path().join("srv/app").exists());

    let run = apply_bundle(root.path(), &signed.join("web-001.bundle"), &keys_arg);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn apply_report_records_the_run_as_the_agent_does() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    let out = bundles(tmp.path(), "b", None);
    let root = machine("web-001");
    let file = out.join("web-001.bundle");
    let run = apply_bundle(root.path(), &file, &["--report"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let reports = root.path().join("var/lib/datum/reports");
    let last: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(reports.join("last.json")).unwrap()).unwrap();
    assert_eq!(last["type"], "RunReport");
    assert_eq!(last["mode"], "bundle");
    assert_eq!(last["source"], file.display().to_string());
    let bytes = fs::read(&file).unwrap();
    let commit = bundle::decode(&bytes).unwrap().header.commit.unwrap();
    assert_eq!(last["commit"], commit.id);
    assert_eq!(
        (
            last["exit_status"].as_i64(),
            last["summary"]["changed"].as_i64()
        ),
        (Some(2), Some(3))
    );
    assert_eq!(last["resources"]["resources"].as_array().unwrap().len(), 3);
    let prom = fs::read_to_string(
        root.path()
            .join("var/lib/prometheus/node-exporter/datum.prom"),
    )
    .unwrap();
    assert!(
        prom.lines().any(|l| l == "datum_last_run_exit_status 2"),
        "{prom}"
    );

    // From a checkout: mode local, the fleet directory as the source.
    let run = run_in(
        &repo.fleet(),
        &["apply", "--root", root.path().to_str().unwrap(), "--report"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let last: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(reports.join("last.json")).unwrap()).unwrap();
    assert_eq!(last["mode"], "local");
    assert_eq!(
        last["source"],
        repo.fleet().canonicalize().unwrap().display().to_string()
    );
    assert_eq!(last["commit"], serde_json::Value::Null);
    assert_eq!(last["exit_status"], 0);
    let runs = fs::read_dir(&reports).unwrap().count();
    assert_eq!(runs, 3, "two runs and last.json");
    // Without --report, nothing is recorded.
    let bare = machine("web-001");
    assert_eq!(apply_bundle(bare.path(), &file, &[]).code, 2);
    assert!(!bare.path().join("var/lib/datum/reports").exists());
}
