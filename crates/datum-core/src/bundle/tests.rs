//! Bundles encoded and decoded: round trips, and every refusal of the decoder.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::*;
use crate::hint::Hinted;

const SIG: &str = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn sha(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A YAML manifest for `host` with one File per `(path, content)`, as
/// `render` writes it, plus a resource without a source.
fn manifest(host: &str, payloads: &[(&str, &[u8])]) -> String {
    let mut m = format!(
        "datum: v1alpha1\ntype: Manifest\nhost: {host}\nlabels:\n  datum/host: {host}\nlayers:\n- base\nresources:\n"
    );
    for (i, (path, content)) in payloads.iter().enumerate() {
        m += &format!(
            "  File[f{i}]:\n    path: /etc/f{i}\n    mode: \"0644\"\n    source: {path}\n    source_sha256: {}\n    requires:\n    - Package[p]\n",
            sha(content)
        );
    }
    m + "  Package[p]:\n    ensure: installed\n"
}

struct Owned {
    manifest: String,
    payloads: Vec<(&'static str, &'static [u8])>,
}

fn example() -> Owned {
    let payloads: Vec<(&str, &[u8])> = vec![
        ("files/app.conf", b"listen 80;\n"),
        ("files/motd", b"hello\n"),
    ];
    Owned {
        manifest: manifest("web-001", &payloads),
        payloads,
    }
}

impl Owned {
    fn bundle(&self) -> Bundle<'_> {
        Bundle {
            header: Header {
                fleet: "example",
                host: "web-001",
                serial: Some(7),
                expires: Some(1_800_000_000),
                not_before: Some(1_700_003_600),
                commit: Some(Commit {
                    id: COMMIT,
                    time: 1_700_000_000,
                }),
            },
            format: ManifestFormat::Yaml,
            manifest: self.manifest.as_bytes(),
            payloads: self.payloads.iter().copied().collect(),
        }
    }
}

fn sealed(b: &Bundle<'_>, sig: Option<&str>) -> Vec<u8> {
    seal(b.encode_body().unwrap(), sig).unwrap()
}

/// A bundle written field by field, without any of the encoder's checks,
/// to build what the encoder refuses to.
struct Raw(Vec<u8>);

impl Raw {
    fn header(fleet: &str, host: &str) -> Raw {
        let mut r = Raw(MAGIC.to_vec());
        r.u32(VERSION);
        r.str(fleet);
        r.str(host);
        // No serial, no expiry, no wait: the next byte is the commit flag.
        r.byte(0).byte(0).byte(0);
        r
    }
    fn u32(&mut self, v: u32) -> &mut Raw {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Raw {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn byte(&mut self, v: u8) -> &mut Raw {
        self.0.push(v);
        self
    }
    fn str(&mut self, s: &str) -> &mut Raw {
        self.u32(s.len() as u32);
        self.0.extend(s.as_bytes());
        self
    }
    fn blob(&mut self, b: &[u8]) -> &mut Raw {
        self.u64(b.len() as u64);
        self.0.extend(b);
        self
    }
    fn payload(&mut self, path: &str, digest: &[u8], content: &[u8]) -> &mut Raw {
        self.str(path);
        self.0.extend(digest);
        self.blob(content)
    }
}

/// The manifest and payloads of [`example`], laid out by hand, with a
/// different second path: for order and set problems.
fn raw_with(paths: [&str; 2], digests: [[u8; 32]; 2], contents: [&[u8]; 2]) -> Vec<u8> {
    let m = manifest(
        "web-001",
        &[(paths[0], contents[0]), (paths[1], contents[1])],
    );
    let mut r = Raw::header("example", "web-001");
    r.byte(0).byte(0).byte(1).blob(m.as_bytes()).u32(2);
    for i in 0..2 {
        r.payload(paths[i], &digests[i], contents[i]);
    }
    r.byte(0);
    r.0
}

fn digest(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

#[test]
fn the_layout_is_the_documented_one() {
    let content: &[u8] = b"x";
    let m = manifest("h", &[("files/x", content)]);
    let b = Bundle {
        header: Header {
            fleet: "f",
            host: "h",
            serial: Some(7),
            expires: Some(1_800_000_000),
            not_before: Some(1_700_003_600),
            commit: Some(Commit {
                id: COMMIT,
                time: -2,
            }),
        },
        format: ManifestFormat::Json,
        manifest: m.as_bytes(),
        payloads: BTreeMap::from([("files/x", content)]),
    };
    let mut want = b"datum-bundle\n\0\0\0\x03\0\0\0\x01f\0\0\0\x01h".to_vec();
    want.push(1);
    want.extend(7u64.to_be_bytes());
    want.push(1);
    want.extend(1_800_000_000i64.to_be_bytes());
    want.push(1);
    want.extend(1_700_003_600i64.to_be_bytes());
    want.extend(b"\x01\0\0\0\x28");
    want.extend(COMMIT.as_bytes());
    want.extend((-2i64).to_be_bytes());
    want.push(0);
    want.push(2);
    want.extend((m.len() as u64).to_be_bytes());
    want.extend(m.as_bytes());
    want.extend(b"\0\0\0\x01\0\0\0\x07files/x");
    want.extend(digest(content));
    want.extend(b"\0\0\0\0\0\0\0\x01x");
    let body = b.encode_body().unwrap();
    assert_eq!(body, want);
    want.extend(b"\x01");
    want.extend((SIG.len() as u32).to_be_bytes());
    want.extend(SIG.as_bytes());
    assert_eq!(seal(body, Some(SIG)).unwrap(), want);
}

/// A version-1 bundle (no serial, no expiry) is still read, as one with
/// neither; a version this build does not know is refused.
#[test]
fn version_1_is_read_without_serial_or_expiry() {
    let content: &[u8] = b"x";
    let m = manifest("h", &[("files/x", content)]);
    let mut v1 = MAGIC.to_vec();
    v1.extend(1u32.to_be_bytes());
    v1.extend(b"\0\0\0\x01f\0\0\0\x01h\x01\0\0\0\x28");
    v1.extend(COMMIT.as_bytes());
    v1.extend(5i64.to_be_bytes());
    v1.push(1);
    v1.extend((m.len() as u64).to_be_bytes());
    v1.extend(m.as_bytes());
    v1.extend(b"\0\0\0\x01\0\0\0\x07files/x");
    v1.extend(digest(content));
    v1.extend(b"\0\0\0\0\0\0\0\x01x\0");
    let d = decode(&v1).unwrap();
    let header = Header {
        commit: Some(Commit {
            id: COMMIT,
            time: 5,
        }),
        ..Header::new("f", "h")
    };
    assert_eq!(d.header, header);
    assert_eq!(d.clear().unwrap().header, header);
    v1[MAGIC.len() + 3] = 4;
    let err = decode(&v1).unwrap_err();
    assert!(matches!(err, BundleError::Version { found: 4 }), "{err}");
    assert!(err.to_string().contains("reads versions 1 to 3"), "{err}");
}

#[test]
fn decode_gives_back_what_was_encoded() {
    let o = example();
    let b = o.bundle();
    for sig in [None, Some(SIG)] {
        let bytes = sealed(&b, sig);
        let d = decode(&bytes).unwrap();
        assert_eq!(d.clear(), Some(&b));
        assert_eq!(d.signature, sig);
        assert_eq!(d.signed, b.encode_body().unwrap().as_slice());
        assert_eq!(
            d.signed.len() + 1,
            bytes.len() - sig.map_or(0, |s| 4 + s.len())
        );
    }
    let unsourced = Bundle {
        header: Header::new("example", "web-001"),
        payloads: BTreeMap::new(),
        manifest: b"{\"type\": \"Manifest\", \"host\": \"web-001\", \"resources\": {}}",
        format: ManifestFormat::Json,
    };
    assert_eq!(
        decode(&sealed(&unsourced, None)).unwrap().clear(),
        Some(&unsourced)
    );
}

#[test]
fn the_same_contents_give_the_same_bytes() {
    let o = example();
    let mut reversed = o.bundle();
    reversed.payloads = o.payloads.iter().rev().copied().collect();
    assert_eq!(sealed(&o.bundle(), Some(SIG)), sealed(&reversed, Some(SIG)));
    let mut later = o.bundle();
    later.header.commit = Some(Commit {
        id: COMMIT,
        time: 1_700_000_001,
    });
    assert_ne!(sealed(&o.bundle(), None), sealed(&later, None));
}

#[test]
fn write_body_streams_the_same_bytes() {
    let o = example();
    let mut out = Vec::new();
    o.bundle().write_body(&mut out).unwrap();
    assert_eq!(out, o.bundle().encode_body().unwrap());
}

#[test]
fn json_manifests_are_read_too() {
    let content: &[u8] = b"a\n";
    let m = format!(
        "{{\n  \"datum\": \"v1alpha1\",\n  \"type\": \"Manifest\",\n  \"host\": \"db-1\",\n  \"resources\": {{\n    \"File[a]\": {{\"path\": \"/a\", \"source\": \"files/a\", \"source_sha256\": \"{}\", \"requires\": [\"Package[x]\"]}},\n    \"Package[x]\": {{}}\n  }}\n}}\n",
        sha(content)
    );
    let b = Bundle {
        header: Header {
            fleet: "f",
            host: "db-1",
            serial: Some(7),
            expires: Some(1_800_000_000),
            not_before: Some(1_700_003_600),
            commit: None,
        },
        format: ManifestFormat::Json,
        manifest: m.as_bytes(),
        payloads: BTreeMap::from([("files/a", content)]),
    };
    assert_eq!(decode(&sealed(&b, None)).unwrap().clear(), Some(&b));
    let mut wrong = b.clone();
    wrong.payloads = BTreeMap::from([("files/a", &b"b\n"[..])]);
    assert!(matches!(
        wrong.encode_body(),
        Err(BundleError::SourceDigest { .. })
    ));
}

#[test]
fn a_payload_changed_after_bundling_is_caught() {
    let o = example();
    let mut bytes = sealed(&o.bundle(), None);
    let at = bytes.windows(6).position(|w| w == b"hello\n").unwrap();
    bytes[at] = b'j';
    let err = decode(&bytes).unwrap_err();
    assert!(
        matches!(&err, BundleError::PayloadDigest { path, .. } if path == "files/motd"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("does not match its recorded sha256")
    );
    assert!(err.hint().unwrap().contains("altered"));
}

#[test]
fn a_payload_and_its_digest_changed_together_contradict_the_manifest() {
    let (a, b): (&[u8], &[u8]) = (b"one", b"two");
    let bytes = raw_with(
        ["files/a", "files/b"],
        [digest(a), digest(b"evil")],
        [a, b"evil"],
    );
    // The manifest was written for "two"; the bundle carries "evil".
    let bytes = {
        let m_ok = manifest("web-001", &[("files/a", a), ("files/b", b)]);
        let m_evil = manifest("web-001", &[("files/a", a), ("files/b", b"evil")]);
        let at = bytes
            .windows(m_evil.len())
            .position(|w| w == m_evil.as_bytes())
            .unwrap();
        let mut out = bytes.clone();
        out.splice(at..at + m_evil.len(), m_ok.bytes());
        out
    };
    let err = decode(&bytes).unwrap_err();
    assert!(
        matches!(&err, BundleError::SourceDigest { resource, path, .. } if resource == "File[f1]" && path == "files/b"),
        "{err}"
    );
}

#[test]
fn the_payload_set_is_exactly_what_the_manifest_uses() {
    let o = example();
    let mut missing = o.bundle();
    missing.payloads.remove("files/motd");
    let err = missing.encode_body().unwrap_err();
    assert!(
        matches!(&err, BundleError::MissingPayload { resource, path } if resource == "File[f1]" && path == "files/motd"),
        "{err}"
    );
    let mut extra = o.bundle();
    extra.payloads.insert("secrets/other-host.key", b"k");
    let err = extra.encode_body().unwrap_err();
    assert!(matches!(&err, BundleError::ExtraPayload { path } if path == "secrets/other-host.key"));
    assert_eq!(
        err.to_string(),
        "the bundle carries payload secrets/other-host.key, which the manifest does not use"
    );
}

#[test]
fn payloads_must_be_sorted_and_unique() {
    let (a, b): (&[u8], &[u8]) = (b"1", b"2");
    let unsorted = raw_with(["files/b", "files/a"], [digest(a), digest(b)], [a, b]);
    let err = decode(&unsorted).unwrap_err();
    assert!(
        matches!(&err, BundleError::Unsorted { path, previous, .. } if path == "files/a" && previous == "files/b"),
        "{err}"
    );
    let repeated = raw_with(["files/a", "files/a"], [digest(a), digest(b)], [a, b]);
    assert!(matches!(
        decode(&repeated),
        Err(BundleError::Unsorted { .. })
    ));
}

#[test]
fn the_manifest_must_be_for_the_bundles_host() {
    let o = example();
    let mut other = o.bundle();
    other.header.host = "web-002";
    let err = other.encode_body().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the manifest is for host web-001, the bundle for host web-002"
    );
}

#[test]
fn broken_manifests_are_refused_with_their_place() {
    let cases = [
        ("", "the manifest is empty"),
        ("type: Layer\nhost: h\n", "of type Layer, not Manifest"),
        ("host: h\n", "no `type: Manifest`"),
        ("type: Manifest\n", "no `host`"),
        (
            "type: Manifest\nhost: h\nhost: h\n",
            "the key `host` appears twice",
        ),
        ("type: Manifest\nhost: h\n---\ntype: Manifest\n", "more"),
        ("type: Manifest\nhost: &a h\nx: *a\n", "aliases"),
        (
            "type: Manifest\nhost: h\nresources: [\n",
            "expected a mapping of resources",
        ),
        ("- a\n", "expected a mapping"),
        (
            "type: Manifest\nhost: h\nresources:\n  File[a]:\n    source: x\n    source: y\n",
            "File[a]: the field `source` appears twice",
        ),
        (
            "type: Manifest\nhost: h\nresources:\n  File[a]: {}\n  File[a]: {}\n",
            "the resource `File[a]` appears twice",
        ),
        (
            "type: Manifest\nhost: h\nresources:\n  File[a]:\n    source: files/a\n",
            "File[a] sets source files/a without source_sha256",
        ),
    ];
    for (text, want) in cases {
        let b = Bundle {
            header: Header {
                fleet: "f",
                host: "h",
                serial: Some(7),
                expires: Some(1_800_000_000),
                not_before: Some(1_700_003_600),
                commit: None,
            },
            format: ManifestFormat::Yaml,
            manifest: text.as_bytes(),
            payloads: BTreeMap::new(),
        };
        let err = b.encode_body().unwrap_err().to_string();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    let deep = format!(
        "type: Manifest\nhost: h\nx: {}{}\n",
        "[".repeat(40),
        "]".repeat(40)
    );
    let b = Bundle {
        header: Header {
            fleet: "f",
            host: "h",
            serial: Some(7),
            expires: Some(1_800_000_000),
            not_before: Some(1_700_003_600),
            commit: None,
        },
        format: ManifestFormat::Yaml,
        manifest: deep.as_bytes(),
        payloads: BTreeMap::new(),
    };
    let err = b.encode_body().unwrap_err().to_string();
    assert!(err.contains("nested too deep"), "{err}");
    assert!(err.starts_with("the manifest, line 3 column "), "{err}");
}

#[test]
fn invalid_names_and_paths_are_refused_when_encoding() {
    let o = example();
    type Change = dyn Fn(&mut Bundle<'_>);
    let cases: [(&Change, &str); 6] = [
        (
            &|b| b.header.host = "Web_1",
            "the host name at byte 0 is invalid",
        ),
        (
            &|b| b.header.fleet = "",
            "the fleet name at byte 0 is invalid: it is empty",
        ),
        (&|b| b.header.fleet = "a\nb", "control character"),
        (
            &|b| b.header.commit = Some(Commit { id: "ABC", time: 0 }),
            "not 40 or 64 lowercase hex digits",
        ),
        (
            &|b| {
                b.payloads.insert("../etc/shadow", b"");
            },
            "`..` part",
        ),
        (
            &|b| {
                b.payloads.insert("/etc/shadow", b"");
            },
            "it is absolute",
        ),
    ];
    for (change, want) in cases {
        let mut b = o.bundle();
        change(&mut b);
        let err = b.encode_body().unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
    let err = seal(Vec::new(), Some("not armored"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an armored SSH signature"), "{err}");
}

#[test]
fn foreign_and_future_files_are_named_for_what_they_are() {
    assert!(matches!(decode(b""), Err(BundleError::NotABundle)));
    assert!(matches!(
        decode(b"<html>404</html>"),
        Err(BundleError::NotABundle)
    ));
    let mut future = MAGIC.to_vec();
    future.extend(4u32.to_be_bytes());
    assert_eq!(
        decode(&future).unwrap_err().to_string(),
        "bundle format version 4 is not supported: this build reads versions 1 to 3"
    );
}

#[test]
fn truncation_anywhere_is_an_error_that_says_so() {
    let o = example();
    let bytes = sealed(&o.bundle(), Some(SIG));
    for len in MAGIC.len()..bytes.len() {
        let err = decode(&bytes[..len]).unwrap_err();
        assert!(
            matches!(err, BundleError::Truncated { .. }),
            "cut at {len}: {err}"
        );
    }
    let err = decode(&bytes[..bytes.len() - 1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the bundle is truncated at byte {}: the signature needs {} bytes, {} remain",
            bytes.len() - SIG.len(),
            SIG.len(),
            SIG.len() - 1
        )
    );
    assert!(err.hint().unwrap().contains("fetch it again"));
}

#[test]
fn declared_lengths_are_bounded_before_anything_is_read() {
    let mut huge_manifest = Raw::header("f", "h");
    huge_manifest.byte(0).byte(0).byte(1).u64(u64::MAX);
    let err = decode(&huge_manifest.0).unwrap_err();
    assert!(
        matches!(err, BundleError::TooLong { field: Field::Manifest, len: u64::MAX, max, .. } if max == limits::MANIFEST),
        "{err}"
    );
    let mut short_manifest = Raw::header("f", "h");
    short_manifest.byte(0).byte(0).byte(1).u64(1000).blob(b"x");
    assert!(matches!(
        decode(&short_manifest.0),
        Err(BundleError::Truncated {
            field: Field::Manifest,
            needed: 1000,
            ..
        })
    ));
    let mut many = Raw::header("f", "h");
    many.byte(0).byte(0).byte(1).blob(b"").u32(1 << 20);
    assert!(matches!(
        decode(&many.0),
        Err(BundleError::Truncated {
            field: Field::PayloadCount,
            ..
        })
    ));
    many.0.truncate(many.0.len() - 4);
    many.u32(u32::MAX);
    assert!(matches!(
        decode(&many.0),
        Err(BundleError::TooLong {
            field: Field::PayloadCount,
            ..
        })
    ));
    let mut long_host = Raw(MAGIC.to_vec());
    long_host.u32(VERSION).str("f").u32(254);
    long_host.0.extend([b'a'; 254]);
    assert!(matches!(
        decode(&long_host.0),
        Err(BundleError::TooLong {
            field: Field::Host,
            ..
        })
    ));
}

#[test]
fn flags_codes_and_text_are_checked_when_decoding() {
    let bare = |fleet: &str, host: &str| {
        let mut r = Raw(MAGIC.to_vec());
        r.u32(VERSION).str(fleet).str(host);
        r
    };
    let cases: [(Vec<u8>, &str); 9] = [
        (
            bare("f", "h").byte(2).0.clone(),
            "the serial flag at byte 27 is invalid: 2 is neither 0 nor 1",
        ),
        (
            bare("f", "h").byte(1).u64(1).byte(7).0.clone(),
            "the expiry flag at byte 36 is invalid: 7 is neither 0 nor 1",
        ),
        (
            bare("f", "h").byte(0).byte(0).byte(5).0.clone(),
            "the not-before flag at byte 29 is invalid: 5 is neither 0 nor 1",
        ),
        (
            Raw::header("f", "h").byte(2).0.clone(),
            "the commit flag at byte 30 is invalid: 2 is neither 0 nor 1",
        ),
        (
            Raw::header("f", "h").byte(0).byte(0).byte(9).0.clone(),
            "the manifest format at byte 32 is invalid: unknown format code 9",
        ),
        (
            Raw::header("f", "h").byte(0).byte(2).0.clone(),
            "the sealed flag at byte 31 is invalid: 2 is neither 0 nor 1",
        ),
        (
            bare("f", "H").0.clone(),
            "the host name at byte 22 is invalid",
        ),
        (
            {
                let mut r = Raw(MAGIC.to_vec());
                r.u32(VERSION).u32(1).byte(0xff);
                r.0
            },
            "the fleet name at byte 17 is invalid: it is not UTF-8",
        ),
        (
            Raw::header("f", "h").byte(1).str("xyz").0.clone(),
            "the commit id at byte 31 is invalid",
        ),
    ];
    for (bytes, want) in cases {
        let err = decode(&bytes).unwrap_err().to_string();
        assert!(err.starts_with(want), "{want}: {err}");
    }
}

#[test]
fn nothing_may_follow_the_signature() {
    let o = example();
    let mut bytes = sealed(&o.bundle(), None);
    let end = bytes.len();
    bytes.extend(b"junk");
    assert_eq!(
        decode(&bytes).unwrap_err().to_string(),
        format!("4 unexpected bytes after the end of the bundle at byte {end}")
    );
    let mut bad_sig = sealed(&o.bundle(), None);
    bad_sig.pop();
    bad_sig.push(1);
    bad_sig.extend(3u32.to_be_bytes());
    bad_sig.extend(b"abc");
    assert!(
        decode(&bad_sig)
            .unwrap_err()
            .to_string()
            .contains("not an armored SSH signature")
    );
}

/// A sealed body keeps the header in clear and carries the ciphertext as
/// one blob under the signature; the clear contents it hides read back as
/// the unsealed bundle's, with the same digest.
#[test]
fn a_sealed_body_is_the_header_and_one_blob() {
    let o = example();
    let b = o.bundle();
    let contents = b.encode_contents().unwrap();
    let ciphertext = b"age ciphertext stands here".as_slice();
    let body = encode_sealed_body(&b.header, ciphertext).unwrap();
    let bytes = seal(body.clone(), Some(SIG)).unwrap();
    let d = decode(&bytes).unwrap();
    assert_eq!(d.header, b.header);
    assert_eq!(d.body, Body::Sealed(ciphertext));
    assert_eq!(d.signed, body.as_slice());
    assert_eq!(d.signature, Some(SIG));
    assert!(d.clear().is_none());
    // Header, sealed flag 1, the blob: nothing of the manifest.
    let mut want = Vec::new();
    write_header(&mut want, &b.header).unwrap();
    want.push(1);
    want.extend((ciphertext.len() as u64).to_be_bytes());
    want.extend(ciphertext);
    assert_eq!(body, want);

    assert_eq!(read_contents(b.header.clone(), &contents).unwrap(), b);
    let clear = sealed(&b, None);
    let Body::Clear {
        contents: in_file, ..
    } = decode(&clear).unwrap().body
    else {
        panic!("an unsealed bundle reads in clear");
    };
    assert_eq!(in_file, contents.as_slice());
    assert_eq!(contents_sha256(in_file), contents_sha256(&contents));
    let mut later = b.clone();
    later.header.expires = Some(1_900_000_000);
    assert_eq!(later.encode_contents().unwrap(), contents);
}

/// Decrypted contents get every check contents in clear get, and nothing
/// may follow them.
#[test]
fn sealed_contents_are_checked_like_clear_ones() {
    let o = example();
    let b = o.bundle();
    let mut contents = b.encode_contents().unwrap();
    contents.push(0);
    assert!(matches!(
        read_contents(b.header.clone(), &contents),
        Err(BundleError::Trailing { left: 1, .. })
    ));
    contents.pop();
    let last = contents.len() - 1;
    contents[last] ^= 1;
    assert!(matches!(
        read_contents(b.header.clone(), &contents),
        Err(BundleError::PayloadDigest { .. })
    ));
    let other = Header {
        host: "web-002",
        ..b.header.clone()
    };
    assert!(matches!(
        read_contents(other, &b.encode_contents().unwrap()),
        Err(BundleError::HostMismatch { .. })
    ));
}

/// A version-2 bundle has no sealed flag: its contents follow the header.
#[test]
fn version_2_is_read_in_clear() {
    let o = example();
    let mut b = o.bundle();
    b.header.not_before = None;
    let mut v2 = Vec::new();
    write_header(&mut v2, &b.header).unwrap();
    v2[MAGIC.len() + 3] = 2;
    // Nor a wait flag: it follows the expiry, before the commit flag.
    let flag = MAGIC.len() + 4 + (4 + b.header.fleet.len()) + (4 + b.header.host.len()) + 9 + 9;
    assert_eq!(v2[flag], 0, "the not_before flag");
    v2.remove(flag);
    let contents = b.encode_contents().unwrap();
    v2.extend(&contents);
    v2.push(0);
    let d = decode(&v2).unwrap();
    assert_eq!(d.clear(), Some(&b));
}

/// The wait is signed like every header field and round-trips in version 3.
#[test]
fn a_wait_round_trips_in_version_3() {
    let o = example();
    let mut b = o.bundle();
    for at in [None, Some(-5), Some(1_700_003_600)] {
        b.header.not_before = at;
        let bytes = sealed(&b, None);
        let d = decode(&bytes).unwrap();
        assert_eq!(d.header.not_before, at);
        assert_eq!(d.clear(), Some(&b));
    }
}
