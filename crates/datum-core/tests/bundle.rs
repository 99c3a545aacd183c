//! Bundles made from real rendered manifests decode to what went in, and
//! whatever bytes a bundle reader is handed, it answers without panicking.

use std::collections::BTreeMap;
use std::path::Path;

use datum_core::bundle::{self, Bundle, BundleError, Commit, Header, ManifestFormat};
use datum_core::emit;
use datum_core::fleet;
use datum_core::manifest::Manifest;
use datum_core::reader::{DirReader, Reader};
use datum_core::resolve::resolve_all;
use datum_core::schema::Field;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

const SIG: &str = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n";

#[test]
fn every_host_of_the_example_fleet_bundles_and_reads_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleet");
    let reader = DirReader::new(&root).unwrap();
    let fleet = datum_core::loader::load(&reader).unwrap();
    let all = resolve_all(&fleet);
    let mut with_payloads = 0;
    for (h, host) in fleet.hosts.iter().enumerate() {
        let res = all.of(fleet::HostId(h as u32)).unwrap();
        let m = Manifest::new(&fleet, fleet::HostId(h as u32), res);
        let sources: Vec<(&str, Vec<u8>)> = m
            .resources()
            .filter_map(|r| r.str(Field::Source))
            .map(|s| (s, reader.read_source(s, u64::MAX).unwrap()))
            .collect();
        with_payloads += usize::from(!sources.is_empty());
        for format in [ManifestFormat::Yaml, ManifestFormat::Json] {
            let mut text = Vec::new();
            match format {
                ManifestFormat::Yaml => emit::write_yaml(&mut text, &m.tree()).unwrap(),
                ManifestFormat::Json => emit::write_json(&mut text, &m.tree()).unwrap(),
            }
            let b = Bundle {
                header: Header {
                    fleet: fleet.name.as_deref().unwrap(),
                    host: &host.name,
                    serial: Some(41),
                    expires: Some(1_700_604_800),
                    not_before: Some(1_700_003_600),
                    commit: Some(Commit {
                        id: "0123456789abcdef0123456789abcdef01234567",
                        time: 1_700_000_000,
                    }),
                },
                format,
                manifest: &text,
                payloads: sources.iter().map(|(p, c)| (*p, c.as_slice())).collect(),
            };
            let bytes = bundle::seal(b.encode_body().unwrap(), Some(SIG)).unwrap();
            let d = bundle::decode(&bytes).unwrap();
            assert_eq!(d.clear(), Some(&b), "{} {format:?}", host.name);
        }
    }
    assert!(with_payloads > 0, "the example fleet has File sources");
}

/// A payload path: relative, `/`-separated, no `.` or `..` part.
fn path() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9_-][a-z0-9._-]{0,7}", 1..4).prop_map(|parts| parts.join("/"))
}

#[derive(Debug, Clone)]
struct Contents {
    fleet: String,
    host: String,
    commit: Option<(String, i64)>,
    json: bool,
    payloads: BTreeMap<String, Vec<u8>>,
    signature: Option<String>,
}

fn contents() -> impl Strategy<Value = Contents> {
    (
        "[A-Za-z0-9 _-]{1,20}",
        "[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?",
        prop::option::of(("[0-9a-f]{40}", any::<i64>())),
        any::<bool>(),
        prop::collection::btree_map(path(), prop::collection::vec(any::<u8>(), 0..48), 0..5),
        prop::option::of("[A-Za-z0-9+/=\n]{0,80}"),
    )
        .prop_map(|(fleet, host, commit, json, payloads, sig)| Contents {
            fleet,
            host,
            commit,
            json,
            payloads,
            signature: sig.map(|s| format!("-----BEGIN SSH SIGNATURE-----\n{s}")),
        })
}

impl Contents {
    /// The manifest `render` would write for these payloads.
    fn manifest(&self) -> Vec<u8> {
        let sha = |b: &[u8]| {
            Sha256::digest(b)
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        };
        if self.json {
            let files: Vec<String> = self
                .payloads
                .iter()
                .enumerate()
                .map(|(i, (p, c))| {
                    format!(
                        "\"File[f{i}]\": {{\"path\": \"/f{i}\", \"source\": \"{p}\", \"source_sha256\": \"{}\"}}",
                        sha(c)
                    )
                })
                .collect();
            format!(
                "{{\"datum\": \"v1alpha1\", \"type\": \"Manifest\", \"host\": \"{}\", \"resources\": {{{}}}}}\n",
                self.host,
                files.join(", ")
            )
            .into_bytes()
        } else {
            let empty = if self.payloads.is_empty() { " {}" } else { "" };
            let mut m = format!(
                "type: Manifest\nhost: \"{}\"\nresources:{empty}\n",
                self.host
            );
            for (i, (p, c)) in self.payloads.iter().enumerate() {
                m += &format!(
                    "  File[f{i}]:\n    path: /f{i}\n    source: \"{p}\"\n    source_sha256: {}\n",
                    sha(c)
                );
            }
            m.into_bytes()
        }
    }

    fn encode(&self, manifest: &[u8]) -> Vec<u8> {
        let b = Bundle {
            header: Header {
                fleet: &self.fleet,
                host: &self.host,
                serial: self.commit.as_ref().map(|(_, time)| time.unsigned_abs()),
                expires: self.commit.as_ref().map(|(_, time)| time.wrapping_add(1)),
                not_before: self.commit.as_ref().map(|(_, time)| time.wrapping_sub(1)),
                commit: self
                    .commit
                    .as_ref()
                    .map(|(id, time)| Commit { id, time: *time }),
            },
            format: if self.json {
                ManifestFormat::Json
            } else {
                ManifestFormat::Yaml
            },
            manifest,
            payloads: self
                .payloads
                .iter()
                .map(|(p, c)| (p.as_str(), c.as_slice()))
                .collect(),
        };
        let body = b.encode_body().unwrap();
        let bytes = bundle::seal(body, self.signature.as_deref()).unwrap();
        let d = bundle::decode(&bytes).unwrap();
        assert_eq!(d.clear(), Some(&b));
        assert_eq!(d.signature, self.signature.as_deref());
        bytes
    }
}

/// Encodes what a successful decode returned: for any accepted input this
/// must give the input back, byte for byte (one encoding per contents).
fn reencode(bytes: &[u8]) -> Option<Vec<u8>> {
    let d = bundle::decode(bytes).ok()?;
    let body = match &d.body {
        bundle::Body::Clear { bundle, .. } => bundle.encode_body().unwrap(),
        bundle::Body::Sealed(ciphertext) => {
            bundle::encode_sealed_body(&d.header, ciphertext).unwrap()
        }
    };
    Some(bundle::seal(body, d.signature).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn encode_then_decode_is_the_identity(c in contents()) {
        let manifest = c.manifest();
        let bytes = c.encode(&manifest);
        prop_assert_eq!(reencode(&bytes), Some(bytes.clone()));
        prop_assert_eq!(c.encode(&manifest), bytes);
    }

    #[test]
    fn every_truncation_is_refused(c in contents()) {
        let manifest = c.manifest();
        let bytes = c.encode(&manifest);
        for len in 0..bytes.len() {
            prop_assert!(bundle::decode(&bytes[..len]).is_err(), "cut at {}", len);
        }
    }

    #[test]
    fn changed_bytes_never_panic_and_are_caught_or_canonical(
        c in contents(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let manifest = c.manifest();
        let mut bytes = c.encode(&manifest);
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        // Either refused, or a valid bundle whose own encoding it is.
        if let Some(again) = reencode(&bytes) {
            prop_assert_eq!(again, bytes);
        }
    }

    #[test]
    fn random_bytes_never_panic(
        prefix in any::<bool>(),
        tail in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut bytes = Vec::new();
        if prefix {
            bytes.extend(bundle::MAGIC);
            bytes.extend(bundle::VERSION.to_be_bytes());
        }
        bytes.extend(tail);
        let _ = bundle::decode(&bytes);
    }

    #[test]
    fn a_changed_payload_byte_is_always_caught(
        c in contents(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..,
    ) {
        prop_assume!(c.payloads.values().any(|v| !v.is_empty()));
        let manifest = c.manifest();
        let mut bytes = c.encode(&manifest);
        let (path, content) = c.payloads.iter().find(|(_, v)| !v.is_empty()).unwrap();
        // The content follows its path, digest and length.
        let mut head = path.as_bytes().to_vec();
        head.extend(Sha256::digest(content));
        let start = bytes.windows(head.len()).position(|w| w == head.as_slice()).unwrap()
            + head.len()
            + 8;
        bytes[start + at.index(content.len())] ^= flip;
        let err = bundle::decode(&bytes).unwrap_err();
        prop_assert!(
            matches!(&err, BundleError::PayloadDigest { path: p, .. } if p == path),
            "{}", err
        );
    }
}
