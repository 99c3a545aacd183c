//! The root's pacman keyring stays the root's: the host's gpg never obeys
//! the root's gpg configuration, nor writes through a hard link; it is
//! made wherever the root is; a key stays while any Repository wants it,
//! and a key Datum only signed is unsigned again with its Repository.

use std::fs;
use std::path::Path;

use datum_testkit::{packages, tools};

use crate::package_root::apply;
use crate::pacman_keys::{
    SIGNED_TOOLS, fingerprint, fleet, keyed, operator_keyring, signed_root, validity,
};

/// A Repository `name` with `key` (the same url for all).
fn named(name: &str, key: &str) -> String {
    keyed(key, "").replace("Repository[datumtest]", &format!("Repository[{name}]"))
}

/// The root's keyring's `gpg.conf` naming a host path as gpg's log file:
/// the host's gpg, working on the root's keyring, would write it.
#[test]
fn a_roots_gpg_conf_is_not_obeyed_by_the_hosts_gpg() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let theirs = tmp.path().join("theirs");
    operator_keyring(&root, &packages::signing_key(&theirs, "op@datum.invalid"));
    let outside = tmp.path().join("outside.log");
    let conf = root.join("etc/pacman.d/gnupg/gpg.conf");
    let mut text = fs::read_to_string(&conf).unwrap();
    text.push_str(&format!("log-file {}\n", outside.display()));
    fs::write(&conf, &text).unwrap();
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    assert!(
        !outside.exists(),
        "the host's gpg wrote {}",
        outside.display()
    );
    assert_eq!(fs::read_to_string(&conf).unwrap(), text);
}

/// A keyring file that is a hard link to a file outside the root: never
/// written through (gpg rewrites its trust database in place).
#[test]
fn a_hard_link_in_the_roots_pacman_keyring_is_not_written_through() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let theirs = tmp.path().join("theirs");
    operator_keyring(&root, &packages::signing_key(&theirs, "op@datum.invalid"));
    let trustdb = root.join("etc/pacman.d/gnupg/trustdb.gpg");
    let outside = tmp.path().join("trustdb.gpg");
    fs::rename(&trustdb, &outside).unwrap();
    fs::hard_link(&outside, &trustdb).unwrap();
    let before = fs::read(&outside).unwrap();
    let key = packages::signing_key(&tmp.path().join("ours"), "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let run = apply(&dir, &root, &[]);
    assert_eq!(fs::read(&outside).unwrap(), before, "{}", run.stdout);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("trustdb.gpg") && run.stdout.contains("hard link"),
        "{}",
        run.stdout
    );
}

/// A root at a long path (gpg-agent's socket in a keyring there would not
/// fit a socket address): its keyring is made all the same, master key
/// and all.
#[test]
fn a_pacman_keyring_is_made_in_a_root_at_a_long_path() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("d".repeat(120));
    fs::create_dir_all(&deep).unwrap();
    let root = signed_root(&deep);
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

/// Two Repositories with one key: it stays while either wants it.
#[test]
fn a_pacman_key_two_repositories_want_stays_while_one_does() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &named("zeta", &key));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    fleet(
        &dir,
        &format!("{}{}", named("alpha", &key), named("zeta", &key)),
    );
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(apply(&dir, &root, &[]).code, 0);
    fleet(
        &dir,
        &format!(
            "{}  Repository[zeta]:\n    ensure: absent\n",
            named("alpha", &key)
        ),
    );
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    let settled = apply(&dir, &root, &[]);
    assert_eq!(settled.code, 0, "{}", settled.stdout);

    fleet(&dir, "  Repository[alpha]:\n    ensure: absent\n");
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, &fpr), None);
}

/// A key already in the keyring but not trusted: signed for the
/// Repository, and no longer trusted once the Repository is gone.
#[test]
fn a_pacman_key_datum_only_signed_is_untrusted_again_with_its_repository() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let theirs = tmp.path().join("theirs");
    let key = packages::signing_key(&theirs, "op@datum.invalid");
    let fpr = fingerprint(&theirs, "op@datum.invalid");
    operator_keyring(&root, &key);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("-"));
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    fleet(&dir, "  Repository[datumtest]:\n    ensure: absent\n");
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert_eq!(
        validity(&root, &fpr).as_deref(),
        Some("-"),
        "{}",
        gone.stdout
    );
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

/// The `GPGDir` the root's pacman.conf takes from a file its `[options]`
/// include is the keyring, as for pacman; a pacman.conf Datum cannot read
/// fails the Repository rather than falling back to the default keyring.
#[test]
fn a_pacman_keyring_named_in_an_included_file_is_the_keyring() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let key = packages::signing_key(&tmp.path().join("ours"), "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let conf = root.join("etc/pacman.conf");
    fs::write(
        root.join("etc/pacman.d/options-1.conf"),
        "GPGDir = /etc/keys/\n",
    )
    .unwrap();
    fs::write(
        &conf,
        "[options]\nSigLevel = Never\nInclude = /etc/pacman.d/options-?.conf\n\
         GPGDir = /etc/not-this/\nInclude = /etc/pacman.d/datum-*.conf\n",
    )
    .unwrap();
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(root.join("etc/keys/pubring.gpg").exists());
    assert!(!root.join("etc/pacman.d/gnupg").exists());

    fs::remove_dir_all(root.join("etc/keys")).unwrap();
    fs::rename(&conf, root.join("etc/pacman.conf.real")).unwrap();
    std::os::unix::fs::symlink("pacman.conf.real", &conf).unwrap();
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("pacman.conf") && run.stdout.contains("link"),
        "{}",
        run.stdout
    );
    assert!(!root.join("etc/pacman.d/gnupg").exists());
    assert!(!Path::new(&root).join("etc/keys").exists());
}

/// `pacman-key --init` exits 0 even when gpg made no master key (as when
/// gpg-agent cannot start): the Repository fails saying so, and nothing
/// is written into the root's keyring.
#[test]
fn a_pacman_key_init_that_makes_no_master_key_fails_saying_why() {
    use std::os::unix::fs::PermissionsExt;
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let key = packages::signing_key(&tmp.path().join("ours"), "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    // A pacman-key whose --init fails as gpg's key generation does
    // without an agent, exit status 0 included.
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pacman-key");
    fs::write(
        &fake,
        "#!/bin/sh\nfor a; do\n  if [ \"$a\" = --init ]; then\n    \
         echo 'gpg: agent_genkey failed: No agent running' >&2\n    exit 0\n  fi\ndone\n\
         PATH=${PATH#*:} exec pacman-key \"$@\"\n",
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = crate::common::datum_process()
        .env("PATH", path)
        .args(["apply", "--root"])
        .arg(&root)
        .arg("--fleet")
        .arg(&dir)
        .output()
        .unwrap();
    let run = crate::common::Run::from(out);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("made no master key") && run.stdout.contains("No agent running"),
        "{}",
        run.stdout
    );
    assert!(!root.join("etc/pacman.d/gnupg/pubring.gpg").exists());
}

/// A keyring that lost its trust database (pacman-key works only on one
/// with it) is made whole again, its master key kept.
#[test]
fn a_pacman_keyring_without_its_trust_database_is_made_whole() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let theirs = tmp.path().join("theirs");
    operator_keyring(&root, &packages::signing_key(&theirs, "op@datum.invalid"));
    let gnupg = root.join("etc/pacman.d/gnupg");
    let secret = fs::read_dir(gnupg.join("private-keys-v1.d"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect::<Vec<_>>();
    fs::remove_file(gnupg.join("trustdb.gpg")).unwrap();
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    let now = fs::read_dir(gnupg.join("private-keys-v1.d"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect::<Vec<_>>();
    assert_eq!(now, secret, "the master key changed");
}

/// A record left for a Repository whose file is gone, listing a key
/// another Repository shares: the Repository absent drops it from the
/// record (the key stays for the other), so it keeps the key no longer.
#[test]
fn a_shared_pacman_key_left_in_a_record_is_dropped_from_it() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &format!("{}{}", named("alpha", &key), named("zeta", &key)),
    );
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    fs::remove_file(root.join("etc/pacman.d/datum-zeta.conf")).unwrap();
    fleet(
        &dir,
        &format!(
            "{}  Repository[zeta]:\n    ensure: absent\n",
            named("alpha", &key)
        ),
    );
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(!root.join("etc/pacman.d/datum-zeta.keys").exists());
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    fleet(&dir, "  Repository[alpha]:\n    ensure: absent\n");
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, &fpr), None);
}

/// The root's keyring's `gpg-agent` named as a host program in its
/// `gpg.conf`: the host never runs it.
#[test]
fn a_roots_agent_program_is_not_run_by_the_host() {
    use std::os::unix::fs::PermissionsExt;
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let theirs = tmp.path().join("theirs");
    operator_keyring(&root, &packages::signing_key(&theirs, "op@datum.invalid"));
    let ran = tmp.path().join("ran");
    let program = tmp.path().join("agent.sh");
    fs::write(&program, format!("#!/bin/sh\ntouch {}\n", ran.display())).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    let conf = root.join("etc/pacman.d/gnupg/gpg.conf");
    let mut text = fs::read_to_string(&conf).unwrap();
    text.push_str(&format!("agent-program {}\n", program.display()));
    fs::write(&conf, &text).unwrap();
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let run = apply(&dir, &root, &[]);
    assert!(!ran.exists(), "the host ran {}", program.display());
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
}
