//! Datum's JSON writer through serde_json beside the hand-written one it
//! replaced, on the same trees in one run: every host's manifest of a
//! generated fleet (`render --all --format json`) and every host's
//! explanation (`explain --format json`, pretty and one line each).
//! Only the writing is timed; the trees are built once.
//!
//! ```text
//! cargo bench -p datum-bench --bench json
//! ```
//!
//! `DATUM_BENCH_HOSTS` sets the fleet's size (10000 unless told).

use std::hint::black_box;
use std::io;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use datum_bench::generator;
use datum_core::emit::{self, Tree, hand};
use datum_core::explain::{Explanation, Target};
use datum_core::fleet::HostId;
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::DirReader;
use datum_core::resolve::resolve_all;

/// The same allocator as the `datum` binary, so the figures match it.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Writer = fn(&mut dyn io::Write, &Tree<'_>) -> io::Result<()>;

/// Writes every tree into its own buffer, as `render --all` does per host;
/// gives the bytes written.
fn write_each(trees: &[Tree<'_>], write: Writer) -> usize {
    trees
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            write(&mut out, t).unwrap();
            out.len()
        })
        .sum()
}

fn benches(c: &mut Criterion) {
    let hosts = std::env::var("DATUM_BENCH_HOSTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    let options = generator::Options {
        hosts,
        seed: 1,
        conflicts: 0,
    };
    generator::generate(&dir, &options).unwrap();
    let fleet = loader::load(&DirReader::new(&dir).unwrap()).unwrap();
    assert!(fleet.diagnostics.is_empty());
    let all = resolve_all(&fleet);
    let ids = (0..fleet.hosts.len() as u32).map(HostId);
    let manifests: Vec<Tree<'_>> = ids
        .clone()
        .map(|h| Manifest::new(&fleet, h, all.of(h).unwrap()).tree())
        .collect();
    let explanations: Vec<Explanation<'_>> = ids
        .map(|h| Explanation::new(&fleet, h, all.of(h).unwrap()))
        .collect();
    let answers: Vec<_> = explanations
        .iter()
        .map(|ex| ex.answer(&Target::Host))
        .collect();
    let explained: Vec<Tree<'_>> = explanations
        .iter()
        .zip(&answers)
        .map(|(ex, a)| datum_core::explain::json::tree(ex, a, &[]))
        .collect();
    // Both writers give the same bytes, or the comparison means nothing.
    for t in manifests.iter().chain(&explained) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        emit::write_json(&mut a, t).unwrap();
        hand::write_json(&mut b, t).unwrap();
        assert!(a == b, "the writers differ");
    }

    let mut g = c.benchmark_group("json");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let cases: [(&str, &[Tree<'_>], Writer, Writer); 3] = [
        ("render_all", &manifests, emit::write_json, hand::write_json),
        (
            "explain_all",
            &explained,
            emit::write_json,
            hand::write_json,
        ),
        (
            "explain_all_lines",
            &explained,
            emit::write_json_line,
            hand::write_json_line,
        ),
    ];
    for (name, trees, serde, hand_written) in cases {
        g.bench_function(format!("{name}/serde_json"), |b| {
            b.iter(|| black_box(write_each(trees, serde)))
        });
        g.bench_function(format!("{name}/hand_written"), |b| {
            b.iter(|| black_box(write_each(trees, hand_written)))
        });
    }
    g.finish();
}

criterion_group!(json, benches);
criterion_main!(json);
