//! A second opinion from the reference implementation: the Go `age` CLI
//! (Debian's `age` package) decrypts what Datum encrypts, and Datum
//! decrypts what it encrypts. Skipped, saying so, where the CLI is not
//! installed; CI installs it and fails these tests without it
//! (`datum_testkit::tools`).

use std::io::Write as _;
use std::process::{Command, Stdio};

use datum_secrets::{decrypt, encrypt, read_identities};
use datum_testkit::tools;

use crate::support::{age_key_file, run, ssh_keygen};

fn age_cli(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("age")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the `age` command (apt-get install age)");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "age {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn the_age_cli_decrypts_what_datum_encrypts() {
    if !tools::installed(&["age"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = ssh_keygen("ed25519", "", &[]);
    let (admin_file, admin) = age_key_file(dir.path(), "admin.txt");
    let sealed = encrypt(b"interop", &[host.public(), admin]).unwrap();
    for identity in [host.private.to_str().unwrap(), admin_file.to_str().unwrap()] {
        assert_eq!(age_cli(&["-d", "-i", identity], &sealed), b"interop");
    }
}

#[test]
fn datum_decrypts_what_the_age_cli_encrypts() {
    if !tools::installed(&["age", "age-keygen"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = ssh_keygen("ed25519", "", &[]);
    let admin_file = dir.path().join("admin.txt");
    run(Command::new("age-keygen").arg("-o").arg(&admin_file));
    let admin = run(Command::new("age-keygen").arg("-y").arg(&admin_file));
    let sealed = age_cli(
        &["-a", "-r", host.public_text.trim(), "-r", admin.trim()],
        b"from go",
    );
    assert_eq!(
        decrypt(&sealed, &host.identities()).unwrap().as_bytes(),
        b"from go"
    );
    let admin_identities = read_identities(&admin_file, None).unwrap();
    assert_eq!(admin_identities[0].public_key().as_str(), admin.trim());
    assert_eq!(
        decrypt(&sealed, &admin_identities).unwrap().as_bytes(),
        b"from go"
    );
}
