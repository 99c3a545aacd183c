//! The same fleet gives byte-identical manifests whatever order its files
//! are discovered in and however many threads resolve it, and whatever is
//! thrown at the loader, it never panics. `examples/sites` brings matcher
//! alternatives into it, `examples/templates` vars and templates; a
//! generated fleet, alternatives, vars and templates everywhere.

use std::path::Path;

use datum_core::emit;
use datum_core::fleet::HostId;
use datum_core::fuzz;
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
        if let Ok(bytes) = dir.read_source(payload, u64::MAX) {
            mem.add(payload, bytes);
        }
    }
    let mut templates = dir.list_payloads("templates").unwrap();
    templates.sort();
    for t in templates {
        mem.add(&t, dir.read_source(&t, u64::MAX).unwrap());
    }
    mem
}

/// The example fleets every property is checked on.
const EXAMPLES: [&str; 4] = ["fleet", "conflict", "sites", "templates"];

/// [`render_fleet`] on a pool of `threads` threads.
fn render_with_threads(reader: &dyn Reader, threads: usize) -> String {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| render_fleet(reader))
}

/// Every host's manifest (or its problems) as one text.
fn render_fleet(reader: &dyn Reader) -> String {
    let fleet = loader::load(reader).unwrap();
    let all = resolve_all(&fleet);
    let mut out = Vec::new();
    for d in &fleet.diagnostics {
        datum_core::present::diagnostic::write(d, &fleet.files, &mut out).unwrap();
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
        for name in EXAMPLES {
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
    fn thread_count_never_changes_the_output(threads in 2usize..9) {
        for name in EXAMPLES {
            let reader = example(name);
            prop_assert_eq!(
                render_with_threads(&reader, threads),
                render_with_threads(&reader, 1)
            );
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
    for name in EXAMPLES {
        let reader = example(name);
        let fleet = loader::load(&reader).unwrap();
        let all = resolve_all(&fleet);
        for h in 0..fleet.hosts.len() as u32 {
            let host = HostId(h);
            let shared = all.of(host).unwrap();
            let alone = datum_core::resolve::resolve_host(&fleet, host);
            assert_eq!(shared.problems, alone.problems);
            assert_eq!(
                format!("{:?}", shared.resources),
                format!("{:?}", alone.resources)
            );
        }
    }
}

/// One generated layer: precedence, matcher and resources, as YAML.
fn layer_text(prec: u8, role: Option<&str>, env: Option<&str>, items: &[(u8, u8)]) -> String {
    let mut labels = Vec::new();
    if let Some(r) = role {
        labels.push(format!("role: {r}"));
    }
    if let Some(e) = env {
        labels.push(format!("environment: {e}"));
    }
    let mut text = format!(
        "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: {prec}\nmatch: {{labels: {{{}}}}}\n",
        labels.join(", ")
    );
    // Vars, folded like fields: a value, a list, or a `null`.
    let mut vars: std::collections::BTreeMap<String, String> = Default::default();
    // Fields grouped by resource: a layer declares each id once.
    let mut resources: std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<&str, String>,
    > = Default::default();
    for &(what, value) in items {
        if what % 7 == 5 {
            let v = match value % 4 {
                0 => "null".to_owned(),
                1 => format!("[a, {}]", value % 3),
                n => format!("v{n}"),
            };
            vars.insert(format!("x{}", value % 2), v);
            continue;
        }
        let (id, field, v) = match what % 7 {
            6 => (
                "File[tpl]".to_owned(),
                "template",
                "templates/t.j2".to_owned(),
            ),
            0 => (
                "File[app]".to_owned(),
                "content",
                format!("\"v{}\"", value % 3),
            ),
            1 => (
                "File[app]".to_owned(),
                "mode",
                format!("\"06{}0\"", value % 8),
            ),
            2 => (
                format!("Package[pkg{}]", value % 3),
                "ensure",
                "installed".to_owned(),
            ),
            3 => ("File[app]".to_owned(), "mode", "null".to_owned()),
            _ => (
                "Service[svc]".to_owned(),
                "requires",
                format!("[\"Package[pkg{}]\"]", value % 3),
            ),
        };
        let fields = resources.entry(id.clone()).or_default();
        if id == "File[app]" {
            fields.insert("path", "/etc/app.conf".to_owned());
        }
        if id == "File[tpl]" {
            fields.insert("path", "/etc/tpl.conf".to_owned());
        }
        fields.insert(field, v);
    }
    if !vars.is_empty() {
        text.push_str("vars:\n");
        for (name, v) in vars {
            text.push_str(&format!("  {name}: {v}\n"));
        }
    }
    text.push_str("resources:\n");
    for (id, fields) in resources {
        text.push_str(&format!("  {id}:\n"));
        for (field, v) in fields {
            text.push_str(&format!("    {field}: {v}\n"));
        }
    }
    text
}

/// A fleet of generated hosts and layers in the fuzz input format,
/// sometimes with a few bytes of one file overwritten.
fn generated_fleet() -> impl Strategy<Value = Vec<u8>> {
    // "nope" is undeclared: a host or layer that names it is an error.
    let roles = prop::sample::select(vec![
        None,
        Some("web"),
        Some("db"),
        Some("web"),
        Some("nope"),
    ]);
    let envs = prop::sample::select(vec![None, Some("production"), Some("staging")]);
    // A matcher may list alternatives: any of them holds. A matcher that
    // names "nope" holds back every host of its fleet (Datum cannot know
    // which it was meant for), so it is rare enough that most generated
    // fleets still resolve.
    let layer = (
        0u8..2,
        prop::sample::select(vec![
            None,
            Some("web"),
            Some("db"),
            Some("[web, db]"),
            Some("[db]"),
            None,
            Some("web"),
            Some("db"),
            Some("[web, db]"),
            Some("[db]"),
            Some("web"),
            Some("[web, nope]"),
        ]),
        envs.clone(),
        prop::collection::vec((any::<u8>(), any::<u8>()), 1..5),
    );
    let host = (roles, envs);
    (
        prop::collection::vec(host, 1..4),
        prop::collection::vec(layer, 2..7),
        prop::option::weighted(0.25, (any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 1..6))),
    )
        .prop_map(|(hosts, layers, noise)| {
            let mut files = vec![(
                "datum.yaml".to_owned(),
                "datum: v1alpha1\ntype: Fleet\nname: g\nlabels:\n  role: [web, db]\n  environment: [production, staging]\n".to_owned().into_bytes(),
            ), (
                // Reads a var some hosts lack (an error there), one guarded, and a label.
                "templates/t.j2".to_owned(),
                "{{ host }} {{ labels.role | default('-') }}\n{% if vars.x1 is defined %}{{ vars.x1 }}{% endif %}\n{% if (labels.role | default('-')) == 'db' %}{{ vars.x0 }}{% endif %}\n".to_owned().into_bytes(),
            )];
            for (i, (role, env)) in hosts.iter().enumerate() {
                let labels: Vec<String> = [role.map(|r| format!("role: {r}")), env.map(|e| format!("environment: {e}"))]
                    .into_iter()
                    .flatten()
                    .collect();
                let text = format!("datum: v1alpha1\ntype: Host\nname: h{i}\nlabels: {{{}}}\n", labels.join(", "));
                files.push((format!("hosts/h{i}.yaml"), text.into_bytes()));
            }
            for (i, (prec, role, env, items)) in layers.iter().enumerate() {
                let text = layer_text(*prec, *role, *env, items).replace("name: l\n", &format!("name: l{i}\n"));
                files.push((format!("layers/l{i}.yaml"), text.into_bytes()));
            }
            if let Some((at, bytes)) = noise {
                let n = files.len();
                let body = &mut files[at.index(n)].1;
                let i = at.index(body.len() + 1).min(body.len());
                body.splice(i..(i + bytes.len()).min(body.len()), bytes);
            }
            fuzz::bytes_from_files(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The fuzz targets' properties (`fuzz/`), on generated fleets: no
    /// panic, the shared fold equals each host alone, discovery order
    /// changes nothing.
    #[test]
    fn generated_fleets_hold_the_fuzz_properties(input in generated_fleet()) {
        fuzz::load(&input);
        fuzz::load_and_resolve(&input);
    }

    /// However many threads resolve a generated fleet, the output is the same.
    #[test]
    fn generated_fleets_resolve_the_same_on_any_number_of_threads(
        input in generated_fleet(),
        threads in 2usize..6,
    ) {
        let reader = fuzz::fleet_from_bytes(&input);
        prop_assert_eq!(
            render_with_threads(&reader, threads),
            render_with_threads(&reader, 1)
        );
    }

    /// The same on raw bytes, as the fuzzer starts.
    #[test]
    fn raw_bytes_hold_the_fuzz_properties(input in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz::load(&input);
        fuzz::load_and_resolve(&input);
    }
}

/// The generator is not vacuous: some generated fleets resolve a host to a
/// manifest, and some are refused as conflicts.
#[test]
fn generated_fleets_reach_manifests_and_conflicts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let (mut manifests, mut conflicts, mut rendered, mut undefined) = (0, 0, 0, 0);
    for _ in 0..200 {
        let input = generated_fleet().new_tree(&mut runner).unwrap().current();
        let text = fuzz::load_and_resolve(&input);
        manifests += usize::from(text.contains("resources:"));
        conflicts += usize::from(text.contains("conflict"));
        rendered += usize::from(text.contains("content_sha256"));
        undefined += usize::from(text.contains("undefined var `vars.x0`"));
    }
    // Vars and templates take part: some hosts render, some lack a var.
    assert!(
        rendered > 5,
        "{rendered} of 200 generated fleets rendered a template"
    );
    assert!(
        undefined > 5,
        "{undefined} of 200 generated fleets missed a var"
    );
    assert!(
        manifests > 10,
        "{manifests} of 200 generated fleets gave a manifest"
    );
    assert!(
        conflicts > 10,
        "{conflicts} of 200 generated fleets had a conflict"
    );
}
