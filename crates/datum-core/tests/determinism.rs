//! The same fleet gives byte-identical manifests whatever order its files
//! are discovered in, and whatever is thrown at the loader, it never panics.

use std::path::Path;

use datum_core::emit;
use datum_core::fleet::HostId;
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::{DirReader, MemReader, Reader};
use datum_core::resolve::resolve_all;
use proptest::prelude::*;

/// Every file of a fleet directory, in memory.
fn example(name: &str) -> MemReader {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let dir = DirReader::new(&root).unwrap();
    let mut mem = MemReader::new();
    let mut paths = dir.discover().unwrap();
    paths.sort();
    for p in paths {
        mem.add(&p, dir.read(&p, u64::MAX).unwrap());
    }
    for payload in ["files/nginx.conf", "files/redis.conf"] {
        if let Ok(bytes) = dir.read_source(payload) {
            mem.add(payload, bytes);
        }
    }
    mem
}

/// Every host's manifest (or its problems) as one text.
fn render_fleet(reader: &dyn Reader) -> String {
    let fleet = loader::load(reader).unwrap();
    let all = resolve_all(&fleet);
    let mut out = Vec::new();
    for d in &fleet.diagnostics {
        d.render(&fleet.files, false, &mut out).unwrap();
    }
    for h in 0..fleet.hosts.len() as u32 {
        let host = HostId(h);
        match all.of(host) {
            Some(res) if res.is_ok() => {
                emit::write_yaml(&mut out, &Manifest::new(&fleet, host, res).tree()).unwrap();
            }
            Some(res) => out.extend(format!("{:?}\n", res.problems).into_bytes()),
            None => out.extend(b"held back\n"),
        }
    }
    String::from_utf8(out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn discovery_order_never_changes_the_output(seed in any::<u64>()) {
        for name in ["fleet", "conflict"] {
            let reader = example(name);
            let baseline = render_fleet(&reader);
            let mut shuffled = reader.clone();
            let mut order = reader.paths().to_vec();
            // A seeded Fisher-Yates shuffle.
            let mut state = seed | 1;
            for i in (1..order.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                order.swap(i, (state % (i as u64 + 1)) as usize);
            }
            shuffled.set_order(order);
            prop_assert_eq!(render_fleet(&shuffled), baseline);
        }
    }

    #[test]
    fn corrupted_documents_never_panic(
        file in 0usize..12,
        at in any::<prop::sample::Index>(),
        bytes in prop::collection::vec(any::<u8>(), 1..8),
        cut in any::<bool>(),
    ) {
        let reader = example("fleet");
        let paths: Vec<String> = reader.paths().to_vec();
        let path = &paths[file % paths.len()];
        let mut text = reader.read(path, u64::MAX).unwrap();
        let i = at.index(text.len() + 1);
        if cut {
            text.truncate(i);
        }
        text.splice(i.min(text.len())..i.min(text.len()), bytes);
        let mut broken = reader.clone();
        broken.add(path, text);
        // Loading, resolving and drawing every diagnostic must not panic.
        let _ = render_fleet(&broken);
    }
}

#[test]
fn yaml_special_characters_in_the_example_round_trip() {
    let text = render_fleet(&example("fleet"));
    assert!(text.contains("mode: \"0600\""));
    assert!(text.contains("source_sha256: "));
}

/// The fleet-wide resolution shares work between hosts; it must give every
/// host exactly what resolving that host alone gives.
#[test]
fn shared_resolution_equals_resolving_each_host_alone() {
    for name in ["fleet", "conflict"] {
        let reader = example(name);
        let fleet = loader::load(&reader).unwrap();
        let all = resolve_all(&fleet);
        for h in 0..fleet.hosts.len() as u32 {
            let host = HostId(h);
            let shared = all.of(host).unwrap();
            let alone = fleet.resolve_host(host);
            assert_eq!(shared.problems, alone.problems);
            assert_eq!(
                format!("{:?}", shared.resources),
                format!("{:?}", alone.resources)
            );
        }
    }
}
