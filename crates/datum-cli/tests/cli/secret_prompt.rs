//! `datum secret edit` and `rekey` with an admin key protected by a
//! passphrase (`ssh-keygen -t ed25519 -N`): the prompt on the controlling
//! terminal with echo off, the terminal restored, three tries, Ctrl-C; the
//! error without a terminal; and `apply`, which never asks.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Run;
use crate::pty::Session;
use crate::secret_fleet::{Fleet, PLAINTEXT};

const PASSPHRASE: &str = "correct horse battery";

/// The fleet with a second admin, alice, whose key has [`PASSPHRASE`], and
/// the secret encrypted to both; alice's private key.
fn protected() -> (Fleet, PathBuf) {
    let f = Fleet::new();
    let alice = f.add_admin("alice", PASSPHRASE);
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    (f, alice)
}

/// `datum secret ARGS --identity KEY --fleet FLEET` on a terminal, with an
/// editor that appends `-typed`.
fn on_terminal(f: &Fleet, args: &[&str], key: &Path) -> Session {
    let editor = f.editor("append.sh", "printf '%s' '-typed' >> \"$1\"");
    let fleet = f.fleet();
    let mut all = vec!["secret"];
    all.extend(args);
    all.extend([
        "--identity",
        key.to_str().unwrap(),
        "--fleet",
        fleet.to_str().unwrap(),
    ]);
    Session::start(&all, &[("EDITOR", &editor)])
}

fn prompt(key: &Path) -> String {
    format!("Enter passphrase for {}: ", key.display())
}

#[test]
fn edit_asks_for_the_passphrase_on_the_terminal_without_echo() {
    let (f, alice) = protected();
    let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
    s.expect(&prompt(&alice));
    assert!(!s.echoes(), "echo is off while the passphrase is typed");
    s.send(&format!("{PASSPHRASE}\n"));
    let end = s.finish();
    assert_eq!(end.run.code, 0, "{}", end.run.stderr);
    assert!(end.echoes, "the terminal echoes again");
    // The terminal turns the newline ending the prompt into CR LF.
    assert_eq!(end.terminal, format!("{}\r\n", prompt(&alice)));
    assert!(!end.run.stderr.contains(PASSPHRASE), "{}", end.run.stderr);
    assert_eq!(f.decrypted(), format!("{PLAINTEXT}-typed"));
}

#[test]
fn a_wrong_passphrase_is_asked_again_up_to_three_times() {
    let (f, alice) = protected();
    // rekey: wrong once, then right.
    f.set_matcher("role: [web, db]");
    let mut s = on_terminal(&f, &["rekey"], &alice);
    s.expect(&prompt(&alice));
    s.send("not it\n");
    s.expect("Wrong passphrase, try again.\r\n");
    s.expect(&prompt(&alice));
    assert!(!s.echoes());
    s.send(&format!("{PASSPHRASE}\n"));
    let end = s.finish();
    assert_eq!(end.run.code, 0, "{}", end.run.stderr);
    assert!(end.echoes);
    assert!(f.recipients().contains("host db-01 "), "{}", f.recipients());
    assert!(!end.terminal.contains("not it"), "{}", end.terminal);
    // edit: three wrong ones end it, naming the key and how to check.
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
    for attempt in 1..=3 {
        s.expect(&prompt(&alice));
        assert!(!s.echoes());
        s.send(&format!("wrong {attempt}\n"));
    }
    let end = s.finish();
    assert_eq!(end.run.code, 1, "{}", end.run.stderr);
    assert!(end.echoes);
    assert_eq!(end.terminal.matches("Enter passphrase").count(), 3);
    assert_eq!(end.terminal.matches("Wrong passphrase").count(), 2);
    assert!(
        end.run.stderr.contains(&format!(
            "error: identity {} does not open with the passphrase given (3 tries)\n",
            alice.display()
        )),
        "{}",
        end.run.stderr
    );
    assert!(
        end.run
            .stderr
            .contains(&format!("`ssh-keygen -y -f {}`", alice.display())),
        "{}",
        end.run.stderr
    );
    assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
}

#[test]
fn ctrl_c_at_the_prompt_restores_the_terminal_and_interrupts() {
    let (f, alice) = protected();
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
    s.expect(&prompt(&alice));
    assert!(!s.echoes());
    s.send("half typ\x03");
    let end = s.finish();
    assert_eq!(end.signal, Some(2), "ended by SIGINT: {}", end.run.stderr);
    assert!(end.echoes, "the terminal echoes again");
    assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
    // The line is edited as on the terminal: `xx` killed (Ctrl-U), two
    // words erased (Ctrl-W), a character erased (DEL); Ctrl-Z, which cannot
    // stop a process of an orphaned group like this one, asks again and
    // keeps what was typed.
    let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
    s.expect(&prompt(&alice));
    let (head, tail) = PASSPHRASE.split_at(8);
    s.send(&format!("xx\x15ab cd \x17\x17{head}\x1a"));
    s.expect(&prompt(&alice));
    assert!(!s.echoes());
    s.send(&format!("{tail}y\x7f\n"));
    let end = s.finish();
    assert_eq!(end.run.code, 0, "{}", end.run.stderr);
    assert_eq!(f.decrypted(), format!("{PLAINTEXT}-typed"));
}

#[test]
fn a_hang_up_or_termination_at_the_prompt_restores_the_terminal_first() {
    let (f, alice) = protected();
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    for (signal, number) in [("TERM", 15), ("HUP", 1)] {
        let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
        s.expect(&prompt(&alice));
        s.send("half typ");
        assert!(!s.echoes());
        s.kill(signal);
        let end = s.finish();
        assert_eq!(end.signal, Some(number), "SIG{signal}: {}", end.run.stderr);
        assert!(end.echoes, "SIG{signal}: the terminal echoes again");
        assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
    }
}

#[test]
fn an_empty_line_gives_up_without_another_try() {
    let (f, alice) = protected();
    for give_up in ["\n", "\x04"] {
        let mut s = on_terminal(&f, &["edit", "secrets/db.age"], &alice);
        s.expect(&prompt(&alice));
        s.send(give_up);
        let end = s.finish();
        assert_eq!(end.run.code, 1, "{}", end.run.stderr);
        assert!(end.echoes);
        assert_eq!(end.terminal.matches("Enter passphrase").count(), 1);
        assert!(
            end.run.stderr.contains(&format!(
                "error: no passphrase was given for {}\n",
                alice.display()
            )),
            "{}",
            end.run.stderr
        );
    }
}

#[test]
fn without_a_terminal_a_protected_key_is_refused_naming_the_ways_out() {
    let (f, alice) = protected();
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    // A new session has no controlling terminal; the passphrase on stdin is
    // not read: a passphrase comes from the terminal only.
    let editor = f.editor("append.sh", "printf '%s' '-typed' >> \"$1\"");
    let out = assert_cmd::Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_datum"))
        .args(["secret", "edit", "secrets/db.age", "--identity"])
        .arg(&alice)
        .arg("--fleet")
        .arg(f.fleet())
        .env("EDITOR", &editor)
        .env("NO_COLOR", "1")
        .write_stdin(format!("{PASSPHRASE}\n"))
        .output()
        .unwrap();
    let run = Run::from(out);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "error: identity {} is protected by a passphrase, and there is no terminal to ask for it (",
            alice.display()
        )),
        "{}",
        run.stderr
    );
    for way_out in [
        "run this from a terminal",
        "an age identity file",
        "a copy of the key without a passphrase on a memory file system",
        r#"umask 077; k=$(mktemp -p "${XDG_RUNTIME_DIR:-/dev/shm}") && cat "#,
        r#" > "$k" && ssh-keygen -p -N '' -f "$k""#,
        "an SSH agent is not used",
    ] {
        assert!(run.stderr.contains(way_out), "{way_out}: {}", run.stderr);
    }
    assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
}

#[test]
fn apply_never_asks_for_the_passphrase_of_a_host_key() {
    let (f, _) = protected();
    // web-01's host key, protected by a passphrase.
    let key = f.key("web-01-protected");
    fs::copy(f.key("web-01"), &key).unwrap();
    let out = Command::new("ssh-keygen")
        .args(["-q", "-p", "-P", "", "-N", PASSPHRASE, "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let root = f.machine("web-01", "web-01-protected");
    let fleet = f.fleet();
    let s = Session::start(
        &[
            "apply",
            "--root",
            root.path().to_str().unwrap(),
            "--fleet",
            fleet.to_str().unwrap(),
        ],
        &[],
    );
    let end = s.finish();
    assert_eq!(end.run.code, 4, "{}{}", end.run.stdout, end.run.stderr);
    assert_eq!(end.terminal, "", "nothing is asked on the terminal");
    assert!(
        end.run.stdout.contains(
            "error: cannot decrypt secret secrets/db.age: identity /etc/ssh/ssh_host_ed25519_key is protected by a passphrase, and a host never asks for one: give a host key without a passphrase"
        ),
        "{}",
        end.run.stdout
    );
    assert!(!root.path().join("etc/app/db-password").exists());
}
