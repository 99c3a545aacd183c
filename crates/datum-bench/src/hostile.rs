//! Fleets shaped to make Datum slow or large, one per directory: each must
//! be checked in under 2 s and 200 MiB (`datum check`, release build).
//!
//! - `long-label`: a 400 KB fleet whose one host carries a 200,000-character
//!   label value and whose layer asks for one a character longer, so the
//!   "did you mean" search compares the two (quadratic, unbounded: 85 s).
//! - `overlap`: 1,500 layers of one precedence setting one field
//!   differently, each for its own label, so every pair could meet on a
//!   host (one warning per pair: 1.1 million warnings, 495 MB of text).
//! - `bad-labels`: a host with 100,000 label keys that are not label keys
//!   (one error each: 20 MB of text).
//! - `payload`: a 40 MB YAML payload no `source` names beside a small fleet
//!   (it must not count against the document size limit, nor be parsed).
//! - `alt-render`: one layer whose matcher lists 100,000 distinct values
//!   for one key (`datum render h1`).
//! - `alt-suggest`: 2,000 hosts each carrying its own value, and a layer
//!   listing 20,000 values no host carries (`check`'s "did you mean").
//! - `alt-overlap`: 2,000 layers of one precedence, each listing 500
//!   carried values and setting one field differently (latent overlap).
//! - `exec-env`: an Exec whose `environment` has 200,000 entries.
//! - `tpl-format`, `tpl-join`, `tpl-replace`: a template asking for a
//!   gigabyte through `format`'s width, `join` and chained `replace`.
//! - `tpl-parallel`: 8 hosts each rendering a template that builds
//!   100 MB strings (`check` renders them in parallel).
//! - `age-stanzas` (with `age-stanzas/admin.key`): a secret whose header
//!   holds 40,000 stanzas (`datum secret rekey --identity admin.key`).
//! - `age-scrypt` (with `age-scrypt/admin.age`): the admin's identity file
//!   sealed with the passphrase `hostile` at scrypt work factor 2^22 (4 GiB;
//!   making it takes that too), and a secret it opens (`datum secret rekey
//!   --identity admin.age`, the passphrase typed on a terminal).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// The shapes, by directory name.
pub const SHAPES: [&str; 14] = [
    "long-label",
    "overlap",
    "bad-labels",
    "payload",
    "alt-render",
    "alt-suggest",
    "alt-overlap",
    "exec-env",
    "tpl-format",
    "tpl-join",
    "tpl-replace",
    "tpl-parallel",
    "age-stanzas",
    "age-scrypt",
];

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: hostile\n";

/// Writes one shape into `dir` (created).
pub fn generate(shape: &str, dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("datum.yaml"), FLEET)?;
    match shape {
        "long-label" => long_label(dir),
        "overlap" => overlap(dir),
        "bad-labels" => bad_labels(dir),
        "payload" => payload(dir),
        "alt-render" => alt_render(dir),
        "alt-suggest" => alt_suggest(dir),
        "alt-overlap" => alt_overlap(dir),
        "exec-env" => exec_env(dir),
        "tpl-format" => template(dir, 1, "{{ '%01000000000d'|format(1) }}\n"),
        "tpl-join" => template(
            dir,
            1,
            "{% set l = range(100000)|list %}{{ l|join('x' * 20000) }}\n",
        ),
        "tpl-replace" => template(
            dir,
            1,
            "{% set s = 'ab' * 1000 %}{{ s|replace('a', s)|replace('a', s)|replace('b', 'ccc')|length }}\n",
        ),
        "tpl-parallel" => template(
            dir,
            8,
            "{% set s = 'x' * 90000000 %}{{ (s ~ s ~ s)|length }}\n",
        ),
        "age-stanzas" => age_stanzas(dir),
        "age-scrypt" => age_scrypt(dir),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no shape `{other}`; the shapes are {}", SHAPES.join(", ")),
        )),
    }
}

fn long_label(dir: &Path) -> io::Result<()> {
    let value = "a".repeat(200_000);
    let mut hosts =
        format!("datum: v1alpha1\ntype: Host\nname: long\nlabels:\n  role: web\n  note: {value}\n");
    // Enough ordinary hosts to make the fleet 400 KB.
    for i in 0..2_000 {
        write!(
            hosts,
            "---\ndatum: v1alpha1\ntype: Host\nname: web-{i:04}\nlabels:\n  role: web\n  note: n{i}\n"
        )
        .unwrap();
    }
    fs::write(dir.join("hosts.yaml"), hosts)?;
    fs::write(
        dir.join("layer.yaml"),
        format!(
            "datum: v1alpha1\ntype: Layer\nname: typo\nprecedence: 10\nmatch:\n  labels:\n    note: {value}b\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: hi\n"
        ),
    )
}

fn overlap(dir: &Path) -> io::Result<()> {
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n  role: db\n",
    )?;
    fs::create_dir_all(dir.join("layers"))?;
    for i in 0..1_500 {
        fs::write(
            dir.join(format!("layers/{i:04}.yaml")),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l{i}\nprecedence: 30\nmatch:\n  labels:\n    tier{i}: x\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: \"{i}\"\n"
            ),
        )?;
    }
    Ok(())
}

fn bad_labels(dir: &Path) -> io::Result<()> {
    let mut text = String::from("datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n");
    for i in 0..100_000 {
        writeln!(text, "  \"bad key {i}\": x").unwrap();
    }
    fs::write(dir.join("hosts.yaml"), text)
}

fn payload(dir: &Path) -> io::Result<()> {
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n  role: web\n",
    )?;
    fs::create_dir_all(dir.join("files"))?;
    let mut big = String::with_capacity(41 << 20);
    let mut i = 0;
    while big.len() < 40 << 20 {
        writeln!(big, "key{i}: {}", "v".repeat(100)).unwrap();
        i += 1;
    }
    fs::write(dir.join("files/big.yaml"), big)
}

fn one_host(dir: &Path, labels: &str) -> io::Result<()> {
    fs::write(
        dir.join("hosts.yaml"),
        format!("datum: v1alpha1\ntype: Host\nname: h1\nlabels: {labels}\n"),
    )
}

fn alt_render(dir: &Path) -> io::Result<()> {
    one_host(dir, "{role: v5}")?;
    let mut text = String::from(
        "datum: v1alpha1\ntype: Layer\nname: wide\nprecedence: 10\nmatch:\n  labels:\n    role:\n",
    );
    for i in 0..100_000 {
        writeln!(text, "      - v{i}").unwrap();
    }
    text.push_str("resources:\n  File[motd]:\n    path: /etc/motd\n    content: hi\n");
    fs::write(dir.join("layer.yaml"), text)
}

fn alt_suggest(dir: &Path) -> io::Result<()> {
    let mut hosts = String::new();
    for i in 0..2_000 {
        write!(
            hosts,
            "---\ndatum: v1alpha1\ntype: Host\nname: h{i}\nlabels:\n  role: role-{i}\n"
        )
        .unwrap();
    }
    fs::write(dir.join("hosts.yaml"), hosts)?;
    let mut text = String::from(
        "datum: v1alpha1\ntype: Layer\nname: typos\nprecedence: 10\nmatch:\n  labels:\n    role:\n",
    );
    for i in 0..20_000 {
        writeln!(text, "      - rolf-{i}").unwrap();
    }
    text.push_str("resources:\n  File[motd]:\n    path: /etc/motd\n    content: hi\n");
    fs::write(dir.join("layer.yaml"), text)
}

fn alt_overlap(dir: &Path) -> io::Result<()> {
    let mut hosts = String::new();
    for i in 0..500 {
        write!(
            hosts,
            "---\ndatum: v1alpha1\ntype: Host\nname: h{i}\nlabels:\n  role: r{i}\n"
        )
        .unwrap();
    }
    fs::write(dir.join("hosts.yaml"), hosts)?;
    fs::create_dir_all(dir.join("layers"))?;
    // Each layer lists the 500 carried values (rotated), so every pair
    // could meet on a host.
    for l in 0..2_000 {
        let values: Vec<String> = (0..500).map(|i| format!("r{}", (i + l) % 500)).collect();
        fs::write(
            dir.join(format!("layers/{l:04}.yaml")),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l{l}\nprecedence: 30\nmatch:\n  labels:\n    role: [{}]\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: \"{l}\"\n",
                values.join(", ")
            ),
        )?;
    }
    Ok(())
}

fn exec_env(dir: &Path) -> io::Result<()> {
    one_host(dir, "{role: web}")?;
    let mut text = String::from(
        "datum: v1alpha1\ntype: Layer\nname: env\nprecedence: 10\nmatch: {}\nresources:\n  Exec[run]:\n    command: [/bin/true]\n    environment:\n",
    );
    for i in 0..200_000 {
        writeln!(text, "      - V{i}=x").unwrap();
    }
    fs::write(dir.join("layer.yaml"), text)
}

/// `hosts` hosts, each rendering `body` as `templates/t.j2`.
fn template(dir: &Path, hosts: usize, body: &str) -> io::Result<()> {
    let mut text = String::new();
    for i in 0..hosts {
        write!(
            text,
            "---\ndatum: v1alpha1\ntype: Host\nname: h{i}\nlabels:\n  role: web\n"
        )
        .unwrap();
    }
    fs::write(dir.join("hosts.yaml"), text)?;
    fs::create_dir_all(dir.join("templates"))?;
    fs::write(dir.join("templates/t.j2"), body)?;
    fs::write(
        dir.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: t\nprecedence: 10\nmatch: {}\nresources:\n  File[t]:\n    path: /etc/t\n    template: templates/t.j2\n",
    )
}

/// A secret for one host whose header repeats a stanza 40,000 times, and
/// the admin key to run `datum secret rekey --identity admin.key` with
/// (the `.recipients` file is missing, so it decrypts).
fn age_stanzas(dir: &Path) -> io::Result<()> {
    let admin = datum_secrets::Identity::generate_age();
    let key = admin.public_key().as_str().to_owned();
    fs::write(
        dir.join("datum.yaml"),
        format!("{FLEET}admins: [\"{key}\"]\n"),
    )?;
    let file = admin
        .to_age_identity_file()
        .ok_or_else(|| io::Error::other("no age identity text"))?;
    fs::write(dir.join("admin.key"), file.as_bytes())?;
    fs::write(
        dir.join("hosts.yaml"),
        format!("datum: v1alpha1\ntype: Host\nname: h1\nkeys: [\"{key}\"]\n"),
    )?;
    fs::write(
        dir.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: s\nprecedence: 10\nmatch: {}\nresources:\n  File[s]:\n    path: /etc/s\n    secret: secrets/s.age\n",
    )?;
    let mut age = b"age-encryption.org/v1\n".to_vec();
    for _ in 0..40_000 {
        age.extend_from_slice(b"-> x y\nAAAA\n");
    }
    age.extend_from_slice(b"--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
    age.extend_from_slice(&[0u8; 64]);
    fs::create_dir_all(dir.join("secrets"))?;
    fs::write(dir.join("secrets/s.age"), age)
}

/// The passphrase of `age-scrypt/admin.age`.
pub const SCRYPT_PASSPHRASE: &str = "hostile";

/// The work factor `age-scrypt/admin.age` asks for: the most Datum does.
const SCRYPT_LOG_N: u8 = 22;

fn age_scrypt(dir: &Path) -> io::Result<()> {
    use std::io::Write as _;
    let admin = datum_secrets::Identity::generate_age();
    let key = admin.public_key().as_str().to_owned();
    fs::write(
        dir.join("datum.yaml"),
        format!("{FLEET}admins: [\"{key}\"]\n"),
    )?;
    fs::write(
        dir.join("hosts.yaml"),
        format!("datum: v1alpha1\ntype: Host\nname: h1\nkeys: [\"{key}\"]\n"),
    )?;
    fs::write(
        dir.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: s\nprecedence: 10\nmatch: {}\nresources:\n  File[s]:\n    path: /etc/s\n    secret: secrets/s.age\n",
    )?;
    let seal = |recipient: &dyn age::Recipient, plain: &[u8]| -> io::Result<Vec<u8>> {
        let encryptor = age::Encryptor::with_recipients(std::iter::once(recipient))
            .map_err(io::Error::other)?;
        let mut out = Vec::new();
        let mut writer = encryptor.wrap_output(&mut out)?;
        writer.write_all(plain)?;
        writer.finish()?;
        Ok(out)
    };
    let file = admin
        .to_age_identity_file()
        .ok_or_else(|| io::Error::other("no age identity text"))?;
    let mut scrypt = age::scrypt::Recipient::new(SCRYPT_PASSPHRASE.to_owned().into());
    scrypt.set_work_factor(SCRYPT_LOG_N);
    fs::write(dir.join("admin.age"), seal(&scrypt, file.as_bytes())?)?;
    // The secret, to the admin (who is also the host): rekeying it keeps
    // its recipients.
    let to: age::x25519::Recipient = key.parse().map_err(io::Error::other)?;
    fs::create_dir_all(dir.join("secrets"))?;
    fs::write(dir.join("secrets/s.age"), seal(&to, b"hostile secret\n")?)
}
