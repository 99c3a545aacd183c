//! Encrypting to several recipients, each of them decrypting, and damaged
//! ciphertext refused.

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use datum_secrets::{DecryptError, Identity, PublicKey, decrypt, encrypt, read_identities};

use crate::support::{age_key_file, ssh_keygen};

const BEGIN: &str = "-----BEGIN AGE ENCRYPTED FILE-----";
const END: &str = "-----END AGE ENCRYPTED FILE-----";

/// The binary age file inside armored text.
fn dearmor(armored: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(armored).unwrap();
    let body: String = text
        .lines()
        .filter(|line| *line != BEGIN && *line != END)
        .collect();
    BASE64_STANDARD.decode(body).unwrap()
}

/// The `-> TYPE ARGS` lines of an age header, in order, without the random
/// "grease" stanza age adds to keep parsers tolerant.
fn stanzas(armored: &[u8]) -> Vec<String> {
    let binary = dearmor(armored);
    let header_end = binary.windows(4).position(|w| w == b"--- ").unwrap();
    String::from_utf8(binary[..header_end].to_vec())
        .unwrap()
        .lines()
        .filter(|line| {
            ["-> X25519 ", "-> ssh-ed25519 ", "-> ssh-rsa "]
                .iter()
                .any(|t| line.starts_with(t))
        })
        .map(str::to_owned)
        .collect()
}

fn corrupt(result: Result<datum_secrets::Plaintext, DecryptError>, what: &str) {
    match result {
        Err(DecryptError::Corrupt { .. }) => {}
        other => panic!("{what}: expected Corrupt, got {other:?}"),
    }
}

#[test]
fn every_recipient_decrypts_and_nobody_else() {
    let dir = tempfile::tempdir().unwrap();
    let (web, db) = (
        ssh_keygen("ed25519", "", &[]),
        ssh_keygen("ed25519", "", &[]),
    );
    let legacy = ssh_keygen("rsa", "", &["-b", "2048"]);
    let (admin_file, admin) = age_key_file(dir.path(), "admin.txt");
    let recipients = [web.public(), db.public(), legacy.public(), admin];
    let secret = b"postgres://app:s3cr3t@db-01/app\n";

    let sealed = encrypt(secret, &recipients).unwrap();
    assert_eq!(stanzas(&sealed).len(), 4);
    let each = [
        web.identities(),
        db.identities(),
        legacy.identities(),
        read_identities(&admin_file, None).unwrap(),
    ];
    for identities in &each {
        let opened = decrypt(&sealed, identities).unwrap();
        assert_eq!(opened.as_bytes(), secret, "{:?}", identities[0]);
    }

    let outsiders = [
        ssh_keygen("ed25519", "", &[]).identities(),
        vec![Identity::generate_age()],
    ];
    for identities in &outsiders {
        assert!(
            matches!(
                decrypt(&sealed, identities),
                Err(DecryptError::NotRecipient { .. })
            ),
            "{:?} decrypted a secret not meant for it",
            identities[0]
        );
    }
}

#[test]
fn the_first_identity_that_fits_is_used() {
    let (outsider, host) = (Identity::generate_age(), ssh_keygen("ed25519", "", &[]));
    let sealed = encrypt(b"x", &[host.public()]).unwrap();
    let mut identities = vec![outsider];
    identities.extend(host.identities());
    assert_eq!(decrypt(&sealed, &identities).unwrap().as_bytes(), b"x");
}

#[test]
fn the_not_recipient_error_names_every_key_tried() {
    let (a, b) = (Identity::generate_age(), Identity::generate_age());
    let sealed = encrypt(b"x", &[Identity::generate_age().public_key().clone()]).unwrap();
    let e = decrypt(&sealed, &[a, b]).unwrap_err();
    let DecryptError::NotRecipient { tried } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(tried.len(), 2);
    for fingerprint in tried {
        assert!(e.to_string().contains(fingerprint.as_str()), "{e}");
    }
}

#[test]
fn recipients_are_sorted_and_deduplicated() {
    let keys: Vec<PublicKey> = (0..3)
        .map(|_| ssh_keygen("ed25519", "", &[]).public())
        .collect();
    let forward = encrypt(b"x", &keys).unwrap();
    let mut shuffled = vec![
        keys[2].clone(),
        keys[0].clone(),
        keys[1].clone(),
        keys[0].clone(),
    ];
    let backward = encrypt(b"x", &shuffled).unwrap();
    // An SSH stanza starts with a tag of its key, so the tags show the order
    // (the ephemeral share after it differs every time).
    let tags = |armored: &[u8]| -> Vec<String> {
        stanzas(armored)
            .iter()
            .map(|line| line.split(' ').take(3).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(tags(&forward), tags(&backward));
    assert_eq!(tags(&backward).len(), 3);
    shuffled.sort();
    assert_eq!(tags(&encrypt(b"x", &shuffled).unwrap()), tags(&forward));
}

#[test]
fn empty_and_multi_chunk_plaintexts_round_trip() {
    let key = Identity::generate_age();
    let recipients = [key.public_key().clone()];
    // Age encrypts in 64 KiB chunks; this crosses three of them.
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    for plaintext in [&b""[..], &big[..]] {
        let sealed = encrypt(plaintext, &recipients).unwrap();
        let opened = decrypt(&sealed, std::slice::from_ref(&key)).unwrap();
        assert_eq!(opened.as_bytes(), plaintext);
    }
}

#[test]
fn binary_age_files_are_read_too() {
    let key = Identity::generate_age();
    let sealed = encrypt(b"binary", &[key.public_key().clone()]).unwrap();
    let binary = dearmor(&sealed);
    assert!(binary.starts_with(b"age-encryption.org/v1\n"));
    assert_eq!(decrypt(&binary, &[key]).unwrap().as_bytes(), b"binary");
}

#[test]
fn a_changed_payload_is_refused() {
    let key = Identity::generate_age();
    let sealed = encrypt(&[7u8; 4000], &[key.public_key().clone()]).unwrap();
    let mut lines: Vec<String> = std::str::from_utf8(&sealed)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // A full line near the end is payload; swapping one base64 character
    // for another keeps the armor valid and changes the bytes.
    let near_end = lines.len() - 4;
    let line = &mut lines[near_end];
    let swapped = if line.starts_with('A') { "B" } else { "A" };
    line.replace_range(0..1, swapped);
    let tampered = lines.join("\n") + "\n";
    corrupt(
        decrypt(tampered.as_bytes(), std::slice::from_ref(&key)),
        "payload",
    );
}

#[test]
fn a_changed_header_mac_is_refused() {
    let key = Identity::generate_age();
    let sealed = encrypt(b"header", &[key.public_key().clone()]).unwrap();
    let mut binary = dearmor(&sealed);
    let mac = binary.windows(4).position(|w| w == b"--- ").unwrap() + 4;
    binary[mac] = if binary[mac] == b'A' { b'B' } else { b'A' };
    corrupt(decrypt(&binary, &[key]), "header MAC");
}

#[test]
fn truncated_ciphertext_is_refused() {
    let key = Identity::generate_age();
    let sealed = encrypt(&[1u8; 3000], &[key.public_key().clone()]).unwrap();
    let keys = std::slice::from_ref(&key);

    // Cut mid-armor, without the END line.
    corrupt(
        decrypt(&sealed[..sealed.len() / 2], keys),
        "armor cut in half",
    );

    // Lines dropped but the armor closed again.
    let text = std::str::from_utf8(&sealed).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut shortened = lines[..lines.len() - 3].join("\n");
    shortened.push_str(&format!("\n{END}\n"));
    corrupt(decrypt(shortened.as_bytes(), keys), "armor closed early");

    // The binary file cut at every length past the header: never a
    // plaintext, always Corrupt.
    let binary = dearmor(&sealed);
    for cut in [1, 16, 17, 100, binary.len() / 2] {
        corrupt(
            decrypt(&binary[..binary.len() - cut], keys),
            &format!("cut {cut}"),
        );
    }
    // And not an age file at all.
    corrupt(decrypt(b"hello", keys), "not age");
    corrupt(decrypt(b"", keys), "empty");
}

#[test]
fn a_passphrase_encrypted_file_is_named_as_such() {
    let encryptor = age::Encryptor::with_user_passphrase("pass".to_owned().into());
    let mut sealed = Vec::new();
    let mut writer = encryptor.wrap_output(&mut sealed).unwrap();
    std::io::Write::write_all(&mut writer, b"x").unwrap();
    writer.finish().unwrap();
    let e = decrypt(&sealed, &[Identity::generate_age()]).unwrap_err();
    assert!(matches!(e, DecryptError::Passphrase), "{e:?}");
}

#[test]
fn a_decrypted_secret_is_not_printed_by_debug() {
    let key = Identity::generate_age();
    let sealed = encrypt(b"do-not-print-me", &[key.public_key().clone()]).unwrap();
    let opened = decrypt(&sealed, &[key]).unwrap();
    let shown = format!("{opened:?} {:?}", Ok::<_, DecryptError>(&opened));
    assert!(!shown.contains("do-not-print-me"), "{shown}");
}
